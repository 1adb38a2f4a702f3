"""Throughput of reading a jpeg-coded zarr array, against a plain loop of decodes of its chunks.

Run ``python -m zarr_jpeg_conformance.bench_zarr``. It writes a ~64 MiB uint8 array of
256x256x3 chunks (a natural image, YCbCr 4:2:0, quality 90) into a ``MemoryStore`` and prints,
for one backend, the decode throughput of:

* ``library``: a Python loop calling the JPEG library's own decode function on each chunk;
* ``adapter``: a loop of ``BackendAdapter.decode`` (the library plus this project's spec checks);
* ``adapter 2 threads``: the same decodes on two threads, without zarr;
* ``zarr 1 worker``: ``array[...]`` with ``threading.max_workers`` 1, the executor that
  ``asyncio.to_thread`` decodes on, and zarr's default ``async.concurrency``: decoding is
  single-threaded, while zarr's event-loop thread fetches and assembles chunks beside it;
* ``zarr 2 workers``: ``threading.max_workers`` 2;
* ``zarr serial``: ``threading.max_workers`` 1 and ``async.concurrency`` 1: one chunk at a
  time, nothing overlaps;
* ``zarr, no decode``: as ``zarr 1 worker`` but the codec returns a ready array: zarr's own
  cost per chunk (event loop, indexing, thread hand-offs, assembling the output).

zarr creates its event loop and executor once per process, so each zarr measurement runs in
a fresh child process. Targets: zarr 1 worker >= 0.8x the library loop; zarr 2 workers >=
1.6x zarr 1 worker. "cores busy" (process CPU time / wall time) shows how much of the machine
a run used: zarr's event-loop thread does per-chunk work of its own, so even one worker
keeps more than one core busy, and on 2 cores that work competes with the decodes.
Numbers are best of ``--repeat`` wall times, so a busy machine lowers them; ratios are
printed, never asserted. A last line checks that the backend releases the GIL while decoding.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

CHUNK = (256, 256, 3)
CODEC = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}
#: 16 x 22 chunks of 192 KiB = 66 MiB, the nearest whole grid above 64 MiB with a non-square shape.
GRID = (16, 22)
TARGET_SINGLE = 0.8
TARGET_SCALING = 1.6
#: name -> (threading.max_workers, async.concurrency or None for zarr's default).
ZARR_RUNS: dict[str, tuple[int, int | None]] = {
    "zarr 1 worker": (1, None),
    "zarr 2 workers": (2, None),
    "zarr serial": (1, 1),
    "zarr, no decode": (1, None),
}

Timings = list[tuple[float, float]]


def _source() -> np.ndarray:
    from .images import make_image

    # One 1024x1024 natural tile repeated: decode cost depends on content, not on uniqueness.
    tile = make_image("natural", 1024, 1024, 3)
    h, w = GRID[0] * CHUNK[0], GRID[1] * CHUNK[1]
    reps = (-(-h // tile.shape[0]), -(-w // tile.shape[1]), 1)
    return np.ascontiguousarray(np.tile(tile, reps)[:h, :w])


def _build(backend: str) -> tuple[Any, dict[str, Any], float]:
    import zarr
    from zarr.storage import MemoryStore

    from .zarr_codec import JpegCodec, register

    register()
    data = _source()
    entries: dict[str, Any] = {}
    array = zarr.create_array(
        MemoryStore(entries),
        shape=data.shape,
        chunks=CHUNK,
        dtype="uint8",
        serializer=JpegCodec.with_backend(CODEC, backend),
        compressors=None,
        fill_value=0,
    )
    start = time.perf_counter()
    array[...] = data
    return array, entries, time.perf_counter() - start


def _timed(func: Callable[[], object], repeat: int) -> Timings:
    """(wall, process CPU) seconds of each call, after one warm-up call."""
    func()  # warm up: imports, first allocations, zarr's event loop and executor
    times = []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        func()
        times.append((time.perf_counter() - wall, time.process_time() - cpu))
    return times


def _library_decoder(backend: str) -> Callable[[bytes], object]:
    """The backend library's own decode call, as a user would write it without this project."""
    if backend == "imagecodecs":
        import imagecodecs

        return imagecodecs.jpeg8_decode
    if backend == "pillow":
        from PIL import Image

        return lambda data: np.asarray(Image.open(io.BytesIO(data)))
    import turbojpeg

    decoder = turbojpeg.TurboJPEG()
    return decoder.decode


def _pooled(func: Callable[[bytes], object], streams: list[bytes]) -> None:
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(func, streams))


def _gil_stall(decode: Callable[[], object]) -> tuple[float, float]:
    """(longest stall of a spinning Python thread, duration) of one ``decode`` call, in seconds.

    A call that holds the GIL stalls the spinner for all of its duration; one that releases it
    stalls it only for the GIL hand-offs at its start and end (and any OS scheduling delay).
    """
    stop = threading.Event()
    gaps: list[float] = []

    def spin() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    thread = threading.Thread(target=spin)
    thread.start()
    time.sleep(0.02)
    start = time.perf_counter()
    decode()
    duration = time.perf_counter() - start
    stop.set()
    thread.join()
    return max(gaps), duration


