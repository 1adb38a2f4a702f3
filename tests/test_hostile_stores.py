"""Hostile stores and unlucky users: check-store and the report never read outside, never hang, never destroy.

Each test is one row of the hostile-input table of issue 25: a store or a command line made
to break a rule (read outside the store, work by a declared size, wait on a silent server,
take a typo for a verdict, delete a user's file, keep a stale report, print a member whole),
and what must happen instead.
"""

from __future__ import annotations

import errno
import gc
import inspect
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("zarr")

from hostile_kit import GRAY
from hostile_kit import array as _array
from hostile_kit import consolidated as _consolidated
from hostile_kit import meta as _meta
from hostile_kit import stream as _stream
from hostile_kit import two_by_two as _two_by_two
from hostile_kit import within as _within

from zarr_jpeg_conformance.check_store import Options, check
from zarr_jpeg_conformance.check_store import run as run_mod
from zarr_jpeg_conformance.check_store.__main__ import main
from zarr_jpeg_conformance.check_store.limits import Limits
from zarr_jpeg_conformance.check_store.serve import serve
from zarr_jpeg_conformance.check_store.stores import StoreSpec, leaves_store


@pytest.fixture(scope="module")
def stream() -> bytes:
    pytest.importorskip("imagecodecs")
    return _stream()


# ------------------------------------------------------------------ high


def test_keys_that_leave_the_store_are_refused(tmp_path: Path) -> None:
    from zarr_jpeg_conformance.check_store.keys import suspect
    from zarr_jpeg_conformance.check_store.stores import StoreError, open_store, read_ranges

    for bad in ("../outside", "/etc", "a/../../b", "a//b", "./a", "C:/x", "a\\..\\b", "http://host/x", "", "a/.", "a/.."):
        assert leaves_store(bad) and suspect(bad), bad  # the cheap look at every key never lets one through
    for good in ("a", "a/b", "c/0/0", "zarr.json", "a.b/c..d"):
        assert leaves_store(good) is None, good
    # At the read itself too: a key that leaves the store is refused, whoever built it.
    (tmp_path / "store").mkdir()
    (tmp_path / "secret").write_bytes(b"secret")
    with pytest.raises(StoreError, match="would leave the store"):
        read_ranges(open_store(StoreSpec(str(tmp_path / "store"))), [("../secret", None)])


@pytest.mark.parametrize("path", ["../outside", "ABSOLUTE"])
def test_consolidated_metadata_naming_an_array_outside_the_store_is_a_finding_never_a_read(
        tmp_path: Path, stream: bytes, path: str, capsys: pytest.CaptureFixture[str]) -> None:
    outside = _two_by_two(tmp_path / "outside", stream)
    name = str(outside) if path == "ABSOLUTE" else path
    store = _consolidated(tmp_path / "trav.zarr", {name: _meta([64, 64], [32, 32])})
    result = check(str(store), scheduler="sync")
    (array,) = result.arrays
    assert array.plan is None and array.positions == 0 and array.counts["pass"] == 0  # nothing of it was read
    assert "outside the store" in array.metadata["findings"][0]["observed"]  # type: ignore[index]
    assert not result.conforms()
    assert main([str(store), "-q"]) == 1
    assert "CONFORMS" not in capsys.readouterr().out.replace("DOES NOT CONFORM", "")


def test_over_http_no_request_leaves_the_store_url(tmp_path: Path, stream: bytes) -> None:
    _two_by_two(tmp_path / "secret", stream)
    _consolidated(tmp_path / "trav.zarr", {"../secret": _meta([64, 64], [32, 32])})
    with serve(tmp_path) as base:
        result = check(f"{base}/trav.zarr", scheduler="sync")
    (array,) = result.arrays
    assert array.plan is None and array.counts["pass"] == 0
    assert "outside the store" in array.metadata["findings"][0]["observed"]  # type: ignore[index]


def test_a_huge_declared_shape_costs_what_is_stored(tmp_path: Path, stream: bytes) -> None:
    # 2^40 x 2^40 samples in 32x32 chunks: 2^70 declared positions, two stored.
    store = _array(tmp_path / "huge.zarr", [2**40, 2**40], [32, 32], {"c/0/0": stream, f"c/{2**35 - 1}/{2**35 - 1}": stream})
    result = _within(60, lambda: check(str(store), scheduler="sync"))
    (array,) = result.arrays
    assert array.listed is not None and len(array.listed) == 2 and array.total == 2
    assert array.counts["pass"] == 2 and array.positions == 2
    assert array.counts["fill"] == 2**70 - 2  # the rest: no key, the fill value (counted, not read)
    assert result.conforms()
    # The chunk map still places both (the first cell and the last).
    assert array.map is not None and sum(row.count("2") for row in array.map.to_json()["cells"]) == 2


