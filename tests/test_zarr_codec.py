"""The zarr-python ``jpeg`` codec (zarrcodecs/jpeg.py), the reshape codec and the zarr adapter."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import tomllib
import warnings
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr", reason="the zarr codec needs zarr-python: pip install 'zarr-jpeg-conformance[zarr]'")

import jsonschema  # noqa: E402
from zarr.storage import MemoryStore  # noqa: E402

from zarr_jpeg_conformance.adapters import Adapter  # noqa: E402
from zarr_jpeg_conformance.adapters.zarr import ZarrAdapter  # noqa: E402
from zarr_jpeg_conformance.backends import BackendUnavailable  # noqa: E402
from zarr_jpeg_conformance.core.config import parse_codec  # noqa: E402
from zarr_jpeg_conformance.core.errors import ChunkError, ConfigError, StreamError, Unsupported  # noqa: E402
from zarr_jpeg_conformance.core.markers import inspect  # noqa: E402
from zarr_jpeg_conformance.corpus.cases import config_cases  # noqa: E402
from zarr_jpeg_conformance.corpus.images import make_image, psnr  # noqa: E402
from zarr_jpeg_conformance.corpus.registry import load_json  # noqa: E402
from zarr_jpeg_conformance.judging.tolerances import PSNR_FLOORS  # noqa: E402
from zarr_jpeg_conformance.zarrcodecs.jpeg import (  # noqa: E402
    DEFAULT_QUALITY,
    REGISTRY_KEY,
    JpegCodec,
    default_backend,
    register,
)
from zarr_jpeg_conformance.zarrcodecs.reshape import ReshapeCodec, output_shape, parse_shape  # noqa: E402

try:
    default_backend()
except BackendUnavailable as _exc:
    pytest.skip(f"no JPEG backend for the zarr codec: {_exc}", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = jsonschema.Draft202012Validator(load_json("schema", "jpeg.schema.json"))
YCBCR_420 = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}
GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}
VALID = [c for c in config_cases() if c.valid]
INVALID = [c for c in config_cases() if not c.valid]


@pytest.fixture(autouse=True)
def _pinned() -> Any:
    register()
    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY}):
        yield


def _array(codec: JpegCodec, data: np.ndarray, chunks: tuple[int, ...], **kwargs: Any) -> tuple[Any, dict[str, Any]]:
    entries: dict[str, Any] = {}
    array = zarr.create_array(MemoryStore(entries), shape=data.shape, chunks=chunks, dtype=data.dtype,
                              serializer=codec, compressors=None, fill_value=0, **kwargs)
    return array, entries


# ----------------------------------------------------------------- parsing and writing


@pytest.mark.parametrize("case", VALID, ids=[c.id for c in VALID])
def test_from_dict_accepts_valid_and_writes_schema_valid_minimal(case: Any) -> None:
    try:
        codec = JpegCodec.from_dict(case.codec)
    except Unsupported:
        assert parse_codec(case.codec).optional_feature, f"{default_backend()} rejected a configuration every implementation must support"
        return
    written = codec.to_dict()
    assert not list(SCHEMA.iter_errors(written)), f"to_dict wrote {written}, which the schema rejects"
    assert parse_codec(written) == parse_codec(case.codec), "to_dict changed the meaning of the configuration"
    assert written == parse_codec(case.codec).to_codec(), "to_dict is not the minimal form"
    assert JpegCodec.from_dict(written) == codec


@pytest.mark.parametrize("case", INVALID, ids=[c.id for c in INVALID])
def test_from_dict_rejects_invalid_like_the_core(case: Any) -> None:
    with pytest.raises(ConfigError) as core:
        parse_codec(case.codec)
    with pytest.raises(ConfigError) as ours:
        JpegCodec.from_dict(case.codec)
    assert ours.value.requirement == core.value.requirement
    assert str(ours.value) == str(core.value)


def test_from_dict_has_no_default_quality() -> None:
    with pytest.raises(ConfigError) as exc:
        JpegCodec.from_dict({"name": "jpeg", "configuration": {"encoded_color_space": "grayscale"}})
    assert exc.value.requirement == "JPEG-Q-05"


def test_constructor_defaults_quality_to_95() -> None:
    codec = JpegCodec(encoded_color_space="grayscale")
    assert DEFAULT_QUALITY == 95
    assert codec.quality == 95
    assert codec.to_dict() == {"name": "jpeg", "configuration": {"quality": 95, "encoded_color_space": "grayscale"}}


def test_constructor_has_no_default_color_space() -> None:
    with pytest.raises(TypeError):
        JpegCodec(quality=90)  # type: ignore[call-arg]


def test_constructor_validates_like_from_dict() -> None:
    with pytest.raises(ConfigError) as exc:
        JpegCodec(encoded_color_space="ycbcr")
    assert exc.value.requirement == "JPEG-SUB-04"
    with pytest.raises(ConfigError) as exc:
        JpegCodec(quality=0, encoded_color_space="grayscale")
    assert exc.value.requirement == "JPEG-Q-01"


@pytest.mark.parametrize(
    ("kwargs", "written"),
    [
        ({"encoded_color_space": "rgb", "subsampling": [[1, 1]] * 3}, {"quality": 90, "encoded_color_space": "rgb"}),
        ({"encoded_color_space": "grayscale", "decoded_color_space": "grayscale", "subsampling": [[1, 1]]},
         {"quality": 90, "encoded_color_space": "grayscale"}),
        ({"encoded_color_space": "ycbcr", "decoded_color_space": "rgb", "subsampling": [[2, 1], [1, 1], [1, 1]]},
         {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 1], [1, 1], [1, 1]]}),
        # YCbCr passthrough is optional (JPEG-DCS-05); the default backend, turbojpeg, lacks it.
        ({"encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": [[1, 1]] * 3, "backend": "imagecodecs"},
         {"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": [[1, 1]] * 3}),
    ],
    ids=["rgb", "gray", "ycbcr-422", "passthrough"],
)
def test_to_dict_omits_defaults(kwargs: dict[str, Any], written: dict[str, Any]) -> None:
    """Defaults (subsampling of rgb/grayscale, decoded_color_space) are not written (JPEG-SUB-06)."""
    assert JpegCodec(quality=90, **kwargs).to_dict() == {"name": "jpeg", "configuration": written}


def test_equality_ignores_backend_and_follows_configuration() -> None:
    a = JpegCodec.with_backend(YCBCR_420, default_backend())
    assert a == JpegCodec.from_dict(YCBCR_420) and hash(a) == hash(JpegCodec.from_dict(YCBCR_420))
    assert a != JpegCodec.from_dict({**YCBCR_420, "configuration": {**YCBCR_420["configuration"], "quality": 91}})


def test_unknown_backend_is_a_clean_error() -> None:
    with pytest.raises(ValueError, match="unknown jpeg backend"):
        JpegCodec.with_backend(GRAY, "libjpeg-nonexistent")


def test_compute_encoded_size_is_not_supported() -> None:
    """JPEG output size depends on the content: zarr's contract is NotImplementedError."""
    codec = JpegCodec.from_dict(GRAY)
    assert codec.is_fixed_size is False
    with pytest.raises(NotImplementedError):
        codec.compute_encoded_size(100, None)  # type: ignore[arg-type]