def _worker(backend: str, run: str, repeat: int, batch_size: int) -> None:
    import zarr

    workers, concurrency = ZARR_RUNS[run]
    settings: dict[str, Any] = {
        "threading.max_workers": workers,
        "codec_pipeline.batch_size": batch_size,
        "jpeg_conformance.backend": backend,
    }
    if concurrency is not None:
        settings["async.concurrency"] = concurrency
    # Must be set before zarr's first synchronous call, which creates the executor.
    zarr.config.set(settings)
    array, _, _ = _build(backend)
    if run == "zarr, no decode":
        from .zarr_codec import JpegCodec

        # What zarr itself costs per chunk: the codec hands back a ready array instead of decoding.
        ready = np.zeros(CHUNK, dtype=np.uint8)
        JpegCodec._decode_sync = lambda self, chunk_bytes, chunk_spec: chunk_spec.prototype.nd_buffer.from_numpy_array(ready)  # type: ignore[method-assign]
    json.dump({"times": _timed(lambda: array[...], repeat)}, sys.stdout)


def _child(backend: str, run: str, repeat: int, batch_size: int) -> Timings:
    cmd = [sys.executable, "-m", "zarr_jpeg_conformance.bench_zarr", "--backend", backend, "--repeat", str(repeat),
           "--batch-size", str(batch_size), "--worker", run]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [(wall, cpu) for wall, cpu in json.loads(out)["times"]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.bench_zarr", description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default=None, help="imagecodecs, pillow or turbojpeg (default: the codec's default)")
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions per measurement (best is reported)")
    parser.add_argument("--batch-size", type=int, default=1,
                        help="zarr's codec_pipeline.batch_size (chunks per coroutine; zarr's default is 1)")
    parser.add_argument("--worker", choices=sorted(ZARR_RUNS), default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    import zarr

    from .core.config import parse_codec
    from .zarr_codec import backend_adapter, default_backend

    backend = args.backend or default_backend()
    if args.worker is not None:
        _worker(backend, args.worker, args.repeat, args.batch_size)
        return 0

    array, entries, write_s = _build(backend)
    streams = [entries[k].to_bytes() for k in sorted(entries) if k.startswith("c/")]
    mib = array.nbytes / 2**20
    adapter, config = backend_adapter(backend), parse_codec(CODEC)
    library = _library_decoder(backend)

    results: dict[str, Timings] = {
        "library": _timed(lambda: [library(s) for s in streams], args.repeat),
        "adapter": _timed(lambda: [adapter.decode(config, s, CHUNK) for s in streams], args.repeat),
        "adapter 2 threads": _timed(lambda: _pooled(lambda s: adapter.decode(config, s, CHUNK), streams), args.repeat),
    }
    for run in ZARR_RUNS:
        results[run] = _child(backend, run, args.repeat, args.batch_size)
    big = np.ascontiguousarray(np.tile(_source()[:1024, :1024], (4, 4, 1)))
    big_stream = adapter.encode(config, big)
    adapter.decode(config, big_stream, big.shape)
    stall, duration = _gil_stall(lambda: adapter.decode(config, big_stream, big.shape))

    versions = ", ".join(f"{k} {v}" for k, v in backend_adapter(backend).versions().items())
    print(f"backend {backend} ({versions}); zarr {zarr.__version__}, codec_pipeline.batch_size {args.batch_size}")
    print(f"{len(streams)} chunks {CHUNK}, {mib:.1f} MiB, {sum(map(len, streams)) / 2**20:.1f} MiB of JPEG; "
          f"zarr write {mib / write_s:.0f} MiB/s")
    print(f"{'':18} {'best MiB/s':>10} {'median MiB/s':>12} {'cores busy':>10}")
    best: dict[str, float] = {}
    for name, times in results.items():
        wall, cpu = min(times)
        best[name] = wall
        median = statistics.median(w for w, _ in times)
        print(f"{name:18} {mib / wall:10.0f} {mib / median:12.0f} {cpu / wall:10.2f}")

    def ratio(a: str, b: str) -> float:
        return best[b] / best[a]

    print(f"zarr 1 worker / library loop:     {ratio('zarr 1 worker', 'library'):.2f}x (target >= {TARGET_SINGLE}x)")
    print(f"zarr 2 workers / zarr 1 worker:   {ratio('zarr 2 workers', 'zarr 1 worker'):.2f}x (target >= {TARGET_SCALING}x)")
    print(f"zarr serial / library loop:       {ratio('zarr serial', 'library'):.2f}x")
    print(f"zarr 2 workers / zarr serial:     {ratio('zarr 2 workers', 'zarr serial'):.2f}x")
    print(f"adapter 2 threads / adapter loop: {ratio('adapter 2 threads', 'adapter'):.2f}x (the backend alone, no zarr)")
    per_chunk = {name: 1e6 * min(cpu for _, cpu in results[name]) / len(streams) for name in ("zarr, no decode", "adapter")}
    print(f"CPU per chunk: zarr's own work {per_chunk['zarr, no decode']:.0f} us, adapter decode {per_chunk['adapter']:.0f} us")
    print(f"GIL: a Python thread spinning beside one {big.shape} decode ({duration * 1e3:.0f} ms) "
          f"stalled at most {stall * 1e3:.1f} ms (a call holding the GIL stalls it throughout)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
