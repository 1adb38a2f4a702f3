"""Throughput of reading a jpeg-coded zarr array, against a plain loop of decodes of its chunks.

Run ``python -m zarr_jpeg_conformance.tools.bench_zarr``. It writes a ~64 MiB uint8 array of
256x256x3 chunks (a natural image, YCbCr 4:2:0, quality 90) into a ``MemoryStore`` and
measures, for one backend, the decode throughput of:

* ``library``: a Python loop calling the JPEG library's own decode function on each chunk,
  keeping the results (a read delivers all the data, so all of it is written to fresh memory);
* ``library, assembled``: the same, copying each chunk into one preallocated array, as zarr does;
* ``library, dropped``: the same, dropping each result: one buffer recycled in the CPU's cache,
  a lower bound no read reaches;
* ``library 2 threads``: the ``library`` loop on two threads (what the machine allows);
* ``adapter``: a loop of ``BackendAdapter.decode`` (the library plus this project's checks);
* ``threaded 1 worker`` / ``threaded 2 workers``: ``array[...]`` through
  :class:`zarrcodecs.pipeline.ThreadedCodecPipeline`, with ``threading.max_workers`` 1 and 2 at
  read time: the number of threads decoding and assembling chunks, while zarr's event loop
  fetches the next ones;
* ``threaded, no decode``: as ``threaded 1 worker`` with a codec that returns a ready
  array: what zarr and the pipeline cost per chunk;
* ``zarr 1 worker`` / ``zarr 2 workers`` / ``zarr, no decode``: the same through zarr's
  default pipeline, each in a child process, since that pipeline's parallelism is the
  size of zarr's executor, fixed once per process;
* ``fused 1 worker`` / ``fused 2 workers`` / ``fused, no decode`` (zarr >= 3.3): the same
  through zarr's opt-in ``FusedCodecPipeline``, which runs the codec chain of codecs with
  synchronous methods (``SupportsSyncCodec``) on ``codec_pipeline.max_workers`` threads of its
  own, read at each call, so it is measured in this process;
* ``fused 1 worker, bare library`` / ``fused 2 workers, bare library`` (zarr >= 3.3): the fused
  pipeline with the codec's decode replaced by the bare library call: the ceiling of that
  pipeline with no code of this project in it (its 2-worker scaling is zarr's, not the codec's);
* writes, for context (no target): ``adapter encode``, a loop of ``BackendAdapter.encode``
  over the chunks, against ``array[...] = data`` into a fresh array through each pipeline.

The in-process measurements run in interleaved rounds (each once per round, best of
``--rounds``), so that a slower stretch of a shared machine hits all of them alike; the
ratios printed against the targets (>= 0.8x the library loop with one worker, >= 1.6x one
worker with two) come from these. "cores busy" is process CPU time over wall time. Ratios
are printed, never asserted.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from zarr.core.array_spec import ArraySpec
    from zarr.core.buffer import Buffer, NDBuffer

CHUNK = (256, 256, 3)
CODEC = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}
#: 16 x 22 chunks of 192 KiB = 66 MiB, the nearest whole grid above 64 MiB with a non-square shape.
GRID = (16, 22)
TARGET_SINGLE = 0.8
TARGET_SCALING = 1.6
#: zarr's default pipeline, one child process each: name -> threading.max_workers.
DEFAULT_RUNS = {"zarr 1 worker": 1, "zarr 2 workers": 2, "zarr, no decode": 1, "zarr write 2 workers": 2}
#: zarr's opt-in pipeline (zarr >= 3.3) that runs SupportsSyncCodec chains on threads of its own.
FUSED_PATH = "zarr.core.codec_pipeline.FusedCodecPipeline"

#: name -> (best wall seconds, CPU seconds of that call).
Best = dict[str, tuple[float, float]]


def _source(grid: tuple[int, int]) -> np.ndarray:
    from ..corpus.images import make_image

    # One 1024x1024 natural tile repeated: decode cost depends on content, not on uniqueness.
    tile = make_image("natural", 1024, 1024, 3)
    h, w = grid[0] * CHUNK[0], grid[1] * CHUNK[1]
    reps = (-(-h // tile.shape[0]), -(-w // tile.shape[1]), 1)
    return np.ascontiguousarray(np.tile(tile, reps)[:h, :w])


def _build(backend: str, grid: tuple[int, int]) -> tuple[Any, dict[str, Any]]:
    """The benchmark's array, written, and its MemoryStore's dict."""
    from ..zarrcodecs.jpeg import register

    register()
    entries: dict[str, Any] = {}
    return _write(_source(grid), backend, entries=entries)(), entries


def _rounds(runs: dict[str, Callable[[], object]], rounds: int) -> Best:
    """Best (wall, CPU) of each run, over ``rounds`` rounds that run each once, after a warm-up round."""
    for func in runs.values():
        func()  # imports, first allocations, zarr's event loop and executor
    best: Best = {name: (float("inf"), 0.0) for name in runs}
    for _ in range(rounds):
        for name, func in runs.items():
            wall, cpu = time.perf_counter(), time.process_time()
            func()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            if wall < best[name][0]:
                best[name] = (wall, cpu)
    return best


def _library_decoder(backend: str) -> Callable[[bytes], object]:
    """The backend library's own decode call, as a user would write it without this project."""
    if backend == "imagecodecs":
        import imagecodecs

        return imagecodecs.jpeg8_decode
    if backend == "pillow":
        from PIL import Image

        return lambda data: np.asarray(Image.open(io.BytesIO(data)))
    import turbojpeg

    return turbojpeg.TurboJPEG().decode


