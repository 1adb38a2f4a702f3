"""An output folder (``--out DIR``) a run claims, and owns only as far as its manifest says.

The folder may hold the user's own files, or be the ``--out`` of a run still going: :func:`claim` creates it and
takes a lock for the run's duration (a second run into the same folder is refused at once, rather than each deleting
what the other writes; the lock file goes when the run does). What this tool writes there is listed in a manifest,
``.zarr-jpeg-conformance-manifest.json``, with a digest of each file: a file is this tool's to replace or remove only
if the manifest lists it and it is still what was written (:meth:`OutFolder.owner`). Anything else, a file of the
same name the user put there or edited since, a folder where a file goes, is never removed or replaced: the run is
refused, naming it (:class:`OutFolderError`, a usage error). Files a child process writes (a suite run's results and
log) are listed before it starts, without a digest, so that a run killed midway leaves them claimed, and get their
digest when the run settles (:meth:`OutFolder.settle`). :func:`write_text` replaces a file whole (a temporary file
renamed over it), so a reader sees the old version or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: no lock (two runs into one folder are then the user's to avoid)
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK", "MANIFEST", "OutFolder", "OutFolderError", "claim", "write_text"]

#: The lock file a run holds in its output folder (removed when the run ends).
LOCK = ".zarr-jpeg-conformance.lock"
#: What this tool wrote into the folder: relative path -> sha256 of the file as written (null: a child writes it).
MANIFEST = ".zarr-jpeg-conformance-manifest.json"
MANIFEST_VERSION = 1
#: A path the manifest may name: relative, of plain parts (a manifest is data: it never points outside the folder).
_SAFE_PART = re.compile(r"[^/\x00]+")
#: Names quoted in a refusal before the rest are counted.
_NAMED = 3


class OutFolderError(Exception):
    """The output folder cannot be used: it cannot be created or written, another run holds it, or a file this run
    would replace or remove is not this tool's."""


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _safe(rel: object) -> bool:
    if not isinstance(rel, str) or not rel or rel.startswith("/"):
        return False
    parts = rel.split("/")
    return all(_SAFE_PART.fullmatch(p) and p not in (".", "..") for p in parts)


def _names(rels: list[str]) -> str:
    more = f" and {len(rels) - _NAMED} more" if len(rels) > _NAMED else ""
    return ", ".join(rels[:_NAMED]) + more


