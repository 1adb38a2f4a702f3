"""One task: a batch of grid positions of one array, read and judged. Pure, module-level, never raises.

A task receives the store's :class:`~.stores.StoreSpec`, the array's :class:`~.metadata.ArrayPlan`
and a range of grid positions (chunks, or shards of inner chunks), never bytes: it opens the
store itself, reads all of its byte ranges in one go, and returns counts, a status byte per
grid position (for the chunk map) and a record for each chunk that does not conform.
"""

from __future__ import annotations

import traceback
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, cast

from zarr.abc.store import ByteRequest, RangeByteRequest, SuffixByteRequest
from zarr.storage import LocalStore

from .chunks import FIRST, HEAD, HEAD_MAX, TAIL, Options, check_header, check_whole, header_extent
from .folder import read_ends
from .limits import WHOLE_BUDGET
from .metadata import ArrayPlan, shard_index
from .records import Finding, cap, error, record, worst
from .stores import StoreError, StoreSpec, is_remote, open_store, read_each, read_ranges
from .unwrap import ChunkError, unwrap

__all__ = ["STATUS", "check_batch"]

#: Largest end of a shard index entry taken for a place in a file (no file is longer).
MAX_OFFSET = 1 << 62
#: Failed reads in a row, after a batch's read failed, before the rest of the batch shares the error.
GIVE_UP = 8
#: Inner chunks of a shard read, then judged, at a time: a shard's index may hold millions.
GROUP = 1024
#: Status byte of a grid position in the chunk map, by outcome; higher is worse.
STATUS = {"none": 0, "fill": 1, "pass": 2, "warn": 3, "fail": 4, "error": 5}
#: (image, configuration, boundary) -> headers (SOI through the first SOS segment) judged without a
#: finding against them, per process: a chunk that starts with one and ends with EOI passes.
_GOOD: dict[tuple[Any, ...], tuple[bytes, ...]] = {}
#: Headers kept per key, and keys kept, of _GOOD; a header beyond them is judged chunk by chunk.
_GOOD_HEADERS, _GOOD_KEYS = 64, 64
EOI = b"\xff\xd9"


class _Slot:
    """One stored JPEG to judge: where it is and what was read of it."""

    __slots__ = ("boundary", "coords", "first", "head", "index", "inner", "key", "length", "offset", "problem", "tail",
                 "wanted")

    def __init__(self, index: int, coords: tuple[int, ...], key: str, inner: tuple[int, ...] | None, boundary: bool,
                 offset: int = 0, length: int | None = None) -> None:
        self.index, self.coords, self.key, self.inner, self.boundary = index, coords, key, inner, boundary
        self.offset, self.length = offset, length
        self.head: bytes | None = None
        self.tail: bytes = b""
        #: Why it could not be read, if it could not.
        self.problem: str | None = None
        #: Bytes asked for from the start and from the end of an inner chunk.
        self.wanted = (0, 0)
        #: The first FIRST bytes of a chunk (all of it if shorter), while its header may need them.
        self.first: bytes | None = None


def check_batch(store: StoreSpec, plan: ArrayPlan, start: int, stop: int, options: Options,
                positions: Sequence[int] | None = None) -> dict[str, Any]:
    """Check grid positions ``start``..``stop`` of ``plan``'s array (or the listed ``positions``, a
    sorted run from ``start`` to below ``stop``); failures become error records."""
    try:
        return _Batch(store, plan, start, stop, options, positions).run()
    except Exception as exc:  # noqa: BLE001 - one failed batch must not cancel the run: it is reported
        first = plan.key(plan.coords(start))
        last = plan.key(plan.coords(stop - 1))
        detail = cap("".join(traceback.format_exception_only(exc)).strip())
        rec = record(options.store, plan.path or "/", f"{first}..{last}", [error(f"checking chunks {first} to {last} failed: {detail}")])
        n = len(positions) if positions is not None else stop - start
        count = n * plan.per_grid
        out = {"array": plan.path, "start": start, "stop": stop, "positions": count,
               "counts": {"error": count}, "records": [rec], "status": bytes([STATUS["error"]]) * n}
        if positions is not None:
            out["indices"] = list(positions)
        return out


