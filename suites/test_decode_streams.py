"""Decoding the stream corpus: valid streams within tolerance, broken ones rejected cleanly and quickly.

Every case of ``fixtures/streams`` (see ``corpus/streams.py``) says what a decoder must do with
its stream: decode it to within its tolerance family of libjpeg-turbo's decode
(``judging/decode_tolerances.py``), reject it with ValueError or TypeError, or either. A decode
runs in a worker thread with a time limit, and the malformed cases also under
tracemalloc, so a hang or a runaway allocation is an outcome, not a stuck session.
"""

from __future__ import annotations

import threading
import time
import tracemalloc
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.core.markers import inspect
from zarr_jpeg_conformance.corpus.streams import StreamCase, cases_of
from zarr_jpeg_conformance.judging.checks import case_params, parsed_or_verdict
from zarr_jpeg_conformance.judging.decode_tolerances import FAMILIES, diagnose, difference
from zarr_jpeg_conformance.judging.verdict import Attempt, Outcome, attempt

pytestmark = pytest.mark.roles("decode")

#: Seconds one decode may take. The largest stream of the corpus decodes in about a
#: millisecond; a decoder that works through a forged 65535x65535 frame needs 26 s
#: (research/backends.md 11.15), and anything that slow is a fault here.
DECODE_TIMEOUT = 10.0
#: Peak of the allocations tracemalloc sees (Python objects and numpy arrays, not a C
#: library's own buffers; DECODE_TIMEOUT bounds a library that works through a huge frame)
#: during one malformed-stream decode. The largest chunk of the corpus is 48x80x3 = 11.5 kB;
#: an output buffer sized from the forged header is 65535 * 65535 = 4.3 GB.
PEAK_LIMIT = 64 << 20


def _isolated(impl: Any) -> bool:
    # An implementation in a harness process (plugin --isolate, exec:) has its own
    # per-call timeout and address-space limit, and its calls must not overlap.
    return hasattr(impl, "incidents")


def _decode(impl: Any, parsed: object, data: bytes, shape: tuple[int, ...], *, trace: bool) -> tuple[Attempt[Any] | None, float, int | None]:
    """(attempt, seconds, peak bytes or None); the attempt is None if the decode timed out.

    A decoder in this process cannot be stopped, only waited for: the worker thread lets
    the suite give up after DECODE_TIMEOUT, record 'timeout' and go on, while the stuck
    call keeps running (a daemon thread, so it does not hold up the exit). That is enough
    for a hang; a segfault or an allocation that exhausts memory would still end the
    session, which is what --isolate adds: a separate process per implementation, killed
    on timeout, with an address-space limit, and a crash recorded as that case's outcome.
    """
    if _isolated(impl):
        start = time.perf_counter()
        return attempt(impl.decode, parsed, data, shape), time.perf_counter() - start, None
    box: dict[str, Attempt[Any]] = {}

    def run() -> None:
        try:
            box["got"] = attempt(impl.decode, parsed, data, shape)
        except BaseException as exc:  # noqa: BLE001 - SystemExit & co. in a decoder are its errors
            box["got"] = Attempt(error=exc)

    started_tracing = trace and not tracemalloc.is_tracing()
    if started_tracing:
        tracemalloc.start()
    if trace:
        tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0] if trace else 0
    worker = threading.Thread(target=run, name="decode-under-test", daemon=True)
    start = time.perf_counter()
    worker.start()
    worker.join(DECODE_TIMEOUT)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] - before if trace else None
    if started_tracing:
        tracemalloc.stop()
    return box.get("got"), seconds, peak


