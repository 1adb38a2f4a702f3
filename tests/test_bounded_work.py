"""Work follows what is stored (issue 45): a shard's inner chunks are those its index holds, never the count it
declares; where nothing can be listed (http) the positions visited are bounded, and the report says so; each
chunk is judged on its own (a corrupt checksum errs that chunk, named); only regular files are read.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("zarr")

from hostile_kit import (
    GRAY,
    array,
    meta,
    run_check,
    serving,
    stream,
    within,
)

from zarr_jpeg_conformance.check_store import Options, check

MISSING = (2**64 - 1).to_bytes(8, "little") * 2


def _sharded_meta(per_shard: int, inner: list[int] | None = None) -> dict[str, Any]:
    """A 2-D array of one shard of ``per_shard`` x ``per_shard`` inner chunks of 1x1 (``inner`` to change that)."""
    inner = inner or [1, 1]
    shard = [per_shard * inner[0], per_shard * inner[1]]
    sharding = {"name": "sharding_indexed", "configuration": {"chunk_shape": inner, "codecs": [GRAY],
                                                              "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}
    return meta(shard, shard, [sharding])


def _shard(entries: dict[int, bytes], count: int) -> bytes:
    """A shard (index at the end, no checksum) holding ``entries`` (place in index order -> stream) of ``count``."""
    data = bytearray()
    index = bytearray(MISSING * count)
    for place, chunk in sorted(entries.items()):
        index[16 * place:16 * place + 16] = len(data).to_bytes(8, "little") + len(chunk).to_bytes(8, "little")
        data += chunk
    return bytes(data + index)


def test_a_shard_of_2_22_inner_chunks_costs_what_its_index_holds(tmp_path: Path, gray: bytes) -> None:
    """Issue 45, high 3: a 400-byte zarr.json with one shard of 2^22 empty 1x1 inner chunks took 23.5 s and 616 MiB.
    Now a missing shard is fill by arithmetic, and a present one costs the entries its index holds."""
    store = tmp_path / "s.zarr"
    (store / "c" / "0").mkdir(parents=True)
    (store / "zarr.json").write_text(json.dumps({**_sharded_meta(2048), "shape": [2 * 2048, 2048]}))
    # The first shard is there: an index of 2^22 entries (64 MiB), two of them chunks; the second is not.
    one = stream(1, 1)
    (store / "c" / "0" / "0").write_bytes(_shard({0: one, 2**22 - 1: one}, 2**22))
    done = within(60, lambda: run_check([str(store), "-q"], timeout=60))
    assert done.returncode == 0 and f"2 pass, {2 * 2**22 - 2:,} fill" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("kind", ["folder", "http"])
def test_a_shard_of_2_32_inner_chunks_is_fill_when_absent_and_an_error_when_present(tmp_path: Path, kind: str) -> None:
    """2^32 inner chunks was still growing past 1.28 GB at 60 s. Its index would be 64 GiB: a shard that is not there
    is 2^32 fill values, one that is there is an error of its own (the index is past the cap), never read."""
    store = tmp_path / "s.zarr"
    (store / "c" / "0").mkdir(parents=True)
    (store / "zarr.json").write_text(json.dumps({**_sharded_meta(2**16), "shape": [2 * 2**16, 2**16]}))
    (store / "c" / "0" / "0").write_bytes(b"a shard too small for its index")  # c/1/0, the second shard, is absent
    with serving(tmp_path) as base:
        url = str(store) if kind == "folder" else f"{base}/{store.name}"
        done = within(60, lambda: run_check([url, "-q"], timeout=60))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{2**32:,} error, {2**32:,} fill" in done.stdout, done.stdout  # an unread shard: each inner chunk unchecked
    assert "c/0/0: the shard index of 4,294,967,296 inner chunks is 68,719,476,736 bytes, more than 67,108,864" in done.stdout


def test_over_http_the_positions_visited_are_bounded_and_said(tmp_path: Path, gray: bytes) -> None:
    """Issue 45, medium: over http a 300-byte zarr.json declaring 2^16 chunk positions took 38 s (2.7 h at the old limit
    of 2^24). Where nothing can be listed, at most --max-positions are visited (4,096 by default), and the
    report says how many were not."""
    from zarr_jpeg_conformance.check_store.__main__ import parser

    assert parser().parse_args(["x"]).max_positions == 4096
    array(tmp_path / "s.zarr", [256 * 32, 256 * 32], [32, 32], {"c/0/0": gray, "c/0/1": b"garbage"})
    out = tmp_path / "out"
    with serving(tmp_path) as base:
        done = run_check([f"{base}/s.zarr", "-q", "--max-positions", "100", "--out", str(out)], address_space=None)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 pass, 1 fail, 98 fill, 65,436 not visited" in done.stdout, done.stdout
    assert "visited the first 100 of them (in C order) and not the other 65,436 (--max-positions)" in done.stdout
    (found,) = json.loads((out / "report.json").read_text())["arrays"]
    assert found["not_visited"] == 65_436 and found["checked"] == 100


def _crc(data: bytes) -> bytes:
    import google_crc32c

    return data + google_crc32c.value(data).to_bytes(4, "little")


@pytest.mark.parametrize("decode", [False, True], ids=["header", "decode"])
def test_a_checksum_that_does_not_match_errs_its_own_chunk_named(tmp_path: Path, gray: bytes, decode: bool) -> None:
    """Issue 45, medium: one crc32c mismatch erred its whole batch, missing chunks included, without naming the chunk.
    Now that chunk alone is an error, named, saying which codec found what; the missing one is fill."""
    bad = bytearray(_crc(gray))
    bad[-1] ^= 0xFF
    store = array(tmp_path / "s.zarr", [64, 96], [32, 32], {"c/0/0": _crc(gray), "c/0/1": bytes(bad), "c/0/2": _crc(gray),
                                                             "c/1/0": _crc(gray), "c/1/1": _crc(gray)}, [GRAY, {"name": "crc32c"}])
    result = check(str(store), options=Options(decode=decode), scheduler="sync", batch=64)
    assert result.totals()["pass"] == 4 and result.totals()["error"] == 1 and result.totals()["fill"] == 1, result.totals()
    (rec,) = result.records
    assert rec["key"] == "c/0/1" and "the crc32c codec after jpeg cannot undo this chunk" in rec["message"], rec["message"]
    assert "checksum do not match" in rec["message"] and "its JPEG stream was not checked" in rec["message"]


def test_a_truncated_gzip_chunk_and_a_bad_checksum_inside_a_shard_err_their_own_chunks(tmp_path: Path, gray: bytes) -> None:
    """Neighbours: another codec in the chain (a gzip stream cut short), and a checksum inside a shard."""
    import gzip

    good = gzip.compress(gray)
    store = array(tmp_path / "g.zarr", [64, 64], [32, 32], {"c/0/0": good, "c/0/1": good[:-20], "c/1/0": good},
                  [GRAY, {"name": "gzip", "configuration": {"level": 5}}])
    result = check(str(store), scheduler="sync")
    assert result.totals()["pass"] == 2 and result.totals()["error"] == 1 and result.totals()["fill"] == 1, result.totals()
    assert [r["key"] for r in result.records] == ["c/0/1"] and "gzip codec after jpeg" in result.records[0]["message"]
    bad = bytearray(_crc(gray))
    bad[-1] ^= 0xFF
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [32, 32], "codecs": [GRAY, {"name": "crc32c"}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}
    shard = _shard({0: _crc(gray), 1: bytes(bad), 3: _crc(gray)}, 4)
    store = array(tmp_path / "s.zarr", [64, 64], [64, 64], {"c/0/0": shard}, [sharding])
    result = check(str(store), scheduler="sync")
    assert result.totals()["pass"] == 2 and result.totals()["error"] == 1 and result.totals()["fill"] == 1, result.totals()
    (rec,) = result.records
    assert rec["inner"] == [0, 1] and "checksum do not match" in rec["message"]


@pytest.mark.parametrize("row", [2, 20], ids=["each-file-looked-at", "folder-listed"])
def test_only_regular_files_are_read_in_the_header_scan(tmp_path: Path, gray: bytes, row: int) -> None:
    """Issue 45, low: a device node was read in the header scan. A chunk that is a device (or a socket) is an error
    naming what it is, and is never read; the others pass. Both ways the scan learns what a file is: from the
    file once open, and from one listing of a folder of many chunks (never opened at all)."""
    store = array(tmp_path / "s.zarr", [64, 32 * row], [32, 32], {f"c/{i}/{j}": gray for i in range(2) for j in range(row)})
    (store / "c" / "0" / "1").unlink()
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(store / "c" / "0" / "1"))
    try:
        (store / "c" / "1" / "1").unlink()
        try:
            os.mknod(store / "c" / "1" / "1", 0o644 | 0o020000, os.makedev(1, 5))  # /dev/zero: endless zeros if read
        except (PermissionError, AttributeError):
            pytest.skip("making a device node needs root")
        result = check(str(store), scheduler="sync", batch=64)
    finally:
        listener.close()
    assert result.totals()["pass"] == 2 * row - 2 and result.totals()["error"] == 2, result.totals()
    assert sorted(r["key"] for r in result.records) == ["c/0/1", "c/1/1"]
    assert all("not a regular file (a named pipe, a device or a socket): not read" in r["message"] for r in result.records)


def test_a_shard_index_that_cannot_be_read_or_used_errs_each_inner_chunk_once(tmp_path: Path, gray: bytes) -> None:
    """A shard whose index cannot be read (a link out of the store) or is the wrong size is one record, naming why, and
    its four inner chunks are four errors; an entry with a real offset and a length of 2^64 - 1 is a corrupt entry,
    an error of its own, never an empty inner chunk (empty is both fields 2^64 - 1)."""
    sharding = {"name": "sharding_indexed", "configuration": {"chunk_shape": [32, 32], "codecs": [GRAY],
                                                              "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}
    endless = bytearray(_shard({0: gray, 1: gray}, 4))
    endless[-64 + 16 + 8:-64 + 32] = (2**64 - 1).to_bytes(8, "little")  # inner chunk 1: its length
    store = array(tmp_path / "s.zarr", [64, 192], [64, 64], {"c/0/0": bytes(endless), "c/0/1": b"shorter than an index"},
                  [sharding])
    (tmp_path / "outside").write_bytes(_shard({0: gray}, 4))
    (store / "c" / "0" / "2").symlink_to(tmp_path / "outside")
    result = check(str(store), scheduler="sync")
    assert result.totals() == {"pass": 1, "error": 1 + 4 + 4, "fill": 2}, result.totals()
    found = {(r["key"], tuple(r["inner"] or ())): r["message"] for r in result.records}
    assert sorted(found) == [("c/0/0", (0, 1)), ("c/0/1", ()), ("c/0/2", ())], found
    assert "beyond any file (2^62 bytes): a corrupt index entry" in found["c/0/0", (0, 1)]
    assert "cannot read the shard index: shard index is 21 bytes, expected 64" in found["c/0/1", ()]
    assert "cannot read the shard index: key c/0/2: a symbolic link out of the store" in found["c/0/2", ()]


def test_a_shard_past_the_arrays_edge_counts_only_the_inner_chunks_inside_as_fill(tmp_path: Path, gray: bytes) -> None:
    """The fill of a shard is worked out (inner chunks that start inside the array, less those stored), no longer
    counted by walking every inner position: a shard half past the array's edge has two inner chunks inside."""
    sharding = {"name": "sharding_indexed", "configuration": {"chunk_shape": [32, 32], "codecs": [GRAY],
                                                              "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}
    for shape, fill in (([16, 64], 1), ([48, 64], 3), ([64, 64], 3), ([64, 16], 1)):
        store = array(tmp_path / f"m{shape[0]}x{shape[1]}.zarr", shape, [64, 64], {"c/0/0": _shard({0: gray}, 4)}, [sharding])
        (found,) = check(str(store), scheduler="sync").arrays
        assert found.counts["pass"] == 1 and found.counts["fill"] == fill, (shape, found.counts)