def _decode_with(decode: Callable[[bytes], object]) -> None:
    """Make every JpegCodec decode a chunk's bytes with ``decode`` and nothing else of this project."""
    from ..zarrcodecs.jpeg import JpegCodec

    def chunk(self: JpegCodec, chunk_bytes: Buffer, chunk_spec: ArraySpec) -> NDBuffer:
        return chunk_spec.prototype.nd_buffer.from_numpy_array(np.asarray(decode(chunk_bytes.to_bytes())))

    JpegCodec._decode_sync = chunk  # type: ignore[method-assign]


def _no_decode() -> None:
    """Every chunk decodes to one ready array: what remains is zarr's and the pipeline's cost."""
    ready = np.zeros(CHUNK, dtype=np.uint8)
    _decode_with(lambda data: ready)


def _workers(workers: int | None, fused: bool = False) -> dict[str, Any]:
    """The setting that sizes a pipeline's threads (the fused pipeline has a key of its own)."""
    if workers is None:
        return {}
    return {"codec_pipeline.max_workers" if fused else "threading.max_workers": workers}


def _read(array: Any, workers: int, fused: bool = False) -> Callable[[], object]:
    import zarr

    def read() -> object:
        with zarr.config.set(_workers(workers, fused)):
            return array[...]

    return read


def _write(data: np.ndarray, backend: str, workers: int | None = None,
           entries: dict[str, Any] | None = None, fused: bool = False) -> Callable[[], Any]:
    """A call that writes ``data`` into a fresh array (in ``entries``, else a new MemoryStore)."""
    import zarr
    from zarr.storage import MemoryStore

    from ..zarrcodecs.jpeg import JpegCodec

    def write() -> Any:
        settings = {**_workers(workers, fused), **({"codec_pipeline.path": FUSED_PATH} if fused else {})}
        with zarr.config.set(settings):
            array = zarr.create_array(MemoryStore(entries), shape=data.shape, chunks=CHUNK, dtype="uint8",
                                      serializer=JpegCodec.with_backend(CODEC, backend), compressors=None, fill_value=0)
            array[...] = data
        return array

    return write


def has_fused_pipeline() -> bool:
    """Whether this zarr has FusedCodecPipeline (zarr >= 3.3)."""
    import zarr.core.codec_pipeline

    return hasattr(zarr.core.codec_pipeline, "FusedCodecPipeline")


def _open_fused(entries: dict[str, Any]) -> Any:
    import zarr
    from zarr.storage import MemoryStore

    with zarr.config.set({"codec_pipeline.path": FUSED_PATH}):
        return zarr.open_array(MemoryStore(entries), mode="r")


def _chunk_slices(grid: tuple[int, int]) -> list[tuple[slice, slice]]:
    return [(slice(i * CHUNK[0], (i + 1) * CHUNK[0]), slice(j * CHUNK[1], (j + 1) * CHUNK[1]))
            for i in range(grid[0]) for j in range(grid[1])]


def _settings(backend: str, workers: int, batch_size: int, pipeline: str | None) -> dict[str, Any]:
    settings: dict[str, Any] = {"threading.max_workers": workers, "codec_pipeline.batch_size": batch_size,
                                "jpeg_conformance.backend": backend}
    if pipeline:
        settings["codec_pipeline.path"] = pipeline
    return settings