class _Batch:
    def __init__(self, spec: StoreSpec, plan: ArrayPlan, start: int, stop: int, options: Options,
                 positions: Sequence[int] | None = None) -> None:
        self.spec, self.plan, self.start, self.stop, self.options = spec, plan, start, stop, options
        self.positions = positions
        self.indices: Sequence[int] = range(start, stop) if positions is None else positions
        #: Where each grid position's status byte is, for listed positions.
        self.at = None if positions is None else {index: i for i, index in enumerate(positions)}
        self.store = open_store(spec)
        self.counts: Counter[str] = Counter()
        self.status = bytearray(len(self.indices))
        self.records: list[dict[str, Any]] = []
        self.whole = options.decode or bool(plan.after)
        self.limits = spec.limits

    def run(self) -> dict[str, Any]:
        if self.plan.shard:
            for slots in self._shards():
                self._read(slots)
                self._judge_all(slots)
        elif type(self.store) is LocalStore and not self.whole:
            slots = self._scan(str(self.store.root))
            self._longer(slots)
            self._judge_all(slots)
        elif not self.whole:
            slots = self._chunks()
            self._read_first(slots)
            self._judge_all(slots)
        else:
            # Read whole, a group at a time: what a task holds is the group's caps at most, whatever the chunks hold.
            slots = self._chunks()
            step = self.limits.group
            for at in range(0, len(slots), step):
                group = slots[at:at + step]
                self._read(group)
                self._judge_all(group)
        out = {"array": self.plan.path, "start": self.start, "stop": self.stop,
               "positions": len(self.indices) * self.plan.per_grid,
               "counts": dict(self.counts), "records": self.records, "status": bytes(self.status)}
        if self.positions is not None:
            out["indices"] = list(self.positions)
        return out

    def _judge_all(self, slots: list[_Slot]) -> None:
        """Judge each slot on its own: whatever goes wrong with one chunk is that chunk's error, named, never its batch's."""
        for slot in slots:
            try:
                self._judge(slot)
            except Exception as exc:  # noqa: BLE001 - reported on the chunk
                detail = cap("".join(traceback.format_exception_only(exc)).strip(), 500)
                self._report(slot.index, slot.key, slot.inner, [error(f"checking this chunk failed: {detail}")], {}, slot.boundary)
            slot.head = slot.first = None
            slot.tail = b""

    def _mark(self, index: int, outcome: str) -> None:
        i = index - self.start if self.at is None else self.at[index]
        self.status[i] = max(self.status[i], STATUS[outcome])

    def _chunks(self) -> list[_Slot]:
        plan = self.plan
        return [_Slot(i, c, plan.stored_key(c), None, plan.at_edge(c)) for i in self.indices for c in (plan.coords(i),)]

    def _scan(self, root: str) -> list[_Slot]:
        """A header scan of a local folder: read each chunk's ends (:func:`~.stores.read_ends`) and pass here
        each chunk that starts with a header judged before without a finding and ends with EOI; the others,
        read or not, for :meth:`_judge`.

        What :meth:`_chunks` then :meth:`_read_first` (whose reads are :func:`~.stores.read_ranges`) and
        :meth:`_judge` would make of each chunk, at a fraction of the cost per chunk: a key
        ``read_ends`` leaves is read by ``read_ranges`` (:meth:`_ends`), and failures in a row are shared
        as ``_fetch`` shares them.
        """
        plan = self.plan
        keys, edges = plan.stored_keys(self.indices)
        group = (plan.image, plan.config)
        good = {edge: _GOOD.get((*group, edge), ()) for edge in (False, True)}
        status = self.status
        passed = fill = failed = 0
        problem = ""
        rest: list[_Slot] = []
        pass_, fill_ = STATUS["pass"], STATUS["fill"]
        for n, (i, key, edge, got) in enumerate(zip(self.indices, keys, edges, read_ends(root, keys, HEAD, TAIL), strict=True)):
            if failed >= GIVE_UP:
                # The store itself is failing, as _fetch takes it: the rest share the error.
                rest.append(_Slot(i, plan.coords(i), key, None, edge))
                rest[-1].problem = problem
                continue
            if got is False:
                try:
                    got = self._ends(key)
                except StoreError as exc:
                    problem = str(exc)
                    failed += 1
                    rest.append(_Slot(i, plan.coords(i), key, None, edge))
                    rest[-1].problem = problem
                    continue
            failed = 0
            if got is None:
                fill += 1
                status[n] = fill_
                continue
            head, tail = got
            if len(head) == HEAD and tail.endswith(EOI) and (head.startswith(good[edge]) or self._learn(head, group, edge, good)):
                passed += 1
                status[n] = pass_
                continue
            rest.append(_Slot(i, plan.coords(i), key, None, edge))
            rest[-1].head, rest[-1].tail = head, tail
        self.counts["pass"] += passed
        self.counts["fill"] += fill
        return rest

    def _ends(self, key: str) -> tuple[bytes, bytes] | None:
        """A chunk's head and tail read as :meth:`_read_first` reads them (None: no such key); StoreError when it cannot be read."""
        (data,) = read_ranges(self.store, [(key, RangeByteRequest(0, FIRST))], self.limits.chunk)
        if data is None:
            return None
        if len(data) < FIRST:
            return data[:HEAD], data[-TAIL:]
        (tail,) = read_ranges(self.store, [(key, SuffixByteRequest(TAIL))], self.limits.chunk)
        return data[:HEAD], tail or b""

    def _learn(self, head: bytes, group: tuple[Any, ...], edge: bool, good: dict[bool, tuple[bytes, ...]]) -> bool:
        """Whether the header ``head`` starts with is judged without a finding (then kept in ``good``)."""
        end = header_extent(head)
        if end is None or end <= 0:
            return False
        header = head[:end]
        findings, _seen = check_header(self.plan, header, EOI, edge)
        if findings:
            return False
        if len(good[edge]) < _GOOD_HEADERS:
            if len(_GOOD) >= _GOOD_KEYS:
                _GOOD.clear()
            good[edge] = _GOOD[(*group, edge)] = (*good[edge], header)
        return True

    def _shards(self) -> Iterator[list[_Slot]]:
        """The inner chunks each shard's index holds, a group at a time (read and judged before the next is made):
        work follows the entries present, never the count a shard declares (2^32 inner chunks of 1x1)."""
        plan = self.plan
        layout = plan.shard
        assert layout is not None
        keys = [plan.stored_key(plan.coords(i)) for i in self.indices]
        if layout.index_bytes > self.limits.chunk:
            self._unread_shards(keys)
            return
        where: ByteRequest = SuffixByteRequest(layout.index_bytes) if layout.index_at_end else RangeByteRequest(0, layout.index_bytes)
        raws = self._fetch([[(k, where)] for k in keys])
        slots: list[_Slot] = []
        held = 0
        for i, key, got in zip(self.indices, keys, raws, strict=True):
            coords = plan.coords(i)
            inside = plan.inner_inside(coords)
            if isinstance(got, str):
                self._report(i, key, None, [error(f"cannot read the shard index: {got}")], {}, False)
                self.counts["error"] += inside - 1
                continue
            raw = got[0]
            if raw is None:
                self.counts["fill"] += inside
                if inside:
                    self._mark(i, "fill")
                continue
            entries, problem = shard_index(raw, layout)
            if entries is None:
                self._report(i, key, None, [error(f"cannot read the shard index: {problem}")], {}, False)
                self.counts["error"] += inside - 1
                continue
            stored = 0
            for at in range(0, len(entries), GROUP):
                for place, offset, length in entries[at:at + GROUP].tolist():
                    pos, ok, edge = plan.inner_place(coords, place)
                    stored += ok
                    if offset + length > MAX_OFFSET:
                        # No file is that long: reading it would only exhaust memory, in this chunk's batch.
                        self._report(i, key, pos, [error(f"the shard index puts this chunk at bytes {offset}..{offset + length}, "
                                                         f"beyond any file (2^62 bytes): a corrupt index entry; not read")], {}, edge)
                        continue
                    if self.whole and length > self.limits.chunk:
                        self._report(i, key, pos, [error(f"the shard index says this chunk is {length:,} bytes, more than "
                                                         f"{self.limits.chunk:,} (--max-chunk-bytes): not read")], {}, edge)
                        continue
                    slots.append(_Slot(i, coords, key, pos, edge, offset, length))
                    held += length if self.whole else HEAD + TAIL
                    if len(slots) >= GROUP or held >= WHOLE_BUDGET:
                        yield slots
                        slots, held = [], 0
            if inside > stored:
                self.counts["fill"] += inside - stored
                self._mark(i, "fill")
        if slots:
            yield slots

    def _unread_shards(self, keys: list[str]) -> None:
        """Shards whose index is larger than the cap of a read: each that exists is an error, each that does not is fill."""
        plan = self.plan
        assert plan.shard is not None
        size = plan.shard.index_bytes
        for i, key, got in zip(self.indices, keys, self._fetch([[(k, RangeByteRequest(0, 1))] for k in keys]), strict=True):
            inside = plan.inner_inside(plan.coords(i))
            if not isinstance(got, str) and got[0] is None:
                self.counts["fill"] += inside
                if inside:
                    self._mark(i, "fill")
                continue
            why = (f"cannot read the shard: {got}" if isinstance(got, str) else
                   f"the shard index of {plan.shard.count:,} inner chunks is {size:,} bytes, more than {self.limits.chunk:,} "
                   "(--max-chunk-bytes): not read, and no inner chunk of it checked")
            self._report(i, key, None, [error(why)], {}, False)
            self.counts["error"] += inside - 1

    def _ranges(self, slot: _Slot, head: int | None) -> list[tuple[str, ByteRequest | None]]:
        if slot.inner is None:
            if head is None:
                return [(slot.key, None)]
            return [(slot.key, RangeByteRequest(0, head)), (slot.key, SuffixByteRequest(TAIL))]
        assert slot.length is not None
        off, n = slot.offset, slot.length
        if head is None or n <= head:
            slot.wanted = (n, 0)
            return [(slot.key, RangeByteRequest(off, off + n))]
        slot.wanted = (head, min(n, TAIL))
        return [(slot.key, RangeByteRequest(off, off + head)), (slot.key, RangeByteRequest(off + n - min(n, TAIL), off + n))]

    def _fetch(self, plans: list[list[tuple[str, ByteRequest | None]]]) -> list[list[bytes | None] | str]:
        """The values of each list of ranges, or why they could not be read.

        A remote store's lists are read each on its own, concurrently (:func:`~.stores.read_each`):
        one that fails errs only itself, and a batch of them costs one deadline. A local one's
        are read in one go; when that fails, each list alone, so that one unreadable key (a
        permission, a link out of the store) errs only itself, and after :data:`GIVE_UP`
        failures in a row the store itself is taken to be failing, and the rest share the error
        rather than each being tried.
        """
        limit = self.limits.chunk
        if is_remote(self.store):
            return read_each(self.store, plans, limit)
        try:
            got = iter(read_ranges(self.store, [r for p in plans for r in p], limit))
            return [[next(got) for _ in p] for p in plans]
        except StoreError as exc:
            if len(plans) == 1:
                return [str(exc)]
        out: list[list[bytes | None] | str] = []
        failed = 0
        for p in plans:
            if failed >= GIVE_UP:
                out.append(cast(str, out[-1]))
                continue
            try:
                out.append(read_ranges(self.store, p, limit))
                failed = 0
            except StoreError as exc:
                out.append(str(exc))
                failed += 1
        return out

    def _read(self, slots: list[_Slot]) -> None:
        head = None if self.whole else HEAD
        plans = [self._ranges(s, head) for s in slots]
        for slot, values in zip(slots, self._fetch(plans), strict=True):
            if isinstance(values, str):
                slot.problem = values
                continue
            slot.head = values[0]
            if len(values) > 1:
                slot.tail = values[1] or b""
        if not self.whole:
            self._longer(slots)

    def _read_first(self, slots: list[_Slot]) -> None:
        """Each chunk's first :data:`FIRST` bytes in one request; the head (and, of a chunk no longer than
        that, the tail) cut from them; the last :data:`TAIL` bytes of the longer ones in a second request."""
        later = []
        for slot, values in zip(slots, self._fetch([[(s.key, RangeByteRequest(0, FIRST))] for s in slots]), strict=True):
            if isinstance(values, str):
                slot.problem = values
                continue
            data = values[0]
            if data is None:
                continue
            slot.head, slot.first = data[:HEAD], data
            if len(data) < FIRST:  # all of the chunk
                slot.tail = data[-TAIL:]
            else:
                later.append(slot)
        if later:
            for slot, values in zip(later, self._fetch([[(s.key, SuffixByteRequest(TAIL))] for s in later]), strict=True):
                if isinstance(values, str):
                    slot.problem = values
                else:
                    slot.tail = values[0] or b""
        self._longer(slots)
        for slot in slots:
            slot.first = None

    def _longer(self, slots: list[_Slot]) -> None:
        # Headers longer than HEAD (ICC profiles, EXIF): read again, as far as they go (from the first
        # bytes read, when they went that far or were all of the chunk).
        longer = []
        for slot in slots:
            if slot.head is not None and slot.tail and slot.problem is None:
                end = header_extent(slot.head)
                if end is not None and end < 0 and len(slot.head) == HEAD:
                    n = min(-end + 4096, HEAD_MAX)
                    first = slot.first
                    if first is not None and (n <= len(first) or len(first) < FIRST):
                        slot.head = first[:n]
                    else:
                        longer.append((slot, n))
        if longer:
            again = self._fetch([[self._ranges(s, n)[0]] for s, n in longer])
            for (slot, _), value in zip(longer, again, strict=True):
                if isinstance(value, str):
                    slot.problem = value
                else:
                    slot.head = value[0]

    def _judge(self, slot: _Slot) -> None:
        if slot.problem is not None:
            self._report(slot.index, slot.key, slot.inner, [error(f"cannot read this chunk: {slot.problem}")], {}, slot.boundary)
            return
        data = slot.head
        if data is None:
            self.counts["fill"] += 1
            self._mark(slot.index, "fill")
            return
        findings: list[Finding]
        seen: dict[str, Any]
        if slot.inner is not None and slot.length is not None and (len(data) < slot.wanted[0] or len(slot.tail) < slot.wanted[1]):
            # A read came back short: judged, what was read would pass for a truncated stream or trailing bytes.
            got = len(data) + len(slot.tail)
            findings, seen = [error(f"the shard index puts this chunk at bytes {slot.offset}..{slot.offset + slot.length}, "
                                    f"past the end of the shard ({got} of the {sum(slot.wanted)} bytes asked for came back)")], {}
        elif self.whole and len(data) > self.limits.chunk:
            findings, seen = [error(f"this chunk is longer than {self.limits.chunk:,} bytes (--max-chunk-bytes): not read "
                                    "further, and not checked")], {}
        elif self.whole or not slot.tail or len(data) < HEAD:
            # The whole stream is here: it was asked for, or it is shorter than HEAD.
            try:
                data = unwrap(self.plan.after, data, self.limits.chunk) if self.plan.after else data
            except ChunkError as exc:
                self._report(slot.index, slot.key, slot.inner, [error(f"{exc}; its JPEG stream was not checked")], {}, slot.boundary)
                return
            findings, seen = check_whole(self.plan, data, slot.boundary, self.options, self.limits.chunk)
        else:
            findings, seen = check_header(self.plan, data, slot.tail, slot.boundary)
        self._report(slot.index, slot.key, slot.inner, findings, seen, slot.boundary)

    def _report(self, index: int, key: str, inner: tuple[int, ...] | None, findings: list[Finding], seen: dict[str, Any],
                boundary: bool) -> None:
        outcome = worst(f.outcome for f in findings)
        self.counts[outcome] += 1
        self._mark(index, outcome)
        if findings:
            plan = self.plan
            local = key[len(plan.path) + 1:] if plan.path else key
            self.records.append(record(self.options.store, "/" + plan.path, local, findings, inner=inner, seen=seen,
                                       boundary=boundary))

