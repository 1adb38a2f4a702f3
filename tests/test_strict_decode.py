"""Nothing silently wrong (issue 13): what the backends of the zarr codec do with a corrupt chunk,
a forged small stream and a scan bomb.

* Corrupt entropy-coded data: a strict backend rejects every chunk libjpeg-turbo's strict
  decode refuses and returns its pixels for the rest; the zarr codec's default backend is
  strict, through zarr's pipeline and ThreadedCodecPipeline alike.
* A frame far larger than its data, repeated scans, a flood of markers: rejected by the
  pre-decode checks, before the library allocates or decodes anything.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import imagecodecs
import numpy as np
import pytest

from zarr_jpeg_conformance.backends import BACKENDS, BackendUnavailable, load_backend
from zarr_jpeg_conformance.backends.base import BackendAdapter
from zarr_jpeg_conformance.core.errors import StreamError
from zarr_jpeg_conformance.corpus.images import make_image
from zarr_jpeg_conformance.fixturegen.flat import progressive_repeats, sequential_repeats
from zarr_jpeg_conformance.tools.corrupt_chunks import StrictReference, campaign, corrupt

GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}
C420 = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}
C444 = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}}


def _loads(name: str) -> bool:
    try:
        load_backend(name)
    except BackendUnavailable:
        return False
    return True


def _backend(name: str) -> BackendAdapter:
    try:
        return load_backend(name)
    except BackendUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def reference() -> StrictReference:
    try:
        return StrictReference()
    except (ImportError, OSError, RuntimeError) as exc:
        pytest.skip(f"libjpeg-turbo's strict decode (PyTurboJPEG + libturbojpeg) is not available: {exc}")


# ----------------------------------------------------------------------------- corrupt entropy-coded data


@pytest.mark.parametrize("name", list(BACKENDS))
def test_corrupted_chunks_are_rejected_or_exact_in_a_strict_backend(name: str, reference: StrictReference) -> None:
    """The CI-sized campaign of tools/corrupt_chunks.py (the long run: --chunks 1000)."""
    backend = _backend(name)
    result = campaign(backend, reference, 80, seed=13)
    assert result.reference_rejects > 10, "the corruptions hardly ever broke a stream: the campaign measures nothing"
    if backend.strict:
        assert result.outcomes["garbage"] == 0, f"{name} returned wrong pixels for corrupt chunks: {result.outcomes}"
        assert result.outcomes["rejected"] == result.reference_rejects
    else:
        # Leniency is a measured fact, not a label: if this fails, the library learned to refuse.
        assert result.outcomes["garbage"] > 0, f"{name} rejected every corrupt chunk: mark it strict"


def test_the_zarr_codec_prefers_a_strict_backend() -> None:
    loadable = [load_backend(name) for name in BACKENDS if _loads(name)]
    if not any(b.strict for b in loadable):
        pytest.skip("no strict backend is installed here (PyTurboJPEG with libturbojpeg)")
    assert loadable[0].strict, f"the first backend that loads, {loadable[0].name}, is not strict: {[b.name for b in loadable]}"


def _a_corruption_strict_libjpeg_refuses(data: bytes, reference: StrictReference) -> bytes:
    rng = random.Random(7)
    for _ in range(200):
        bad = corrupt(data, rng)
        if reference.decode(bad, 3) is None:
            return bad
    raise AssertionError("no corruption of 200 made libjpeg-turbo refuse the chunk")


@pytest.mark.parametrize("pipeline", ["zarr.core.codec_pipeline.BatchedCodecPipeline",
                                      "zarr_jpeg_conformance.zarrcodecs.pipeline.ThreadedCodecPipeline"])  # fmt: skip
def test_a_corrupt_stored_chunk_is_an_error_through_zarr(pipeline: str, reference: StrictReference) -> None:
    zarr = pytest.importorskip("zarr")
    from zarr.storage import MemoryStore

    from zarr_jpeg_conformance.zarrcodecs.jpeg import REGISTRY_KEY, JpegCodec, register

    register()
    entries: dict[str, Any] = {}
    image = make_image("natural", 64, 128, 3, 0)
    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY}):
        codec = JpegCodec(quality=90, encoded_color_space="ycbcr", subsampling=[[2, 2], [1, 1], [1, 1]])
        array = zarr.create_array(MemoryStore(entries), shape=image.shape, chunks=(64, 64, 3), dtype="uint8",
                                  serializer=codec, compressors=None, fill_value=0)  # fmt: skip
        array[...] = image
    key = "c/0/1/0"
    buffer = entries[key]
    entries[key] = type(buffer).from_bytes(_a_corruption_strict_libjpeg_refuses(buffer.to_bytes(), reference))
    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY, "codec_pipeline.path": pipeline}):
        stored = zarr.open_array(MemoryStore(entries), mode="r", zarr_format=3)
        with pytest.raises(ValueError, match=r"JPEG-X-07|JPEG-DEC-01"):
            stored[...]
        np.testing.assert_array_equal(stored[:, :64], array[:, :64])  # the intact chunk still reads


# ----------------------------------------------------------------------------- forged small streams and bombs


@pytest.fixture
def no_library(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail any test in which a backend's library is asked to decode: the checks must come first."""

    def reached(self: BackendAdapter, *args: object) -> None:
        raise AssertionError(f"{self.name}'s library was asked to decode the stream")

    monkeypatch.setattr(BackendAdapter, "_decode_pixels", reached)
    for name in BACKENDS:
        try:
            monkeypatch.setattr(type(load_backend(name)), "_decode_pixels", reached)
        except BackendUnavailable:
            continue
    yield