# ----------------------------------------------------------------- zarr integration


def test_programmatic_registration_resolves_to_jpeg_codec() -> None:
    from zarr.registry import get_codec_class

    assert get_codec_class("jpeg") is JpegCodec


def test_entry_point_resolves_when_declared() -> None:
    """Enabled by declaring the entry point in pyproject.toml; then the install must provide it."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    group = declared.get("project", {}).get("entry-points", {}).get("zarr.codecs", {})
    if "jpeg" not in group:
        pytest.skip('pyproject.toml declares no [project.entry-points."zarr.codecs"] jpeg yet')
    assert group["jpeg"] == "zarr_jpeg_conformance.zarrcodecs.jpeg:JpegCodec"
    installed = {ep.name: ep.value for ep in entry_points(group="zarr.codecs")}
    assert installed.get("jpeg") == group["jpeg"], "the installed package lacks the entry point: run pip install -e ."
    assert next(ep for ep in entry_points(group="zarr.codecs") if ep.name == "jpeg").load() is JpegCodec


def test_metadata_round_trip_through_zarr() -> None:
    image = make_image("natural", 64, 96)
    array, entries = _array(JpegCodec.from_dict(YCBCR_420), image, (32, 48, 3))
    array[...] = image
    stored = json.loads(entries["zarr.json"].to_bytes())
    assert stored["codecs"] == [YCBCR_420]
    reopened = zarr.open_array(MemoryStore(entries), mode="r")
    (codec,) = reopened.metadata.codecs
    assert isinstance(codec, JpegCodec) and codec == JpegCodec.from_dict(YCBCR_420)
    out = reopened[...]
    assert out.shape == image.shape and out.dtype == np.uint8
    assert psnr(image, out) >= PSNR_FLOORS[("ycbcr-420", "natural", 90)]


def test_chunks_are_real_jpeg_streams() -> None:
    image = make_image("natural", 32, 48, channels=1)[:, :, 0]
    array, entries = _array(JpegCodec.from_dict(GRAY), image, (32, 48))
    array[...] = image
    info = inspect(entries["c/0/0"].to_bytes())
    assert info.soi and info.eoi and info.sof == 0xC0 and (info.height, info.width) == (32, 48)


def test_codec_rejection_reaches_the_caller_unwrapped() -> None:
    """zarr 3.1 re-raises the codec's exception as is: the adapter's unwrapping is a safety net."""
    data = np.ones((16, 16), dtype=np.int16)  # not the fill value, so zarr does encode it
    with pytest.raises(ChunkError) as exc:  # zarr >= 3.2: when the array is created; 3.1: at the write
        array, _ = _array(JpegCodec.from_dict(GRAY), data, (16, 16))
        array[...] = data
    assert exc.value.requirement == "JPEG-DT-01"


def test_the_safety_net_unwraps_a_rejection_and_leaves_an_error_an_error() -> None:
    """Should a zarr release wrap the codec's exception, a ValueError/TypeError found on the cause chain is
    raised as the rejection it is; an exception with none on its chain stays what it was (a bug is no rejection)."""
    from zarr_jpeg_conformance.adapters.zarr_arrays import _unwrapped

    with pytest.raises(RuntimeError, match="a bug") as bug, _unwrapped():
        raise RuntimeError("a bug")
    assert type(bug.value) is RuntimeError
    refused = ChunkError("JPEG-DT-01", "int16 is not uint8")
    with pytest.raises(ChunkError) as exc, _unwrapped():
        try:
            raise refused
        except ChunkError as inner:
            raise RuntimeError("zarr: the codec failed") from inner
    assert exc.value is refused and exc.value.requirement == "JPEG-DT-01"


# ----------------------------------------------------------------- early errors

#: Arrays whose every chunk the spec rejects: (zarr.create_array arguments, requirement).
DOOMED = {
    "float32": ({"shape": (64, 64), "chunks": (32, 32), "dtype": "float32"}, GRAY, "JPEG-DT-01"),
    "int16-3d": ({"shape": (64, 64, 3), "chunks": (32, 32, 3), "dtype": "int16"}, YCBCR_420, "JPEG-DT-01"),
    "1d": ({"shape": (64,), "chunks": (32,)}, GRAY, "JPEG-SHP-01"),
    "4d": ({"shape": (2, 64, 64, 3), "chunks": (1, 32, 32, 3)}, YCBCR_420, "JPEG-SHP-06"),
    "2d-ycbcr": ({"shape": (64, 64), "chunks": (32, 32)}, YCBCR_420, "JPEG-CFG-02"),
    # A transpose that leaves a 4D chunk 4D, and a reshape that makes a 3D chunk 1D: what
    # reaches the codec is judged, not the array's own chunk.
    "transposed-4d": ({"shape": (2, 3, 64, 64), "chunks": (1, 3, 32, 32), "filters": [("transpose", (0, 2, 3, 1))]},
                      YCBCR_420, "JPEG-SHP-06"),
    "reshaped-to-1d": ({"shape": (4, 32, 32), "chunks": (2, 32, 32), "filters": [("reshape", [-1])]}, GRAY, "JPEG-SHP-01"),
}
#: Arrays the codec must accept at creation: what reaches it is a valid chunk, whatever the array is.
FINE = {
    "transpose-chw": ({"shape": (3, 64, 64), "chunks": (3, 32, 32), "filters": [("transpose", (1, 2, 0))]}, YCBCR_420),
    "reshape-zyxc": ({"shape": (2, 64, 64, 3), "chunks": (2, 32, 32, 3), "filters": [("reshape", [[0, 1], [2], [3]])]},
                     YCBCR_420),
    "reshape-zyx-gray": ({"shape": (4, 32, 32), "chunks": (2, 32, 32), "filters": [("reshape", [[0, 1], [2]])]}, GRAY),
    "array-over-65535": ({"shape": (70000, 64), "chunks": (512, 64)}, GRAY),
    "array-of-6-channels": ({"shape": (32, 32, 6), "chunks": (32, 32, 3)}, YCBCR_420),
    "hw1": ({"shape": (64, 64, 1), "chunks": (32, 32, 1)}, GRAY),
    # A float32 array cast to uint8 before jpeg: what validate() is handed (the array's own
    # dtype) is not what reaches the codec, which is why the early check is not in validate().
    "float32-cast-to-uint8": ({"shape": (64, 64), "chunks": (32, 32), "dtype": "float32", "filters": [("astype", "uint8")]},
                              GRAY),
}


def _create(arguments: dict[str, Any], codec: dict[str, Any]) -> Any:
    kwargs = dict(arguments)
    filters = [_filter(name, arg, kwargs.get("dtype", "uint8")) for name, arg in kwargs.pop("filters", [])]
    return zarr.create_array(MemoryStore(), serializer=JpegCodec.from_dict(codec), compressors=None, fill_value=0,
                             filters=filters or None, **{"dtype": "uint8", **kwargs})


def _filter(name: str, arg: Any, dtype: str) -> Any:
    from zarr.codecs import TransposeCodec

    if name == "transpose":
        return TransposeCodec(order=arg)
    if name == "reshape":
        return ReshapeCodec(shape=arg)
    with warnings.catch_warnings():  # numcodecs.zarr3 calls its codecs experimental
        warnings.simplefilter("ignore")
        from numcodecs.zarr3 import AsType

        return AsType(encode_dtype=arg, decode_dtype=dtype)


def _zarr_at_least(major: int, minor: int) -> bool:
    return tuple(int(p) for p in zarr.__version__.split(".")[:2]) >= (major, minor)


@pytest.mark.parametrize("name", sorted(DOOMED))
def test_an_array_whose_every_chunk_is_rejected_fails_early(name: str) -> None:
    """zarr >= 3.2 evolves the codec against what reaches it: the error comes when the array is created.
    zarr 3.1 hands every codec the array's own spec, so there it comes at the first write."""
    arguments, codec, requirement = DOOMED[name]
    data = np.ones(arguments["shape"], dtype=arguments.get("dtype", "uint8"))
    if _zarr_at_least(3, 2):
        with pytest.raises(ChunkError) as exc:
            _create(arguments, codec)
    else:
        array = _create(arguments, codec)
        with pytest.raises(ChunkError) as exc:
            array[...] = data
    assert exc.value.requirement == requirement, str(exc.value)
    assert f"[{requirement}]" in str(exc.value)