class OutFolder:
    """A claimed output folder and its manifest. Paths are relative to the folder, with "/" between parts."""

    def __init__(self, path: Path, option: str = "--out", lock_fd: int = -1) -> None:
        self.path = path
        self.option = option
        #: The lock's descriptor (-1 without one): a child that inherits it holds the folder while it lives.
        self.lock_fd = lock_fd
        self._files = self._read()

    def _read(self) -> dict[str, str | None]:
        where = self.path / MANIFEST
        try:
            doc = json.loads(where.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, RecursionError) as exc:
            raise OutFolderError(f"{self.option} {self.path}: {MANIFEST} cannot be read ({exc}): it lists what this tool "
                                 "wrote there; give another folder, or remove it if nothing there is this tool's") from None
        files = doc.get("files") if isinstance(doc, dict) and doc.get("manifest_version") == MANIFEST_VERSION else None
        if not isinstance(files, dict) or not all(_safe(k) and (v is None or isinstance(v, str)) for k, v in files.items()):
            raise OutFolderError(f"{self.option} {self.path}: {MANIFEST} is not a manifest this version wrote: give another "
                                 "folder, or remove it if nothing there is this tool's")
        return dict(files)

    def _save(self) -> None:
        if not self._files and not (self.path / MANIFEST).exists():
            return  # nothing written here: no manifest either
        doc = {"manifest_version": MANIFEST_VERSION, "tool": "zarr-jpeg-conformance", "files": dict(sorted(self._files.items()))}
        write_text(self.path / MANIFEST, json.dumps(doc, indent=1) + "\n", self.option)

    def listed(self) -> list[str]:
        """The files the manifest lists."""
        return sorted(self._files)

    def owner(self, rel: str) -> str | None:
        """None if ``rel`` is this tool's to replace or remove (absent, or listed and as written); else what is there."""
        path = self.path / rel
        if not path.is_symlink() and not path.exists():
            return None
        if path.is_symlink() or not path.is_file():
            return "a folder" if path.is_dir() and not path.is_symlink() else "not a regular file"
        if rel not in self._files:
            return "not written by this tool"
        written = self._files[rel]
        try:
            if written is not None and _digest(path) != written:
                return "changed since this tool wrote it"
        except OSError as exc:
            return f"unreadable ({exc.strerror or exc})"
        return None

    def check(self, rels: Iterable[str]) -> None:
        """OutFolderError naming every one of ``rels`` that is there and not this tool's to replace or remove."""
        refused = [(rel, why) for rel in rels if (why := self.owner(rel)) is not None]
        if refused:
            shown = "; ".join(f"{rel} ({why})" for rel, why in refused[:_NAMED])
            more = f" and {len(refused) - _NAMED} more" if len(refused) > _NAMED else ""
            raise OutFolderError(f"{self.option} {self.path}: this run would replace {shown}{more}, which this tool does "
                                 "not own there: move it, or give another folder")

    def reserve(self, rels: Iterable[str]) -> None:
        """List ``rels`` as this tool's before something writes them (a child process): each must be free or ours."""
        rels = list(rels)
        self.check(rels)
        for rel in rels:
            self._files.setdefault(rel, None)
        self._save()

    def write_text(self, rel: str, text: str) -> None:
        """Write ``rel`` whole, if it is free or this tool's, and list it with its digest."""
        self.check([rel])
        data = text.encode("utf-8")
        self._files[rel] = None  # claimed before it is written: a run killed in between leaves it claimed
        self._save()
        write_text(self.path / rel, text, self.option)
        self._files[rel] = hashlib.sha256(data).hexdigest()
        self._save()

    def remove(self, rels: Iterable[str]) -> None:
        """Remove ``rels`` (each this tool's: check first) and unlist them."""
        rels = list(rels)
        self.check(rels)
        for rel in rels:
            path = self.path / rel
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            self._files.pop(rel, None)
        self._save()

    def settle(self) -> None:
        """Give each listed file written by a child process its digest, and unlist what was never written."""
        before = dict(self._files)
        for rel, written in before.items():
            path = self.path / rel
            if written is not None:
                continue
            if not path.is_symlink() and path.is_file():
                with contextlib.suppress(OSError):
                    self._files[rel] = _digest(path)
            elif not path.exists() and not path.is_symlink():
                del self._files[rel]
        if self._files != before:
            self._save()


@contextlib.contextmanager
def claim(folder: Path, option: str = "--out") -> Iterator[OutFolder]:
    """Create ``folder`` if need be and hold its lock while the block runs; the lock file is removed after."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutFolderError(f"{option} {folder}: a file is there, not a folder") from None
    except OSError as exc:
        raise OutFolderError(f"{option} {folder}: cannot create it: {exc.strerror or exc}") from None
    fd = _lock(folder, option)
    try:
        yield OutFolder(folder, option, fd)
    finally:
        # Removed while it is held, then released: a run that opened it meanwhile finds it gone (_lock tries again).
        with contextlib.suppress(OSError):
            if os.fstat(fd).st_ino == os.stat(folder / LOCK).st_ino:
                (folder / LOCK).unlink()
        os.close(fd)


def _lock(folder: Path, option: str) -> int:
    """The descriptor of the folder's lock file, locked; OutFolderError if another run holds it or it cannot be made."""
    for _ in range(5):
        try:
            fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except IsADirectoryError:
            raise OutFolderError(f"{option} {folder}: {LOCK} is a folder there, not this tool's lock file") from None
        except OSError as exc:
            raise OutFolderError(f"{option} {folder}: cannot write there: {exc.strerror or exc}") from None
        if fcntl is None:
            return fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutFolderError(f"{option} {folder}: another run is writing there (it holds {LOCK}); wait for it to "
                                 "end, or give another folder") from None
        try:
            if os.fstat(fd).st_ino == os.stat(folder / LOCK).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)  # the run that held it removed it as it ended: take the one there now
    raise OutFolderError(f"{option} {folder}: its lock file keeps changing: another run is starting there")


def write_text(path: Path, text: str, option: str = "--out") -> None:
    """Write ``path`` whole or not at all: a temporary file beside it, renamed over it. A folder in its place, or a
    folder that cannot be written, is an OutFolderError naming it."""
    if path.is_dir() and not path.is_symlink():
        raise OutFolderError(f"{option} {path.parent}: {path.name} is a folder there, where this run writes a file: move "
                             "it, or give another folder")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutFolderError(f"{option} {path.parent}: cannot write {path.name}: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
