"""Stores: real Zarr v3 arrays of fixtures/stores, read and written through zarr-python.

These exercise this project's own ``JpegCodec`` (zarrcodecs/jpeg.py) inside zarr's metadata and
codec pipeline, with transpose, reshape and sharding around it, and neuroglancer chunks
written by other tools. They take no ``impl``: the implementation is fixed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="the store suite needs zarr-python: pip install 'zarr-jpeg-conformance[zarr]'")

import jsonschema  # noqa: E402
from zarr.storage import MemoryStore  # noqa: E402

from zarr_jpeg_conformance.backends import BackendUnavailable  # noqa: E402
from zarr_jpeg_conformance.core.errors import Unsupported  # noqa: E402
from zarr_jpeg_conformance.core.markers import inspect  # noqa: E402
from zarr_jpeg_conformance.corpus.images import max_abs, psnr  # noqa: E402
from zarr_jpeg_conformance.corpus.registry import load_json, resource  # noqa: E402
from zarr_jpeg_conformance.corpus.stores import open_store, store_entries  # noqa: E402
from zarr_jpeg_conformance.judging.checks import level_mark  # noqa: E402
from zarr_jpeg_conformance.judging.verdict import Outcome  # noqa: E402
from zarr_jpeg_conformance.zarrcodecs.jpeg import REGISTRY_KEY, JpegCodec, backend_adapter, default_backend, register  # noqa: E402

try:
    default_backend()
except BackendUnavailable as _exc:
    pytest.skip(f"no JPEG backend for the zarr codec: {_exc}", allow_module_level=True)



@dataclass(frozen=True)
class Store:
    """One store of fixtures/stores, as its sidecar describes it."""

    id: str
    name: str
    description: str
    requirements: tuple[str, ...]
    level: str
    store: str
    expected: str
    min_psnr: float
    max_abs: int


def _stores() -> list[Store]:
    folder = resource("fixtures", "stores")
    sidecars = sorted((e for e in folder.iterdir() if e.name.endswith(".json")), key=lambda e: e.name)
    out = []
    for entry in sidecars:
        doc = json.loads(entry.read_text(encoding="utf-8"))
        tol = doc["tolerance"]
        out.append(Store(doc["id"], entry.name.removesuffix(".json"), doc["description"], tuple(doc["requirements"]),
                         doc["level"], doc["store"], doc["expected"], float(tol["min_psnr"]), int(tol["max_abs"])))
    return out


STORES = _stores()
NEUROGLANCER = [s for s in STORES if "JPEG-INT-01" in s.requirements]


def _params(stores: list[Store]) -> list[Any]:
    return [pytest.param(s, id=s.name, marks=level_mark(s.level)) for s in stores]


@pytest.fixture(scope="module", autouse=True)
def _pinned_codec() -> Any:
    register()
    # Other packages may register "jpeg" too: pin this project's class for every read.
    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY}):
        yield


@cache
def _entries(store: str) -> dict[str, Any]:
    return open_store(resource("fixtures", "stores", store))


def _expected(case: Store) -> np.ndarray:
    with resource("fixtures", "stores", case.expected).open("rb") as f:
        return np.load(f, allow_pickle=False)


def _metadata(case: Store) -> dict[str, Any]:
    return json.loads(_entries(case.store)["zarr.json"].to_bytes())


def _jpeg_objects(node: Any) -> list[dict[str, Any]]:
    """Every codec object named jpeg in a metadata document, nested ones (sharding) included."""
    if isinstance(node, dict):
        found = [node] if node.get("name") == "jpeg" else []
        return found + [j for v in node.values() for j in _jpeg_objects(v)]
    if isinstance(node, list):
        return [j for v in node for j in _jpeg_objects(v)]
    return []


def _open(judge: Any, case: Store, entries: dict[str, Any], mode: str = "r") -> Any:
    try:
        return zarr.open_array(MemoryStore(entries), mode=mode, zarr_format=3)
    except Unsupported as exc:
        if case.level == "MAY":
            judge.finish(Outcome.UNSUPPORTED, f"the backend {default_backend()} cannot handle this optional feature: {exc}")
        raise


def _within(judge: Any, case: Store, out: np.ndarray, expected: np.ndarray, what: str) -> None:
    judge.require(out.shape == expected.shape and out.dtype == np.uint8, "JPEG-DEC-03",
                  f"{what}: got {out.dtype} {out.shape}, expected uint8 {expected.shape}")
    value, worst = psnr(expected, out), max_abs(expected, out)
    judge.metrics.update(psnr=round(value, 3), max_abs=worst, backend=default_backend())
    judge.require(value >= case.min_psnr and worst <= case.max_abs, case.requirements[0],
                  f"{what}: {value:.2f} dB / max |error| {worst} against the source; tolerance "
                  f">= {case.min_psnr} dB and <= {case.max_abs} (fixtures/stores/{case.name}.json)")


def test_store_corpus_is_complete() -> None:
    """Every store has its data and expected array, and the kinds the suite relies on are present."""
    names = {s.name for s in STORES}
    for required in ("gray-2d", "gray-hw1", "ycbcr-420", "ycbcr-444", "rgb", "transpose-chw", "reshape-zyxc", "sharded", "boundary"):
        assert required in names, f"fixtures/stores has no {required!r} store"
    assert len(NEUROGLANCER) >= 2, "fixtures/stores has no neuroglancer interop stores"
    for s in STORES:
        assert s.id == f"store.{s.name}", f"{s.name}.json has id {s.id!r}"
        assert "zarr.json" in _entries(s.store), f"{s.store} has no zarr.json"
        assert any(k.startswith("c/") for k in _entries(s.store)), f"{s.store} has no chunk"
        assert resource("fixtures", "stores", s.expected).is_file(), f"{s.expected} is missing"


@pytest.mark.parametrize("case", _params(STORES))
def test_read_store(case: Store, judge: Any) -> None:
    """Reading the committed store gives the source data within the store's tolerance."""
    array = _open(judge, case, dict(_entries(case.store)))
    _within(judge, case, np.asarray(array[...]), _expected(case), f"reading {case.store}")