def _child_main(args: argparse.Namespace) -> None:
    import zarr

    # Before zarr's first synchronous call, which sizes its executor for the process.
    zarr.config.set(_settings(args.backend, DEFAULT_RUNS[args.worker], args.batch_size, None))
    array, _ = _build(args.backend, args.grid)
    if args.worker.endswith("no decode"):
        _no_decode()
    run = _write(_source(args.grid), args.backend) if "write" in args.worker else lambda: array[...]
    json.dump(_rounds({args.worker: run}, args.rounds)[args.worker], sys.stdout)


def _child(args: argparse.Namespace, run: str) -> tuple[float, float]:
    cmd = [sys.executable, "-m", "zarr_jpeg_conformance.tools.bench_zarr", "--backend", args.backend, "--rounds", str(args.rounds),
           "--batch-size", str(args.batch_size), "--grid", *map(str, args.grid), "--worker", run]
    wall, cpu = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return wall, cpu


def measure(args: argparse.Namespace) -> tuple[Best, dict[str, Any]]:
    """Every measurement, and facts about the run."""
    import zarr

    from ..core.config import parse_codec
    from ..zarrcodecs.jpeg import backend_adapter
    from ..zarrcodecs.pipeline import PIPELINE_PATH

    zarr.config.set(_settings(args.backend, 2, args.batch_size, PIPELINE_PATH))  # a 2-thread executor
    array, entries = _build(args.backend, args.grid)
    keys = sorted((k for k in entries if k.startswith("c/")), key=lambda k: tuple(map(int, k.split("/")[1:])))
    streams = [entries[k].to_bytes() for k in keys]  # row-major, as chunk (i, j) = divmod(index, cols)
    adapter, config = backend_adapter(args.backend), parse_codec(CODEC)
    library = _library_decoder(args.backend)
    pool = ThreadPoolExecutor(2)
    rows, cols = args.grid

    def assembled() -> None:
        out = np.empty((rows * CHUNK[0], cols * CHUNK[1], CHUNK[2]), np.uint8)
        for index, stream in enumerate(streams):
            i, j = divmod(index, cols)
            out[i * CHUNK[0] : (i + 1) * CHUNK[0], j * CHUNK[1] : (j + 1) * CHUNK[1]] = library(stream)

    fused = _open_fused(entries) if has_fused_pipeline() else None
    reads: dict[str, Callable[[], object]] = {
        "library": lambda: [library(s) for s in streams],
        "library, assembled": assembled,
        "library, dropped": lambda: [library(s) is None for s in streams],
        "library 2 threads": lambda: list(pool.map(library, streams)),
        "adapter": lambda: [adapter.decode(config, s, CHUNK) for s in streams],
        "threaded 1 worker": _read(array, 1),
        "threaded 2 workers": _read(array, 2),
    }
    if fused is not None:
        reads |= {"fused 1 worker": _read(fused, 1, fused=True), "fused 2 workers": _read(fused, 2, fused=True)}
    best = _rounds(reads, args.rounds)
    data = _source(args.grid)
    chunks = [np.ascontiguousarray(data[k]) for k in _chunk_slices(args.grid)]
    writes: dict[str, Callable[[], object]] = {
        "adapter encode": lambda: [adapter.encode(config, c) for c in chunks],
        "threaded write 1 worker": _write(data, args.backend, 1),
        "threaded write 2 workers": _write(data, args.backend, 2),
    }
    if fused is not None:
        writes |= {"fused write 1 worker": _write(data, args.backend, 1, fused=True),
                   "fused write 2 workers": _write(data, args.backend, 2, fused=True)}
    best.update(_rounds(writes, max(1, args.rounds // 3)))
    for run in DEFAULT_RUNS:
        best[run] = _child(args, run)
    if fused is not None:
        _decode_with(library)  # the library's own call, and nothing of this project
        best.update(_rounds({"fused 1 worker, bare library": _read(fused, 1, fused=True),
                             "fused 2 workers, bare library": _read(fused, 2, fused=True)}, args.rounds))
    _no_decode()
    no_decode = {"threaded, no decode": _read(array, 1)}
    if fused is not None:
        no_decode["fused, no decode"] = _read(fused, 1, fused=True)
    best.update(_rounds(no_decode, args.rounds))
    facts = {"chunks": len(streams), "mib": array.nbytes / 2**20, "jpeg_mib": sum(map(len, streams)) / 2**20,
             "versions": adapter.versions(), "zarr": zarr.__version__}
    return best, facts


def report(best: Best, facts: dict[str, Any], args: argparse.Namespace) -> None:
    mib, chunks = facts["mib"], facts["chunks"]
    versions = ", ".join(f"{k} {v}" for k, v in facts["versions"].items())
    print(f"backend {args.backend} ({versions}); zarr {facts['zarr']}, codec_pipeline.batch_size {args.batch_size}")
    print(f"{chunks} chunks {CHUNK}, {mib:.1f} MiB, {facts['jpeg_mib']:.1f} MiB of JPEG; best of {args.rounds} rounds "
          f"(writes: of {max(1, args.rounds // 3)})")
    print(f"{'':30} {'MiB/s':>7} {'us/chunk':>9} {'cores busy':>10}")
    for name, (wall, cpu) in best.items():
        print(f"{name:30} {mib / wall:7.0f} {1e6 * wall / chunks:9.0f} {cpu / wall:10.2f}")

    def ratio(a: str, b: str) -> float:
        return best[b][0] / best[a][0]

    print(f"threaded 1 worker / library:          {ratio('threaded 1 worker', 'library'):.2f}x (target >= {TARGET_SINGLE}x)")
    print(f"threaded 2 workers / threaded 1:      {ratio('threaded 2 workers', 'threaded 1 worker'):.2f}x "
          f"(target >= {TARGET_SCALING}x)")
    print(f"library 2 threads / library:          {ratio('library 2 threads', 'library'):.2f}x (what 2 threads give here)")
    print(f"adapter / library:                    {ratio('adapter', 'library'):.2f}x")
    print(f"threaded 1 worker / library, assembled: {ratio('threaded 1 worker', 'library, assembled'):.2f}x; "
          f"/ library, dropped: {ratio('threaded 1 worker', 'library, dropped'):.2f}x")
    print(f"zarr default pipeline, 1 worker / library:  {ratio('zarr 1 worker', 'library'):.2f}x (another process)")
    print(f"zarr default pipeline, 2 workers / 1:       {ratio('zarr 2 workers', 'zarr 1 worker'):.2f}x")
    if "fused 1 worker" in best:
        print(f"zarr fused pipeline, 1 worker / library:    {ratio('fused 1 worker', 'library'):.2f}x (target >= {TARGET_SINGLE}x)")
        print(f"zarr fused pipeline, 2 workers / 1:         {ratio('fused 2 workers', 'fused 1 worker'):.2f}x "
              f"(target >= {TARGET_SCALING}x)")
        print(f"threaded / fused, 1 worker: {ratio('threaded 1 worker', 'fused 1 worker'):.2f}x; "
              f"2 workers: {ratio('threaded 2 workers', 'fused 2 workers'):.2f}x (above 1: threaded is faster)")
        print(f"zarr fused pipeline, bare library, 2 workers / 1: "
              f"{ratio('fused 2 workers, bare library', 'fused 1 worker, bare library'):.2f}x (the pipeline's own ceiling)")
    print(f"threaded write 2 workers / 1:         {ratio('threaded write 2 workers', 'threaded write 1 worker'):.2f}x; "
          f"threaded write 1 worker / adapter encode: {ratio('threaded write 1 worker', 'adapter encode'):.2f}x; "
          f"zarr write 2 workers / adapter encode: {ratio('zarr write 2 workers', 'adapter encode'):.2f}x")
    if "fused write 1 worker" in best:
        print(f"fused write 2 workers / 1:            {ratio('fused write 2 workers', 'fused write 1 worker'):.2f}x; "
              f"fused write 1 worker / adapter encode: {ratio('fused write 1 worker', 'adapter encode'):.2f}x; "
              f"threaded / fused write, 2 workers: {ratio('threaded write 2 workers', 'fused write 2 workers'):.2f}x")
    for name in ("threaded, no decode", "fused, no decode", "zarr, no decode"):
        if name in best:
            print(f"{name}: {1e6 * best[name][1] / chunks:.0f} us of CPU per chunk")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.tools.bench_zarr", description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default=None, help="imagecodecs, pillow or turbojpeg (default: the codec's default)")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (the best of each is reported)")
    parser.add_argument("--batch-size", type=int, default=1, help="zarr's codec_pipeline.batch_size (default pipeline)")
    parser.add_argument("--grid", type=int, nargs=2, default=GRID, metavar=("ROWS", "COLS"), help="chunks per axis")
    parser.add_argument("--worker", choices=sorted(DEFAULT_RUNS), default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.grid = tuple(args.grid)
    if args.backend is None:
        from ..zarrcodecs.jpeg import default_backend

        args.backend = default_backend()
    if args.worker is not None:
        _child_main(args)
        return 0
    best, facts = measure(args)
    report(best, facts, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
