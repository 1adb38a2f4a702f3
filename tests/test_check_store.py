"""check-store finds every injected fault under the right key and requirement, and nothing on clean data.

Each check has its wrong variant (a fault of :func:`check_store.synthetic.fault_store`) and
its legal one (the same chunk position of :func:`check_store.synthetic.clean_store`, and the
fixture stores of ``fixtures/stores``). Stores are read as a folder, a zip file and over
HTTP (a local server with byte ranges, and one without), on every engine.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("zarr")

from zarr_jpeg_conformance.check_store import Options, check, check_batch
from zarr_jpeg_conformance.check_store.__main__ import Progress, main
from zarr_jpeg_conformance.check_store.html import render
from zarr_jpeg_conformance.check_store.metadata import Node, analyse
from zarr_jpeg_conformance.check_store.records import record
from zarr_jpeg_conformance.check_store.run import ArrayResult, ChunkMap, Result
from zarr_jpeg_conformance.check_store.serve import serve
from zarr_jpeg_conformance.check_store.stores import StoreSpec
from zarr_jpeg_conformance.check_store.summary import to_json
from zarr_jpeg_conformance.check_store.synthetic import (
    Fault,
    big_store,
    clean_store,
    fault_store,
    short_shard_store,
    write_array,
)
from zarr_jpeg_conformance.core.markers import inspect

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_STORES = sorted((ROOT / "fixtures" / "stores").glob("*.zarr"))


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[Fault]]:
    pytest.importorskip("PIL")
    pytest.importorskip("imagecodecs")
    root = tmp_path_factory.mktemp("check-store")
    faults = fault_store(root / "faults.zarr")
    clean_store(root / "clean.zarr")
    return root / "faults.zarr", root / "clean.zarr", faults


def _found(result: Result) -> dict[str, set[str]]:
    return {rec["case"]: set(rec["requirements"]) for rec in result.records}


def _case(fault: Fault) -> str:
    return f"{fault.array}/{fault.key}" + (f"#{','.join(map(str, fault.inner))}" if fault.inner else "")


def _assert_exactly_the_faults(result: Result, faults: list[Fault]) -> None:
    found = _found(result)
    for fault in faults:
        assert _case(fault) in found, f"{fault.name}: nothing reported at {_case(fault)}"
        # Exactly what its faults break: a second finding means the fixture or the check broke something else too.
        expected = {r for f in faults if _case(f) == _case(fault) for r in (f.requirement, *f.also)}
        assert found[_case(fault)] == expected, f"{fault.name}: {_case(fault)} reported {found[_case(fault)]}"
    stray = set(found) - {_case(f) for f in faults}
    assert not stray, f"reported where no fault was injected: {stray}"
    # Missing chunks are the fill value, not findings: one in color, one in gray, one inner chunk.
    assert result.totals()["fill"] == 3


@pytest.mark.parametrize("mode", ["header", "decode"])
def test_every_fault_is_found_under_its_key_and_requirement(stores: tuple[Path, Path, list[Fault]], mode: str) -> None:
    faulty, _clean, faults = stores
    result = check(str(faulty), options=Options(decode=mode == "decode"), scheduler="sync")
    _assert_exactly_the_faults(result, faults)
    assert not result.conforms()
    by_case = {rec["case"]: rec for rec in result.records}
    boundary = by_case["/color/c/1/5/0"]
    assert boundary["boundary"] and "boundary chunk" in boundary["message"]
    assert "exactly one 16-row MCU" in by_case["/color/c/0/2/0"]["message"]
    assert "less than one 16-row MCU" in by_case["/color/c/0/3/0"]["message"]
    # One fault there, and in the chroma table only: a check of the first table alone, or of every table, misses it.
    assert by_case["/color/c/2/2/0"]["requirements"] == ["JPEG-ENC-04"]
    sixteen = inspect((faulty / "color" / "c" / "2" / "2" / "0").read_bytes())
    assert sixteen.dqt_precisions == (0, 1) and not sixteen.problems and sixteen.precision == 8


def test_each_fault_chunk_is_a_well_formed_stream_unless_its_fault_is_the_form(stores: tuple[Path, Path, list[Fault]]) -> None:
    """A fault of colour, size, sampling or process sits in a stream a parser walks without a problem
    (an APP14 segment spliced in with a wrong length would be a second fault, hidden behind the first)."""
    faulty, _clean, faults = stores
    for fault in faults:
        if fault.requirement == "JPEG-FMT-01" or fault.inner:
            continue
        info = inspect(faulty.joinpath(fault.array.strip("/"), *fault.key.split("/")).read_bytes())
        assert info.ok and not info.problems, f"{fault.name}: {info.problems}"
    app14 = inspect((faulty / "color" / "c" / "0" / "1" / "0").read_bytes())
    assert app14.adobe_transform == 0


def test_the_16_bit_table_fault_widens_only_its_table_wherever_the_encoder_puts_the_tables(
        stores: tuple[Path, Path, list[Fault]]) -> None:
    """The fault chunk's chroma table is stored with 16-bit entries of the same values, its luma table left 8-bit,
    whether the encoder writes a DQT segment a table (libjpeg) or both in one: the stream decodes as it did."""
    from PIL import Image

    from zarr_jpeg_conformance.check_store.synthetic import _sixteen_bit_tables

    _faulty, clean, _faults = stores
    data = (clean / "color" / "c" / "2" / "2" / "0").read_bytes()
    first = data.index(b"\xff\xdb")
    second = first + 2 + int.from_bytes(data[first + 2:first + 4], "big")
    end = second + 2 + int.from_bytes(data[second + 2:second + 4], "big")
    assert data[second:second + 2] == b"\xff\xdb", "the encoder no longer writes a DQT segment a table"
    body = data[first + 4:second] + data[second + 4:end]
    merged = data[:first] + b"\xff\xdb" + (len(body) + 2).to_bytes(2, "big") + body + data[end:]
    pixels = np.asarray(Image.open(io.BytesIO(data)))
    for stream in (data, merged):
        widened = _sixteen_bit_tables(stream)
        info = inspect(widened)
        assert info.ok and info.dqt_precisions == (0, 1), (info.problems, info.dqt_precisions)
        assert np.array_equal(np.asarray(Image.open(io.BytesIO(widened))), pixels)


def test_a_record_says_whether_the_chunk_ends_with_its_eoi(stores: tuple[Path, Path, list[Fault]]) -> None:
    """``seen.eoi_last`` of a chunk's record, from its last bytes alone (the header scan): false for a stream cut short,
    one with bytes after its EOI and bytes that are no JPEG; true for every other fault, whose stream ends well."""
    faulty, _clean, faults = stores
    unended = ("truncated in the entropy-coded data", "trailing data after EOI", "not a JPEG stream",
               "trailing data in a shard's inner chunk")
    seen = {r["case"]: r["seen"].get("eoi_last") for r in check(str(faulty), scheduler="sync").records}
    expected = {_case(f): f.name not in unended for f in faults if f.requirement}
    assert {case: seen.get(case) for case in expected} == expected


@pytest.mark.parametrize("mode", ["header", "decode"])
def test_a_clean_store_has_no_finding(stores: tuple[Path, Path, list[Fault]], mode: str) -> None:
    _faulty, clean, _faults = stores
    result = check(str(clean), options=Options(decode=mode == "decode", reference="pillow" if mode == "decode" else None),
                   scheduler="sync")
    assert result.records == []
    assert result.conforms(strict=True)
    assert result.totals()["pass"] == 37 and result.totals()["fill"] == 0


def test_the_report_names_a_decoder_only_when_chunks_were_decoded(stores: tuple[Path, Path, list[Fault]]) -> None:
    """``--backend pillow`` without ``--decode`` decodes nothing: report.json must not say pillow decoded."""
    _faulty, clean, _faults = stores
    for decode, named in ((False, None), (True, "pillow")):
        doc = to_json(check(str(clean), options=Options(decode=decode, decoder="pillow"), scheduler="sync"))
        assert (doc["mode"], doc["decoder"]) == ("decode" if decode else "header", named)


@pytest.mark.parametrize("store", FIXTURE_STORES, ids=[p.stem for p in FIXTURE_STORES])
def test_every_fixture_store_conforms(store: Path) -> None:
    for options in (Options(), Options(decode=True)):
        result = check(str(store), options=options, scheduler="sync")
        assert result.records == [], [r["message"] for r in result.records]
        assert result.conforms() and result.totals()["pass"] >= 1


def test_http_zip_and_every_engine_report_the_same(stores: tuple[Path, Path, list[Fault]], tmp_path: Path) -> None:
    faulty, _clean, faults = stores
    archive = tmp_path / "faults.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted(faulty.rglob("*")):
            if path.is_file():
                z.write(path, path.relative_to(faulty).as_posix())
    with serve(faulty.parent) as base:
        _assert_exactly_the_faults(check(f"{base}/{faulty.name}", scheduler="threads"), faults)
        # An array given directly, rather than the group above it.
        assert check(f"{base}/{faulty.name}/rgb", scheduler="threads").totals()["fail"] == 1
    _assert_exactly_the_faults(check(str(archive), scheduler="threads", batch=4), faults)
    _assert_exactly_the_faults(check(str(faulty), scheduler="processes", workers=2), faults)


def test_a_server_without_range_requests_still_gives_every_finding(stores: tuple[Path, Path, list[Fault]]) -> None:
    faulty, _clean, faults = stores

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    import threading

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(faulty.parent)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _assert_exactly_the_faults(check(f"http://127.0.0.1:{server.server_address[1]}/{faulty.name}", scheduler="sync"), faults)
    finally:
        server.shutdown()
        server.server_close()


def test_a_dask_cluster_reports_the_same(stores: tuple[Path, Path, list[Fault]]) -> None:
    pytest.importorskip("distributed")
    faulty, _clean, faults = stores
    result = check(str(faulty), scheduler="cluster", workers=1, batch=8)
    assert "dask cluster" in result.engine
    _assert_exactly_the_faults(result, faults)


@pytest.mark.parametrize(("positions", "workers", "size"), [(512, 1, 64), (8192, 2, 256), (8192, 1, 512), (65536, 2, 1024)])
def test_each_worker_gets_sixteen_batches_of_an_array_within_the_batch_bounds(tmp_path: Path, positions: int, workers: int,
                                                                              size: int) -> None:
    """The positions of an array are handed out in batches of a sixteenth of a worker's share (enough batches for
    the workers to even out), never fewer than 64 (a task's scheduling cost) nor more than 1024 chunks."""
    write_array(tmp_path / "a.zarr", (8, 8 * positions), (8, 8), [_jpeg()], {})  # nothing stored: every position fill
    spans: list[tuple[int, int]] = []
    result = check(str(tmp_path / "a.zarr"), scheduler="sync", workers=workers,
                   on_batch=lambda out, _result: spans.append((out["start"], out["stop"])))
    assert result.totals()["fill"] == positions
    assert spans == [(start, start + size) for start in range(0, positions, size)], spans[:3]


def test_an_array_walked_whole_or_not_read_at_all_has_no_position_not_visited(tmp_path: Path) -> None:
    """"not visited" is only for positions a store that cannot list leaves past --max-positions: an array whose every
    position was walked, and one whose metadata stops it being read, report none."""
    from zarr_jpeg_conformance.check_store.summary import lines

    write_array(tmp_path / "s.zarr" / "walked", (8, 16), (8, 8), [_jpeg()], {})
    write_array(tmp_path / "s.zarr" / "unread", (8, 16), (8, 8), [_jpeg(), {"name": "test.unknown"}], {})
    (tmp_path / "s.zarr" / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}}))
    result = check(str(tmp_path / "s.zarr"), scheduler="sync")
    assert {a.node.path: (a.plan is not None, a.not_visited) for a in result.arrays} == {"walked": (True, 0),
                                                                                         "unread": (False, 0)}
    assert [a["not_visited"] for a in to_json(result)["arrays"]] == [0, 0]
    assert not [line for line in lines(result) if "not visited" in line]


