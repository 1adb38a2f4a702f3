"""Benchmark: what the harness protocol costs, in each framing, pipelined or not, and how reply reading scales.

Two measurements, each printed as ratios from this one run:

1. **Throughput through a harness.** 256x256x3 chunks (quality 90, 4:2:0) encoded and
   decoded by one library along these paths: **in process** (no protocol), and through the
   harness protocol over **JSON lines**, **binary** and **shared** framing one call at a time, and
   over **binary pipelined** and **shared pipelined** (``ExecAdapter.encode_many`` / ``decode_many``: up to
   ``--window`` requests in flight; shared framing, the payloads in a memory region, where the harness chooses it
   when offered). The verdict takes the faster pipelined path. **in harness, busy** is the library's own speed
   (``bench``) while a process spins on every other CPU: pipelined, the client works beside the harness, and
   where CPUs share a core or a clock budget (a VM's vCPUs) that alone slows the library; the line after the
   verdict gives that ceiling, and a miss where the ceiling itself is below the target says so: that run measured the
   machine, not the protocol. Two kinds of harness:

   - ``harnesses.server`` serving a built-in Python adapter (``--impl``, imagecodecs by
     default): in process is the same adapter in this process. Its decode writes into one buffer that lies as the
     client lays out a reply's room (``protocol.shared.layout``), where the adapter offers ``decode_into``, as the
     server then decodes into the room: the library's speed depends on where its output lies. libjpeg-turbo's AVX2
     color conversion writes rows that start at a multiple of 32 bytes with non-temporal stores: imagecodecs decoded
     a 256x256x3 chunk in 0.30 ms into such a buffer, 0.23 ms into others, so a reference that decoded into memory
     of its own was one or the other by where malloc put it (0.71x and 0.92x for the same server, one run after the
     other).
   - shipped harnesses (``--harness``: by default one per language kit, Go, Java, Node.js
     and Rust; ``all`` for every row of ``harnesses.HARNESSES``, ``none`` for none; each skipped with the reason
     where it is not built): in process is the library's own speed
     inside the harness, measured by the optional ``bench`` request (the harness times the
     same encode or decode, ``--batch`` times in a row, with its own monotonic clock; a JVM
     is as warm for it as for the calls through the protocol). A decode-only harness is
     measured on decode, with a stream the built-in adapter wrote. The Python server answers
     ``bench`` too, shown as ``in harness``: the adapter's speed in the harness's process. Its verdict stays on in
     process, the stricter reference (what running the adapter in process gives); a line after it gives the same
     pipelined path over in harness, the target as worded ("its library's in-harness throughput"), since the same
     library ran 0.73-1.0x as fast in the server's process as in this one, in runs of the same code.

   The paths are timed in interleaved rounds (``--batch`` calls in a row per path, the
   order rotated each round, so machine noise hits them alike) and compared by their
   medians. A batch is at least 100 calls and 0.2 s (more calls for a fast path), long enough to measure a
   pipeline's steady state, which is what throughput is: a batch starts from a wait (the first reply needs a whole round trip, the last is
   waited for alone), and on a 2-vCPU Linux VM a pipeline woken from idle runs slow for several
   milliseconds, until client and harness sit on different CPUs (Linux tends to wake a process on
   its waker's CPU). Measured with imagecodecs behind the server, shared framing: 20 calls after
   20 ms idle took 0.38 ms a call, 0.26 in steady state, 0.27 after idle with the two pinned to
   different CPUs; a batch of 20 charged the protocol with half as much again as it costs. rust-turbojpeg's
   encode, shared framing pipelined: 0.75-0.90x of its library in batches of 100 calls (20 ms), 0.92x in batches
   of 1000, 0.97x over 10 000 calls in a row.
   Before any timing each process works for ``--warmup`` seconds per op (whole batches of its first path): a JVM's
   compiler threads still used 0.2-0.5 ms of CPU per call of java-imageio 3 s into a run (a second CPU in ``bench``,
   the client's CPU when pipelined), and were idle after about 6 s of calls.
   ``wall x`` is the reference's time per call over the path's, its share of the
   in-process throughput (target for binary framing pipelined: >= 0.8). ``client`` and
   ``harness`` are the CPU time per call of this process and of every thread of the
   harness (Linux ``/proc``); ``cpu x`` compares the reference's CPU time with their sum:
   what the protocol costs in work, whatever the load. Pipelined, client and harness work
   at the same time: ``par x`` compares with the larger of the two, the ``wall x`` of a
   machine with a CPU free for each. On a machine busy with other work (the load average
   is printed) wall x falls towards cpu x, the more so where a scheduler shares CPU time
   out per session rather than per process.
2. **Reply reading against reply size.** A fake harness (this module with
   ``--fake-harness``) answers decode requests with a chunk of 8, 32 and 128 MiB that it
   prepared before being asked; the client's time to read and unpack each reply, per MiB,
   should stay roughly constant if reading is linear (before, a 128 MiB JSON-lines reply
   took 31 s: the buffer was rescanned on every read).

Run: ``python -m zarr_jpeg_conformance.tools.bench_protocol [--impl imagecodecs] [--harness NAME ... | all]
[--rounds 9] [--batch 100] [--batch-seconds 0.2] [--warmup 2] [--window 8] [--size 256] [--sizes 8 32 128]``.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..adapters import AdapterLoadError, load_adapter
from ..adapters.process import DEFAULT_MEMORY_LIMIT
from ..adapters.remote import WINDOW, ExecAdapter, HarnessError, HarnessFailure
from ..corpus.images import make_image
from ..harnesses import HARNESSES as SHIPPED
from ..harnesses import Unavailable, spec_memory_limit
from ..harnesses import command as harness_command
from ..protocol import shared
from ..protocol.framing import BINARY, JSON_LINES, SHARED, FrameReader, encode_message

K = TypeVar("K")

CODEC = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}
#: The chunk shape of the target (--size changes height and width).
CHUNK = (256, 256, 3)
#: Framings a harness run is offered: JSON lines only, or both (the harness then chooses binary).
OFFERS = {"json lines": [JSON_LINES], "binary": [JSON_LINES, BINARY]}
#: The throughput measurement offers shared framing too (payloads in a memory region: the harness chooses it if it can).
THROUGHPUT_OFFERS = {**OFFERS, "shared": [JSON_LINES, BINARY, SHARED]}
#: The pipelined paths: the framing each offers.
PIPELINED = {"binary pipelined": "binary", "shared pipelined": "shared"}


@dataclass(frozen=True)
class Timing:
    """How the chunk benchmark times its paths."""

    #: Interleaved rounds; the medians are compared.
    rounds: int = 9
    #: Calls in a row per path and round, at least; and seconds, at least (a batch starts from a wait, and a pipeline
    #: takes milliseconds to reach its steady state).
    batch: int = 100
    batch_seconds: float = 0.2
    #: Requests in flight on the pipelined paths.
    window: int = WINDOW
    #: Seconds each process (the harness behind each framing, this one for the in-process path) works before any
    #: timing, per op: a JVM's compiler threads still work seconds into a run, on the CPU the client needs.
    warmup: float = 2.0


#: Shipped harnesses measured by default, one on each language's kit (each skipped, with the
#: reason, where it is not built): a library that encodes and decodes, libjpeg-turbo where the
#: language has it, as imagecodecs behind harnesses.server.
HARNESSES = ("go-image-jpeg", "java-imageio", "node-cornerstone", "rust-turbojpeg")
TARGET = 0.8


def _cpu_seconds(pid: int | None) -> float:
    """CPU time of every thread of a process so far (Linux; 0.0 where it cannot be read).

    Threads that have ended are not counted: a JVM's and Go's threads live as long as the process.
    """
    if pid is None:
        return 0.0
    total = 0.0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0]) / 1e9
            except (OSError, ValueError, IndexError):
                continue  # a thread that ended while we looked
    except OSError:
        return 0.0
    return total


#: A path's call: runs ``batch`` operations and returns the seconds they took by the
#: harness's own clock, or None to be timed here.
Call = Callable[[int], "float | None"]


def _interleaved(
    calls: Mapping[K, Call], rounds: int, batch: int | Mapping[K, int], pids: Mapping[K, int | None]
) -> tuple[dict[K, float], dict[K, float], dict[K, float]]:
    """Median wall, client CPU and harness CPU seconds per operation of each path.

    Each round runs ``batch`` operations per path (or ``batch[name]``), in an order that rotates every round.
    Client CPU is this process's; harness CPU that of every thread of ``pids[name]`` (the
    harness serving the path), 0 without one. A path timed by the harness itself gives its
    wall time from the harness's clock; its CPU time is measured here all the same.
    """
    wall: dict[K, list[float]] = {name: [] for name in calls}
    client: dict[K, list[float]] = {name: [] for name in calls}
    harness: dict[K, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for i in range(rounds):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            pid, n = pids.get(name), batch if isinstance(batch, int) else batch[name]
            # Reading /proc costs this process CPU time too (a JVM has dozens of threads): outside the client's.
            h0 = _cpu_seconds(pid)
            c0, t0 = time.process_time(), time.perf_counter()
            own = calls[name](n)
            t1, c1 = time.perf_counter(), time.process_time()
            h1 = _cpu_seconds(pid)
            wall[name].append((t1 - t0 if own is None else own) / n)
            client[name].append((c1 - c0) / n)
            harness[name].append((h1 - h0) / n)
    return tuple({n: statistics.median(t) for n, t in d.items()} for d in (wall, client, harness))  # type: ignore[return-value]


def _checked(results: Sequence[object]) -> None:
    failed = [r for r in results if isinstance(r, Exception)]
    if failed:
        raise RuntimeError(f"{len(failed)} of {len(results)} calls failed, the first: {failed[0]!r}")


def _repeated(call: Callable[[], object]) -> Call:
    """A path that makes ``call`` n times in a row, each waiting for the one before."""

    def run(n: int) -> None:
        for _ in range(n):
            call()

    return run


def _pipelined(adapter: ExecAdapter, parsed: object, op: str, args: tuple[Any, ...], window: int) -> Call:
    """A path that makes n calls with up to ``window`` requests in flight, timed until the last result is in hand.

    Each result is made and checked, then freed as it comes (``ExecAdapter.run_many``), as a caller in its steady state
    does and as the in-process path does. Held for the whole batch, the results took fresh memory each: 47 page
    faults a 256x256x3 decode in the client, whose CPU per decode was 293-322 us against 118-131 us with each result
    freed. That work ran beside the harness: in five paired runs (7 or 9 rounds of 600 calls, imagecodecs behind the
    server, shared framing) the pipelined decode read 0.80, 0.75, 0.91, 0.71 and 0.72x of in process holding its
    results, 0.92, 0.71, 0.80, 0.83 and 0.78x freeing each.
    """

    def run(n: int) -> float:
        start = time.perf_counter()
        outcomes = adapter.run_many(op, parsed, [args[0]] * n, *args[1:], window=window)
        seconds = time.perf_counter() - start
        _checked(outcomes)
        return seconds

    return run


def _in_harness(adapter: ExecAdapter, parsed: object, op: str, args: tuple[Any, ...]) -> Call:
    """A path timed by the harness itself: the library's own time for n calls in a row (``bench``)."""
    return lambda n: sum(adapter.bench(parsed, op, n, *args))


