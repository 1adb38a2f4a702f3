"""Chunks: every chunk case of fixtures/chunks is encoded or rejected as the spec says.

A rejection of an invalid chunk counts only where the implementation encodes the case's valid
twin (the same configuration, the chunk one member away): otherwise the case is ``blocked``.
"""

from __future__ import annotations

import pytest

from zarr_jpeg_conformance.core.markers import inspect
from zarr_jpeg_conformance.corpus.cases import ChunkCase, chunk_cases, twin_of
from zarr_jpeg_conformance.corpus.images import make_chunk
from zarr_jpeg_conformance.judging.checks import Calls, case_params, judge_error, raised, squeezed_frame
from zarr_jpeg_conformance.judging.decode_tolerances import check_decode
from zarr_jpeg_conformance.judging.roots import SQUEEZE, judge_twin, squeezes
from zarr_jpeg_conformance.judging.verdict import attempt

pytestmark = pytest.mark.roles("encode")


@pytest.mark.parametrize("case", case_params(chunk_cases()))
def test_encode_chunk(impl, case, judge) -> None:
    """A chunk the spec accepts is encoded (as a stream every stream must be, decoding back to its shape); any other is rejected."""
    chunk = make_chunk(case.chunk.shape, case.chunk.dtype, case.chunk.fill)
    calls = Calls(judge, impl, case.codec, case.chunk.shape if len(case.chunk.shape) >= 2 else None)
    where = f"chunk {case.chunk.dtype}{list(case.chunk.shape)} under {case.codec['configuration']}"
    if not case.valid:
        parsed = calls.parse()
        got = attempt(impl.encode, parsed, chunk.copy())
        if got.error is not None:
            judge_error(judge, f"encode of the invalid {where}", got)
        if got.ok:
            requirement, why = _accepted_as(got.value, case)
            cause = None
            if squeezed_frame(got.value, case.chunk.shape) and squeezes(impl.encode, parsed, (3,) if calls.config.components == 3 else ()):
                # Not channels taken first: the encoder drops every length-1 axis (an (8, 1, 16) probe becomes an 8x16 image).
                info = inspect(bytes(got.result))
                requirement, why, cause = case.requirements[0], f": its stream is a {info.height}x{info.width} image, " \
                    "the chunk without its length-1 axes", SQUEEZE
            judge.require(False, requirement, f"{where}: encode accepted it{why}",
                          level=case.level if requirement == case.requirements[0] else None, cause=cause)
        judge.metrics["rejection"] = raised(got)[:200]
        twin = twin_of(case)
        spec = twin.chunk
        judge_twin(judge, twin, lambda: attempt(impl.encode, parsed, make_chunk(spec.shape, spec.dtype, spec.fill)), impl.name)
        return
    data = calls.encode(chunk, f"encode of {where}")
    if "decode" in impl.roles:
        out = calls.decode(data, case.chunk.shape, "decoding its own stream")
        check_decode(judge, out, data, calls.config, f"{impl.name}'s decode of its own stream of the {where}")


def _accepted_as(data: object, case: ChunkCase) -> tuple[str, str]:
    """(rule, why) of an invalid chunk encoded anyway, from the image the stream holds: a chunk of three axes
    written as its last two axes took its first axis for channels (the channel axis must be the innermost,
    JPEG-SHP-07); one written at its first two axes with another component count kept or dropped channels
    (JPEG-SHP-05); else the case's own rule."""
    shape = case.chunk.shape
    info = inspect(bytes(data)) if isinstance(data, bytes | bytearray | memoryview) else None
    if info is None or not info.ok or len(shape) != 3:
        return case.requirements[0], ""
    size = (info.height, info.width)
    if size == tuple(shape[1:]) and size != tuple(shape[:2]):
        return "JPEG-SHP-07", f": its stream is a {size[0]}x{size[1]} image, the chunk's last two axes (channels taken first)"
    if size == tuple(shape[:2]) and shape[2] not in (1, 3) and len(info.components) != shape[2]:
        return "JPEG-SHP-05", (f": its stream is a {size[0]}x{size[1]} image of {len(info.components)} component(s), "
                               f"not the chunk's {shape[2]} channels")
    return case.requirements[0], ""