# ------------------------------------------------------------------ bad input: exit 2


def _jpeg(**cfg: Any) -> dict[str, Any]:
    return {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale", **cfg}}


def test_bad_input_is_a_clear_error_with_exit_code_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases: dict[str, tuple[str, str]] = {}
    cases["unreachable"] = ("http://127.0.0.1:9/store.zarr", "cannot read zarr.json")
    cases["missing"] = (str(tmp_path / "nothing.zarr"), "no such folder")
    cases["missing zip"] = (str(tmp_path / "nothing.zip"), "nothing.zip: no such zip file")
    no_jpeg = tmp_path / "no-jpeg.zarr"
    write_array(no_jpeg, (4, 4), (4, 4), [{"name": "bytes", "configuration": {"endian": "little"}}], {})
    cases["no jpeg"] = (str(no_jpeg), "no array here uses the jpeg codec")
    corrupt = tmp_path / "corrupt.zarr"
    corrupt.mkdir()
    (corrupt / "zarr.json").write_text('{"zarr_format": 3, "node_type": "array", "shape": [4,')
    cases["corrupt"] = (str(corrupt), "zarr.json is not valid JSON")
    v2 = tmp_path / "v2.zarr"
    v2.mkdir()
    (v2 / ".zarray").write_text("{}")
    cases["zarr v2"] = (str(v2), "a Zarr v2 node")
    not_v3 = tmp_path / "not-v3.zarr"
    not_v3.mkdir()
    (not_v3 / "zarr.json").write_text(json.dumps({"zarr_format": 2}))
    cases["zarr_format 2"] = (str(not_v3), "zarr_format 2")
    for name, (url, message) in cases.items():
        assert main([url, "-q"]) == 2, name
        err = capsys.readouterr().err
        assert message in err and url.split("/")[-1] in err, (name, err)
    assert main([str(no_jpeg), "--reference", "pillow"]) == 2  # --reference without --decode
    assert "give --decode too" in capsys.readouterr().err


# ------------------------------------------------------------------ metadata


def _meta(codecs: list[dict[str, Any]], shape: list[int], chunks: list[int]) -> dict[str, Any]:
    return {"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": codecs}


@pytest.mark.parametrize(("codecs", "shape", "requirement", "outcome"), [
    ([_jpeg(quality=0)], [32, 32], "JPEG-Q-01", "fail"),
    ([_jpeg(subsampling=[[2, 2]])], [32, 32], "JPEG-SUB-07", "fail"),
    ([_jpeg(encoded_color_space="ycbcr")], [32, 32, 3], "JPEG-SUB-04", "fail"),
    ([_jpeg(extra=1)], [32, 32], "JPEG-X-01", "warn"),
    ([_jpeg(quality=90.0)], [32, 32], "JPEG-X-02", "warn"),
    ([_jpeg(subsampling=[[1, 1]])], [32, 32], "JPEG-SUB-06", "warn"),
    ([_jpeg()], [32, 32, 2], "JPEG-SHP-05", "fail"),
    ([_jpeg()], [32, 32, 3], "JPEG-ECS-02", "fail"),
    ([_jpeg()], [30, 32], "JPEG-MCU-02", "warn"),
    ([{"name": "crc32c"}, _jpeg()], [32, 32], "JPEG-GEN-01", "fail"),
])
def test_metadata_findings_cite_their_requirement(codecs: list[dict[str, Any]], shape: list[int], requirement: str,
                                                  outcome: str) -> None:
    _plan, findings = analyse(Node("a", _meta(codecs, shape, shape)))
    assert [(f.requirement, f.outcome) for f in findings] == [(requirement, outcome)], findings
    # The legal variant: the same array with the configuration the spec wants.
    legal = [_jpeg(encoded_color_space="ycbcr", subsampling=[[2, 2], [1, 1], [1, 1]])] if len(shape) == 3 else [_jpeg()]
    _plan, none = analyse(Node("a", _meta(legal, [32, 32, 3] if len(shape) == 3 else [32, 32],
                                          [32, 32, 3] if len(shape) == 3 else [32, 32])))
    assert none == []


def test_a_data_type_other_than_uint8_is_a_metadata_fail() -> None:
    _plan, findings = analyse(Node("a", {**_meta([_jpeg()], [32, 32], [32, 32]), "data_type": "uint16"}))
    assert [(f.requirement, f.outcome) for f in findings] == [("JPEG-DT-01", "fail")], findings
    assert "uint16" in findings[0].observed


@pytest.mark.parametrize("inner", [[0, 32], [-32, 32], [16.0, 32], [32]])
def test_a_shard_whose_inner_chunk_shape_does_not_fit_is_an_error_not_a_crash(inner: list[Any]) -> None:
    sharding = {"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner, "codecs": [_jpeg()], "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}}
    plan, findings = analyse(Node("a", _meta([sharding], [64, 64], [64, 64])))
    assert plan is None and [f.outcome for f in findings] == ["error"]
    assert "does not fit the shard shape" in findings[0].observed


