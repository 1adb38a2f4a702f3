"""Stores: the chunks of real Zarr v3 arrays (fixtures/stores), decoded by the implementation under test.

Each store is read through zarr-python, which finds every stored chunk (through transpose,
reshape and sharding around the jpeg codec) and the shape the jpeg codec sees for it; the
implementation under test sits where the jpeg codec sits (``judging.zarr_under_test``), and
each chunk it decodes is judged like a stream of the corpus: within the span of its
expected decodes (libjpeg-turbo's, and the same stream with chroma repeated), plus the
family's slack. The neuroglancer stores hold chunks written by cloud-volume and TensorStore:
read as (z*y, x, c) images and reshaped in C order, they must give the [z, y, x, c] volume.

The stores themselves (complete, and their expected arrays what they hold) are the
corpus's own checks: they take no implementation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="the store suite needs zarr-python: pip install 'zarr-jpeg-conformance[zarr]'")

from zarr.storage import MemoryStore  # noqa: E402

from zarr_jpeg_conformance.core.config import parse_codec  # noqa: E402
from zarr_jpeg_conformance.core.markers import inspect  # noqa: E402
from zarr_jpeg_conformance.corpus.images import edge_errors, max_abs, psnr  # noqa: E402
from zarr_jpeg_conformance.corpus.registry import resource  # noqa: E402
from zarr_jpeg_conformance.corpus.stores import open_store  # noqa: E402
from zarr_jpeg_conformance.corpus.streams import corpus_references, reference_decode  # noqa: E402
from zarr_jpeg_conformance.judging import roots  # noqa: E402
from zarr_jpeg_conformance.judging.checks import Calls, judge_error, judge_refusal, level_mark, owned  # noqa: E402
from zarr_jpeg_conformance.judging.decode_tolerances import cite_decode, judge_reconstruction  # noqa: E402
from zarr_jpeg_conformance.judging.legal_decoders import expected_decodes  # noqa: E402
from zarr_jpeg_conformance.judging.verdict import Attempt  # noqa: E402

pytestmark = pytest.mark.roles("decode")


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


def _references(data: bytes, codec: dict[str, Any], shape: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    """A chunk's expected decodes: the stream corpus's where the chunk is one of its cases, else computed now."""
    known = corpus_references(data, shape)
    return known if known is not None else expected_decodes(data, parse_codec(codec), shape)


def _read(impl: Any, case: Store, judge: Any) -> tuple[np.ndarray, list[Any]]:
    """The store read through zarr with the implementation as its jpeg codec; every chunk judged."""
    from zarr_jpeg_conformance.judging.zarr_under_test import reading

    (codec,) = {json.dumps(o, sort_keys=True): o for o in _jpeg_objects(_metadata(case)["codecs"])}.values()
    calls_ = Calls(judge, impl, codec)
    parsed = calls_.parse()
    with reading(impl, codec, parsed) as calls:
        try:
            array = np.asarray(zarr.open_array(MemoryStore(dict(_entries(case.store))), mode="r", zarr_format=3)[...])
        except Exception:  # noqa: BLE001 - judged below from the recorded call, which says what the implementation did
            array = None
    judge.require(bool(calls), "JPEG-DEC-01", f"zarr made no decode call for {case.store}")
    for call in calls:
        what = f"decode of chunk {call.shape} of {case.store}"
        if call.error is not None:
            got: Attempt[Any] = (Attempt(rejection=call.error) if isinstance(call.error, ValueError | TypeError)
                                 else Attempt(error=call.error))
            if got.error is not None:
                judge_error(judge, what, got)
            judge_refusal(judge, calls_.support, "decode", what, got,
                          roots.decode_diagnosis(impl.decode, parsed, call.data, call.shape, got.rejection, codec))
        out = owned(judge, call.result, call.shape, what)
        # As in the decode-stream and cross suites: a wrong decode with no classic fault breaks JPEG-DEC-01.
        _judge_chunk(judge, impl, codec, call.data, out, what)
    assert array is not None, "zarr failed although every decode call was judged right"
    return array, calls


def _judge_chunk(judge: Any, impl: Any, codec: Any, data: bytes, out: np.ndarray, what: str, own: str = "JPEG-DEC-01") -> None:
    """One chunk's decode judged (``judging.decode_tolerances``), a cure by the default written out tried first."""
    config = parse_codec(codec)
    judged = judge_reconstruction(out, data, config, lambda: _references(data, codec, out.shape))
    worst = judge.metrics.get("acc_component", 0.0)
    cite_decode(judge, judged, out, data, config, what, own, level="MUST",
                cure=lambda: roots.default_cure(impl, codec, data, out.shape,
                                                lambda again: judge_reconstruction(again, data, config, (judged.expected,)).ok))
    if isinstance(worst, float) and isinstance(judge.metrics.get("acc_component"), float):
        judge.metrics["acc_component"] = max(worst, float(judge.metrics["acc_component"]))  # the worst chunk's