def _describe(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"an array {value.dtype} {value.shape}"
    return f"a {type(value).__name__}"


def _judge_stream(impl: Any, case: StreamCase, judge: Any) -> None:
    parsed = parsed_or_verdict(judge, impl, case.codec)
    data = case.data()
    trace = case.category == "malformed"
    got, seconds, peak = _decode(impl, parsed, data, case.chunk_shape, trace=trace)
    judge.metrics["seconds"] = round(seconds, 4)
    if got is None:
        judge.finish(Outcome.TIMEOUT, f"decode of {case.description!r} did not return within {DECODE_TIMEOUT:g} s")
        return
    if got.error is not None:
        judge.finish(Outcome.ERROR, f"decode raised an error, not a rejection (ValueError/TypeError): {got.describe()}\n{got.trace()}")
    if peak is not None:
        judge.metrics["peak_mib"] = round(peak / 2**20, 2)
        judge.require(peak < PEAK_LIMIT, "JPEG-X-13",
                      f"decoding a {len(data)}-byte stream into a chunk of {case.chunk_shape} allocated "
                      f"{peak / 2**20:.0f} MiB at its peak (limit {PEAK_LIMIT >> 20} MiB): the frame header was "
                      f"trusted before it was checked against the chunk ({got.describe()})")
    if got.rejection is not None:
        _rejected(case, judge, got)
    else:
        _accepted(case, judge, got.value, data)


def _rejected(case: StreamCase, judge: Any, got: Attempt[Any]) -> None:
    if case.expect == "reject":
        return
    if case.expect == "decode-or-reject":
        if case.level == "MAY":
            judge.finish(Outcome.UNSUPPORTED, f"rejected cleanly, which {case.requirements[0]} allows: {got.describe()}")
        judge.finish(Outcome.PASS, f"rejected cleanly, which {case.requirements[0]} allows: {got.describe()}")
        return
    judge.require(False, case.requirements[0], f"{case.description}: decode {got.describe()}")


def _accepted(case: StreamCase, judge: Any, out: object, data: bytes) -> None:
    if case.expect == "reject":
        judge.require(False, case.requirements[0], f"{case.description}: decode returned {_describe(out)} instead of rejecting")
        return
    shape = tuple(case.chunk_shape)
    judge.require(isinstance(out, np.ndarray) and out.dtype == np.uint8 and out.shape == shape, "JPEG-DEC-03",
                  f"decode returned {_describe(out)}, expected uint8 {shape}")
    assert isinstance(out, np.ndarray)
    expected = case.expected()
    tolerance = FAMILIES[str(case.tolerance)]
    diff = difference(out, expected)
    judge.metrics.update(max_abs=diff.max_abs, mean_abs=round(diff.mean_abs, 3))
    if diff.within(tolerance):
        return
    decoded = parse_codec(case.codec).decoded_color_space
    found = diagnose(out, expected, inspect(data).stored_color_space, decoded)
    requirement, why = found if found else ("JPEG-DEC-01", "")
    observed = (f"{case.description}: the decode is {diff} from libjpeg-turbo's, beyond the {tolerance.name!r} "
                f"tolerance (max {tolerance.max_abs}, mean {tolerance.mean_abs})" + (f"; it looks like {why}" if why else ""))
    if case.level == "SHOULD":
        # The stream's reading is itself an interpretation (e.g. JPEG-X-12): warn under it.
        judge.require(False, case.requirements[0], observed + f" [{requirement}]")
    else:
        # Optional (MAY) streams may be rejected, but once decoded they must decode right.
        judge.require(False, requirement, observed, level="MUST")


@pytest.mark.parametrize("case", case_params(cases_of("reference")))
def test_reference(impl, case, judge) -> None:
    """A stream of every mode, size class and quality band decodes to libjpeg-turbo's pixels."""
    _judge_stream(impl, case, judge)


@pytest.mark.parametrize("case", case_params(cases_of("foreign")))
def test_foreign(impl, case, judge) -> None:
    """Valid JPEG from other encoders and options decodes, or is rejected where the spec allows it."""
    _judge_stream(impl, case, judge)


@pytest.mark.parametrize("case", case_params(cases_of("malformed")))
def test_malformed(impl, case, judge) -> None:
    """A broken stream, or one that does not fit its chunk, is rejected cleanly, in bounded time and memory."""
    _judge_stream(impl, case, judge)
