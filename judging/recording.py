"""Every call the suites make to an implementation, written to a folder: the files a reproducer hands a codec's author.

``pytest --record-calls DIR`` (``report repro`` runs it) wraps each implementation under test in a
:class:`Recorder`. Each case's calls go to ``DIR/<case>/``: ``calls.jsonl``, one line a call (the
operation, the codec object as the case gave it and what the codec was given for it, the parse
each encode or decode used, what came back or what was raised), and beside it the arrays and
streams of each call: the chunk handed to ``encode`` (``NNN-chunk.npy``, and ``.raw``: its bytes
in C order), the stream it returned or the one handed to ``decode`` (``NNN-stream.jpg``), the array
``decode`` returned (``NNN-returned.npy`` and ``.raw``). A recorder only records: every call goes
to the implementation as it would without it, and every result and exception comes back as it was.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters.zarr_codecs import json_value

#: Bytes of arrays and streams one case may write; a call beyond it is listed without its files (a size-cap probe's
#: bisection makes many large chunks).
MAX_CASE_BYTES = 64 * 2**20
#: Calls one case may record; later ones are counted, not written.
MAX_CASE_CALLS = 60


def case_folder_name(case: str) -> str:
    """A folder name for a case ID: what a file name cannot hold replaced by '_'."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", case)[:150] or "case"


class Recorder:
    """An implementation whose parse, encode and decode calls are written to a folder; everything else is its own."""

    def __init__(self, impl: Any, folder: Path) -> None:
        object.__setattr__(self, "_impl", impl)
        object.__setattr__(self, "_folder", folder)
        object.__setattr__(self, "_case", None)
        object.__setattr__(self, "_calls", 0)
        object.__setattr__(self, "_bytes", 0)
        # The parses of this case, by the parsed object's id (kept alive, so that an id is never reused meanwhile).
        object.__setattr__(self, "_parses", {})

    def __getattr__(self, name: str) -> Any:
        return getattr(self._impl, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._impl, name, value)

    def start_case(self, case: str) -> None:
        """Record the calls that follow under ``case``."""
        object.__setattr__(self, "_case", self._folder / case_folder_name(case))
        object.__setattr__(self, "_calls", 0)
        object.__setattr__(self, "_bytes", 0)
        object.__setattr__(self, "_parses", {})

    # ------------------------------------------------------------ the Adapter protocol

    def parse(self, codec: Any) -> Any:
        entry: dict[str, Any] = {"op": "parse", "codec": json_value(codec)}
        log = getattr(self._impl, "given_log", None)
        start = log.count if log is not None else 0
        try:
            parsed = self._impl.parse(codec)
        except BaseException as exc:
            self._write(entry, exc, log, start)
            raise
        number = self._write(entry, None, log, start)
        if number is not None:
            self._parses[id(parsed)] = (number, parsed)
        return parsed

    def encode(self, parsed: Any, chunk: Any) -> Any:
        entry: dict[str, Any] = {"op": "encode", "parse": self._parse_of(parsed)}
        files = self._array(entry, "chunk", chunk)
        try:
            data = self._impl.encode(parsed, chunk)
        except BaseException as exc:
            self._write(entry, exc, files=files)
            raise
        if isinstance(data, bytes | bytearray | memoryview):
            files += self._file(entry, "stream", "jpg", bytes(data))
        else:
            entry["returned"] = type(data).__name__
        self._write(entry, None, files=files)
        return data

    def decode(self, parsed: Any, data: Any, chunk_shape: Any) -> Any:
        entry: dict[str, Any] = {"op": "decode", "parse": self._parse_of(parsed),
                                 "chunk_shape": [int(n) for n in chunk_shape]}
        files = self._file(entry, "stream", "jpg", bytes(data)) if isinstance(data, bytes | bytearray | memoryview) else []
        try:
            out = self._impl.decode(parsed, data, chunk_shape)
        except BaseException as exc:
            self._write(entry, exc, files=files)
            raise
        if isinstance(out, np.ndarray):
            files += self._array(entry, "returned", out)
        else:
            entry["returned"] = type(out).__name__
        self._write(entry, None, files=files)
        return out

    # ------------------------------------------------------------ writing

    def _parse_of(self, parsed: Any) -> int | None:
        found = self._parses.get(id(parsed))
        return found[0] if found is not None and found[1] is parsed else None

    def _array(self, entry: dict[str, Any], what: str, array: Any) -> list[tuple[str, bytes]]:
        if not isinstance(array, np.ndarray):
            entry[what] = type(array).__name__
            return []
        entry[f"{what}_shape"], entry[f"{what}_dtype"] = list(array.shape), array.dtype.name
        contiguous = np.ascontiguousarray(array)
        import io

        buffer = io.BytesIO()
        np.save(buffer, contiguous, allow_pickle=False)
        return self._file(entry, what, "npy", buffer.getvalue()) + self._file(entry, what, "raw", contiguous.tobytes())

    def _file(self, entry: dict[str, Any], what: str, suffix: str, data: bytes) -> list[tuple[str, bytes]]:
        name = f"{self._calls:03d}-{what}.{suffix}"
        if self._bytes + len(data) > MAX_CASE_BYTES:
            entry.setdefault("not_saved", []).append(f"{name} ({len(data)} bytes: over the case's {MAX_CASE_BYTES} bytes)")
            return []
        object.__setattr__(self, "_bytes", self._bytes + len(data))
        entry.setdefault("files", {})[f"{what}.{suffix}"] = name
        return [(name, data)]

    def _write(self, entry: dict[str, Any], exc: BaseException | None, log: Any = None, start: int = 0,
               files: list[tuple[str, bytes]] | None = None) -> int | None:
        """Append the call to the case's calls.jsonl (and its files); its number, or None beyond :data:`MAX_CASE_CALLS`."""
        folder = self._case
        number = self._calls
        object.__setattr__(self, "_calls", number + 1)
        if folder is None or number >= MAX_CASE_CALLS:
            return None
        if exc is not None:
            entry["raised"] = f"{type(exc).__name__}: {exc}"[:4000]
            entry["outcome"] = "rejected" if isinstance(exc, ValueError | TypeError) else "error"
        else:
            entry["outcome"] = "ok"
        if log is not None:
            given = log.since(start)
            if given:
                entry["given"] = given[-1].get("given")
                if given[-1].get("no_equivalent"):
                    entry["no_equivalent"] = given[-1]["no_equivalent"]
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in files or ():
            (folder / name).write_bytes(data)
        with (folder / "calls.jsonl").open("a", encoding="utf-8") as out:
            out.write(json.dumps({"call": number, **entry}, default=repr) + "\n")
        return number


__all__ = ["MAX_CASE_BYTES", "MAX_CASE_CALLS", "Recorder", "case_folder_name"]
