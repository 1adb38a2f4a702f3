"""Benchmark: what the harness protocol costs, in each framing, and how reply reading scales.

Two measurements, each printed as ratios from this one run:

1. **Throughput through a harness.** 256x256x3 chunks (quality 90, 4:2:0), encoded and
   decoded by a built-in adapter in this process, and by the same adapter behind
   ``python -m zarr_jpeg_conformance.harnesses.server`` over JSON lines and over binary
   framing. The three paths are timed in interleaved rounds (so machine noise hits them
   alike) and compared by their medians, twice:

   - ``wall x``: in-process time / harness time per call, the harness's share of
     in-process throughput (target for binary framing: >= 0.8). Each call wakes the
     harness and then the client: on a busy machine a wake-up waits for a free CPU, which
     this ratio includes.
   - ``cpu x``: in-process CPU time / (client + harness) CPU time per call, read from
     the kernel (Linux ``/proc/PID/schedstat``): what the protocol itself costs, whatever
     the load.
2. **Reply reading against reply size.** A fake harness (this module with
   ``--fake-harness``) answers decode requests with a chunk of 8, 32 and 128 MiB that it
   prepared before being asked; the client's time to read and unpack each reply, per MiB,
   should stay roughly constant if reading is linear (before, a 128 MiB JSON-lines reply
   took 31 s: the buffer was rescanned on every read).

Run: ``python -m zarr_jpeg_conformance.tools.bench_protocol [--impl imagecodecs] [--rounds 101] [--size 256] [--sizes 8 32 128]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..adapters import AdapterLoadError, load_adapter
from ..adapters.remote import ExecAdapter
from ..corpus.images import make_image
from ..protocol.framing import BINARY, JSON_LINES, FrameReader, encode_message

K = TypeVar("K")

CODEC = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}
#: The chunk shape of the target (--size changes height and width).
CHUNK = (256, 256, 3)
#: Framings a harness run is offered: JSON lines only, or both (the server then chooses binary).
OFFERS = {"json lines": [JSON_LINES], "binary": [JSON_LINES, BINARY]}


def _cpu_seconds(pid: int | None) -> float:
    """CPU time of a process so far (Linux; 0.0 where it cannot be read)."""
    if pid is None:
        return 0.0
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def _interleaved(
    calls: Mapping[K, Callable[[], object]], rounds: int, batch: int = 1, pids: Mapping[K, int | None] | None = None
) -> tuple[dict[K, float], dict[K, float]]:
    """Median wall and CPU seconds per call of each, run ``batch`` times in a row in turn every round.

    The order rotates every round. CPU time is this process's plus that of ``pids[name]``
    (the harness serving the call), if given.
    """
    wall: dict[K, list[float]] = {name: [] for name in calls}
    cpu: dict[K, list[float]] = {name: [] for name in calls}
    names = list(calls)
    for i in range(rounds):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            call, pid = calls[name], (pids or {}).get(name)
            c0, h0, t0 = time.process_time(), _cpu_seconds(pid), time.perf_counter()
            for _ in range(batch):
                call()
            t1, c1, h1 = time.perf_counter(), time.process_time(), _cpu_seconds(pid)
            wall[name].append((t1 - t0) / batch)
            cpu[name].append((c1 - c0 + h1 - h0) / batch)
    return ({n: statistics.median(t) for n, t in wall.items()}, {n: statistics.median(t) for n, t in cpu.items()})


def throughput(impl: str, rounds: int, batch: int, size: int) -> None:
    local = load_adapter(impl)
    shape = (size, size, CHUNK[2])
    chunk = make_image("natural", size, size, channels=CHUNK[2])
    command = [sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server", impl]
    remotes = {label: ExecAdapter(command, framings=offer) for label, offer in OFFERS.items()}
    try:
        targets: dict[str, tuple[Any, object]] = {"in process": (local, local.parse(CODEC))}
        targets.update({label: (a, a.parse(CODEC)) for label, a in remotes.items()})
        pids = {label: a.pid for label, a in remotes.items()}
        for label, adapter in remotes.items():
            print(f"# {label}: the harness chose {adapter.framing}")
        data = local.encode(targets["in process"][1], chunk)
        print(f"# {impl}, {size}x{size}x{CHUNK[2]} chunks ({chunk.nbytes} B), JPEG of {len(data)} B; "
              f"median of {rounds} rounds of {batch} calls in a row per path")
        print(f"{'op':7} {'path':11} {'wall ms':>8} {'MB/s':>7} {'wall x':>7} {'cpu ms':>7} {'cpu x':>6}")
        summary = []
        for op in ("encode", "decode"):
            args = (chunk,) if op == "encode" else (data, shape)
            calls = {k: partial(getattr(a, op), p, *args) for k, (a, p) in targets.items()}
            for call in calls.values():
                call()  # warm up: first-call imports and allocations
            wall, cpu = _interleaved(calls, rounds, batch, pids)
            for label in calls:
                print(
                    f"{op:7} {label:11} {wall[label] * 1e3:8.3f} {chunk.nbytes / wall[label] / 1e6:7.1f} "
                    f"{wall['in process'] / wall[label]:7.3f} {cpu[label] * 1e3:7.3f} {cpu['in process'] / cpu[label]:6.3f}"
                )
            summary.append(f"{op} {wall['in process'] / wall['binary']:.2f}x wall, {cpu['in process'] / cpu['binary']:.2f}x cpu")
        print(f"binary framing / in process: {'; '.join(summary)} (target >= 0.8x)")
    finally:
        for adapter in remotes.values():
            adapter.close()


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
            calls = {mib: partial(adapter.decode, parsed, b"\xff\xd8", (mib, 1024, 1024)) for mib in sizes_mib}
            wall, cpu = _interleaved(calls, rounds)
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
    parser.add_argument("--impl", default="imagecodecs", help="built-in adapter to compare (default: imagecodecs)")
    parser.add_argument("--rounds", type=int, default=101, help="rounds of the chunk benchmark (default 101)")
    parser.add_argument("--batch", type=int, default=10, help="calls in a row per path and round (default 10)")
    parser.add_argument("--size", type=int, default=CHUNK[0], help="chunk height and width (default 256: 256x256x3)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 32, 128], help="reply sizes in MiB (default 8 32 128)")
    parser.add_argument("--reply-rounds", type=int, default=3, help="rounds per reply size (default 3)")
    parser.add_argument("--fake-harness", type=int, nargs="+", metavar="MIB", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.fake_harness:
        return fake_harness(args.fake_harness)
    try:
        throughput(args.impl, args.rounds, args.batch, args.size)
    except AdapterLoadError as exc:
        print(f"{args.impl} not available: {exc}")
    print()
    reply_reading(args.sizes, args.reply_rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