@pytest.mark.parametrize("name", sorted(FINE))
def test_an_array_whose_chunks_reach_the_codec_valid_is_created_and_round_trips(name: str) -> None:
    arguments, codec = FINE[name]
    array = _create(arguments, codec)
    data = np.full(arguments["shape"], 77, dtype=arguments.get("dtype", "uint8"))
    region = tuple(slice(0, min(n, 600)) for n in data.shape)  # a few chunks of the big array suffice
    array[region] = data[region]
    assert np.abs(array[region].astype(int) - 77).max() <= 2


def test_the_early_check_is_the_evolve_hook_and_judges_its_spec() -> None:
    """A wrong and a right variant of the spec zarr hands the codec, on any zarr version."""
    from zarr_jpeg_conformance.zarrcodecs.jpeg import check_spec

    config = parse_codec(YCBCR_420)
    check_spec(config, np.dtype("uint8"), 3)  # (H, W, 3) uint8: fine
    for dtype, ndim, requirement in [("float32", 3, "JPEG-DT-01"), ("uint8", 1, "JPEG-SHP-01"),
                                     ("uint8", 4, "JPEG-SHP-06"), ("uint8", 5, "JPEG-SHP-06"),
                                     ("uint8", 2, "JPEG-CFG-02")]:
        with pytest.raises(ChunkError) as exc:
            check_spec(config, np.dtype(dtype), ndim)
        assert exc.value.requirement == requirement
    check_spec(parse_codec(GRAY), np.dtype("uint8"), 2)  # (H, W) grayscale: fine


