"""Decoding the stream corpus: valid streams within tolerance, broken ones rejected cleanly and quickly.

Every case of ``fixtures/streams`` (see ``corpus/streams.py``) says what a decoder must do with
its stream: decode it to within its tolerance family of the expected decode
(``judging/decode_tolerances.py``), reject it with ValueError or TypeError, or either. A decode
runs in a worker thread with a bound on its CPU time (the same on a loaded machine as on an
idle one) and the malformed cases also with a bound on their memory (tracemalloc in this
process, the resident set of a harness process under ``exec:`` or ``--isolate``), so a hang
or a runaway allocation is an outcome, not a stuck session.
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
from zarr_jpeg_conformance.corpus.modes import codec
from zarr_jpeg_conformance.corpus.streams import StreamCase, cases_of
from zarr_jpeg_conformance.judging import roots
from zarr_jpeg_conformance.judging.checks import (
    Calls,
    case_params,
    judge_error,
    owned,
    raised,
    support_of,
)
from zarr_jpeg_conformance.judging.decode_tolerances import cite_decode, diagnose, difference, judge_reconstruction
from zarr_jpeg_conformance.judging.memory import resident_peak
from zarr_jpeg_conformance.judging.verdict import Attempt, Cause, Diagnosis, Outcome, attempt

pytestmark = pytest.mark.roles("decode")

#: CPU seconds one decode may use in its thread. The largest stream of the corpus decodes
#: in about a millisecond; a decoder that works through a forged 65535x65535 frame needs
#: 26 s (research/backends.md 11.15), and anything that slow is a fault here. CPU time, not
#: wall time: a loaded machine must not turn a pass into a timeout.
DECODE_CPU_LIMIT = 10.0
#: Wall seconds, for a decoder that waits instead of working (a lock, a sleep, a pipe).
DECODE_WALL_LIMIT = 120.0
#: Memory one malformed-stream decode may take at its peak beyond the chunk it fills:
#: PEAK_BASE plus PEAK_PER_CHUNK_BYTE times the chunk's bytes. In this process that is what
#: tracemalloc sees (Python objects and numpy arrays; the CPU bound covers a C library that
#: works through a huge frame); in a harness process, in any language, the growth of its
#: resident set (judging.memory). Why these numbers: a decoder needs the chunk itself and
#: its working planes, and a garbage-collected runtime keeps some garbage. Measured growth
#: over the corpus, harnesses in a process of their own: valid streams at most 5.3 MiB
#: (jpeg-js; Java ImageIO 1.4, Go 0.2, libjpeg-turbo 0.4), the forged-small case (a 12 MiB
#: chunk, rejected or accepted) 12-74 MiB across zune-jpeg, ImageIO, pdf.js and jpeg-js
#: (the spread of a garbage collector). A header trusted before it is checked against
#: the chunk, 65535x65535, asks for 4.3 GB a plane.
PEAK_BASE = 64 << 20
PEAK_PER_CHUNK_BYTE = 8


def peak_limit(chunk_shape: tuple[int, ...]) -> int:
    """The memory bound of one decode into a chunk of ``chunk_shape`` (see PEAK_BASE)."""
    return PEAK_BASE + PEAK_PER_CHUNK_BYTE * int(np.prod(chunk_shape))


#: Decodes that ran past their bound in this process and may still be running, by implementation.
_RUNAWAY: dict[str, str] = {}


def _isolated(impl: Any) -> bool:
    # An implementation in a harness process (plugin --isolate, exec:) has its own
    # per-call timeout and address-space limit, and its calls must not overlap.
    return hasattr(impl, "incidents")


def _cpu_clock(thread: threading.Thread) -> int | None:
    try:
        return time.pthread_getcpuclockid(thread.ident or 0)
    except (AttributeError, OSError):  # not POSIX, or the thread is gone
        return None


def _wait(worker: threading.Thread) -> str:
    """Wait for ``worker`` within the bounds; '' if it finished, else which bound it ran past."""
    clock, start = _cpu_clock(worker), time.monotonic()
    while worker.is_alive():
        worker.join(0.05)
        try:
            used = time.clock_gettime(clock) if clock is not None else 0.0
        except OSError:  # finished between the join and the read
            continue
        if used > DECODE_CPU_LIMIT:
            return f"used more than {DECODE_CPU_LIMIT:g} s of CPU"
        if time.monotonic() - start > DECODE_WALL_LIMIT:
            return f"did not return within {DECODE_WALL_LIMIT:g} s (waiting rather than working)"
    return ""


def _decode(impl: Any, parsed: object, data: bytes, shape: tuple[int, ...], *, trace: bool) -> tuple[Attempt[Any] | str, float, int | None]:
    """(attempt, seconds, peak bytes or None); instead of the attempt, which bound a decode ran past.

    A decoder in this process cannot be stopped, only left behind: the worker thread lets
    the suite give up, record 'timeout' and go on while the stuck call keeps running (a
    daemon thread). Later cases of that implementation say so (see _RUNAWAY). A segfault
    or an allocation that exhausts memory would still end the session, which is what
    --isolate adds: a separate process per implementation, killed on timeout, with an
    address-space limit.
    """
    if _isolated(impl):
        start = time.perf_counter()
        with resident_peak(getattr(impl, "pid", None) if trace else None) as grown:
            got = attempt(impl.decode, parsed, data, shape)
        return got, time.perf_counter() - start, grown.bytes
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
    overrun = _wait(worker)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] - before if trace else None
    if started_tracing:
        tracemalloc.stop()
    return (overrun or box["got"]), seconds, peak


def _describe(value: object) -> str:
    if isinstance(value, np.ndarray):
        what = f"an array {value.dtype} {value.shape}"
        if value.size and value.dtype.kind in "uif" and value.min() == value.max():
            first = value.flat[0].item()
            return f"{what}, every sample {first}" + (" (all zeros)" if first == 0 else " (constant)")
        return what
    return f"a {type(value).__name__}"


def _judge_stream(impl: Any, case: StreamCase, judge: Any) -> None:
    parsed = Calls(judge, impl, case.codec).parse()
    data = case.data()
    trace = case.category == "malformed"
    earlier = _RUNAWAY.get(impl.name)
    if earlier:
        judge.metrics["runaway"] = earlier
        judge.messages.append(f"note: the decode of {earlier} ran past its bound and may still be running in a thread "
                              "of this process: this case's time and memory may be affected (run with --isolate to avoid it)")
    got, seconds, peak = _decode(impl, parsed, data, case.chunk_shape, trace=trace)
    judge.metrics["seconds"] = round(seconds, 4)
    if isinstance(got, str):
        _RUNAWAY.setdefault(impl.name, case.id)
        judge.finish(Outcome.TIMEOUT, f"decode of {case.description!r} {got}; it was left running")
        return
    if got.error is not None:
        judge_error(judge, "decode", got)
    if peak is not None:
        judge.metrics["peak_mib"] = round(peak / 2**20, 2)
        limit = peak_limit(case.chunk_shape)
        judge.require(peak < limit, "JPEG-X-13",
                      f"decoding a {len(data)}-byte stream into a chunk of {case.chunk_shape} allocated "
                      f"{peak / 2**20:.0f} MiB at its peak (limit {limit / 2**20:.0f} MiB): the frame header was "
                      f"trusted before it was checked against the chunk ({got.describe()})")
    if got.rejection is not None:
        _rejected(case, judge, got, impl, parsed)
    else:
        _accepted(case, judge, got.value, data, impl)


def _rejected(case: StreamCase, judge: Any, got: Attempt[Any], impl: Any, parsed: object) -> None:
    judge.metrics["rejection"] = raised(got)[:200]
    if case.expect == "reject":
        return
    data = case.data()
    # What the refusal is about, asked again with one thing changed (judging.roots): the chunk's sides swapped. Not
    # where the case allows any refusal: no probe turns an allowed refusal into a fail, or a MAY case into a MUST.
    obliged = case.expect != "decode-or-reject" or case.decode_if_parsed is not None
    diagnosis = (roots.decode_diagnosis(impl.decode, parsed, data, case.chunk_shape, got.rejection, case.codec)
                 if obliged else None)
    if diagnosis is None and case.decode_if_parsed is not None and attempt(impl.parse, case.decode_if_parsed).ok:
        judge.require(False, case.requirements[0],
                      f"{case.description}: the implementation accepts {case.decode_if_parsed['configuration']} when "
                      f"parsing, so it claims to decode such streams (JPEG-ECS-11), yet refused this one under "
                      f"{case.codec['configuration']} (decoding ignores encoded_color_space, JPEG-DEC-01): {raised(got)}",
                      cause=_REFUSES_BY_CONFIGURATION)
    if diagnosis is None and case.expect == "decode-or-reject":
        if case.level == "MAY":
            judge.finish(Outcome.UNSUPPORTED, f"refused, which {case.requirements[0]} allows: {raised(got)}")
        judge.finish(Outcome.PASS, f"refused, which {case.requirements[0]} allows: {raised(got)}")
        return
    diagnosis = diagnosis or _refused_for_its_configuration(case, impl, data)
    requirement, why, cause = diagnosis or (case.requirements[0], "", None)
    judge.require(False, requirement, f"{case.description}: decode refused: {raised(got)}" + (f"; {why}" if why else ""),
                  cause=cause)


_C444 = ((1, 1), (1, 1), (1, 1))
#: A stream refused under a configuration the implementation accepted, which it decodes under another: the
#: configuration, which decoding ignores, decided.
_REFUSES_BY_CONFIGURATION = Cause("decode", "refuses-by-configuration", "JPEG-DEC-01",
                                  "refuses at decode a stream it decodes under another configuration: the "
                                  "configuration, which decoding ignores, decides whether it decodes")


def _refused_for_its_configuration(case: StreamCase, impl: Any, data: bytes) -> Diagnosis | None:
    """A refusal under a configuration with an optional feature the implementation accepted (rgb, passthrough),
    of a stream it decodes under the stream's own plain configuration: the feature refused after it was accepted."""
    config = parse_codec(case.codec)
    features = support_of(config).features
    stored = inspect(data).stored_color_space
    if not features or stored not in ("grayscale", "ycbcr"):
        return None
    plain = codec(90, stored, None, None if stored == "grayscale" else _C444)
    parsed = attempt(impl.parse, plain)
    if not parsed.ok or not attempt(impl.decode, parsed.value, data, case.chunk_shape).ok:
        return None
    feature = features[0]
    return Diagnosis(feature.afterwards, f"it decodes the same {stored} stream under {plain['configuration']} and accepted "
                                         f"{case.codec['configuration']} when parsing ({feature.requirement}): the refusal "
                                         "is of the configuration, which decoding ignores",
                     Cause("decode", f"refuses-{feature.requirement.lower()}-after-parse", feature.afterwards,
                           f"accepts the optional feature of {feature.requirement} when parsing, then refuses at decode "
                           "streams it decodes under a plain configuration"))


