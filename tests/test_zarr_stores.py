"""This project's zarr codec on the fixture stores: it writes them again as they are, and writes their metadata back.

The store suite judges any implementation's decoding of the stores; these tests are about
``zarrcodecs.jpeg.JpegCodec`` as a zarr-python codec, so they live with the project's tests.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="the zarr codec needs zarr-python")

import jsonschema  # noqa: E402
from zarr.storage import MemoryStore  # noqa: E402

from zarr_jpeg_conformance.core.errors import Unsupported  # noqa: E402
from zarr_jpeg_conformance.corpus.images import max_abs, psnr  # noqa: E402
from zarr_jpeg_conformance.corpus.registry import load_json, resource  # noqa: E402
from zarr_jpeg_conformance.corpus.stores import open_store, store_entries  # noqa: E402
from zarr_jpeg_conformance.zarrcodecs.jpeg import REGISTRY_KEY, JpegCodec, register  # noqa: E402

SIDECARS = sorted(e for e in resource("fixtures", "stores").iterdir() if e.name.endswith(".json"))
SCHEMA = jsonschema.Draft202012Validator(load_json("schema", "jpeg.schema.json"))


def _case(entry: Any) -> tuple[dict[str, Any], dict[str, Any], np.ndarray]:
    doc = json.loads(entry.read_text(encoding="utf-8"))
    with resource("fixtures", "stores", doc["expected"]).open("rb") as f:
        expected = np.load(f, allow_pickle=False)
    return doc, open_store(resource("fixtures", "stores", doc["store"])), expected


def _jpeg_objects(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return ([node] if node.get("name") == "jpeg" else []) + [j for v in node.values() for j in _jpeg_objects(v)]
    if isinstance(node, list):
        return [j for v in node for j in _jpeg_objects(v)]
    return []


@pytest.fixture(autouse=True)
def _pinned() -> Any:
    register()
    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY}):
        yield


@pytest.mark.parametrize("entry", SIDECARS, ids=lambda e: e.name.removesuffix(".json"))
def test_write_then_read(entry: Any) -> None:
    """A fresh array with the store's metadata, written and read back, keeps the chunk layout and the data."""
    doc, committed, expected = _case(entry)
    entries = store_entries(iter([("zarr.json", committed["zarr.json"].to_bytes())]))
    try:
        array = zarr.open_array(MemoryStore(entries), mode="r+", zarr_format=3)
    except Unsupported as exc:
        pytest.skip(f"the default backend cannot write {doc['store']}: {exc}")
    array[...] = expected
    assert {k for k in entries if k.startswith("c/")} == {k for k in committed if k.startswith("c/")}
    back = np.asarray(zarr.open_array(MemoryStore(entries), mode="r", zarr_format=3)[...])
    tol = doc["tolerance"]
    assert psnr(expected, back) >= tol["min_psnr"] and max_abs(expected, back) <= tol["max_abs"]


@pytest.mark.parametrize("entry", SIDECARS, ids=lambda e: e.name.removesuffix(".json"))
def test_metadata_roundtrip(entry: Any) -> None:
    """Each jpeg codec object in zarr.json is what JpegCodec writes back (JPEG-SUB-06), valid by the schema."""
    doc, committed, _ = _case(entry)
    metadata = json.loads(committed["zarr.json"].to_bytes())
    objects = _jpeg_objects(metadata["codecs"])
    assert objects, f"{doc['store']}/zarr.json has no codec named jpeg"
    for obj in objects:
        assert not [e.message for e in SCHEMA.iter_errors(obj)]
        try:
            assert JpegCodec.from_dict(obj).to_dict() == obj
        except Unsupported as exc:
            pytest.skip(f"the default backend cannot handle {obj}: {exc}")
    array = zarr.open_array(MemoryStore(dict(committed)), mode="r", zarr_format=3)
    assert json.loads(json.dumps(array.metadata.to_dict()["codecs"])) == metadata["codecs"]