def test_an_unknown_codec_is_an_error_not_a_guess() -> None:
    plan, findings = analyse(Node("a", _meta([{"name": "no-such-codec"}, _jpeg()], [32, 32], [32, 32])))
    assert plan is None and findings[0].outcome == "error" and "not known to zarr" in findings[0].observed


BYTES = {"name": "bytes", "configuration": {"endian": "little"}}


@pytest.mark.parametrize(("codecs", "words"), [
    ([{"name": 5}, _jpeg()], "'codecs' is not a list of codec objects with a name"),
    (["jpeg"], "'codecs' is not a list of codec objects with a name"),
    ([BYTES, _jpeg()], "the chain has 2 array -> bytes codecs (['bytes', 'jpeg']); Zarr v3 needs exactly one"),
], ids=["name-not-text", "not-an-object", "two-array-bytes"])
def test_a_chain_that_cannot_be_followed_is_an_error_that_says_why(codecs: list[Any], words: str) -> None:
    plan, findings = analyse(Node("a", _meta(codecs, [32, 32], [32, 32])))
    assert plan is None and [f.outcome for f in findings] == ["error"] and words in findings[0].observed, findings


def test_a_shard_uses_jpeg_only_when_its_inner_chain_holds_it() -> None:
    from zarr_jpeg_conformance.check_store.metadata import uses_jpeg

    def sharded(inner: object) -> dict[str, Any]:
        return {"codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [8, 8], "codecs": inner}}]}

    assert uses_jpeg(sharded([_jpeg()])) and uses_jpeg({"codecs": [_jpeg()]})
    assert not uses_jpeg(sharded([BYTES])) and not uses_jpeg(sharded("jpeg")) and not uses_jpeg({"codecs": [BYTES]})
    # Only sharding holds a chain: jpeg in another codec's configuration is no codec of the array; a name is no codec.
    assert not uses_jpeg({"codecs": [{"name": "x.wrapper", "configuration": {"codecs": [_jpeg()]}}]})
    assert not uses_jpeg({"codecs": ["jpeg", None, 3]})


def test_a_chunk_is_at_the_edge_only_when_it_runs_past_the_array() -> None:
    plan, _ = analyse(Node("a", _meta([_jpeg()], [64, 60], [32, 32])))
    assert plan is not None
    assert [plan.at_edge(c) for c in ((0, 0), (1, 0), (0, 1), (1, 1))] == [False, False, True, True]


def test_bytes_codecs_after_jpeg_are_unwrapped(tmp_path: Path) -> None:
    import zarr
    from zarr.codecs import Crc32cCodec

    from zarr_jpeg_conformance.zarrcodecs.jpeg import JpegCodec

    array = zarr.create_array(str(tmp_path / "crc.zarr"), shape=(64, 64), chunks=(32, 32), dtype="uint8",
                              serializer=JpegCodec(encoded_color_space="grayscale", quality=90), compressors=[Crc32cCodec()])
    array[...] = np.arange(64 * 64, dtype=np.uint8).reshape(64, 64)
    result = check(str(tmp_path / "crc.zarr"), scheduler="sync")
    assert result.records == [] and result.totals()["pass"] == 4
    # The wrong variant: a JPEG of the wrong size inside a valid checksum.
    key = tmp_path / "crc.zarr" / "c" / "0" / "0"
    stream = JpegCodec(encoded_color_space="grayscale", quality=90)
    import google_crc32c

    from zarr_jpeg_conformance.backends import load_backend
    from zarr_jpeg_conformance.core.config import parse_codec

    data = load_backend(stream.backend).encode(parse_codec(stream.to_dict()), np.zeros((16, 32, 1), np.uint8))
    key.write_bytes(data + google_crc32c.value(data).to_bytes(4, "little"))
    found = check(str(tmp_path / "crc.zarr"), scheduler="sync").records
    assert [(r["key"], r["requirements"]) for r in found] == [("c/0/0", ["JPEG-DIM-01"])]


# ------------------------------------------------------------------ tasks, outputs


def test_a_batch_never_raises(stores: tuple[Path, Path, list[Fault]], tmp_path: Path) -> None:
    faulty, _clean, _faults = stores
    copy = tmp_path / "copy.zarr"
    shutil.copytree(faulty / "gray", copy)
    plan, _ = analyse(Node("", json.loads((copy / "zarr.json").read_text())))
    assert plan is not None
    shutil.rmtree(copy)
    out = check_batch(StoreSpec(str(copy)), plan, 0, plan.grid_count, Options(store="gone"))
    assert out["counts"] == {"error": 4} and out["records"][0]["outcome"] == "error"
    assert "no such folder" in out["records"][0]["message"]


@pytest.mark.parametrize("beyond", [1, 200, 5000])
@pytest.mark.parametrize("mode", ["header", "decode"])
def test_an_inner_chunk_past_the_end_of_its_shard_is_an_error_not_a_fail(tmp_path: Path, mode: str, beyond: int) -> None:
    """What was read of it ends in the shard's index (bytes after EOI) or nowhere (no EOI): judging
    that would blame the stream for the index, so the short read itself is reported, as an error."""
    fault = short_shard_store(tmp_path / "short.zarr", beyond)
    result = check(str(tmp_path / "short.zarr"), options=Options(decode=mode == "decode"), scheduler="sync")
    (rec,) = result.records
    assert (rec["case"], rec["outcome"], rec["requirements"]) == (_case(fault), "error", [])
    assert "past the end of the shard" in rec["message"] and "EOI" not in rec["message"], rec["message"]
    assert result.totals() == {"pass": 3, "error": 1}
    # The fixture's chunk ends exactly `beyond` bytes past the end of the shard.
    end = int(re.search(r"at bytes \d+\.\.(\d+), past the end", rec["message"]).group(1))  # type: ignore[union-attr]
    assert end - (tmp_path / "short.zarr" / "c" / "0" / "0" / "0").stat().st_size == beyond, rec["message"]


def test_error_records_make_a_store_nonconforming_without_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An error is no verdict on the data, but a store the checker could not check is not shown to conform."""
    short_shard_store(tmp_path / "short.zarr", 200)
    result = check(str(tmp_path / "short.zarr"), scheduler="sync")
    assert not result.conforms() and not result.conforms(strict=True)
    assert to_json(result)["conforms"] is False
    assert main([str(tmp_path / "short.zarr"), "-q"]) == 1
    assert "DOES NOT CONFORM" in capsys.readouterr().out


def test_cli_writes_jsonl_as_results_land_and_a_report(stores: tuple[Path, Path, list[Fault]], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    faulty, clean, faults = stores
    assert main([str(faulty), "--out", str(tmp_path / "out"), "-q"]) == 1
    stdout = capsys.readouterr().out
    assert "DOES NOT CONFORM" in stdout and "JPEG-DIM-01" in stdout
    lines = [json.loads(line) for line in (tmp_path / "out" / "findings.jsonl").read_text().splitlines()]
    assert {r["case"] for r in lines} == {_case(f) for f in faults}
    assert all(r["implementation"] == "check-store" and r["outcome"] in ("fail", "warn") for r in lines)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["conforms"] is False and report["totals"]["fill"] == 3
    assert report["format_version"] == 1 and report["mode"] == "header"  # a reader of report.json relies on both
    assert all(a["checked"] == a["chunks"] for a in report["arrays"]), [(a["checked"], a["chunks"]) for a in report["arrays"]]
    gray = next(a for a in report["arrays"] if a["path"] == "/gray")
    assert gray["metadata"]["chunk_shape"] == [64, 64] and gray["metadata"]["codecs"][0]["name"] == "jpeg"
    assert gray["grid"] == [2, 2] and gray["image"] == [64, 64, 1] and "grayscale" in gray["jpeg"]
    html = (tmp_path / "out" / "report.html").read_text()
    assert "does not conform" in html and "/color/c/0/0/0" in html and "<script" not in html
    for a in report["arrays"]:  # one row per array, with the image its chunks hold
        assert f'<tr><td><code>{a["path"]}</code></td>' in html, a["path"]
    assert "<td>64x64x1</td>" in html and "<td>64x64x3</td>" in html
    assert main([str(clean), "-q"]) == 0
    stdout = capsys.readouterr().out
    assert "CONFORMS" in stdout and "header only" in stdout.splitlines()[0]
    assert main([str(clean), "-q", "--decode", "--backend", "pillow"]) == 0
    assert "decoded with pillow" in capsys.readouterr().out.splitlines()[0]


def test_the_report_names_each_arrays_configuration_by_its_scheme() -> None:
    """report.json's ``jpeg`` of an array: its colour space, its J:a:b scheme (by the luma factors; factors no scheme
    has, as they are), whether it takes YCbCr input, and its quality."""
    from zarr_jpeg_conformance.check_store.summary import describe_config
    from zarr_jpeg_conformance.core.config import parse_codec

    def described(**configuration: Any) -> str:
        return describe_config(parse_codec({"name": "jpeg", "configuration": configuration}))

    for scheme, luma in (("4:4:4", [1, 1]), ("4:2:2", [2, 1]), ("4:4:0", [1, 2]), ("4:2:0", [2, 2])):
        subsampling = [luma, [1, 1], [1, 1]]
        assert described(encoded_color_space="ycbcr", quality=90, subsampling=subsampling) == f"ycbcr {scheme} q90"
        assert described(encoded_color_space="ycbcr", decoded_color_space="ycbcr", quality=75,
                         subsampling=subsampling) == f"ycbcr {scheme} (YCbCr input) q75"
    assert described(encoded_color_space="ycbcr", quality=80, subsampling=[[4, 1], [1, 1], [1, 1]]) == \
        "ycbcr factors [[4, 1], [1, 1], [1, 1]] q80"
    assert described(encoded_color_space="grayscale", quality=85) == "grayscale q85"
    assert described(encoded_color_space="rgb", quality=95) == "rgb q95"
    assert describe_config(None) == "invalid configuration"


def test_records_read_as_results_lines(stores: tuple[Path, Path, list[Fault]]) -> None:
    from zarr_jpeg_conformance.report.model import CaseResult

    faulty, _clean, _faults = stores
    rec = next(r for r in check(str(faulty), scheduler="sync").records if r["case"] == "/color/c/1/3/0")
    case = CaseResult(rec["implementation"], rec["case"], rec["outcome"], rec["level"], tuple(rec["requirements"]),
                      rec["message"], rec["metrics"])
    assert case.attributions() == {"JPEG-GEN-01": "fail", "JPEG-ENC-04": "fail"}


def test_progress_shows_rate_and_eta() -> None:
    stream = io.StringIO()
    progress = Progress(stream, every=0.0)
    progress.total = 100
    progress.update({"positions": 40, "records": [{"outcome": "fail"}]}, None)  # type: ignore[arg-type]
    progress.update({"positions": 60, "records": []}, None)  # type: ignore[arg-type]
    lines = stream.getvalue().splitlines()
    assert lines[-1].startswith("[####") and "100/100 chunks" in lines[-1] and "chunks/s" in lines[-1]
    assert "ETA" in lines[0] and "1 nonconforming" in lines[-1]


@pytest.mark.parametrize(("grid", "rows", "cols"), [((5, 1), 1, 5), ((4, 5, 1, 1), 4, 5), ((1,), 1, 1), ((3, 1, 2), 3, 2)])
def test_the_chunk_map_lays_the_last_axis_of_more_than_one_chunk_out_as_columns(grid: tuple[int, ...], rows: int, cols: int) -> None:
    chunk_map = ChunkMap(grid)
    assert (chunk_map.rows, chunk_map.cols) == (rows, cols)


@pytest.mark.parametrize("grid", [(1, 5000), (3, 241), (7, 100), (2, 3)])
def test_the_chunk_map_fits_the_page_width_whatever_the_grid(grid: tuple[int, int]) -> None:
    from zarr_jpeg_conformance.check_store import html

    chunk_map = ChunkMap(grid)
    figure = html._map({"map": chunk_map.to_json(), "path": "/a", "sharded": False})
    width = int(re.search(r'<svg [^>]*width="(\d+)"', figure).group(1))  # type: ignore[union-attr]
    assert chunk_map.cells.shape[1] * 2 <= width <= html.MAP_WIDTH, (grid, width)


def test_the_chunk_map_draws_listed_positions_where_they_are_and_names_every_status() -> None:
    """Listed positions land at their own cells, a cell shows the worst of its chunks, and each status has its colour."""
    chunk_map = ChunkMap((2, 5))
    chunk_map.add(0, bytes([2, 2]), indices=[3, 6])
    chunk_map.add(0, bytes([1, 4]))
    assert chunk_map.to_json()["cells"] == ["14020", "02000"]
    assert sorted(chunk_map.to_json()["legend"].values()) == sorted(["none", "fill", "pass", "warn", "fail", "error"])
    wide = ChunkMap((3, 241))  # more than 240 columns of chunks: two a cell
    assert wide.cells.shape == (3, 121) and ChunkMap((121, 2)).cells.shape == (61, 2)


def test_an_array_is_as_bad_as_its_metadata_even_when_every_chunk_passes() -> None:
    plan, _ = analyse(Node("a", _meta([_jpeg()], [32, 32], [32, 32])))
    array = ArrayResult(Node("a", {}), plan, {"outcome": "fail"}, map=None)
    array.counts.update({"pass": 1})
    assert array.outcome == "fail"
    assert ArrayResult(Node("a", {}), plan, None, counts=array.counts).outcome == "pass"


def test_a_header_seen_before_is_recognized_only_when_the_stream_starts_with_it(stores: tuple[Path, Path, list[Fault]]) -> None:
    """header_extent against a walk of each stream's segments, headers of different lengths in turn."""
    from zarr_jpeg_conformance.check_store import chunks

    faulty, _clean, _faults = stores
    streams = [(faulty / p).read_bytes() for p in ("gray/c/0/0", "color/c/0/1/0", "color/c/2/2/0", "rgb/c/0/1/0", "gray/c/1/0")]
    for data in streams * 2:
        sos = data.index(b"\xff\xda")
        assert chunks.header_extent(data) == sos + 2 + int.from_bytes(data[sos + 2 : sos + 4], "big")