def _follows_configuration(case: StreamCase, impl: Any, data: bytes, right: Any) -> Diagnosis | None:
    """JPEG-DEC-01 where a wrong decode under a configuration whose encoded_color_space is not the stream's
    comes out right under a configuration that names the stream's: the configuration chose the transform."""
    config = parse_codec(case.codec)
    stored = inspect(data).stored_color_space
    if stored not in ("rgb", "ycbcr") or config.encoded_color_space in (stored, "grayscale"):
        return None
    matching = codec(90, stored, config.decoded_color_space, _C444 if stored == "ycbcr" else None)
    parsed = attempt(impl.parse, matching)
    again = attempt(impl.decode, parsed.value, data, case.chunk_shape) if parsed.ok else parsed
    if not again.ok or not isinstance(again.value, np.ndarray) or again.value.shape != tuple(case.chunk_shape):
        return None
    if not right(np.asarray(again.value)):
        return None
    return Diagnosis("JPEG-DEC-01", f"a decode that follows the configuration: the same stream decodes right under "
                                    f"encoded_color_space {stored!r}, and decoding ignores encoded_color_space",
                     roots.FOLLOWS_CONFIGURATION)


def _accepted(case: StreamCase, judge: Any, out: object, data: bytes, impl: Any) -> None:
    if case.expect == "reject":
        judge.require(False, case.requirements[0], f"{case.description}: decode returned {_describe(out)} instead of rejecting")
        return
    out = owned(judge, out, case.chunk_shape, "decode")
    config = parse_codec(case.codec)
    references = case.references()
    judged = judge_reconstruction(out, data, config, references, str(case.tolerance))
    judge.metrics.update(max_abs=difference(out, references[0]).max_abs, references=len(references))

    def right(again: np.ndarray) -> bool:
        return judge_reconstruction(again, data, config, references, str(case.tolerance)).ok

    def cure() -> Diagnosis | None:
        return (roots.default_cure(impl, case.codec, data, case.chunk_shape, right)
                or _follows_configuration(case, impl, data, right))

    if case.level == "SHOULD":
        # The stream's reading is itself an interpretation (e.g. JPEG-X-12): warn under it, naming the rule it looks like.
        judge.metrics.update(judged.metrics)
        if not judged.ok:
            found = cure() or diagnose(out, judged.expected, inspect(data).stored_color_space, config.decoded_color_space,
                                       data=data)
            judge.require(False, case.requirements[0], f"{case.description}: {judged.observed}"
                          + (f"; it looks like {found.why} [{found.requirement}]" if found else ""))
        return
    # Optional (MAY) streams may be rejected, but once decoded they must decode right.
    cite_decode(judge, judged, out, data, config, case.description, cure=cure, level="MUST")


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