def _forged() -> bytes:
    small = bytes(imagecodecs.jpeg8_encode(make_image("natural", 16, 16, 3, 0), level=90, subsampling="420"))
    sof = small.index(b"\xff\xc0")
    return small[: sof + 5] + (16000).to_bytes(2, "big") * 2 + small[sof + 9 :]


BOMBS = {
    "forged-16000x16000": (_forged, C420, (16000, 16000, 3), "JPEG-X-07"),
    "progressive-repeated-scans": (lambda: progressive_repeats(1024, 1024, 2000), GRAY, (1024, 1024), "JPEG-X-14"),
    "sequential-repeated-scans": (lambda: sequential_repeats(256, 256, 50), C444, (256, 256, 3), "JPEG-X-14"),
    "50000-comment-segments": (lambda: (lambda d: d[:2] + b"\xff\xfe\x00\x02" * 50_000 + d[2:])(_forged()), C420,
                               (16000, 16000, 3), "JPEG-X-15"),
}  # fmt: skip


@pytest.mark.parametrize("bomb", BOMBS)
@pytest.mark.parametrize("name", list(BACKENDS))
def test_bombs_are_rejected_before_the_library_decodes(name: str, bomb: str, no_library: None) -> None:
    build, codec, shape, requirement = BOMBS[bomb]
    backend = _backend(name)
    with pytest.raises(StreamError) as exc:
        backend.decode(backend.parse(codec), build(), shape)
    assert exc.value.requirement == requirement, str(exc.value)


@pytest.mark.parametrize("name", list(BACKENDS))
def test_the_same_streams_without_the_bomb_decode(name: str) -> None:
    backend = _backend(name)
    small = bytes(imagecodecs.jpeg8_encode(make_image("natural", 16, 16, 3, 0), level=90, subsampling="420"))
    assert backend.decode(backend.parse(C420), small, (16, 16, 3)).shape == (16, 16, 3)
    flat = backend.decode(backend.parse(GRAY), progressive_repeats(1024, 1024, 0), (1024, 1024))
    assert (flat == 128).all()
    assert (backend.decode(backend.parse(C444), sequential_repeats(256, 256, 0), (256, 256, 3)) == 128).all()


@pytest.mark.parametrize("bomb", ["forged-16000x16000", "200000-segments"])
def test_the_bombs_benchmark_measures_a_rejection(bomb: str) -> None:
    """tools/bombs.py's adapter run (the library runs take seconds to minutes: not for CI)."""
    from zarr_jpeg_conformance.tools import bombs

    name = next(n for n in BACKENDS if _loads(n))
    row = bombs.child(bomb, name, "adapter")
    assert row["outcome"].startswith("StreamError") and row["peak_mb"] > 0 and row["bytes"] > 0, row