def test_a_record_carries_the_strongest_level_of_its_findings() -> None:
    from zarr_jpeg_conformance.check_store.records import Finding

    def level(*found: tuple[str, str]) -> str:
        return record("s", "/a", "c/0", [Finding(r, o, "seen") for r, o in found])["level"]

    assert level(("JPEG-Q-03", "warn"), ("JPEG-SUB-06", "warn")) == "SHOULD"
    assert level(("JPEG-Q-03", "warn"), ("JPEG-X-16", "warn"), ("JPEG-Q-01", "fail")) == "MUST"
    assert level(("JPEG-Q-03", "warn")) == "MAY" and level(("", "error")) == ""


def test_a_local_read_gives_exactly_the_bytes_of_its_range_and_refuses_a_range_it_does_not_know() -> None:
    from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest

    from zarr_jpeg_conformance.check_store.folder import _read_open

    data = b"abcdef"
    assert _read_open(io.BytesIO(data), RangeByteRequest(2, 2)) == b""
    assert _read_open(io.BytesIO(data), RangeByteRequest(2, 4)) == b"cd"
    assert _read_open(io.BytesIO(data), SuffixByteRequest(9)) == data  # more than the file holds: all of it
    assert _read_open(io.BytesIO(data), SuffixByteRequest(2)) == b"ef" and _read_open(io.BytesIO(data), RangeByteRequest(0, 99)) == data
    # A whole read is a range (one byte more than its cap): never a read of all there is.
    for unknown in (OffsetByteRequest(1), None):
        with pytest.raises(TypeError, match="unexpected byte range"):
            _read_open(io.BytesIO(data), unknown)  # type: ignore[arg-type]