def test_bad_stream_is_a_stream_error() -> None:
    image = make_image("natural", 16, 16, channels=1)[:, :, 0]
    array, entries = _array(JpegCodec.from_dict(GRAY), image, (16, 16))
    array[...] = image
    entries["c/0/0"] = type(entries["c/0/0"]).from_bytes(entries["c/0/0"].to_bytes()[:-40])
    with pytest.raises(StreamError):
        zarr.open_array(MemoryStore(entries), mode="r")[...]


def test_non_uint8_array_is_rejected_when_reading() -> None:
    """A valid stream under metadata declaring int16 is refused, not reinterpreted (JPEG-DT-01)."""
    data = make_image("natural", 16, 16, channels=1)[:, :, 0]
    array, entries = _array(JpegCodec.from_dict(GRAY), data, (16, 16))
    array[...] = data
    meta = json.loads(entries["zarr.json"].to_bytes())
    meta["data_type"] = "int16"
    entries["zarr.json"] = type(entries["zarr.json"]).from_bytes(json.dumps(meta).encode())
    with pytest.raises(ChunkError) as exc:
        zarr.open_array(MemoryStore(entries), mode="r")[...]
    assert exc.value.requirement == "JPEG-DT-01"


def test_chunks_decode_off_the_event_loop_and_in_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    image = make_image("natural", 64, 96)
    array, _ = _array(JpegCodec.from_dict(YCBCR_420), image, (32, 48, 3))
    array[...] = image
    lock, state = threading.Lock(), {"running": 0, "most": 0, "on_loop": 0}
    original = JpegCodec._decode_sync

    def watched(self: JpegCodec, chunk_bytes: Any, chunk_spec: Any) -> Any:
        try:
            asyncio.get_running_loop()
            state["on_loop"] += 1
        except RuntimeError:
            pass  # no running loop: a worker thread, as intended
        with lock:
            state["running"] += 1
            state["most"] = max(state["most"], state["running"])
        time.sleep(0.05)  # long enough for the other chunks' decodes to start meanwhile
        try:
            return original(self, chunk_bytes, chunk_spec)
        finally:
            with lock:
                state["running"] -= 1

    monkeypatch.setattr(JpegCodec, "_decode_sync", watched)
    array[...]
    assert state["on_loop"] == 0, "a chunk was decoded on zarr's event loop thread"
    assert state["most"] >= 2, "chunks were decoded one at a time"