#: What keeps a CPU busy beside the harness: a loop of the interpreter, as the client's work is.
SPIN = "while True:\n    pass\n"
BUSY = "in harness, busy"
#: The path timed by the harness itself (``bench``).
IN_HARNESS = "in harness"


def _in_harness_beside_busy(adapter: ExecAdapter, parsed: object, op: str, args: tuple[Any, ...]) -> Call:
    """The library's own time as in :func:`_in_harness`, while a process spins on every other CPU.

    Pipelined, the client works while the harness does: on a machine whose CPUs share a core's
    units or its clock budget (a VM's vCPUs), that alone slows the library. This path measures by
    how much, so that the protocol is not charged with what its neighbour costs.
    """
    def run(n: int) -> float:
        spinners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(max(1, (os.cpu_count() or 2) - 1))]
        try:
            time.sleep(0.05)  # spinning before the first timed call
            return sum(adapter.bench(parsed, op, n, *args))
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()

    return run


def _in_process(adapter: Any, parsed: object, op: str, args: tuple[Any, ...]) -> Callable[[], object]:
    """One call of ``op`` in this process; a decode into a buffer that lies as a reply's room, where the adapter
    offers ``decode_into`` (the harness's server then decodes into the room, and the library's speed depends on where
    its output lies)."""
    into = getattr(adapter, "decode_into", None)
    if op != "decode" or not callable(into):
        return partial(getattr(adapter, op), parsed, *args)
    shape = args[1]
    return partial(into, parsed, *args, shared.room_like(math.prod(shape)).reshape(shape))