def test_a_huge_grid_in_a_store_that_cannot_list_is_walked_only_to_the_bound_and_says_so(
        tmp_path: Path, stream: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _array(tmp_path / "huge.zarr", [2**40, 2**40], [32, 32], {"c/0/0": stream})
    monkeypatch.setattr(run_mod, "list_keys", lambda store, prefix: None)
    result = _within(60, lambda: check(str(store), scheduler="sync", limits=Limits(positions=64)))
    (array,) = result.arrays
    assert array.visited == 64 and array.positions == 64 and array.counts["pass"] == 1 and array.counts["fill"] == 63
    assert array.not_visited == 2**70 - 64
    assert "visited the first 64 of them" in array.metadata["findings"][-1]["observed"]  # type: ignore[index]
    assert not result.conforms()


def test_a_grid_of_exactly_the_position_bound_is_walked_whole(tmp_path: Path, stream: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """check-store visits at most --max-positions positions where nothing can be listed: that many is all of them,
    one more is not (limits shrunk so that the walk is short)."""
    monkeypatch.setattr(run_mod, "list_keys", lambda store, prefix: None)
    monkeypatch.setattr(run_mod, "LIST_ABOVE", 1)
    for grid, whole in ((2, True), (3, False)):
        store = _array(tmp_path / f"g{grid}.zarr", [32 * grid, 64], [32, 32], {"c/0/0": stream})
        (array,) = check(str(store), scheduler="sync", limits=Limits(positions=4)).arrays
        assert (array.visited is None) == whole, (grid, array.metadata)
        assert array.counts["pass"] == 1 and array.counts["fill"] == 3
        if not whole:
            assert array.not_visited == 2 and "visited the first 4 of them" in array.metadata["findings"][-1]["observed"]  # type: ignore[index]


def test_a_failed_batch_of_listed_positions_names_the_first_and_last_it_held(tmp_path: Path, stream: bytes,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    last = f"c/{2**35 - 1}/{2**35 - 1}"
    store = _array(tmp_path / "huge.zarr", [2**40, 2**40], [32, 32], {"c/0/0": stream, last: stream})
    from zarr_jpeg_conformance.check_store import tasks

    def broken(self: Any) -> Any:
        raise RuntimeError("the store went away")

    monkeypatch.setattr(tasks._Batch, "run", broken)
    result = _within(60, lambda: check(str(store), scheduler="sync"))
    (rec,) = result.records
    assert rec["case"] == f"/c/0/0..{last}" and rec["outcome"] == "error", rec["case"]
    assert result.arrays[0].counts["error"] == 2


def test_over_http_a_huge_grid_is_not_taken_from_a_listing(tmp_path: Path, stream: bytes) -> None:
    # An http "listing" is a page's links: an empty one would pass for an array without chunks. The grid is walked to
    # the bound, and the rest said to be not visited.
    _array(tmp_path / "huge.zarr", [2**40, 2**40], [32, 32], {"c/0/0": stream})
    with serve(tmp_path) as base:
        result = _within(60, lambda: check(f"{base}/huge.zarr", scheduler="sync", limits=Limits(positions=16)))
    (array,) = result.arrays
    assert array.visited == 16 and array.counts["pass"] == 1 and array.counts["fill"] == 15
    assert "cannot list the ones that hold a chunk" in array.metadata["findings"][-1]["observed"]  # type: ignore[index]
    assert not result.conforms()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """An http server that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/store.zarr"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    sock.close()


def test_a_server_that_never_answers_is_bounded_by_timeout(silent_server: str, capsys: pytest.CaptureFixture[str]) -> None:
    began = time.monotonic()
    assert _within(60, lambda: main([silent_server, "--timeout", "1", "-q"])) == 2
    assert time.monotonic() - began < 30
    err = capsys.readouterr().err
    assert "--timeout" in err and len(err.strip().splitlines()) == 1, err


def test_the_timeout_has_a_documented_default() -> None:
    from zarr_jpeg_conformance.check_store.__main__ import parser

    assert parser().parse_args(["x"]).timeout == 60.0
    page = (Path(__file__).resolve().parents[1] / "docs" / "data-publishers.md").read_text()
    assert "`--timeout SECONDS` (default 60)" in page


@pytest.mark.parametrize("argv", [["--decode", "--backend", "nosuch"], ["--decode", "--reference", "nosuch"],
                                  ["--timeout", "0"], ["--timeout", "nan"], ["--workers", "0"], ["--batch", "-1"],
                                  ["--storage-option", "anon"]])
def test_a_typo_is_a_usage_error_not_a_verdict(tmp_path: Path, stream: bytes, argv: list[str],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    store = _two_by_two(tmp_path / "ok.zarr", stream)
    assert main([str(store), "-q", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.strip().splitlines()) == 1, captured
    assert (argv[-1] + ": no such backend" in captured.err) or captured.err.startswith(f"check-store: {argv[0]} ")


@pytest.mark.parametrize("option", ["--max-chunk-bytes", "--max-metadata-bytes"])
def test_a_cap_that_is_no_size_is_a_usage_error_naming_the_option(tmp_path: Path, stream: bytes, option: str,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    store = _two_by_two(tmp_path / "ok.zarr", stream)
    assert main([str(store), "-q", option, "64 megs"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (f"check-store: {option}: '64 megs' is not a size (give bytes, or a number "
                                                   "with k, M or G)\n"), captured


# ------------------------------------------------------------------ medium


def test_an_empty_array_is_checked_not_a_crash(tmp_path: Path) -> None:
    store = _array(tmp_path / "empty.zarr", [0, 96], [32, 96], {})
    result = check(str(store), scheduler="sync")
    assert result.conforms() and result.totals()["pass"] == 0 and result.arrays[0].map is None
    assert main([str(store), "-q"]) == 0


def test_a_chunk_beyond_the_decoders_size_is_this_decoder_cannot_not_a_fail(tmp_path: Path) -> None:
    pytest.importorskip("turbojpeg")
    from zarr_jpeg_conformance.check_store.chunks import check_whole
    from zarr_jpeg_conformance.check_store.metadata import Node, analyse

    plan, findings = analyse(Node("", _meta([65535, 65535], [65535, 65535])))
    assert plan is not None and not [f for f in findings if f.outcome == "fail"]  # a valid size (MCU padding warns)
    # A 65535x65535 stream (its SOF says so); its scan is never decoded.
    data = bytearray(_stream(16, 16))
    sof = data.index(b"\xff\xc0")
    data[sof + 5:sof + 9] = (65535).to_bytes(2, "big") * 2
    found, _seen = check_whole(plan, bytes(data), False, Options(decode=True, decoder="turbojpeg"))
    decode = [f for f in found if "65500" in f.observed]
    assert decode and all(f.outcome == "error" for f in decode) and "JPEG-X-03" in decode[0].observed


def test_deeply_nested_metadata_is_a_clear_error_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "deep.zarr"
    store.mkdir()
    meta = json.dumps(_meta([32, 32], [32, 32]))
    (store / "zarr.json").write_text(meta[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}")
    out = tmp_path / "out"
    assert main([str(store), "-q", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "zarr.json" in err and "nests" in err and len(err.strip().splitlines()) == 1
    assert not (out / "findings.jsonl").exists() and not (out / "report.json").exists()


@pytest.mark.parametrize("where", ["a file", "read-only"])
def test_an_out_that_cannot_be_written_is_a_usage_error(tmp_path: Path, stream: bytes, where: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    store = _two_by_two(tmp_path / "ok.zarr", stream)
    out = tmp_path / "out"
    if where == "a file":
        out.write_text("mine")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only folder")  # pragma: no cover
        out.mkdir()
        out.chmod(0o500)
    assert main([str(store), "-q", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert "--out" in captured.err and len(captured.err.strip().splitlines()) == 1 and "Traceback" not in captured.err


def test_an_out_on_a_file_system_that_takes_no_folder_is_a_usage_error(tmp_path: Path, stream: bytes) -> None:
    if not Path("/proc/self").is_dir():
        pytest.skip("needs /proc")  # pragma: no cover
    store = _two_by_two(tmp_path / "ok.zarr", stream)
    # /proc takes no new folder, not even from root: what a read-only file system does to every run.
    done = subprocess.run([sys.executable, "-m", "zarr_jpeg_conformance.check_store", str(store), "-q", "--out",
                           "/proc/zjc-out"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--out /proc/zjc-out: cannot create it" in done.stderr


def test_two_runs_into_one_out_cannot_destroy_each_other(tmp_path: Path, stream: bytes,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from zarr_jpeg_conformance.report.outfolder import claim

    store = _two_by_two(tmp_path / "ok.zarr", stream)
    out = tmp_path / "out"
    assert main([str(store), "-q", "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with claim(out):  # another run holds the folder
        assert main([str(store), "-q", "--out", str(out)]) == 2
    assert "another run is writing there" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_failed_run_leaves_no_old_report_beside_new_findings(tmp_path: Path, stream: bytes) -> None:
    good = _two_by_two(tmp_path / "ok.zarr", stream)
    out = tmp_path / "out"
    (tmp_path / "out").mkdir()
    (out / "my-notes.txt").write_text("mine")
    assert main([str(good), "-q", "--out", str(out)]) == 0
    assert json.loads((out / "report.json").read_text())["conforms"] is True
    bad = tmp_path / "bad.zarr"
    bad.mkdir()
    (bad / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array", "shape": [')
    assert main([str(bad), "-q", "--out", str(out)]) == 2
    assert not (out / "report.json").exists() and not (out / "findings.jsonl").exists()
    assert (out / "my-notes.txt").read_text() == "mine"


def test_ctrl_c_ends_with_a_summary_and_a_partial_report(tmp_path: Path, stream: bytes, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    store = _two_by_two(tmp_path / "ok.zarr", stream)
    real = run_mod.check_batch
    calls = []

    def interrupted(*args: Any) -> dict[str, Any]:
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(run_mod, "check_batch", interrupted)
    out = tmp_path / "out"
    assert main([str(store), "-q", "--scheduler", "sync", "--batch", "1", "--out", str(out)]) == 130
    stdout = capsys.readouterr().out
    assert "INTERRUPTED (Ctrl-C) after 1 of 4 chunk positions" in stdout and "CONFORMS" not in stdout
    report = json.loads((out / "report.json").read_text())
    assert report["interrupted"] is True and report["conforms"] is False and report["totals"]["pass"] == 1
    assert "partial report" in (out / "report.html").read_text()


def _sharded(folder: Path) -> Path:
    import zarr

    from zarr_jpeg_conformance.zarrcodecs.jpeg import JpegCodec

    array = zarr.create_array(str(folder), shape=(64, 64), chunks=(32, 32), shards=(64, 64), dtype="uint8",
                              serializer=JpegCodec(encoded_color_space="grayscale", quality=90))
    array[...] = (np.arange(64 * 64) % 251).astype(np.uint8).reshape(64, 64)
    return folder


@pytest.mark.parametrize("decode", [False, True])
def test_a_shard_index_entry_beyond_any_file_errs_only_itself(tmp_path: Path, decode: bool) -> None:
    pytest.importorskip("imagecodecs")
    import google_crc32c

    store = _sharded(tmp_path / "shard.zarr")
    shard = store / "c" / "0" / "0"
    data = bytearray(shard.read_bytes())
    index = data[-(16 * 4 + 4):-4]
    index[16:24] = (2**63).to_bytes(8, "little")  # inner chunk 0,1: offset 2^63
    index[32 + 8:32 + 16] = (2**62).to_bytes(8, "little")  # inner chunk 1,0: 2^62 bytes long
    data[-(16 * 4 + 4):] = bytes(index) + google_crc32c.value(bytes(index)).to_bytes(4, "little")
    shard.write_bytes(bytes(data))
    result = check(str(store), options=Options(decode=decode), scheduler="sync")
    assert result.totals()["pass"] == 2 and result.totals()["error"] == 2
    assert {tuple(r["inner"]) for r in result.records} == {(0, 1), (1, 0)}
    assert all("beyond any file" in r["message"] for r in result.records)


def test_one_unreadable_chunk_errs_only_itself(tmp_path: Path, stream: bytes) -> None:
    store = _two_by_two(tmp_path / "ok.zarr", stream)
    loop = store / "c" / "1" / "1"
    loop.unlink()
    loop.symlink_to(loop)  # ELOOP: a chunk that exists and cannot be read
    result = check(str(store), scheduler="sync", batch=4)
    assert result.totals()["pass"] == 3 and result.totals()["error"] == 1
    (rec,) = result.records
    assert rec["key"] == "c/1/1" and "cannot read this chunk" in rec["message"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("decode", [False, True], ids=["header-scan", "decode"])
def test_a_named_pipe_for_a_chunk_is_an_error_of_its_own_never_a_wait(tmp_path: Path, stream: bytes, decode: bool) -> None:
    """Opening a FIFO for reading waits for a writer: a store holding one as a chunk file held check-store forever.
    Now the chunk is an error saying what it is, in a header scan and in a decode."""
    store = _two_by_two(tmp_path / "ok.zarr", stream)
    pipe = store / "c" / "1" / "1"
    pipe.unlink()
    os.mkfifo(pipe)
    result = check(str(store), options=Options(decode=decode), scheduler="sync", batch=4)
    assert result.totals()["pass"] == 3 and result.totals()["error"] == 1
    (rec,) = result.records
    assert rec["key"] == "c/1/1" and "not a regular file" in rec["message"]


# ------------------------------------------------------------------ low


@pytest.mark.parametrize(("shape", "chunks"), [([-64, 64], [32, 32]), ([64, 64], [0, 32]), ([64.0, 64], [32, 32]),
                                               ([64, 64], [True, 32]), ([True, 64], [1, 64])])
def test_a_shape_that_is_no_grid_is_corrupt_metadata_exit_2(tmp_path: Path, shape: list[Any], chunks: list[Any],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "bad.zarr"
    store.mkdir()
    (store / "zarr.json").write_text(json.dumps(_meta(shape, chunks)))
    assert main([str(store), "-q"]) == 2
    err = capsys.readouterr().err
    assert "metadata is corrupt" in err and len(err.strip().splitlines()) == 1


def test_a_huge_member_is_capped_in_what_is_printed_and_saved(tmp_path: Path, stream: bytes,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    codec = {"name": "jpeg", "configuration": {**GRAY["configuration"], "comment": "x" * 5_000_000}}
    store = _array(tmp_path / "big.zarr", [64, 64], [32, 32], {"c/0/0": stream}, [codec])
    out = tmp_path / "out"
    main([str(store), "-q", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "JPEG-X-01" in printed and len(printed) < 20_000
    assert (out / "report.json").stat().st_size < 200_000 and (out / "findings.jsonl").stat().st_size < 50_000


# ------------------------------------------------------------------ the exec: client


def test_a_harness_whose_setsid_grandchild_holds_stdout_is_ended_promptly(tmp_path: Path) -> None:
    from zarr_jpeg_conformance.adapters.remote import ExecAdapter, HarnessFailure

    if shutil.which("setsid") is None or not Path("/proc/self/fd").is_dir():
        pytest.skip("needs setsid and /proc")
    marker = tmp_path / "grandchild.pid"
    script = tmp_path / "harness.sh"
    script.write_text(f"#!/bin/sh\nsetsid sh -c 'echo $$ > {marker}; exec sleep 300' &\nsleep 0.5\nexit 0\n")
    script.chmod(0o755)
    began = time.monotonic()
    with pytest.raises(HarnessFailure) as failure:
        ExecAdapter([str(script)], timeout=60)
    assert time.monotonic() - began < 15
    message = str(failure.value)
    assert "exited with code 0 before replying to start" in message and "setsid" in message, message
    pid = int(marker.read_text())
    time.sleep(0.2)
    state = Path(f"/proc/{pid}/stat")
    assert not state.exists() or state.read_text().split(")")[-1].split()[0] == "Z", "the grandchild is still running"


# ------------------------------------------------------------------ the report, the plugin, the corpus


def _result_line(impl: str, case: str, message: str = "", reqs: tuple[str, ...] = ("JPEG-Q-01",)) -> str:
    return json.dumps({"case": case, "format_version": 1, "implementation": impl, "level": "MUST", "message": message,
                       "metrics": {}, "outcome": "fail" if message else "pass", "requirements": list(reqs),
                       "test": f"test_parse.py::test_parse[{impl}-{case}]"}, sort_keys=True) + "\n"


def _earlier_run(out: Path) -> None:
    """What a report run leaves in its folder: results, a meta, a log and the pages, each listed in its manifest."""
    from zarr_jpeg_conformance.report.outfolder import OutFolder
    from zarr_jpeg_conformance.report.saved import FORMAT_VERSION

    (out / "results").mkdir(parents=True)
    folder = OutFolder(out)
    folder.write_text("results/alpha.jsonl", _result_line("alpha", "config.quality.zero"))
    folder.write_text("results/alpha.log", "pytest said\n")
    folder.write_text("results/alpha.meta.json", json.dumps({"format_version": FORMAT_VERSION, "spec": "alpha", "name": "alpha",
                                                             "available": True, "run": {}}))
    for page in ("matrix.json", "matrix.md", "matrix.html", "environment.json", "throughput.json"):
        folder.write_text(page, "{}")


def _no_suites(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Stand in for the suite runs: record what the folder held when they would have started."""
    from zarr_jpeg_conformance.report import run

    seen: list[Path] = []

    def run_all(specs: Any, out: Path, options: Any, log: Any) -> list[dict[str, Any]]:
        seen.extend(sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file()))
        return []

    monkeypatch.setattr(run, "run_all", run_all)
    return seen


def test_report_out_removes_only_what_a_run_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zarr_jpeg_conformance.report.__main__ import main as report

    out = tmp_path / "matrix"
    _earlier_run(out)
    mine = {"results/my-notes.json": "notes", "results/analysis.log": "log", "notes.txt": "mine"}
    for name, text in mine.items():
        (out / name).write_text(text)
    seen = _no_suites(monkeypatch)
    assert report(["--out", str(out), "--impl", "pillow", "--no-throughput"]) == 0
    # When the suites started: the earlier run's files were gone, the user's were there.
    assert {str(p) for p in seen} == {*mine, "environment.json", ".zarr-jpeg-conformance.lock", ".zarr-jpeg-conformance-manifest.json"}
    assert all((out / name).read_text() == text for name, text in mine.items())


def test_report_out_refuses_results_no_run_wrote_and_deletes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from zarr_jpeg_conformance.report.__main__ import main as report

    out = tmp_path / "matrix"
    _earlier_run(out)
    (out / "results" / "data.jsonl").write_text('{"my": "data"}\n')
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    seen = _no_suites(monkeypatch)
    assert report(["--out", str(out), "--impl", "pillow", "--no-throughput"]) == 2
    err = capsys.readouterr().err
    assert "data.jsonl" in err and "no run of this tool wrote" in err and len(err.strip().splitlines()) == 1
    assert seen == [] and {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and p.name != ".zarr-jpeg-conformance.lock"} == before


def test_report_usage_errors_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zarr_jpeg_conformance.report.__main__ import main as report
    from zarr_jpeg_conformance.report.outfolder import claim

    (tmp_path / "a-file").write_text("mine")
    held = tmp_path / "held"
    cases = [(["--out", str(tmp_path / "x"), "--impl", "nosuch"], "no implementation is called 'nosuch'"),
             (["--out", str(tmp_path / "a-file"), "--impl", "pillow"], "a file is there, not a folder"),
             (["--out", str(held), "--impl", "pillow"], "another run is writing there")]
    with claim(held):
        for argv, message in cases:
            assert report(argv) == 2, argv
            err = capsys.readouterr().err
            assert message in err and len(err.strip().splitlines()) == 1, err
    assert (tmp_path / "a-file").read_text() == "mine" and not (tmp_path / "x").exists()


def test_results_lines_are_capped_and_checked_when_read(tmp_path: Path) -> None:
    from zarr_jpeg_conformance.judging.verdict import MAX_MESSAGE
    from zarr_jpeg_conformance.report.saved import ReportFileError, read_results

    path = tmp_path / "alpha.jsonl"
    path.write_text(_result_line("alpha", "config.quality.zero", "x" * 2_000_000))
    (record,) = read_results(path)
    assert MAX_MESSAGE < len(record["message"]) < MAX_MESSAGE + 200 and "cut when read" in record["message"]
    # A line longer than any a run writes is refused before it is held whole.
    path.write_text(_result_line("alpha", "config.quality.zero") + _result_line("alpha", "config.quality.zero", "x" * 20_000_000))
    with pytest.raises(ReportFileError, match=r"line 2: longer than 16,777,216 bytes, and a run writes no such line"):
        read_results(path)
    path.write_text(_result_line("alpha", "config.quality.zero") + _result_line("alpha", "made.up", reqs=("JPEG-ZZZ-99",)))
    with pytest.raises(ReportFileError, match=r"line 2: case made.up rests on JPEG-ZZZ-99, which fixtures/requirements.json does not hold"):
        read_results(path)
    # A case no suite or corpus has: a corpus ID made up, a module that is no suite.
    for case in ("config.quality.made-up", "made.up[x]"):
        path.write_text(_result_line("alpha", "roundtrip.fidelity[gray-q90]") + _result_line("alpha", case))
        with pytest.raises(ReportFileError, match=rf"line 2: case {re.escape(case)} is no case of this version's suites"):
            read_results(path)


def test_matrix_md_carries_no_raw_html_from_an_implementation() -> None:
    from zarr_jpeg_conformance.report import model, render_md

    name = "<img src=x onerror=alert(1)>"
    result = model.CaseResult(name, "config.quality.zero", "fail", "MUST", ("JPEG-Q-01",), "fail: <script>alert(2)</script>",
                              {}, test="test_parse.py::test_parse[x]")
    impl = model.Implementation(name=name, spec="exec:harness <b>", roles=("decode", "encode"), versions={})
    md = render_md.render(model.build([result], implementations=[impl]))
    assert "<img" not in md and "<script" not in md and "&lt;img src=x" in md
    assert "`exec:harness <b>`" in md  # a code span shows its text as it is


def test_results_that_name_a_folder_are_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "zarr_jpeg_conformance.suites.test_schema", "--co", "-q",
                           "-p", "no:cacheprovider", f"--results={tmp_path}"], capture_output=True, text=True, timeout=300,
                          check=False, cwd=tmp_path)
    assert done.returncode == 4, done.stdout + done.stderr
    assert "INTERNALERROR" not in done.stdout + done.stderr and f"--results {tmp_path}: a folder" in done.stderr


