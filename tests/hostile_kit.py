"""What the hostile-store tests make: small stores written by hand, zips written byte by byte, servers that
misbehave on purpose, and check-store run as its command in a child under an address-space limit."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import threading
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest

GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}
#: Address space a check-store child is given in the memory tests: a run of a small store peaks near 420 MB of it
#: (interpreter, numpy, zarr, dask, aiohttp, thread stacks); the bombs they read would need gigabytes.
CHILD_AS = 800 << 20


def stream(height: int = 32, width: int = 32) -> bytes:
    """A grayscale JPEG stream the jpeg codec of :data:`GRAY` writes for a chunk of ``height`` x ``width``."""
    from zarr_jpeg_conformance.backends import load_backend
    from zarr_jpeg_conformance.core.config import parse_codec

    pixels = (np.arange(height * width, dtype=np.uint32) % 251).astype(np.uint8).reshape(height, width, 1)
    return load_backend("imagecodecs").encode(parse_codec(GRAY), pixels)


def meta(shape: list[Any], chunks: list[Any], codecs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs or [GRAY], "attributes": {}}


def array(folder: Path, shape: list[Any], chunks: list[Any], keys: Mapping[str, bytes],
          codecs: list[dict[str, Any]] | None = None) -> Path:
    """An array's folder: its zarr.json and a file per key."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "zarr.json").write_text(json.dumps(meta(shape, chunks, codecs)))
    for key, data in keys.items():
        path = folder.joinpath(*key.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return folder


def two_by_two(folder: Path, data: bytes) -> Path:
    """A 64x64 array of four 32x32 chunks, each ``data``."""
    return array(folder, [64, 64], [32, 32], {f"c/{i}/{j}": data for i in range(2) for j in range(2)})


def consolidated(folder: Path, arrays: Mapping[str, Mapping[str, Any]]) -> Path:
    """A group whose zarr.json holds the metadata of ``arrays`` (path -> zarr.json), consolidated."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "group", "attributes": {},
        "consolidated_metadata": {"kind": "inline", "must_understand": False, "metadata": dict(arrays)}}))
    return folder


def within(seconds: float, call: Callable[[], Any]) -> Any:
    """``call()``'s value, failing the test (not hanging it) when it takes longer than ``seconds``."""
    out: dict[str, Any] = {}

    def go() -> None:
        try:
            out["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test below
            out["error"] = exc

    thread = threading.Thread(target=go, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


def sparse(path: Path, size: int, head: bytes = b"") -> Path:
    """A file of ``size`` bytes that starts with ``head`` and holds nothing else (no disk blocks for the rest)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        f.write(head)
        f.truncate(size)
    return path


def zeros_deflated(pieces: int, piece: int = 16 << 20, before: bytes = b"") -> bytes:
    """A raw deflate stream of ``before`` and ``pieces`` x ``piece`` zero bytes, made by compressing ``piece`` bytes
    once: after a full flush a deflate stream holds no reference to what came before, so the same bytes repeat."""
    squeezer = zlib.compressobj(9, zlib.DEFLATED, -15)
    start = squeezer.compress(before) + squeezer.flush(zlib.Z_FULL_FLUSH)
    block = squeezer.compress(bytes(piece)) + squeezer.flush(zlib.Z_FULL_FLUSH)
    return start + block * pieces + b"\x03\x00"  # an empty final block


def gzip_zeros(pieces: int, piece: int = 16 << 20, before: bytes = b"") -> bytes:
    """One gzip member of ``before`` and ``pieces`` x ``piece`` zero bytes (its CRC and size left 0: no reader gets
    that far and stays within a cap)."""
    return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + zeros_deflated(pieces, piece, before) + bytes(8)


def write_zip(path: Path, entries: Mapping[str, bytes | tuple[bytes, int]]) -> Path:
    """A zip written byte by byte: each entry stored (bytes), or deflated ((raw deflate data, the size it inflates to)).

    ``zipfile`` would compress a deflated entry itself, byte by byte: a 1 GiB entry took 12 s. The CRC of a deflated
    entry is left 0: nothing here reads one whole (a reader that inflates it all has failed the test before).
    """
    out = bytearray()
    central = bytearray()
    for name, value in entries.items():
        raw = name.encode()
        if isinstance(value, bytes):
            method, data, size, crc = 0, value, len(value), zlib.crc32(value)
        else:
            (data, size), method, crc = value, 8, 0
        fields = struct.pack("<HHHHHIII", 20, 0, method, 0, 0x21, crc, len(data), size)
        central += b"PK\x01\x02" + struct.pack("<H", 20) + fields + struct.pack("<HHHHHII", len(raw), 0, 0, 0, 0, 0, len(out)) + raw
        out += b"PK\x03\x04" + fields + struct.pack("<HH", len(raw), 0) + raw + data
    end = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, len(entries), len(entries), len(central), len(out), 0)
    path.write_bytes(bytes(out + central + end))
    return path


@contextmanager
def serving(folder: Path, routes: Mapping[str, Callable[[Any], None]] | None = None,
            log: list[str] | None = None) -> Iterator[str]:
    """``check_store.serve`` of ``folder``, with ``routes`` answering chosen paths their own way."""
    from zarr_jpeg_conformance.check_store.serve import serve

    with serve(folder, routes=routes, log=log) as base:
        yield base


def run_check(argv: list[str], *, address_space: int | None = CHILD_AS, timeout: float = 120,
              env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """check-store as its command, in a child process limited to ``address_space`` bytes (``prlimit --as``)."""
    command = [sys.executable, "-m", "zarr_jpeg_conformance.check_store", *argv]
    if address_space is not None:
        prlimit = shutil.which("prlimit")
        if prlimit is None:
            pytest.skip("needs prlimit (util-linux) to bound the child's memory")
        command = [prlimit, f"--as={address_space}", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, **(env or {})})