def _args(op: str, chunk: np.ndarray, data: bytes) -> tuple[Any, ...]:
    return (chunk,) if op == "encode" else (data, chunk.shape)


def _warm_up(calls: Mapping[str, Call], pids: Mapping[str, int | None], timing: Timing) -> dict[str, int]:
    """Run each process's first path for ``timing.warmup`` seconds (whole batches, at least one), then one batch of
    every path; returns each path's batch: at least ``timing.batch`` calls and ``timing.batch_seconds`` by that batch."""
    warmed: set[object] = set()
    sizes: dict[str, int] = {}
    for label, call in calls.items():
        process = pids.get(label) or label
        if process not in warmed:
            warmed.add(process)
            until = time.perf_counter() + timing.warmup
            while time.perf_counter() < until:
                call(timing.batch)
        start = time.perf_counter()
        own = call(timing.batch)
        per_call = (time.perf_counter() - start if own is None else own) / timing.batch
        sizes[label] = max(timing.batch, math.ceil(timing.batch_seconds / max(per_call, 1e-9)))
    return sizes


def _measure(
    title: str, reference: str, paths: Callable[[str], dict[str, Call]], pids: Mapping[str, int | None],
    chunk: np.ndarray, data: bytes, timing: Timing, ops: Sequence[str] = ("encode", "decode"),
) -> None:
    """Time every path (``paths(op)``, the reference first) for encode and decode, or ``ops``; print the table and the verdict."""
    rounds = timing.rounds
    print(f"# {chunk.shape[0]}x{chunk.shape[1]}x{chunk.shape[2]} chunks ({chunk.nbytes} B), JPEG of {len(data)} B; median of "
          f"{rounds} rounds, each a batch per path of calls in a row (at least {timing.batch} and {timing.batch_seconds:g} s), "
          f"after {timing.warmup:g} s of calls per process and op; pipelined: up to {timing.window} requests in flight")
    print("# wall x, cpu x: the reference's time per call over the path's (wall-clock; CPU of client + harness);")
    print("# par x: the reference's CPU time over the larger of client and harness CPU: pipelined, the two work at once,")
    print("#   so that is the wall x of a machine with a free CPU for each")
    print(f"{'op':7} {'path':17} {'wall ms':>8} {'MB/s':>7} {'wall x':>7} {'client':>7} {'harness':>7} {'cpu x':>6} {'par x':>6}")
    verdict = []
    ceilings: dict[str, float] = {}
    own: dict[str, tuple[str, float]] = {}
    for op in ops:
        calls = paths(op)
        batches = _warm_up(calls, pids, timing)
        wall, client, harness = _interleaved(calls, rounds, batches, pids)
        ref_wall, ref_cpu = wall[reference], client[reference] + harness[reference]
        for label in calls:
            cpu = client[label] + harness[label]
            par = f"{ref_cpu / max(client[label], harness[label]):6.3f}" if label in PIPELINED else f"{'-':>6}"
            print(f"{op:7} {label:17} {wall[label] * 1e3:8.3f} {chunk.nbytes / wall[label] / 1e6:7.1f} "
                  f"{ref_wall / wall[label]:7.3f} {client[label] * 1e3:7.3f} {harness[label] * 1e3:7.3f} {ref_cpu / cpu:6.3f} {par}")
        best = max((label for label in PIPELINED if label in calls), key=lambda label: ref_wall / wall[label])
        verdict.append((op, best, ref_wall / wall[best], ref_cpu / (client[best] + harness[best]),
                        ref_cpu / max(client[best], harness[best])))
        if reference != IN_HARNESS and IN_HARNESS in calls:
            own[op] = (best, wall[IN_HARNESS] / wall[best])
        if BUSY in calls:
            ceilings[op] = ref_wall / wall[BUSY]
    met = _verdict({op: r for op, _, r, _, _ in verdict}, ceilings)
    shown = "; ".join(f"{op} {w:.2f}x wall by {best} ({c:.2f}x cpu, {p:.2f}x par)" for op, best, w, c, p in verdict)
    print(f"{title}: the faster pipelined path / {reference}: {shown} (target >= {TARGET}x wall: {met})")
    if own:
        # The target as worded ("its library's in-harness throughput"); the verdict above stays on the
        # stricter reference, the same library in this process, which is what running it in process would give.
        shown = "; ".join(f"{op} {r:.2f}x by {best}" for op, (best, r) in own.items())
        print(f"{title}: the same path / {IN_HARNESS} (the library's own speed in the harness process, not the verdict's "
              f"reference): {shown}")
    if ceilings:
        shown = "; ".join(f"{op} {r:.2f}x" for op, r in ceilings.items())
        print(f"{title}: the library beside a busy CPU / {reference}: {shown} (what the client's own work beside "
              "the harness leaves it on this machine, with no protocol at all)")
    print()