@pytest.mark.parametrize("case", _params(STORES))
def test_write_then_read(case: Store, judge: Any) -> None:
    """A fresh array with the store's metadata, written and read back, keeps the chunk layout and the data."""
    entries = store_entries(iter([("zarr.json", _entries(case.store)["zarr.json"].to_bytes())]))
    expected = _expected(case)
    array = _open(judge, case, entries, mode="r+")
    array[...] = expected
    fresh = {k for k in entries if k.startswith("c/")}
    committed = {k for k in _entries(case.store) if k.startswith("c/")}
    judge.require(fresh == committed, "JPEG-ENC-02", f"chunk keys written {sorted(fresh)} != the store's {sorted(committed)}")
    _within(judge, case, np.asarray(_open(judge, case, entries)[...]), expected, "write then read")


_SCHEMA = jsonschema.Draft202012Validator(load_json("schema", "jpeg.schema.json"))


@pytest.mark.parametrize("case", _params(STORES))
def test_metadata_roundtrip(case: Store, judge: Any) -> None:
    """Each jpeg codec object in zarr.json is what JpegCodec writes back, and the schema accepts it."""
    judge.cite("JPEG-SUB-06")
    doc = _metadata(case)
    objects = _jpeg_objects(doc["codecs"])
    judge.require(bool(objects), "JPEG-NAME-01", f"{case.store}/zarr.json has no codec named jpeg")
    for obj in objects:
        errors = [e.message for e in _SCHEMA.iter_errors(obj)]
        judge.require(not errors, "JPEG-CFG-01", f"{obj} fails schema/jpeg.schema.json: {errors}")
        try:
            written = JpegCodec.from_dict(obj).to_dict()
        except Unsupported as exc:
            if case.level == "MAY":
                judge.finish(Outcome.UNSUPPORTED, f"{default_backend()} cannot handle {obj}: {exc}")
            raise
        judge.require(written == obj, "JPEG-SUB-06", f"JpegCodec writes {written} for {obj}")
    array = _open(judge, case, dict(_entries(case.store)))
    # zarr re-serializes the whole codec chain from the parsed codecs: it must be unchanged.
    again = json.loads(json.dumps(array.metadata.to_dict()["codecs"]))
    judge.require(again == doc["codecs"], "JPEG-NAME-01", f"zarr writes back codecs {again}, the store has {doc['codecs']}")


@pytest.mark.parametrize("case", _params(NEUROGLANCER))
def test_neuroglancer_layout(case: Store, judge: Any) -> None:
    """A neuroglancer chunk is a (z*y, x) image whose C-order samples are the [z, y, x, c] chunk."""
    doc = _metadata(case)
    z, y, x, c = doc["chunk_grid"]["configuration"]["chunk_shape"]
    (key,) = [k for k in _entries(case.store) if k.startswith("c/")]
    data = _entries(case.store)[key].to_bytes()
    info = inspect(data)
    judge.require((info.height, info.width, len(info.components)) == (z * y, x, c), "JPEG-INT-02",
                  f"the chunk is a {info.height}x{info.width} image with {len(info.components)} component(s); "
                  f"the [reshape, jpeg] layout needs {z * y}x{x} with {c}")
    # The same bytes decoded outside zarr and reshaped in C order must equal the zarr read
    # exactly: the reshape codec may not move a single sample.
    jpeg = next(o for o in doc["codecs"] if o["name"] == "jpeg")
    backend = backend_adapter(default_backend())
    plain = backend.decode(backend.parse(jpeg), data, (z * y, x, c)).reshape(z, y, x, c)
    through_zarr = np.asarray(_open(judge, case, dict(_entries(case.store)))[...])
    judge.require(np.array_equal(plain, through_zarr), "JPEG-INT-02",
                  f"zarr's [reshape, jpeg] read differs from a plain decode reshaped to [z, y, x, c] "
                  f"(max difference {max_abs(plain, through_zarr)})")