@pytest.mark.parametrize("case", _params(STORES))
def test_read_store(impl, case: Store, judge: Any) -> None:
    """Every chunk of the store decodes within its expected decodes, and the array is the store's data."""
    for r in case.requirements:
        judge.cite(r)
    array, calls = _read(impl, case, judge)
    expected = _expected(case)
    judge.require(array.shape == expected.shape and array.dtype == np.uint8, "JPEG-DEC-03",
                  f"reading {case.store} gave {array.dtype} {array.shape}, expected uint8 {expected.shape}")
    judge.metrics.update(chunks=len(calls), psnr=round(psnr(expected, array), 3), max_abs=max_abs(expected, array))
    doc = _metadata(case)
    if [c["name"] for c in doc["codecs"]] == ["jpeg"]:  # the chunk grid is the jpeg codec's own (no sharding, no transpose)
        judge.metrics.update(edge_errors(expected, array, tuple(doc["chunk_grid"]["configuration"]["chunk_shape"][:2])))


@pytest.mark.parametrize("case", _params(NEUROGLANCER))
def test_neuroglancer_chunk(impl, case: Store, judge: Any) -> None:
    """A chunk written by a neuroglancer precomputed writer decodes, as a (z*y, x, c) image, within its expected decodes."""
    doc = _metadata(case)
    z, y, x, c = doc["chunk_grid"]["configuration"]["chunk_shape"]
    (key,) = [k for k in _entries(case.store) if k.startswith("c/")]
    data = _entries(case.store)[key].to_bytes()
    jpeg = next(o for o in doc["codecs"] if o["name"] == "jpeg")
    judge.cite("JPEG-INT-02")
    image = Calls(judge, impl, jpeg, (z * y, x, c)).decode(data, (z * y, x, c), f"decode of the {case.name} chunk")
    _judge_chunk(judge, impl, jpeg, data, image, "the chunk's decode", "JPEG-INT-01")


# ------------------------------------------------------------------ the corpus's own checks (no implementation)


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
def test_store_holds_its_data(case: Store) -> None:
    """Read by libjpeg-turbo through zarr, each store is its expected array within the store's tolerance."""
    from zarr_jpeg_conformance.zarrcodecs.jpeg import REGISTRY_KEY, register

    register()
    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY}):
        array = np.asarray(zarr.open_array(MemoryStore(dict(_entries(case.store))), mode="r", zarr_format=3)[...])
    expected = _expected(case)
    value, worst = psnr(expected, array), max_abs(expected, array)
    assert value >= case.min_psnr and worst <= case.max_abs, (
        f"{case.store}: {value:.2f} dB / max |error| {worst} against {case.expected}; the sidecar's tolerance is "
        f">= {case.min_psnr} dB and <= {case.max_abs}")


@pytest.mark.parametrize("case", _params(NEUROGLANCER))
def test_neuroglancer_layout(case: Store) -> None:
    """A neuroglancer chunk is a (z*y, x) image whose samples, in C order, are the [z, y, x, c] volume (JPEG-INT-02)."""
    doc = _metadata(case)
    z, y, x, c = doc["chunk_grid"]["configuration"]["chunk_shape"]
    (key,) = [k for k in _entries(case.store) if k.startswith("c/")]
    data = _entries(case.store)[key].to_bytes()
    info = inspect(data)
    assert (info.height, info.width, len(info.components)) == (z * y, x, c), (
        f"the chunk is a {info.height}x{info.width} image with {len(info.components)} component(s); "
        f"the [reshape, jpeg] layout needs {z * y}x{x} with {c}")
    jpeg = next(o for o in doc["codecs"] if o["name"] == "jpeg")
    volume = reference_decode(data, parse_codec(jpeg), (z * y, x, c)).reshape(z, y, x, c)
    value, worst = psnr(_expected(case), volume), max_abs(_expected(case), volume)
    assert value >= case.min_psnr and worst <= case.max_abs, (
        f"decoded and reshaped in C order, the chunk is {value:.2f} dB / max |error| {worst} from the [z, y, x, c] volume")