def test_a_damaged_corpus_file_is_named(tmp_path: Path) -> None:
    from zarr_jpeg_conformance.corpus.registry import CorpusFileError, read_json

    path = tmp_path / "quality.json"
    path.write_text('{"cases": [{"id": "config.quality.zero", "desc')
    with pytest.raises(CorpusFileError, match=r"fixtures/configs/quality.json: not valid JSON \(line 1, column \d+"):
        read_json(path, "fixtures/configs/quality.json")


def test_a_hierarchy_deeper_than_the_stack_is_walked(tmp_path: Path, stream: bytes) -> None:
    group = json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}})
    store = tmp_path / "deep.zarr"
    folder = store
    # More levels than the stack allows a recursive walk (a lowered limit: a folder deeper than
    # Python's own limit would break pytest's recursive clean-up of tmp_path, for every run after).
    levels, frames = 400, len(inspect.stack())
    for _ in range(levels):
        folder.mkdir()
        (folder / "zarr.json").write_text(group)
        folder = folder / "g"
    _two_by_two(folder, stream)
    _two_by_two(store / "a", stream)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(frames + 300)
    try:
        result = check(str(store), scheduler="sync")
    finally:
        sys.setrecursionlimit(limit)
    assert [a.node.path.count("/") for a in result.arrays] == [0, levels - 1]  # in name order: /a, then the deep one
    assert result.conforms() and result.totals()["pass"] == 8


