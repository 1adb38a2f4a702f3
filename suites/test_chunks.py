"""Chunks: every chunk case of fixtures/chunks is encoded or rejected as the spec says."""

from __future__ import annotations

import numpy as np
import pytest

from zarr_jpeg_conformance.core.markers import inspect
from zarr_jpeg_conformance.corpus.cases import chunk_cases
from zarr_jpeg_conformance.corpus.images import make_chunk
from zarr_jpeg_conformance.judging.checks import case_params, parsed_or_verdict
from zarr_jpeg_conformance.judging.verdict import Outcome, attempt

pytestmark = pytest.mark.roles("encode")


@pytest.mark.parametrize("case", case_params(chunk_cases()))
def test_encode_chunk(impl, case, judge) -> None:
    """A chunk the spec accepts is encoded (and decodes back to its shape); any other is rejected."""
    parsed = parsed_or_verdict(judge, impl, case.codec)
    chunk = make_chunk(case.chunk.shape, case.chunk.dtype, case.chunk.fill)
    got = attempt(impl.encode, parsed, chunk)
    where = f"chunk {case.chunk.dtype}{list(case.chunk.shape)} under {case.codec['configuration']}"
    if got.error is not None:
        judge.finish(Outcome.ERROR, f"encode raised an error: {got.describe()}\n{got.trace()}")
    if not case.valid:
        judge.require(got.rejection is not None, case.requirements[0], f"{where}: encode accepted it", level=case.level)
        return
    if got.rejection is not None:
        if case.level == "MAY":
            judge.finish(Outcome.UNSUPPORTED, f"{where}: rejected cleanly: {got.describe()}")
        judge.require(False, case.requirements[0], f"{where}: encode {got.describe()}", level=case.level)
    data = got.result
    judge.require(isinstance(data, bytes | bytearray | memoryview), "JPEG-ENC-04", f"encode returned {type(data).__name__}, not bytes")
    info = inspect(bytes(data))
    h, w = case.chunk.shape[:2]
    judge.require((info.height, info.width) == (h, w), "JPEG-DIM-01", f"{where}: stream is {info.height}x{info.width} (HxW)")
    if "decode" in impl.roles:
        back = attempt(impl.decode, parsed, bytes(data), tuple(case.chunk.shape))
        out = back.value
        if back.ok and isinstance(out, np.ndarray):
            seen = f"gave {out.dtype} {out.shape}"
            good = out.shape == tuple(case.chunk.shape) and out.dtype == np.uint8
        else:
            seen, good = back.describe(), False
        judge.require(good, "JPEG-DIM-03", f"{where}: decoding its own stream {seen}")