def _verdict(ratios: Mapping[str, float], ceilings: Mapping[str, float]) -> str:
    """The target's verdict on each op's ratio: met, or missed; a miss where the library alone, beside a busy CPU, ran
    below the target too in this run says so, since then the machine, not the protocol, is what the run measured."""
    missed = [op for op, r in ratios.items() if r < TARGET]
    if not missed:
        return "met"
    low = [op for op in missed if ceilings.get(op, math.inf) < TARGET]
    if not low:
        return "missed"
    said = ", ".join(f"{op} {ceilings[op]:.2f}x" for op in low)
    return f"missed; the library alone beside a busy CPU ran below it too in this run ({said}): repeat the run to judge {' and '.join(low)}"


def _protocol_paths(remotes: Mapping[str, ExecAdapter], parsed: Mapping[str, object], op: str, args: tuple[Any, ...],
                    window: int) -> dict[str, Call]:
    """Each framing one call at a time, and binary and shared framing pipelined (shared where the harness chose it)."""
    paths = {label: _repeated(partial(getattr(a, op), parsed[label], *args)) for label, a in remotes.items()}
    for label, offer in PIPELINED.items():
        if offer in remotes:
            paths[label] = _pipelined(remotes[offer], parsed[offer], op, args, window)
    return paths


def _pids(remotes: Mapping[str, ExecAdapter]) -> dict[str, int | None]:
    """The harness process behind each path (the in-harness path runs in the binary one)."""
    pids = {label: a.pid for label, a in remotes.items()}
    pids[IN_HARNESS] = pids[BUSY] = pids["binary"]
    pids.update({label: pids[offer] for label, offer in PIPELINED.items() if offer in pids})
    return pids


