"""Chunks: every chunk case of fixtures/chunks is encoded or rejected as the spec says.

A rejection of an invalid chunk counts only where the implementation encodes the case's valid
twin (the same configuration, the chunk one member away): otherwise the case is ``blocked``.
"""

from __future__ import annotations

import pytest

from zarr_jpeg_conformance.corpus.cases import chunk_cases, twin_of
from zarr_jpeg_conformance.corpus.images import make_chunk
from zarr_jpeg_conformance.judging.checks import Calls, case_params, judge_error, raised
from zarr_jpeg_conformance.judging.roots import judge_twin
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
        judge.require(got.rejection is not None, case.requirements[0], f"{where}: encode accepted it", level=case.level)
        judge.metrics["rejection"] = raised(got)[:200]
        twin = twin_of(case)
        spec = twin.chunk
        judge_twin(judge, twin, lambda: attempt(impl.encode, parsed, make_chunk(spec.shape, spec.dtype, spec.fill)), impl.name)
        return
    data = calls.encode(chunk, f"encode of {where}")
    if "decode" in impl.roles:
        calls.decode(data, case.chunk.shape, "decoding its own stream")