def test_a_symbolic_link_out_of_a_local_store_is_never_read(tmp_path: Path, stream: bytes) -> None:
    outside = _two_by_two(tmp_path / "outside", stream)
    store = _two_by_two(tmp_path / "store.zarr", stream)
    (store / "c" / "0" / "0").unlink()
    (store / "c" / "0" / "0").symlink_to(outside / "c" / "0" / "0")  # a chunk file linked out
    shutil.rmtree(store / "c" / "1")
    (store / "c" / "1").symlink_to(outside / "c" / "1")  # a chunk folder linked out
    (store / "c" / "0" / "1").unlink()
    (store / "c" / "0" / "1").symlink_to("../1/0")  # a link that stays inside: followed (and out through c/1)
    (store / "spare").mkdir()
    (store / "spare" / "chunk").write_bytes(stream)
    result = check(str(store), scheduler="sync", batch=4)
    assert result.totals()["pass"] == 0 and result.totals()["error"] == 4
    assert all("symbolic link out of the store" in r["message"] for r in result.records)
    (store / "c" / "0" / "1").unlink()
    (store / "c" / "0" / "1").symlink_to("../../spare/chunk")
    by_key = {r["key"] for r in check(str(store), scheduler="sync", batch=4).records}
    assert "c/0/1" not in by_key and len(by_key) == 3