def _start(title: str, command: Sequence[str], memory_limit: int | None) -> dict[str, ExecAdapter]:
    """One harness process per framing: the framing is chosen once per process, at start. A harness that does not choose
    shared framing when offered it is measured in the framings it speaks."""
    remotes: dict[str, ExecAdapter] = {}
    try:
        for label, offer in THROUGHPUT_OFFERS.items():
            remotes[label] = ExecAdapter(list(command), framings=offer, memory_limit=memory_limit)
            print(f"# {title}, {label}: the harness chose {remotes[label].framing} framing")
        if remotes["shared"].framing != SHARED:
            remotes.pop("shared").close()
    except BaseException:
        for adapter in remotes.values():
            adapter.close()
        raise
    return remotes


def python_server(impl: str, timing: Timing, size: int) -> None:
    """The built-in adapter ``impl`` in this process against itself behind ``harnesses.server``."""
    local = load_adapter(impl)
    chunk = make_image("natural", size, size, channels=CHUNK[2])
    title = f"{impl} (harnesses.server)"
    remotes = _start(title, [sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server", impl], DEFAULT_MEMORY_LIMIT)
    try:
        parsed = {label: a.parse(CODEC) for label, a in remotes.items()}
        mine = local.parse(CODEC)
        data = local.encode(mine, chunk)
        binary = remotes["binary"]

        def paths(op: str) -> dict[str, Call]:
            args = _args(op, chunk, data)
            return {
                "in process": _repeated(_in_process(local, mine, op, args)),
                **_protocol_paths(remotes, parsed, op, args, timing.window),
                IN_HARNESS: _in_harness(binary, parsed["binary"], op, args),
                BUSY: _in_harness_beside_busy(binary, parsed["binary"], op, args),
            }

        _measure(title, "in process", paths, _pids(remotes), chunk, data, timing)
    finally:
        for adapter in remotes.values():
            adapter.close()


def shipped_harness(name: str, impl: str, timing: Timing, size: int) -> None:
    """A shipped harness through the protocol against its own library timed inside it (``bench``).

    A harness that does not encode is measured on decode, of a stream ``impl`` wrote.
    """
    command = harness_command(name)
    spec = f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses {name}"
    chunk = make_image("natural", size, size, channels=CHUNK[2])
    remotes = _start(name, command, spec_memory_limit(spec, DEFAULT_MEMORY_LIMIT))
    try:
        parsed = {label: a.parse(CODEC) for label, a in remotes.items()}
        binary = remotes["binary"]
        ops = [op for op in ("encode", "decode") if op in binary.roles]
        if "encode" in ops:
            data = binary.encode(parsed["binary"], chunk)
        else:
            local = load_adapter(impl)
            data = local.encode(local.parse(CODEC), chunk)

        def paths(op: str) -> dict[str, Call]:
            args = _args(op, chunk, data)
            return {IN_HARNESS: _in_harness(binary, parsed["binary"], op, args), **_protocol_paths(remotes, parsed, op, args, timing.window),
                    BUSY: _in_harness_beside_busy(binary, parsed["binary"], op, args)}

        _measure(name, IN_HARNESS, paths, _pids(remotes), chunk, data, timing, ops)
    finally:
        for adapter in remotes.values():
            adapter.close()


def throughput(impl: str, harnesses: Sequence[str], timing: Timing, size: int) -> None:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    shown = ", ".join(f"{x:.2f}" for x in load) if load else "unknown"
    print(f"# {os.cpu_count()} CPUs; load average {shown} (1, 5, 15 min): other work on the machine slows wake-ups")
    print()
    try:
        python_server(impl, timing, size)
    except AdapterLoadError as exc:
        print(f"{impl} not available: {exc}\n")
    for name in SHIPPED if list(harnesses) == ["all"] else [] if list(harnesses) == ["none"] else harnesses:
        try:
            shipped_harness(name, impl, timing, size)
        except (Unavailable, KeyError, AdapterLoadError) as exc:
            print(f"{name} not available: {exc}\n")
        except (HarnessError, HarnessFailure) as exc:  # one harness's failure (no bench, a crash) leaves the others to measure
            print(f"{name} failed: {exc}\n")


def reply_reading(sizes_mib: list[int], rounds: int) -> None:
    command = [sys.executable, "-m", "zarr_jpeg_conformance.tools.bench_protocol", "--fake-harness", *map(str, sizes_mib)]
    print(f"# reply reading: a fake harness answers decode with a chunk of N MiB prepared in advance; median of {rounds}")
    print(f"{'framing':11} {'MiB':>5} {'seconds':>8} {'ms per MiB':>10} {'x smallest':>10} {'client cpu ms/MiB':>17}")
    summary = []
    for label, offer in OFFERS.items():
        # Room for the largest reply (base64 adds a third).
        cap = max(sizes_mib) * 2 << 20
        adapter = ExecAdapter(command, framings=offer, max_reply=cap, memory_limit=None, timeout=600)
        try:
            parsed = adapter.parse(CODEC)
            calls = {mib: _repeated(partial(adapter.decode, parsed, b"\xff\xd8", (mib, 1024, 1024))) for mib in sizes_mib}
            wall, cpu, _ = _interleaved(calls, rounds, 1, {})
            first = wall[sizes_mib[0]] / sizes_mib[0]
            for mib in sizes_mib:
                per_mib = wall[mib] / mib
                print(f"{label:11} {mib:5d} {wall[mib]:8.3f} {per_mib * 1e3:10.2f} {per_mib / first:10.2f} {cpu[mib] / mib * 1e3:17.2f}")
            last = wall[sizes_mib[-1]] / sizes_mib[-1]
            summary.append(f"{label} " + ", ".join(f"{last / (wall[m] / m):.2f}x of {m} MiB" for m in sizes_mib[:-1]))
        finally:
            adapter.close()
    # A reply that fits the CPU's last-level cache (with its copies) reads faster per MiB than one that does not.
    print(f"time per MiB of the {sizes_mib[-1]} MiB reply: {'; '.join(summary)} (linear: about 1x beyond the cache)")


def fake_harness(sizes_mib: list[int]) -> int:
    """Speak the protocol on stdin/stdout; answer decode of (N, 1024, 1024) with N MiB of samples, ready-made."""
    ready = {mib: np.full((mib, 1024, 1024), 7, np.uint8).tobytes() for mib in sizes_mib}
    reader = FrameReader(JSON_LINES, cap=None)
    out = sys.stdout.buffer
    framing = JSON_LINES
    encoded: dict[tuple[str, int], list[bytes | bytearray | memoryview]] = {}
    while (frame := reader.pop_from(sys.stdin.buffer)) is not None:
        request = frame.message
        seq, op = request["seq"], request["op"]
        reply: dict[str, object] = {"seq": seq, "status": "ok"}
        if op == "start":
            reply.update(protocol=1, name="bench-replies", version="0", roles=["decode"], versions={})
            if BINARY in request.get("framings", []):
                reply["framing"] = BINARY
        elif op == "parse":
            reply["handle"] = "1"
        elif op == "decode":
            mib = request["chunk_shape"][0]
            key = (framing, mib)
            if key not in encoded:  # encode once: the harness's own cost is not what is measured
                message = {"seq": 0, "status": "ok", "chunk": {"shape": [mib, 1024, 1024], "dtype": "uint8", "data": ready[mib]}}
                encoded[key] = encode_message(message, framing)
            # The prepared message with this request's seq in place of 0 (no copy of the rest).
            first, *rest = encoded[key]
            out.write(b'{"seq":%d' % seq)
            out.write(memoryview(first)[len(b'{"seq":0') :])
            for part in rest:
                out.write(part)
            out.flush()
            continue
        for part in encode_message(reply, framing):
            out.write(part)
        out.flush()
        if op == "start" and reply.get("framing") == BINARY:
            framing = reader.framing = BINARY
        if op == "stop":
            break
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", default="imagecodecs", help="built-in adapter to serve with harnesses.server (default: imagecodecs)")
    parser.add_argument("--harness", nargs="*", default=list(HARNESSES), metavar="NAME",
                        help=f"shipped harnesses to measure (default: {' '.join(HARNESSES)}; all: every shipped harness; "
                             "none: only the Python server)")
    parser.add_argument("--rounds", type=int, default=Timing.rounds, help=f"rounds of the chunk benchmark (default {Timing.rounds})")
    parser.add_argument("--batch", type=int, default=Timing.batch,
                        help=f"calls in a row per path and round (default {Timing.batch}: a pipeline's steady state)")
    parser.add_argument("--batch-seconds", type=float, default=Timing.batch_seconds,
                        help=f"seconds a batch lasts at least: more calls for a fast path (default {Timing.batch_seconds:g})")
    parser.add_argument("--warmup", type=float, default=Timing.warmup,
                        help=f"seconds of calls per process and op before any timing (default {Timing.warmup:g})")
    parser.add_argument("--window", type=int, default=WINDOW, help=f"requests in flight when pipelined (default {WINDOW})")
    parser.add_argument("--size", type=int, default=CHUNK[0], help="chunk height and width (default 256: 256x256x3)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 32, 128], help="reply sizes in MiB (default 8 32 128)")
    parser.add_argument("--reply-rounds", type=int, default=3, help="rounds per reply size (default 3)")
    parser.add_argument("--fake-harness", type=int, nargs="+", metavar="MIB", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.fake_harness:
        return fake_harness(args.fake_harness)
    throughput(args.impl, args.harness, Timing(args.rounds, args.batch, args.batch_seconds, args.window, args.warmup), args.size)
    reply_reading(args.sizes, args.reply_rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