# ----------------------------------------------------------------- reshape codec


@pytest.mark.parametrize(
    ("shape", "input_shape", "output"),
    [
        ([[0, 1], [2], [3]], (2, 32, 48, 3), (64, 48, 3)),
        ([[0, 1], [2], 3], (2, 32, 48, 3), (64, 48, 3)),
        ([-1, [3]], (2, 3, 4, 5), (24, 5)),
        ([[0], -1], (6, 4, 2), (6, 8)),
        ([[0, 1], 10, [3, 4]], (2, 3, 10, 4, 5), (6, 10, 20)),
        ([[]], (1, 1), (1,)),
    ],
)
def test_reshape_output_shape(shape: Any, input_shape: tuple[int, ...], output: tuple[int, ...]) -> None:
    assert output_shape(parse_shape(shape), input_shape) == output


@pytest.mark.parametrize(
    "shape",
    [[[1], [0]], [[1, 0], 10, [3, 4]], [[3, 4], 10, [0, 1]], [-1, -1], [0, [1]], [-2], ["a"], [[True]], "abc", 5],
    ids=["reversed", "unordered", "swapped", "two-minus-one", "zero", "minus-two", "string", "bool", "str", "int"],
)
def test_reshape_rejects_malformed_shape(shape: Any) -> None:
    with pytest.raises((ValueError, TypeError)):
        parse_shape(shape)


@pytest.mark.parametrize(
    ("shape", "input_shape"),
    [([[0, 1], [2]], (2, 3, 4, 5)), ([7, -1], (2, 5)), ([[1, 2], [0]], (2, 3, 4)), ([5, [1]], (2, 3)), ([[0], [4]], (2, 3))],
    ids=["count", "no-minus-one-fit", "unordered", "misaligned", "missing-dim"],
)
def test_reshape_rejects_shapes_that_do_not_fit(shape: Any, input_shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError):
        output_shape(parse_shape(shape), input_shape)