def test_a_store_checked_again_has_its_folders_looked_at_again(tmp_path: Path, stream: bytes) -> None:
    """What a run learnt of a store's folders is forgotten when a store is opened: a folder may be a link out by now."""
    outside = _two_by_two(tmp_path / "outside", stream)
    store = _two_by_two(tmp_path / "store.zarr", stream)
    assert check(str(store), scheduler="sync").totals()["pass"] == 4
    shutil.rmtree(store / "c" / "1")
    (store / "c" / "1").symlink_to(outside / "c" / "1")
    result = check(str(store), scheduler="sync")
    assert result.totals()["pass"] == 2 and result.totals()["error"] == 2, result.totals()
    assert all("symbolic link out of the store" in r["message"] for r in result.records)


def test_only_a_holder_of_the_writing_end_is_taken_for_the_harnesss() -> None:
    from zarr_jpeg_conformance.adapters.process import _holders

    if not Path("/proc/self/fdinfo").is_dir():
        pytest.skip("needs /proc")
    read, write = os.pipe()
    try:
        reader = subprocess.Popen(["sleep", "30"], pass_fds=(read,))  # like a worker this process forked
        writer = subprocess.Popen(["sleep", "30"], pass_fds=(write,))  # like a daemon the harness started
        try:
            assert _holders([read]) == [writer.pid]
        finally:
            for proc in (reader, writer):
                proc.kill()
                proc.wait()
    finally:
        os.close(read)
        os.close(write)