def test_header_walk_asks_for_the_whole_segment_whose_length_it_has_just_read() -> None:
    from zarr_jpeg_conformance.check_store import chunks

    assert chunks._walk_headers(b"\xff\xd8\xff\xda\x00\x0c") == -16  # SOS of 12 bytes: 16 in all
    assert chunks._walk_headers(b"\xff\xd8\xff\xda\x00\x02") == 6  # an empty SOS header ends where the data does
    assert chunks._walk_headers(b"\xff\xd8\xff\xda\x00") == -6  # not yet the length itself


def test_a_frame_narrower_than_the_chunk_says_by_how_many_columns(tmp_path: Path) -> None:
    from zarr_jpeg_conformance.backends import load_backend
    from zarr_jpeg_conformance.check_store import chunks
    from zarr_jpeg_conformance.core.config import parse_codec

    plan, _ = analyse(Node("a", _meta([_jpeg()], [32, 32], [32, 32])))
    assert plan is not None
    stream = load_backend("pillow").encode(parse_codec(_jpeg()), np.zeros((32, 24, 1), np.uint8))
    found = chunks._judge(plan, inspect(stream), False)
    assert [f.requirement for f in found] == ["JPEG-DIM-01"] and "8 columns short" in found[0].observed, found


def test_decoding_without_any_jpeg_backend_is_an_error_that_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from zarr_jpeg_conformance import backends
    from zarr_jpeg_conformance.check_store import chunks

    def unavailable(name: str) -> None:
        raise backends.BackendUnavailable(name)

    monkeypatch.setattr(backends, "load_backend", unavailable)
    with pytest.raises(RuntimeError, match=r"no JPEG backend loads: install zarr-jpeg-conformance\[turbojpeg\]"):
        chunks.decoder_name(Options(store="x", decode=True))
    assert chunks.decoder_name(Options(store="x", decode=True, decoder="pillow")) == "pillow"


def test_header_walk_stops_at_a_second_soi_or_an_eoi() -> None:
    from zarr_jpeg_conformance.check_store.chunks import header_extent

    app0 = b"\xff\xe0\x00\x04ab"
    for marker in (b"\xff\xd8", b"\xff\xd9"):
        assert header_extent(b"\xff\xd8" + app0 + marker + b"\x00\x04\xff\xda\x00\x02") is None


def test_a_subsampled_chunk_of_an_rgb_array_fails_the_rgb_rule(tmp_path: Path) -> None:
    """rgb components are never subsampled: a 4:2:0 stream (marked rgb, APP14 transform 0) in an rgb array fails
    JPEG-SUB-09, which says so, not the rule of ycbcr factors or an unnamed one."""
    from zarr_jpeg_conformance.check_store import synthetic

    rgb = synthetic._codec("rgb")
    subsampled = synthetic._with_app14(synthetic._encode(synthetic._codec("ycbcr", [[2, 2], [1, 1], [1, 1]]),
                                                         synthetic._tile(64, 64, 3, 1)), 0)
    write_array(tmp_path / "rgb.zarr", (64, 128, 3), (64, 64, 3), [rgb],
                {"c/0/0/0": synthetic._encode(rgb, synthetic._tile(64, 64, 3, 2)), "c/0/1/0": subsampled})
    result = check(str(tmp_path / "rgb.zarr"), scheduler="sync")
    (rec,) = result.records
    assert rec["key"] == "c/0/1/0" and rec["outcome"] == "fail" and rec["requirements"][0] == "JPEG-SUB-09", rec
    assert "sampling factors [[2, 2], [1, 1], [1, 1]], the configuration's [[1, 1], [1, 1], [1, 1]]" in rec["message"]


def test_header_walk_steps_over_fill_bytes_and_markers_without_a_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fill bytes before a marker (X'FF's, T.81 B.1.1.2) and markers that carry no length (TEM, RST0 to RST7) are
    stepped over: the header still ends after its SOS segment, read from the chunk's first bytes alone."""
    from zarr_jpeg_conformance.check_store import chunks

    monkeypatch.setattr(chunks, "_KNOWN", [])
    app0, sos = b"\xff\xe0\x00\x04ab", b"\xff\xda\x00\x02"
    for between in (b"\xff", b"\xff" * 3, b"\xff\x01", *(bytes([0xFF, m]) for m in range(0xD0, 0xD8))):
        header = b"\xff\xd8" + app0 + between + sos
        assert chunks.header_extent(header + bytes(8)) == len(header), between.hex()


