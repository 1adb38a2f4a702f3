"""Encode and decode throughput of implementations, measured side by side in one process.

Every implementation encodes and decodes the same 1024x1024 natural image (``images``) in
three modes at quality 90. Timings are interleaved round-robin: repeat r times
implementation A, B, C on one task, then the next task, with the starting implementation
rotated each repeat, so a burst of machine noise lands on all of them alike; the median of
the repeats is kept. All decoders of a mode read the same stream (written by the first
implementation that can encode it), so they are compared on identical input.

Repeats follow a stopping rule rather than a fixed count: a task is timed at least
``MIN_REPEATS`` times, then again only while the median is not yet known to within
``TARGET_ERROR`` (its standard error, estimated from the repeats' spread) and its repeats have
taken less than ``TASK_BUDGET`` seconds, and never more than ``repeats`` times. A fast,
steady call settles after a few repeats; a 500 ms browser decode stops after the minimum,
where a repeat more would cost a second and tell little; a noisy one runs to the maximum.

One timed repeat is a batch of ``batch`` calls in a row (``adapters.batch``): a plain loop
in process, and for a harness (``exec:``) pipelined, several requests in flight, as a Zarr
reader that decodes many chunks would keep them; its time per call is the batch's time
over ``batch``. Each implementation's ``transport`` says which: in process, or through the
harness protocol, in which framing, pipelined.

The report runs this module in one child process (``python -m
zarr_jpeg_conformance.report.throughput``): one process, so the interleaving is real, and
not the report's own process, so a backend that crashes costs the throughput table only.
Throughput counts uncompressed samples: MB/s = H * W * components / 10**6 / seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters import Adapter, AdapterLoadError, load_adapter
from ..adapters import batch as batch_calls
from ..adapters.process import DEFAULT_MEMORY_LIMIT
from ..adapters.remote import WINDOW, ExecAdapter
from ..corpus.images import make_image
from ..corpus.modes import MODE
from ..harnesses import spec_memory_limit
from ..judging.verdict import MAX_TEXT, clip
from ..protocol.framing import BINARY, JSON_LINES, SHARED
from .saved import FORMAT_VERSION

MODES = ("gray", "ycbcr-420", "rgb")
QUALITY = 90
KIND = "natural"
DEFAULT_SIZE = 1024
#: The most timed repeats of one task. Odd, for a true median.
DEFAULT_REPEATS = 21
#: The fewest: three give a median that one outlier cannot move.
MIN_REPEATS = 3
#: Stop repeating a task once the standard error of its median is within this fraction of it:
#: 3 % is below the spread between runs on a shared 2-core machine (5-10 %, measured with
#: bench_protocol), so more repeats would refine a figure the next run moves more than that.
TARGET_ERROR = 0.03
#: ... or once its timed repeats have taken this long (seconds): the slowest calls (0.2-0.5 s
#: for a browser decode of 1024x1024) then stop at MIN_REPEATS, which bounds the whole table
#: (113 tasks of 24 implementations: about 35 s on 2 cores).
TASK_BUDGET = 0.25
#: A call whose warm-up took this long (seconds) or more is timed one call per repeat: what a batch
#: in flight would hide of it (a 3 MiB payload's transfer, 1-3 ms) is 1-3 % of it, and a batch
#: of three 0.5 s calls cost 1.5 s a repeat.
SLOW_CALL = 0.1
#: Calls per timed repeat: enough for a pipelined harness to keep a request waiting behind
#: the one it works on for most of the batch.
DEFAULT_BATCH = 3


@dataclass
class _Task:
    impl: str
    mode: str
    op: str
    call: Callable[[], object] | None
    samples: int
    stream_bytes: int | None = None
    stream_from: str | None = None
    status: str = "ok"
    message: str = ""
    times: list[float] = field(default_factory=list)
    #: Calls per timed repeat.
    batch: int = 1

    def settled(self, repeats: int) -> bool:
        """Whether the stopping rule says this task has been timed enough (``MIN_REPEATS`` .. ``repeats``)."""
        n = len(self.times)
        if self.status != "ok" or n >= repeats:
            return True
        if n < min(MIN_REPEATS, repeats):
            return False
        return median_error(self.times) <= TARGET_ERROR or sum(self.times) * self.batch >= TASK_BUDGET


def median_error(times: Sequence[float]) -> float:
    """The standard error of the median of ``times`` relative to it, from their spread:
    1.2533 * sigma / sqrt(n) with sigma estimated robustly as IQR / 1.349 (a normal
    distribution's), so that one outlier does not keep a task repeating."""
    if len(times) < 2:
        return float("inf")
    q1, _, q3 = statistics.quantiles(times, n=4, method="inclusive")
    median = statistics.median(times)
    return 1.2533 * ((q3 - q1) / 1.349) / len(times) ** 0.5 / median if median > 0 else float("inf")


#: The framings a harness is offered here: shared framing where it speaks it (docs/protocol.md).
OFFERED = (JSON_LINES, BINARY, SHARED)


def transport(adapter: Adapter) -> str:
    """How the calls reach an implementation, for the table's heading."""
    if isinstance(adapter, ExecAdapter):
        framing = {BINARY: "binary framing", SHARED: "shared framing"}.get(adapter.framing, "JSON lines")
        return f"harness protocol, {framing}, pipelined ({WINDOW} in flight)"
    return "in process"


def _batched(call: Callable[..., list[Any]], *args: Any) -> Callable[[], object]:
    """A call of a batch function that raises the first exception of its outcomes."""

    def run() -> object:
        for outcome in call(*args):
            if isinstance(outcome, Exception):
                raise outcome
        return None

    return run


def _said(exc: BaseException) -> str:
    """An implementation's exception as a message of the table, capped like every message of a results file."""
    return f"{type(exc).__name__}: {clip(str(exc), MAX_TEXT)}"


def _try(func: Callable[[], Any], took: list[float] | None = None) -> tuple[Any, str | None, str]:
    """(value, None, "") or (None, "unsupported"|"error", message); rejections are ValueError/TypeError.
    ``took``: the call's seconds are appended to it."""
    start = time.perf_counter()
    try:
        value = func()
        if took is not None:
            took.append(time.perf_counter() - start)
        return value, None, ""
    except (ValueError, TypeError) as exc:
        return None, "unsupported", _said(exc)
    except Exception as exc:  # noqa: BLE001 - any other failure is reported in the table, not raised
        return None, "error", _said(exc)


def _calls(batch: int, warm_up: float) -> int:
    """Calls per timed repeat of a task whose warm-up call took ``warm_up`` seconds (see SLOW_CALL)."""
    return 1 if warm_up >= SLOW_CALL else batch


def _prepare(adapters: Sequence[Adapter], size: int, batch: int, log: Callable[[str], None] | None = None) -> list[_Task]:
    """Parse, encode once and decode once per implementation and mode (also the warm-up)."""
    tasks: list[_Task] = []
    began = time.perf_counter()
    for mode_id in MODES:
        mode = MODE[mode_id]
        image = make_image(KIND, size, size, channels=mode.channels)
        chunk = image[:, :, 0] if mode.channels == 1 else image
        samples = int(chunk.size)
        parsed: dict[str, object] = {}
        streams: dict[str, bytes] = {}
        for a in adapters:
            value, status, msg = _try(lambda: a.parse(mode.codec(QUALITY)))  # noqa: B023 - _try calls it at once
            if status:
                for op in ("encode", "decode"):
                    tasks.append(_Task(a.name, mode_id, op, None, samples, status=status, message=f"parse: {msg}"))
                continue
            parsed[a.name] = value
            if "encode" not in a.roles:
                tasks.append(_Task(a.name, mode_id, "encode", None, samples, status="unsupported", message="no encode role"))
                continue
            took: list[float] = []
            data, status, msg = _try(lambda: bytes(a.encode(value, chunk)), took)  # noqa: B023 - _try calls it at once
            if status:
                tasks.append(_Task(a.name, mode_id, "encode", None, samples, status=status, message=msg))
                continue
            streams[a.name] = data
            n = _calls(batch, took[0])
            tasks.append(
                _Task(a.name, mode_id, "encode", _batched(batch_calls.encode_many, a, value, [chunk] * n),
                      samples, len(data), a.name, batch=n)
            )
        shared = next(iter(streams.items()), None)
        for i, a in enumerate(adapters):
            if a.name in parsed:
                tasks.append(_decode_task(a, mode_id, parsed[a.name], chunk, shared, streams.get(a.name), batch))
            if log:
                done = ", ".join(f"{t.op} {t.status}" for t in tasks if t.impl == a.name and t.mode == mode_id)
                log(f"throughput: {mode_id} [{i + 1}/{len(adapters)}] {a.name}: {done} ({time.perf_counter() - began:.0f} s)")
    return tasks


def _decode_task(a: Adapter, mode_id: str, parsed: object, chunk: np.ndarray, shared: tuple[str, bytes] | None,
                 own: bytes | None, batch: int) -> _Task:
    """The decode task of one implementation: the shared stream, or else its own; the warm-up decode checks the shape."""
    samples = int(chunk.size)
    if "decode" not in a.roles:
        return _Task(a.name, mode_id, "decode", None, samples, status="unsupported", message="no decode role")
    candidates = ([shared] if shared else []) + ([(a.name, own)] if own is not None else [])
    status: str | None = "unsupported"
    msg = "no stream to decode: no implementation encoded this mode"
    for source, data in candidates:
        took: list[float] = []
        out, status, msg = _try(lambda: np.asarray(a.decode(parsed, data, chunk.shape)), took)  # noqa: B023 - called at once
        if not status and out.shape == chunk.shape:
            n = _calls(batch, took[0])
            return _Task(a.name, mode_id, "decode", _batched(batch_calls.decode_many, a, parsed, [data] * n, chunk.shape),
                         samples, len(data), source, batch=n)
        if not status:
            status, msg = "error", f"decoded shape {out.shape} != {chunk.shape}"
    return _Task(a.name, mode_id, "decode", None, samples, status=status or "error", message=msg)


def measure(
    adapters: Sequence[Adapter],
    *,
    size: int = DEFAULT_SIZE,
    repeats: int = DEFAULT_REPEATS,
    batch: int = DEFAULT_BATCH,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Time every implementation's encode and decode; returns the throughput.json document."""
    tasks = _prepare(adapters, size, batch, log)
    timed = [t for t in tasks if t.call is not None]
    names = [a.name for a in adapters]
    groups: dict[tuple[str, str], list[_Task]] = {}
    for t in timed:
        groups.setdefault((t.mode, t.op), []).append(t)
    for (mode, op), group in groups.items():
        began = time.perf_counter()
        rep = 0
        while not all(t.settled(repeats) for t in group):
            k = rep % len(group)
            rep += 1
            for t in group[k:] + group[:k]:
                if t.call is None or t.settled(repeats):
                    continue
                start = time.perf_counter()
                try:
                    t.call()
                except Exception as exc:  # noqa: BLE001 - a call that worked in the warm-up failed now
                    t.status, t.message = "error", _said(exc)
                    continue
                t.times.append((time.perf_counter() - start) / t.batch)
        if log:
            counts = sorted(len(t.times) for t in group)
            log(f"throughput: {mode} {op}: {len(group)} implementation(s) timed in {time.perf_counter() - began:.1f} s "
                f"({counts[0]}-{counts[-1]} repeats)")
    best: dict[tuple[str, str], float] = {}
    rows = []
    for t in tasks:
        row: dict[str, Any] = {
            "implementation": t.impl,
            "mode": t.mode,
            "op": t.op,
            "status": t.status,
            "message": t.message,
            "samples": t.samples,
            "stream_bytes": t.stream_bytes,
            "stream_from": t.stream_from,
        }
        if t.status == "ok" and t.times:
            median = statistics.median(t.times)
            row.update(seconds_median=median, seconds_min=min(t.times), repeats=len(t.times), batch=t.batch,
                       mb_per_s=t.samples / median / 1e6,
                       median_error=round(min(median_error(t.times), 1.0), 4))
            best[(t.mode, t.op)] = max(best.get((t.mode, t.op), 0.0), row["mb_per_s"])
        rows.append(row)
    for row in rows:
        if "mb_per_s" in row:
            row["relative"] = row["mb_per_s"] / best[(row["mode"], row["op"])]
    return {
        "format_version": FORMAT_VERSION,
        "image": {"kind": KIND, "height": size, "width": size},
        "quality": QUALITY,
        "modes": list(MODES),
        "implementations": names,
        "repeats": repeats,
        "batch": batch,
        "transport": {a.name: transport(a) for a in adapters},
        "method": f"median of the repeats after one warm-up call; round-robin over implementations, "
        f"starting implementation rotated every repeat; time.perf_counter around {batch} calls in a row "
        f"(a harness's pipelined; one call where the warm-up took {SLOW_CALL} s or more), divided by their number; "
        "MB/s = uncompressed samples / 1e6 / seconds; "
        f"repeats: at least {min(MIN_REPEATS, repeats)}, then until the median's standard error is within "
        f"{TARGET_ERROR:.0%} of it or the task's repeats took {TASK_BUDGET} s, at most {repeats}",
        "machine": {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()},
        "results": rows,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.report.throughput", description=__doc__)
    parser.add_argument("--impl", action="append", required=True, metavar="SPEC", help="implementation (repeatable)")
    parser.add_argument("--out", type=Path, required=True, help="throughput.json to write")
    parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help="image height and width (default %(default)s)")
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS, help="most timed batches per task (default %(default)s)")
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, help="calls per timed batch (default %(default)s)")
    args = parser.parse_args(argv)
    adapters: list[Adapter] = []
    for spec in args.impl:
        try:
            # A harness is offered shared framing too: what is timed is then its library, not pipe copies of payloads.
            adapters.append(load_adapter(spec, memory_limit=spec_memory_limit(spec, DEFAULT_MEMORY_LIMIT), framings=OFFERED))
        except AdapterLoadError as exc:
            print(f"throughput: skipping {spec}: {exc}", file=sys.stderr)
    doc = measure(adapters, size=args.size, repeats=max(1, args.repeats), batch=max(1, args.batch),
                  log=lambda s: print(s, file=sys.stderr, flush=True))
    args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["DEFAULT_BATCH", "DEFAULT_REPEATS", "DEFAULT_SIZE", "MIN_REPEATS", "MODES", "QUALITY", "SLOW_CALL", "TARGET_ERROR", "TASK_BUDGET",
           "main", "measure", "median_error", "transport"]