def test_the_fast_local_read_gives_what_read_ranges_gives_or_leaves_the_key_to_it(tmp_path: Path) -> None:
    """read_ends (the header scan's reads of a local folder) against read_ranges, key by key: what it reads is the same
    bytes, a key it does not read (a link, a key that could leave the store, an unreadable file) is left to read_ranges."""
    from zarr.abc.store import RangeByteRequest, SuffixByteRequest
    from zarr.storage import LocalStore

    from zarr_jpeg_conformance.check_store import folder, stores

    root = tmp_path / "store"
    (root / "a").mkdir(parents=True)
    (tmp_path / "outside").write_bytes(b"secret" * 100)
    files = {"a/long": bytes(range(256)) * 20, "a/exact": bytes(range(256)) * 4, "a/short": b"0123456789" * 3, "a/empty": b"",
             "a/between": bytes(range(200)) * 6}
    for key, data in files.items():
        (root / key).write_bytes(data)
    (root / "a" / "folder").mkdir()
    (root / "a" / "in").symlink_to("long")
    (root / "a" / "out").symlink_to(tmp_path / "outside")
    (root / "a" / "loop").symlink_to("loop")
    (root / "linked").symlink_to(root / "a")
    keys = [*files, "a/folder", "a/missing", "a/missing/deeper", "a/long/under", "a/in", "a/out", "a/loop", "linked/long",
            "../outside", "a/../a/long", "a//long", "/etc/passwd"]
    folder.forget()
    got = folder.read_ends(str(root), keys, 1024, 64)
    store = LocalStore(root, read_only=True)
    for key, ends in zip(keys, got, strict=True):
        try:
            ranged: Any = stores.read_ranges(store, [(key, RangeByteRequest(0, 1024)), (key, SuffixByteRequest(64))])
        except stores.StoreError:
            ranged = "refused"
        if ends is False:
            assert key in ("a/in", "a/out", "a/loop", "linked/long", "../outside", "a/../a/long", "a//long", "/etc/passwd"), key
            continue
        assert ranged != "refused", key
        assert (list(ends) if ends is not None else [None, None]) == ranged, key
    assert got[0] == (files["a/long"][:1024], files["a/long"][-64:]) and got[3] == (b"", b"")
    assert [key for key, ends in zip(keys, got, strict=True) if ends is None] == ["a/folder", "a/missing", "a/missing/deeper",
                                                                                  "a/long/under"]