def test_progress_on_a_terminal_redraws_at_most_ten_times_a_second_and_ends_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import zarr_jpeg_conformance.check_store.__main__ as cli

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    clock = [100.0]
    monkeypatch.setattr(cli.time, "perf_counter", lambda: clock[0])
    stream = Terminal()
    progress = Progress(stream, every=10.0)
    progress.total = 100
    for now, drawn in ((100.15, 1), (100.2, 1), (100.3, 2)):
        clock[0] = now
        progress.update({"positions": 10, "records": []}, None)  # type: ignore[arg-type]
        assert stream.getvalue().count("\r") == drawn, (now, stream.getvalue())
    assert not stream.getvalue().endswith("\n")
    progress.close()
    assert stream.getvalue().endswith("\n")  # the shell's prompt starts on a line of its own
    # Off a terminal every line already ends; and with -q nothing at all is written.
    for quiet, out in ((False, io.StringIO()), (True, Terminal()), (True, io.StringIO())):
        Progress(out, enabled=not quiet).close()
        assert out.getvalue() == "", (quiet, type(out).__name__)


def test_an_error_after_the_progress_bar_was_drawn_is_said_on_a_line_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that fails once the bar is on the terminal (a store or a cluster lost mid-run) ends the bar's line first:
    the error is its own line, exit 2."""
    import zarr_jpeg_conformance.check_store.__main__ as cli
    from zarr_jpeg_conformance.check_store.stores import StoreError

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    def failing(url: str, **kw: Any) -> Result:
        result = Result(url, url, "local", Options())
        kw["on_start"](result)
        kw["on_batch"]({"positions": 1, "records": []}, result)  # every position done: the bar is drawn
        raise StoreError(f"{url}: the store went away")

    terminal = Terminal()
    monkeypatch.setattr(cli, "check", failing)
    monkeypatch.setattr(cli.sys, "stderr", terminal)
    assert main(["gone.zarr"]) == 2
    assert "\r[" in terminal.getvalue(), terminal.getvalue()
    assert terminal.getvalue().splitlines()[-1] == "check-store: gone.zarr: the store went away", terminal.getvalue()


def test_ctrl_c_while_reading_metadata_says_no_chunk_was_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import zarr_jpeg_conformance.check_store.__main__ as cli

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "check", interrupted)
    assert main([str(tmp_path), "-q"]) == cli.EXIT_INTERRUPTED != 0
    err = capsys.readouterr().err
    assert "interrupted (Ctrl-C) while reading the store's metadata: no chunk was checked" in err, err


# ------------------------------------------------------------------ the page, in a browser


def _big_report() -> dict[str, Any]:
    """The report of a 20 000-chunk store (two arrays of 100x100 chunks) with a few faults, built without a store."""
    codec = {"name": "jpeg", "configuration": {"quality": 85, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}
    result = Result("big.zarr", "big.zarr", "local", Options(store="big.zarr"), engine="dask threads scheduler, 2 threads",
                    started="2026-01-01T00:00:00+00:00", seconds=4.0)
    rng = np.random.default_rng(0)
    for name, shape, chunks, codecs in (("gray", [25600, 25600], [256, 256], [_jpeg(quality=85)]),
                                        ("color", [25600, 25600, 3], [256, 256, 3], [codec])):
        plan, _ = analyse(Node(name, _meta(codecs, shape, chunks)))
        assert plan is not None
        array = ArrayResult(Node(name, {}), plan, None, map=ChunkMap(plan.grid))
        status = np.full(plan.grid_count, 2, dtype=np.uint8)
        status[rng.choice(plan.grid_count, 40, replace=False)] = 1
        bad = rng.choice(plan.grid_count, 6, replace=False)
        status[bad] = 4
        array.map.add(0, status.tobytes())  # type: ignore[union-attr]
        array.counts.update({"pass": int((status == 2).sum()), "fill": 40, "fail": 6})
        array.positions = plan.grid_count
        array.requirements["JPEG-DIM-01"] = 6
        for i in bad:
            key = plan.key(plan.coords(int(i)))
            from zarr_jpeg_conformance.check_store.records import finding

            result.records.append(record("big.zarr", f"/{name}", key, [finding("JPEG-DIM-01", "frame is 255x256 (HxW), "
                                         "the chunk's image is 256x256: 1 row short (less than one 16-row MCU).")]))
        result.arrays.append(array)
    return to_json(result)


def test_the_page_counts_every_chunk_breaking_a_rule_even_where_its_records_were_dropped() -> None:
    """report.json keeps at most MAX_RECORDS records; the page's count per requirement is the arrays' count."""
    report = _big_report()
    kept = report["records"][:5]
    page = render({**report, "records": kept, "records_dropped": len(report["records"]) - len(kept)})
    total = sum(a["requirements"]["JPEG-DIM-01"] for a in report["arrays"])
    assert total == 12 and f"{total} chunks fail" in page and "5 chunks fail" not in page
    assert "<td>256x256x1</td>" in page and "<td>256x256x3</td>" in page


def test_the_report_page_renders_in_headless_chromium(tmp_path: Path) -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium): the page is not checked in a browser")
    image = pytest.importorskip("PIL.Image")
    page = tmp_path / "report.html"
    page.write_text(render(_big_report()), encoding="utf-8")
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
                    "--hide-scrollbars", "--window-size=1360,1500", f"--screenshot={shot}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    pixels = np.asarray(image.open(shot).convert("RGB"))
    assert pixels.shape[:2] == (1500, 1360)

    def count(rgb: str) -> int:
        want = np.array([int(rgb[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)
        return int((pixels == want).all(axis=-1).sum())

    # The two 100x100 chunk maps drew side by side: conforming cells fill most of 2 x 500 x 500
    # pixels, the six failing chunks of each array show in red, and the verdict badge is there.
    assert count("#6cc283") > 400_000
    assert count("#d83b3b") >= 2 * 6 * 25
    assert count("#fadcdc") > 500  # the 'does not conform' badge and the failing counts


def test_the_benchmark_store_holds_what_it_says_and_conforms(tmp_path: Path) -> None:
    """big_store, the store of bench_check_store and of the report's screenshot: at least ``chunks`` chunks of
    256x256 (x3), a file at every grid position, each a conforming chunk of its array."""
    made = big_store(tmp_path / "big.zarr", chunks=10, pool=3)
    assert set(made) == {"gray", "color"}
    for name, channels in (("gray", 1), ("color", 3)):
        info = made[name]
        assert info["chunks"] == (256, 256) + ((3,) if channels == 3 else ())
        rows, cols = info["shape"][0] // 256, info["shape"][1] // 256
        assert rows * cols == info["count"] >= 5 and info["shape"][2:] == info["chunks"][2:]
        files = sorted(p for p in (tmp_path / "big.zarr" / name / "c").rglob("*") if p.is_file())
        assert len(files) == info["count"] and sum(p.stat().st_size for p in files) == info["bytes"]
        assert len({p.read_bytes() for p in files}) > 1  # the pool holds distinct tiles, not one chunk many times
    result = check(str(tmp_path / "big.zarr"), scheduler="sync")
    assert result.conforms(strict=True) and result.totals()["pass"] == made["gray"]["count"] + made["color"]["count"]
    assert result.totals()["fill"] == 0


# ------------------------------------------------------------------ the header scan's fast ways give what the general ones give


@pytest.mark.parametrize(("shape", "chunks", "separator", "v2", "path"), [
    ((100, 70), (32, 32), "/", False, ""),
    ((100, 70, 3), (32, 32, 3), "/", False, "a/b"),
    ((64, 64), (32, 32), ".", False, "x"),
    ((65, 7, 9), (8, 7, 4), ".", True, "v2"),
    ((10,), (3,), "/", True, ""),
    ((), (), "/", False, "scalar"),
    ((2**70, 3), (1, 2), "/", False, "huge"),
])
def test_the_keys_of_a_batch_are_the_keys_of_its_positions_one_by_one(shape: tuple[int, ...], chunks: tuple[int, ...],
                                                                      separator: str, v2: bool, path: str) -> None:
    from zarr_jpeg_conformance.check_store.metadata import ArrayPlan

    plan = ArrayPlan(path, shape, chunks, separator, v2, {}, None, None)
    n = plan.grid_count
    batches: list[Any] = [range(min(n, 400)), range(3, min(n, 40) - 2), [0, 2, min(n, 400) - 1], [n // 2], range(0), [n - 1]]
    for indices in batches:
        keys, edges = plan.stored_keys(indices)
        assert keys == [plan.stored_key(plan.coords(i)) for i in indices], indices
        assert edges == [plan.at_edge(plan.coords(i)) for i in indices], indices


def _the_general_way(monkeypatch: pytest.MonkeyPatch, url: str, **kw: Any) -> tuple[Result, Result, int]:
    """check() of a local folder as it runs (the fast scan), and with every chunk read by read_ranges and judged one by one;
    and how many keys the fast scan read."""
    from zarr_jpeg_conformance.check_store import tasks

    read = 0
    ends = tasks.read_ends

    def counted(root: str, keys: Any, head: int, tail: int) -> Any:
        nonlocal read
        read += len(keys)
        return ends(root, keys, head, tail)

    tasks._GOOD.clear()
    with monkeypatch.context() as m:
        m.setattr(tasks, "read_ends", counted)
        fast = check(url, **kw)
    with monkeypatch.context() as m:
        m.setattr(tasks, "LocalStore", type("NotTheLocalStore", (), {}))  # the scan is for LocalStore only
        slow = check(url, **kw)
    return fast, slow, read


def _assert_same(fast: Result, slow: Result) -> None:
    assert fast.records == slow.records
    assert [(a.node.path, a.counts, a.requirements, a.positions) for a in fast.arrays] == \
        [(a.node.path, a.counts, a.requirements, a.positions) for a in slow.arrays]
    assert [a.map.to_json() if a.map else None for a in fast.arrays] == [a.map.to_json() if a.map else None for a in slow.arrays]


@pytest.mark.parametrize("which", ["faults", "clean"])
def test_the_scan_of_a_local_folder_gives_what_reading_each_chunk_gives(stores: tuple[Path, Path, list[Fault]], which: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    faulty, clean, _faults = stores
    url = str(faulty if which == "faults" else clean)
    for _ in range(2):  # with the headers judged before forgotten, then remembered
        fast, slow, read = _the_general_way(monkeypatch, url, scheduler="sync", batch=5)
        _assert_same(fast, slow)
        assert read >= sum(a.plan.grid_count for a in fast.arrays if a.plan and a.plan.checkable and not a.plan.shard)
        assert read > 0


def test_the_scan_passes_a_chunk_only_by_a_header_judged_without_a_finding(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks that share a header with a finding (no JFIF: a warning), one whose end was cut, one with a header longer
    than the first read (an APP marker of 3000 bytes), and a chunk shorter than the first read."""
    from zarr_jpeg_conformance.backends import load_backend
    from zarr_jpeg_conformance.core.config import parse_codec

    pytest.importorskip("imagecodecs")
    codec = _jpeg()
    pixels = (np.arange(256 * 256) % 253).astype(np.uint8).reshape(256, 256, 1)
    stream = load_backend("imagecodecs").encode(parse_codec(codec), pixels)
    assert len(stream) > 3000 and stream[2:4] == b"\xff\xe0"
    app0 = 4 + int.from_bytes(stream[4:6], "big")
    no_jfif = stream[:2] + stream[app0:]
    long_header = stream[:2] + b"\xff\xe5" + (3002).to_bytes(2, "big") + bytes(3000) + stream[2:]
    tiny = load_backend("imagecodecs").encode(parse_codec(codec), np.zeros((8, 8, 1), np.uint8))
    keys = {"c/0/0": stream, "c/0/1": no_jfif, "c/0/2": no_jfif, "c/0/3": stream[:-100], "c/1/0": long_header,
            "c/1/1": stream, "c/1/2": stream + b"junk", "c/1/3": no_jfif}
    folder = tmp_path / "a.zarr"
    write_array(folder, (512, 1024), (256, 256), [codec], keys)
    write_array(tmp_path / "b.zarr", (8, 8), (8, 8), [codec], {"c/0/0": tiny})
    for url in (str(folder), str(tmp_path / "b.zarr")):
        for _ in range(2):
            fast, slow, read = _the_general_way(monkeypatch, url, scheduler="sync", batch=3)
            _assert_same(fast, slow)
            assert read == sum(a.plan.grid_count for a in fast.arrays if a.plan)
    result = check(str(folder), scheduler="sync")
    found = {rec["key"]: {f["requirement"] for f in rec["findings"]} for rec in result.records}
    assert found == {"c/0/1": {"JPEG-X-06"}, "c/0/2": {"JPEG-X-06"}, "c/1/3": {"JPEG-X-06"}, "c/0/3": {"JPEG-FMT-01"},
                     "c/1/2": {"JPEG-FMT-01"}}, found
    assert result.totals()["pass"] == 3


