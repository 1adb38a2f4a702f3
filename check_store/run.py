"""The driver: find the arrays, cut their chunks into batches, run the batches on dask, fold the results.

Dask is the engine. Locally, the batches are a ``dask.bag`` computed on threads (the
default: reads and decoders release the GIL) or processes; a dask callback hands over each
batch's result as it lands, so records are written and the progress bar moves while the
run goes on. On a cluster (``--scheduler ADDRESS``, or ``--dask`` for a local one), batches
are submitted to a ``distributed.Client`` a window at a time and taken back with
``as_completed``, so the driver holds only the batches in flight, whatever the store's size.
Without dask installed, batches run one after another in this process.
"""

from __future__ import annotations

import math
import os
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from typing import Any

import numpy as np

from .chunks import Options, decoder_name
from .limits import DEFAULT, Limits
from .metadata import ArrayPlan, Node, analyse, discover, uses_jpeg
from .records import error, record, worst
from .stores import DEFAULT_TIMEOUT, StoreError, StoreSpec, display, list_keys, open_store
from .tasks import STATUS, check_batch
from .workers import process_pool, scratch_folder

__all__ = ["ArrayResult", "ChunkMap", "Result", "Terminated", "check"]

#: Chunks per task at least (a task costs a few hundred microseconds to schedule) and at most.
MIN_BATCH, MAX_BATCH = 64, 1024
#: Records kept for the report; every record still reaches ``on_record`` (the JSONL file).
MAX_RECORDS = 50_000
#: Grid positions above which the stored chunks are found by listing the store (work follows
#: what is stored, not what the metadata declares). A store that cannot list (http) is walked
#: position by position, up to ``Limits.positions`` of them.
LIST_ABOVE = 1 << 20
HTTP = ("http", "https")


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as Ctrl-C is: the run ends with what it checked, says so, and leaves nothing running."""


class ChunkMap:
    """The worst status of each grid position, on a grid of at most MAX_ROWS x MAX_COLS cells.

    The grid is laid out as rows x columns: the last axis of more than one chunk gives the
    columns, all axes before it the rows (so a z-stack of planes reads top to bottom).
    """

    MAX_ROWS, MAX_COLS = 120, 240

    def __init__(self, grid: Sequence[int]) -> None:
        dims = list(grid)
        while len(dims) > 1 and dims[-1] == 1:
            dims.pop()
        self.cols = dims[-1] if dims else 1
        self.rows = math.prod(dims[:-1]) if len(dims) > 1 else 1
        self.row_step = -(-self.rows // self.MAX_ROWS)
        self.col_step = -(-self.cols // self.MAX_COLS)
        self.cells = np.zeros((-(-self.rows // self.row_step), -(-self.cols // self.col_step)), dtype=np.uint8)

    def add(self, start: int, status: bytes, indices: Sequence[int] | None = None) -> None:
        """The status of grid positions ``start``, ``start + 1`` ... (or of the listed ``indices``)."""
        values = np.frombuffer(status, dtype=np.uint8)
        if indices is None and start + len(status) < 1 << 62:
            index = np.arange(start, start + len(status))
            rows, cols = np.divmod(index, self.cols)
            np.maximum.at(self.cells, (rows // self.row_step, cols // self.col_step), values)
            return
        # Positions beyond int64 (a declared grid of 2^80 positions, a few of them stored): Python integers.
        for i, value in zip(indices if indices is not None else range(start, start + len(status)), values.tolist(), strict=True):
            row, col = divmod(i, self.cols)
            cell = (row // self.row_step, col // self.col_step)
            self.cells[cell] = max(self.cells[cell], value)

    def to_json(self) -> dict[str, Any]:
        return {"rows": self.rows, "cols": self.cols, "row_step": self.row_step, "col_step": self.col_step,
                "cells": ["".join(map(str, row)) for row in self.cells.tolist()],
                "legend": {str(v): k for k, v in STATUS.items()}}


@dataclass
class ArrayResult:
    """One array: its plan, its metadata findings and the tally of its chunks."""

    node: Node
    plan: ArrayPlan | None
    metadata: dict[str, Any] | None
    counts: Counter[str] = field(default_factory=Counter)
    requirements: Counter[str] = field(default_factory=Counter)
    map: ChunkMap | None = None
    positions: int = 0
    #: The grid positions that hold a key, in order, when they were found by listing the store.
    listed: list[int] | None = None
    #: Grid positions visited (the first ones, in C order), when the store cannot list and the grid has more.
    visited: int | None = None

    @property
    def total(self) -> int:
        """JPEG chunk positions of the array to check (a shard's inner chunks each count): all, the listed or the visited ones."""
        if self.plan is None:
            return 0
        if self.listed is not None:
            return len(self.listed) * self.plan.per_grid
        return (self.plan.grid_count if self.visited is None else self.visited) * self.plan.per_grid

    @property
    def not_visited(self) -> int:
        """Chunk positions left unvisited (neither read nor known to be fill): the store cannot list, and the grid
        has more positions than ``--max-positions``."""
        if self.plan is None or self.visited is None:
            return 0
        return (self.plan.grid_count - self.visited) * self.plan.per_grid

    @property
    def unlisted(self) -> int:
        """Chunk positions inside the array that hold no key, by the listing (fill value, not read)."""
        plan = self.plan
        if plan is None or self.listed is None:
            return 0
        inner = plan.shard.inner if plan.shard else plan.grid_chunk
        inside = math.prod(-(-s // c) for s, c in zip(plan.shape, inner, strict=True))
        return max(0, inside - sum(self.counts.values()))

    @property
    def outcome(self) -> str:
        found = [k for k in ("error", "fail", "warn") if self.counts[k]]
        if self.metadata:
            found.append(self.metadata["outcome"])
        return worst(found)


@dataclass
class Result:
    """A whole run."""

    url: str
    store: str
    kind: str
    options: Options
    engine: str = ""
    started: str = ""
    seconds: float = 0.0
    arrays: list[ArrayResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    dropped: int = 0
    #: The user pressed Ctrl-C (or the run was sent SIGTERM): what was checked before is all the result holds.
    interrupted: bool = False
    #: What interrupted it: "Ctrl-C" or "SIGTERM".
    interruption: str = ""

    def totals(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for a in self.arrays:
            out.update(a.counts)
        return out

    def conforms(self, strict: bool = False) -> bool:
        bad = ("error", "fail", "warn") if strict else ("error", "fail")
        return not self.interrupted and all(a.outcome not in bad for a in self.arrays)


def _arrays(spec: StoreSpec, where: str) -> tuple[list[ArrayResult], list[str]]:
    store = open_store(spec)
    nodes = discover(store, where, spec.limits)
    jpeg = [n for n in nodes if uses_jpeg(n.metadata)]
    skipped = [f"/{n.path}" for n in nodes if not uses_jpeg(n.metadata)]
    if not jpeg:
        found = f"{len(nodes)} array(s), none with it" if nodes else "no arrays"
        raise StoreError(f"{where}: no array here uses the jpeg codec ({found})")
    out = []
    for node in jpeg:
        plan, findings = analyse(node)
        listed = visited = None
        if plan is not None and plan.checkable:
            listed, visited = _stored_positions(store, spec, plan)
            if visited is not None:
                findings.append(error(f"the array declares {plan.grid_count:,} chunk positions, and the store ({spec.kind}) "
                                      f"cannot list the ones that hold a chunk: check-store visited the first {visited:,} of "
                                      f"them (in C order) and not the other {plan.grid_count - visited:,} (--max-positions)"))
        meta = record(display(spec.url), "/" + node.path, "zarr.json", findings) if findings else None
        result = ArrayResult(node, plan, meta, listed=listed, visited=visited)
        if plan is not None and plan.checkable and plan.grid_count:
            result.map = ChunkMap(plan.grid)
        for f in findings:
            if f.requirement:
                result.requirements[f.requirement] += 0  # listed, with no chunk against it yet
        out.append(result)
    return out, skipped


def _stored_positions(store: Any, spec: StoreSpec, plan: ArrayPlan) -> tuple[list[int] | None, int | None]:
    """(the grid positions that hold a key, found by listing the store; None: every position is read), and the
    positions visited when the store cannot list and the grid has more than ``--max-positions`` (else None)."""
    # An http "listing" is whatever links a page holds: a server that shows no index, or part of one,
    # would pass for an array without chunks. Object stores and folders list what they hold.
    listable = spec.kind not in HTTP
    if plan.grid_count <= (LIST_ABOVE if listable else spec.limits.positions):
        return None, None
    keys = list_keys(store, plan.path) if listable else None
    if keys is not None:
        return sorted({i for i in map(plan.index_of, keys) if i is not None}), None
    if plan.grid_count <= spec.limits.positions:
        return None, None
    return None, spec.limits.positions


def _batches(result: ArrayResult, workers: int, batch: int | None) -> Iterator[tuple[int, int, list[int] | None]]:
    """(first position, past the last, the listed positions or None for all between) of each batch, made as they are taken."""
    plan = result.plan
    assert plan is not None
    size = batch or min(MAX_BATCH, max(MIN_BATCH, result.total // (workers * 16) or 1))
    step = max(1, size // plan.per_grid)
    if result.listed is not None:
        for at in range(0, len(result.listed), step):
            chosen = result.listed[at:at + step]
            yield chosen[0], chosen[-1] + 1, chosen
        return
    end = plan.grid_count if result.visited is None else result.visited
    for start in range(0, end, step):
        yield start, min(end, start + step), None


def check(
    url: str,
    *,
    storage_options: Mapping[str, Any] | None = None,
    options: Options | None = None,
    scheduler: str = "threads",
    workers: int | None = None,
    batch: int | None = None,
    on_start: Callable[[Result], None] | None = None,
    on_batch: Callable[[dict[str, Any], Result], None] | None = None,
    latency: float = 0.0,
    concurrency: int = 32,
    timeout: float = DEFAULT_TIMEOUT,
    limits: Limits = DEFAULT,
) -> Result:
    """Check every array under ``url`` that uses the ``jpeg`` codec; StoreError for bad input.

    ``scheduler`` is ``threads`` (default), ``processes`` or ``sync`` for this machine,
    ``cluster`` for a local dask cluster of ``workers`` processes, or the address of a dask
    scheduler. ``on_batch`` sees each batch's result as it lands (records, counts).
    ``timeout``: seconds each request of a remote store has, from connecting to its last byte.
    ``limits``: the caps of every read, and the positions walked where the store cannot list.
    Ctrl-C (KeyboardInterrupt, or :class:`Terminated` for SIGTERM) during the chunks ends the run
    with what was checked: the result says ``interrupted``.
    """
    spec = StoreSpec(url, dict(storage_options or {}), latency, concurrency, uuid.uuid4().hex, timeout, limits)
    where = display(url)
    opts = options or Options()
    opts = Options(opts.decode, decoder_name(opts) if opts.decode else opts.decoder, opts.reference, where)
    result = Result(url, where, spec.kind, opts, started=datetime.now(UTC).isoformat(timespec="seconds"))
    result.arrays, result.skipped = _arrays(spec, where)
    if on_start is not None:
        on_start(result)
    n = workers or os.cpu_count() or 1
    tasks = ((spec, a.plan, start, stop, opts, listed) for a in result.arrays if a.plan is not None and a.plan.checkable
             for start, stop, listed in _batches(a, n, batch))
    by_path = {a.plan.path: a for a in result.arrays if a.plan is not None}

    def land(out: dict[str, Any]) -> None:
        array = by_path[out["array"]]
        array.counts.update(out["counts"])
        array.positions += out["positions"]
        if array.map is not None:
            array.map.add(out["start"], out["status"], out.get("indices"))
        for rec in out["records"]:
            for f in rec["findings"]:
                if f["requirement"]:
                    array.requirements[f["requirement"]] += 1
            if len(result.records) < MAX_RECORDS:
                result.records.append(rec)
            else:
                result.dropped += 1
        if on_batch is not None:
            on_batch(out, result)

    began = time.perf_counter()
    try:
        result.engine = _execute(tasks, scheduler, workers, land)
    except KeyboardInterrupt as exc:
        result.interrupted = True
        result.interruption = "SIGTERM" if isinstance(exc, Terminated) else "Ctrl-C"
        result.engine = result.engine or f"{scheduler} (interrupted)"
    result.seconds = time.perf_counter() - began
    for a in result.arrays:
        if not result.interrupted and a.unlisted:
            a.counts["fill"] += a.unlisted
    return result


def _execute(tasks: Iterable[tuple[Any, ...]], scheduler: str, workers: int | None, land: Callable[[dict[str, Any]], None]) -> str:
    """Run the tasks; return how they ran, for the report."""
    if scheduler == "sync":
        for task in tasks:
            land(check_batch(*task))
        return "one thread (sync)"
    if scheduler in ("threads", "processes"):
        try:
            import dask.bag as db
            from dask.callbacks import Callback
        except ImportError:
            for task in tasks:
                land(check_batch(*task))
            return "one thread (dask is not installed: pip install 'zarr-jpeg-conformance[check-store]')"
        tasks = list(tasks)
        # A partition per task, named without tokenizing the tasks (from_sequence hashes every
        # plan's metadata, which cost more than the tasks of a header scan of local files).
        name = f"check-store-{uuid.uuid4().hex}"
        bag = db.Bag({(name, i): [task] for i, task in enumerate(tasks)}, name, len(tasks)).starmap(check_batch)

        landed: set[tuple[str, int]] = set()

        class Landed(Callback):
            # Runs in the scheduler's own thread as each task finishes. Graph optimization may
            # fuse the batch tasks into others (a one-partition bag ends in its finalize
            # task), so batch results are recognized by their shape, once each.
            def _posttask(self, key: Any, value: Any, dsk: Any, state: Any, worker_id: Any) -> None:
                for out in value if isinstance(value, list) else ():
                    if isinstance(out, dict) and "positions" in out and (out["array"], out["start"]) not in landed:
                        landed.add((out["array"], out["start"]))
                        land(out)

        n = workers or os.cpu_count() or 1
        if tasks and scheduler == "processes":
            # A pool of this run's own, so that the run ends its workers however it ends (dask's own outlives a SIGTERM).
            with Landed(), process_pool(n) as pool:
                bag.compute(scheduler=scheduler, num_workers=n, pool=pool)
        elif tasks:
            with Landed():
                bag.compute(scheduler=scheduler, num_workers=n)
        return f"dask {scheduler} scheduler, {n} {'threads' if scheduler == 'threads' else 'processes'}"
    return _distributed(tasks, scheduler, workers, land)


def _distributed(tasks: Iterable[tuple[Any, ...]], scheduler: str, workers: int | None, land: Callable[[dict[str, Any]], None]) -> str:
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise StoreError("a dask cluster needs dask.distributed: pip install 'zarr-jpeg-conformance[check-store]'") from exc
    import logging

    if scheduler == "cluster":
        import dask

        # The cluster's scratch space (its workers' and its own locks) is a folder of this run's, removed when the run
        # ends, however it ends: dask's own is left in the temporary folder.
        with scratch_folder() as scratch, dask.config.set({"temporary-directory": scratch}):
            cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR, local_directory=scratch)
            try:
                return _on_cluster(Client(cluster), "a local dask cluster", tasks, land)
            finally:
                cluster.close()
    try:
        client = Client(scheduler, timeout="20s")
    except (OSError, TimeoutError) as exc:
        raise StoreError(f"cannot reach the dask scheduler at {scheduler}: {exc}") from exc
    return _on_cluster(client, f"the dask cluster at {scheduler}", tasks, land)


def _on_cluster(client: Any, where: str, tasks: Iterable[tuple[Any, ...]], land: Callable[[dict[str, Any]], None]) -> str:
    from distributed import as_completed

    try:
        threads = sum(client.nthreads().values()) or 1
        pending = iter(tasks)
        # A window of tasks in flight: enough to keep every worker busy, never the whole store.
        first = [client.submit(check_batch, *t, pure=False) for t in islice(pending, 4 * threads)]
        done = as_completed(first, with_results=True)
        for _future, out in done:
            land(out)
            for t in islice(pending, 1):
                done.add(client.submit(check_batch, *t, pure=False))
        workers_n = len(client.scheduler_info().get("workers", {}))
        return f"{where}, {workers_n} workers, {threads} threads"
    finally:
        client.close()