def _descriptors_into(root: Path) -> list[str]:
    """What this process holds open inside ``root``: a count of all its descriptors would also move when garbage
    from earlier tests (a subprocess's pipes, a socket) is freed meanwhile, as it once did in CI (24 before, 22 after)."""
    held = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the descriptor listdir itself used, closed since
            continue
        if target == str(root) or target.startswith(str(root) + os.sep):
            held.append(target)
    return held


def test_the_fast_local_read_closes_every_file_it_opens_and_leaves_a_failed_read_to_read_ranges(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A descriptor left open per chunk runs a scan of a large store out of descriptors; a regular file whose read fails
    (an I/O error) is left to read_ranges, in its place among the keys, the others read as they are."""
    from zarr_jpeg_conformance.check_store import folder

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc")
    root = tmp_path / "store"
    (root / "a").mkdir(parents=True)
    keys = [f"a/{i}" for i in range(40)]
    for i, key in enumerate(keys):
        (root / key).write_bytes(bytes([i]) * (100 if i % 2 else 3000))
    os.mkfifo(root / "a" / "pipe")
    folder.forget()
    got = folder.read_ends(str(root), [*keys, "a/pipe"], 1024, 64)
    assert _descriptors_into(root) == []
    assert got[-1] is False and all(isinstance(ends, tuple) for ends in got[:-1])
    real_read = os.read

    def failing(fd: int, n: int) -> bytes:
        if os.readlink(f"/proc/self/fd/{fd}").endswith(f"{os.sep}a{os.sep}7"):
            raise OSError(errno.EIO, "Input/output error")
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", failing)
    got = folder.read_ends(str(root), keys, 1024, 64)
    monkeypatch.undo()
    assert _descriptors_into(root) == []
    assert [i for i, ends in enumerate(got) if ends is False] == [7]
    assert got[8] == (bytes([8]) * 1024, bytes([8]) * 64) and got[9] == (bytes([9]) * 100, bytes([9]) * 64)


def test_a_named_pipe_refused_by_the_general_reads_leaves_no_descriptor_open(tmp_path: Path) -> None:
    from zarr.abc.store import RangeByteRequest
    from zarr.storage import LocalStore

    from zarr_jpeg_conformance.check_store import stores

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc")
    (tmp_path / "store" / "a").mkdir(parents=True)
    os.mkfifo(tmp_path / "store" / "a" / "pipe")
    store = LocalStore(tmp_path / "store", read_only=True)
    stores.read_ranges(store, [("a/missing", RangeByteRequest(0, 16))])  # whatever the store opens once, opened
    # CPython closes a file object nobody holds when it is freed, with a ResourceWarning: the refusal must close it itself.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for _ in range(5):
            with pytest.raises(stores.StoreError, match="not a regular file"):
                stores.read_ranges(store, [("a/pipe", RangeByteRequest(0, 16))])
        gc.collect()
    assert _descriptors_into(tmp_path / "store") == []
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]


def test_a_run_of_unreadable_chunks_is_shared_as_a_failing_store_in_the_scan_as_in_the_general_reads(
        tmp_path: Path, stream: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten chunks in a row that exist and cannot be read (ELOOP): after GIVE_UP failures in a row the rest of the batch
    shares the error, chunk by chunk as the general reads take it, whichever way the chunks were read."""
    from zarr_jpeg_conformance.check_store import tasks

    store = _array(tmp_path / "loops.zarr", [32, 32 * 16], [32, 32], {f"c/0/{j}": stream for j in range(16)})
    for j in range(2, 12):
        (store / "c" / "0" / str(j)).unlink()
        (store / "c" / "0" / str(j)).symlink_to(str(j))
    fast = check(str(store), scheduler="sync", batch=16)
    with monkeypatch.context() as m:
        m.setattr(tasks, "LocalStore", type("NotTheLocalStore", (), {}))
        slow = check(str(store), scheduler="sync", batch=16)
    assert fast.records == slow.records and fast.totals() == slow.totals()
    assert fast.totals()["pass"] == 2 and fast.totals()["error"] == 14
    assert "c/0/9" in fast.records[-1]["message"] and fast.records[-1]["key"] == "c/0/15"