# ------------------------------------------------------------------ over http: ranges, not whole chunks


@contextmanager
def _counting_server(folder: Path) -> Iterator[tuple[str, dict[str, int]]]:
    """A ranged http server of ``folder`` that counts the bytes it sends, and its requests for chunks, ranged or whole."""
    import threading

    from zarr_jpeg_conformance.check_store.limits import DEFAULT
    from zarr_jpeg_conformance.check_store.serve import RangeHandler, _Server

    sent: dict[str, int] = {"bytes": 0, "ranged": 0, "whole": 0}
    lock = threading.Lock()

    class Counting(RangeHandler):
        def do_GET(self) -> None:
            raw = self.wfile

            class Writer:
                def write(self, data: bytes) -> int:
                    with lock:
                        sent["bytes"] += len(data)
                    return raw.write(data)

                def __getattr__(self, name: str) -> Any:
                    return getattr(raw, name)

            # A read of a whole chunk asks for the bytes of its cap (--max-chunk-bytes) from the start: more than any chunk holds.
            asked = self.headers.get("Range")
            with lock:
                sent["ranged" if asked and asked != f"bytes=0-{DEFAULT.chunk}" else "whole"] += "/c/" in self.path  # a chunk
            self.wfile = Writer()  # type: ignore[assignment]
            try:
                super().do_GET()
            finally:
                self.wfile = raw

    server = _Server(("127.0.0.1", 0), partial(Counting, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", sent
    finally:
        server.shutdown()
        server.server_close()


def _noise(size: int, seed: int) -> bytes:
    from zarr_jpeg_conformance.backends import load_backend
    from zarr_jpeg_conformance.core.config import parse_codec

    pixels = np.random.default_rng(seed).integers(0, 256, (size, size, 1), dtype=np.uint8)
    return load_backend("imagecodecs").encode(parse_codec(_jpeg(quality=95)), pixels)


def test_a_header_scan_over_http_reads_a_small_chunk_in_one_request_and_a_large_one_by_its_ends(tmp_path: Path) -> None:
    """A server that counts what it sends: a chunk no longer than FIRST bytes is one ranged request; a longer one two
    (its first FIRST bytes and its last TAIL), far less than it holds; a full decode receives every chunk whole."""
    from zarr_jpeg_conformance.check_store.chunks import FIRST, TAIL

    pytest.importorskip("imagecodecs")
    made = big_store(tmp_path / "small.zarr", chunks=12, pool=3)
    small, count = sum(a["bytes"] for a in made.values()), sum(a["count"] for a in made.values())
    assert small < count * FIRST
    large = {f"c/0/{j}": _noise(512, j) for j in range(3)}
    write_array(tmp_path / "large.zarr", (512, 512 * 3), (512, 512), [_jpeg(quality=95)], large)
    stored = sum(map(len, large.values()))
    assert min(map(len, large.values())) > 4 * (FIRST + TAIL)
    with _counting_server(tmp_path) as (base, sent):
        assert check(f"{base}/small.zarr", scheduler="sync").totals()["pass"] == count
        assert sent["ranged"] == count and sent["whole"] == 0 and small < sent["bytes"] < small + 1000 * count, sent
        sent.update(bytes=0, ranged=0, whole=0)
        assert check(f"{base}/large.zarr", scheduler="sync").conforms(strict=True)
        assert sent["ranged"] == 2 * len(large) and sent["whole"] == 0 and sent["bytes"] < stored / 4, (sent, stored)
        sent.update(bytes=0, ranged=0, whole=0)
        assert check(f"{base}/large.zarr", options=Options(decode=True), scheduler="sync").conforms(strict=True)
        assert sent["whole"] == len(large) and sent["bytes"] > stored, (sent, stored)


def test_over_http_a_chunk_is_judged_by_its_ends_as_in_a_local_folder_whatever_its_length(tmp_path: Path) -> None:
    """Chunks shorter and longer than FIRST, with headers longer than HEAD and than FIRST, cut, with trailing bytes:
    over http (with ranges, and from a server that ignores them) the records of the local folder's scan."""
    pytest.importorskip("imagecodecs")
    big, small = _noise(512, 1), _noise(64, 2)

    def app(stream: bytes, length: int) -> bytes:
        return stream[:2] + b"\xff\xe5" + (length + 2).to_bytes(2, "big") + bytes(length) + stream[2:]

    keys = {"c/0/0": big, "c/0/1": small, "c/0/2": app(big, 3000), "c/0/3": app(small, 3000), "c/0/4": app(big, 30000),
            "c/0/5": big[:-500], "c/0/6": big + b"junk", "c/0/7": small + b"junk", "c/0/8": app(small, 20000), "c/0/9": b""}
    folder = tmp_path / "mixed.zarr"
    write_array(folder, (512, 512 * 10), (512, 512), [_jpeg(quality=95)], keys)
    local = check(str(folder), scheduler="sync")
    # The 64x64 chunks are the wrong size for the array (JPEG-DIM-01), which judges their headers too.
    assert {r["key"] for r in local.records} == {"c/0/1", "c/0/3", "c/0/5", "c/0/6", "c/0/7", "c/0/8", "c/0/9"}
    with _counting_server(tmp_path) as (base, _sent):
        remote = check(f"{base}/mixed.zarr", scheduler="sync", batch=3)
    assert [{**r, "store": ""} for r in remote.records] == [{**r, "store": ""} for r in local.records]
    assert remote.totals() == local.totals()
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(tmp_path)))
    import threading

    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        plain = check(f"http://127.0.0.1:{server.server_address[1]}/mixed.zarr", scheduler="sync")
    finally:
        server.shutdown()
        server.server_close()
    assert [{**r, "store": ""} for r in plain.records] == [{**r, "store": ""} for r in local.records]