def test_reshape_round_trips_exactly_in_c_order() -> None:
    data = np.arange(2 * 3 * 4 * 5, dtype=np.uint8).reshape(2, 3, 4, 5)
    entries: dict[str, Any] = {}
    array = zarr.create_array(MemoryStore(entries), shape=data.shape, chunks=data.shape, dtype="uint8",
                              filters=[ReshapeCodec(shape=[[0, 1], [2, 3]])], compressors=None, fill_value=0)
    array[...] = data
    # With the bytes codec after it, the stored bytes are the C-order bytes of the input.
    assert entries["c/0/0/0/0"].to_bytes() == data.tobytes()
    meta = json.loads(entries["zarr.json"].to_bytes())
    assert meta["codecs"][0] == {"name": "reshape", "configuration": {"shape": [[0, 1], [2, 3]]}}
    assert np.array_equal(zarr.open_array(MemoryStore(entries), mode="r")[...], data)


# ----------------------------------------------------------------- the zarr adapter


def test_adapter_protocol_and_versions() -> None:
    adapter = ZarrAdapter()
    assert isinstance(adapter, Adapter)
    assert adapter.name == "zarr" and adapter.roles == frozenset({"encode", "decode", "build"})  # build: JpegCodec(...).to_dict()
    versions = adapter.versions()
    assert versions["zarr"] == zarr.__version__ and versions["backend"] == default_backend()


def test_adapter_round_trip_through_the_store() -> None:
    adapter = ZarrAdapter()
    parsed = adapter.parse(YCBCR_420)
    chunk = make_image("natural", 64, 96)
    data = adapter.encode(parsed, chunk)
    assert data[:2] == b"\xff\xd8"
    out = adapter.decode(parsed, data, chunk.shape)
    assert out.shape == chunk.shape and psnr(chunk, out) >= PSNR_FLOORS[("ycbcr-420", "natural", 90)]


def test_adapter_encodes_an_all_zero_chunk() -> None:
    """zarr skips chunks equal to the fill value unless told otherwise; the adapter tells it."""
    adapter = ZarrAdapter()
    data = adapter.encode(adapter.parse(GRAY), np.zeros((16, 16), dtype=np.uint8))
    assert inspect(data).eoi


def test_adapter_rejects_an_empty_chunk_cleanly() -> None:
    adapter = ZarrAdapter()
    with pytest.raises(ValueError, match="no elements"):
        adapter.encode(adapter.parse(GRAY), np.zeros((0, 16), dtype=np.uint8))


def test_adapter_rejects_a_foreign_parsed_object() -> None:
    with pytest.raises(TypeError):
        ZarrAdapter().encode(parse_codec(GRAY), np.zeros((8, 8), dtype=np.uint8))


def test_codecs_support_zarr_sync_protocol() -> None:
    """The synchronous methods later zarr pipelines call directly (zarr.abc.codec.SupportsSyncCodec)."""
    import zarr.abc.codec

    protocol = getattr(zarr.abc.codec, "SupportsSyncCodec", None)
    if protocol is None:
        pytest.skip(f"zarr {zarr.__version__} defines no SupportsSyncCodec protocol")
    assert isinstance(JpegCodec.from_dict(GRAY), protocol)
    assert isinstance(ReshapeCodec(shape=[-1]), protocol)


def test_the_default_backend_is_strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unasked, the codec never runs on a backend that returns corrupt entropy data as pixels."""
    from zarr_jpeg_conformance.backends import load_backend
    from zarr_jpeg_conformance.zarrcodecs import jpeg as codec_module

    assert load_backend(default_backend()).strict

    def without_turbojpeg(name: str) -> Any:
        if name == "turbojpeg":
            raise BackendUnavailable("not installed (as on a machine without libturbojpeg)")
        return load_backend(name)

    monkeypatch.setattr(codec_module, "backend_adapter", without_turbojpeg)
    codec_module.default_backend.cache_clear()
    try:
        with pytest.raises(BackendUnavailable, match="no strict JPEG backend") as caught:
            codec_module.default_backend()
    finally:
        codec_module.default_backend.cache_clear()
    assert "imagecodecs: loads, but is not strict" in str(caught.value)
    assert codec_module.BACKEND_CONFIG_KEY in str(caught.value), "the error says how to choose a non-strict backend"