def test_the_test_server_keeps_a_connection_open_for_the_next_request(tmp_path: Path) -> None:
    import http.client

    (tmp_path / "a").write_bytes(b"0123456789")
    with serve(tmp_path) as base:
        connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=10)
        try:
            for headers, body in (({"Range": "bytes=2-4"}, b"234"), ({}, b"0123456789"), ({"Range": "bytes=-3"}, b"789")):
                connection.request("GET", "/a", headers=headers)
                answer = connection.getresponse()
                assert answer.read() == body and answer.version == 11 and not answer.will_close
        finally:
            connection.close()


def test_with_decode_each_chunk_is_read_by_t81s_rules_byte_by_byte(tmp_path: Path) -> None:
    """A chunk every decoder accepts (pad bits of 0, a restart marker after the last MCU) breaks T.81: --decode says
    where; the header scan, which reads no entropy-coded data, cannot."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from baseline_writer import Options as WriterOptions
    from baseline_writer import Writer

    store = tmp_path / "t81.zarr"
    rng = np.random.default_rng(5)
    chunks = {}
    for i, options in enumerate((WriterOptions(pad_bit=0), WriterOptions(restart=2, rst_after_last=True), WriterOptions())):
        for _ in range(20):  # an image whose data needs pad bits, for the first
            image = rng.integers(0, 256, (32, 32), np.uint8)
            data = Writer(options).write(image, "grayscale", "grayscale", [(1, 1)], 90)
            if i != 0 or data != Writer(WriterOptions()).write(image, "grayscale", "grayscale", [(1, 1)], 90):
                break
        chunks[f"c/0/{i}"] = data
    write_array(store, (32, 96), (32, 32), [_jpeg()], chunks)
    decoded = {rec["case"]: rec for rec in check(str(store), options=Options(decode=True), scheduler="sync").records}
    assert set(decoded) == {"/c/0/0", "/c/0/1"}, decoded
    assert "pad bits are 1-bits" in decoded["/c/0/0"]["message"] and decoded["/c/0/0"]["requirements"] == ["JPEG-FMT-01"]
    assert "a restart marker follows the last MCU" in decoded["/c/0/1"]["message"]
    assert check(str(store), scheduler="sync").conforms()


def test_a_header_judged_good_for_one_configuration_is_judged_again_for_another_of_the_same_chunk_shape(tmp_path: Path) -> None:
    """The header scan remembers each header it judged, for the image shape and the configuration it was judged
    against: an array whose chunks carry the header another array's configuration writes (a ycbcr stream under an
    rgb codec, the same 32x32x3 chunks) fails, even where that other array's chunks passed with it just before."""
    ycbcr = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}}
    rgb = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "rgb"}}
    image = (np.arange(32 * 32 * 3, dtype=np.uint32) % 251).astype(np.uint8).reshape(32, 32, 3)
    from zarr_jpeg_conformance.backends import load_backend
    from zarr_jpeg_conformance.core.config import parse_codec

    def _encode_chunk(codec: dict[str, Any], chunk: np.ndarray) -> bytes:
        return bytes(load_backend("imagecodecs").encode(parse_codec(codec), chunk))

    data = _encode_chunk(ycbcr, image)
    write_array(tmp_path / "right.zarr", (32, 32, 3), (32, 32, 3), [ycbcr], {"c/0/0/0": data})
    write_array(tmp_path / "wrong.zarr", (32, 32, 3), (32, 32, 3), [rgb], {"c/0/0/0": data})
    right = check(str(tmp_path / "right.zarr"), scheduler="sync")
    assert right.records == [] and right.totals()["pass"] == 1, right.records
    wrong = check(str(tmp_path / "wrong.zarr"), scheduler="sync")
    assert wrong.totals()["fail"] == 1, (wrong.totals(), wrong.records)
    # The legal twin: a stream the rgb codec writes passes under it, and the ycbcr header, judged first, is no help.
    write_array(tmp_path / "rgb.zarr", (32, 32, 3), (32, 32, 3), [rgb], {"c/0/0/0": _encode_chunk(rgb, image)})
    assert check(str(tmp_path / "rgb.zarr"), scheduler="sync").totals()["pass"] == 1
