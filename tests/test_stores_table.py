"""The store interop table (report/stores_table.py, adapters/store_interop.py): how a cell is judged, how the table
reaches the pages, and one real table over the stacks installed here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.adapters import store_interop as si
from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.report import __main__ as report_main
from zarr_jpeg_conformance.report import stores_table as st
from zarr_jpeg_conformance.report.saved import FORMAT_VERSION
from zarr_jpeg_conformance.zarrcodecs.jpeg import check_spec

pytest.importorskip("zarr")


# ----------------------------------------------------------------- one cell


def _near(image: np.ndarray, delta: int) -> np.ndarray:
    return np.clip(image.astype(int) + delta, 0, 255).astype(np.uint8)


def test_a_cell_is_exact_close_or_wrong_against_the_writers_own_read() -> None:
    source = si.source("gray-2d")
    own = _near(source, 1)
    assert st._cell({"ok": True}, own.copy(), "gray-2d", own)["outcome"] == "exact"
    close = own.copy()
    close[0, 0] ^= 1  # one sample off by one: far less than a dB
    assert st._cell({"ok": True}, close, "gray-2d", own)["outcome"] == "close"
    assert st._cell({"ok": True}, _near(source, 40), "gray-2d", own)["outcome"] == "wrong"
    assert st._cell({"ok": True}, source[:, :10], "gray-2d", own)["outcome"] == "wrong"


def test_a_reader_is_held_to_the_quality_of_the_writers_own_read_not_to_a_fixed_floor() -> None:
    """A lossy writer's store (its own read 24 dB from the source): another reader within a dB of that read is close,
    though below the 30 dB floor used where no read of the writer's own fits the array."""
    source = si.source("gray-2d")
    own = _near(source, 16)  # 24 dB
    reader = own.copy()
    reader[0, 0] ^= 1
    assert st._cell({"ok": True}, reader, "gray-2d", own) == {"outcome": "close", "psnr": pytest.approx(24.0, abs=0.2)}
    assert st._cell({"ok": True}, reader, "gray-2d", own[:, :10])["outcome"] == "wrong"  # the own read does not fit
    assert st._cell({"ok": True}, _near(source, 1), "gray-2d", own[:, :10])["outcome"] == "close"


def test_where_the_writers_own_stack_cannot_read_its_store_a_reader_is_judged_against_the_source() -> None:
    """No read of the writer's own to be exact against: a reader's samples are still judged, against the source array
    (close above the floor, wrong below it); none is ``exact`` for merely having the right shape."""
    source = si.source("gray-2d")
    assert st._cell({"ok": True}, _near(source, 1), "gray-2d", None)["outcome"] == "close"
    assert st._cell({"ok": True}, np.zeros_like(source), "gray-2d", None)["outcome"] == "wrong"
    assert st._cell({"ok": True}, _near(source, 40), "gray-2d", None)["outcome"] == "wrong"


def test_a_failed_read_is_refused_other_codec_or_crash_with_its_words() -> None:
    refused = st._cell({"ok": False, "refused": True, "exception": "zarrs", "message": "missing field"}, None, "rgb", None)
    assert refused == {"outcome": "refused", "message": "zarrs: missing field"}
    other = st._cell({"ok": False, "exception": "OtherCodec", "message": "the store names codec 'jpeg'"}, None, "rgb", None)
    assert other["outcome"] == "other-codec"
    assert st._cell({"ok": False, "refused": False, "exception": "crash", "message": "SIGSEGV"}, None, "rgb", None)["outcome"] == "crash"


def test_the_arrays_hold_boundary_chunks_not_multiples_of_8_and_a_shard() -> None:
    gray = si.ARRAYS["gray-2d"]
    assert any(c % 8 for c in gray.chunks) and any(s % c for s, c in zip(gray.shape, gray.chunks, strict=True))
    assert si.ARRAYS["sharded-420"].shards is not None
    assert si.source("ycbcr-420").shape == (32, 48, 3) and si.source("gray-2d").dtype == np.uint8


@pytest.mark.parametrize("name", sorted(si.ARRAYS))
def test_each_array_is_what_its_name_says_and_legal(name: str) -> None:
    """The table's rows promise a colour space and a scheme by name, boundary chunks in gray-2d only
    (a colour array cut at its edge would test two things at once) and chunks the spec accepts: a typo in
    ARRAYS must not quietly turn a row into another test."""
    spec = si.ARRAYS[name]
    config = parse_codec(spec.codec)
    check_spec(config, np.dtype(np.uint8), len(spec.chunks))
    space = {"gray": "grayscale", "ycbcr": "ycbcr", "sharded": "ycbcr", "rgb": "rgb"}[name.split("-")[0]]
    assert config.encoded_color_space == space
    scheme = {"420": ((2, 2), (1, 1), (1, 1)), "444": ((1, 1), (1, 1), (1, 1))}.get(name.rsplit("-", 1)[-1])
    if scheme:
        assert tuple(map(tuple, config.subsampling)) == scheme
    channels = spec.chunks[2:] or (1,)
    assert channels == (config.components,) or (len(spec.chunks) == 3 and channels == (1,) == (config.components,))
    assert spec.shape[2:] == spec.chunks[2:]
    outer = spec.shards or spec.chunks
    assert all(o % c == 0 for o, c in zip(outer, spec.chunks, strict=True))
    cut = any(s % o for s, o in zip(spec.shape, outer, strict=True))
    assert cut == (name == "gray-2d"), (name, spec.shape, outer)
    assert si.source(name).shape == spec.shape  # what every writer writes fills the array


def test_a_zarr_python_reader_reads_only_the_codec_its_package_registers(tmp_path: Path) -> None:
    assert si.run_op({"op": "write", "stack": "zarr-python + jpeg", "array": "gray-hw1", "folder": str(tmp_path / "a")})["ok"]
    read = si.run_op({"op": "read", "stack": "cft-zarr", "folder": str(tmp_path / "a"), "out": str(tmp_path / "x.npy")})
    assert (read["ok"], read["exception"]) == (False, "OtherCodec") and "'jpeg'" in read["message"]


def test_the_osml_reader_is_other_codec_even_for_a_store_naming_its_codec(tmp_path: Path) -> None:
    """osml-imagery-io's zarr codec reads the codec objects osml itself writes (no writer of the table writes its name):
    a store that names it is still other-codec for that reader, never a read through zarr."""
    folder = tmp_path / "osml"
    assert si.run_op({"op": "write", "stack": "zarr-python + jpeg", "array": "gray-hw1", "folder": str(folder)})["ok"]
    meta = json.loads((folder / "zarr.json").read_text())
    meta["codecs"] = [{**codec, "name": si.PY_STACKS["osml-imagery-io"].reads[0]} if codec["name"] == "jpeg" else codec
                      for codec in meta["codecs"]]
    (folder / "zarr.json").write_text(json.dumps(meta))
    read = si.run_op({"op": "read", "stack": "osml-imagery-io", "folder": str(folder), "out": str(tmp_path / "x.npy")})
    assert (read["ok"], read["exception"]) == (False, "OtherCodec") and "its own codec objects only" in read["message"], read


@pytest.mark.parametrize(("code", "outcome"), [(1, ("zarrs", True)), (3, ("crash", False)), (-11, ("crash", False))])
def test_a_zarrs_harness_that_exits_non_zero_refused_or_crashed_with_the_end_of_its_words(
        tmp_path: Path, code: int, outcome: tuple[str, bool]) -> None:
    """Exit 1 is zarrs refusing (its error printed), anything else a crash; the message is the last 500 characters."""
    import sys

    harness = tmp_path / "zarrs-harness"
    end = "import os, signal, sys; " + ("os.kill(os.getpid(), signal.SIGSEGV)" if code < 0 else f"sys.exit({code})")
    harness.write_text(f"#!{sys.executable}\nimport sys; sys.stderr.write('x' * 600 + 'end'); {end}\n")
    harness.chmod(0o755)
    stacks = st._Stacks.__new__(st._Stacks)
    stacks.work, stacks.unavailable, stacks.binaries = tmp_path, {}, dict.fromkeys(st.RUST_STACKS, str(harness))
    stack = next(iter(st.RUST_STACKS))
    for done in (stacks.write_rust(stack, "gray-2d", tmp_path / "w" / "gray-2d"),
                 stacks.read_rust(stack, tmp_path / "w" / "gray-2d", tmp_path / "r.npy")):
        assert (done["ok"], done["exception"], done["refused"]) == (False, *outcome)
        assert done["message"] == ("x" * 600 + "end")[-500:]


# ----------------------------------------------------------------- the pages

TABLE: dict[str, Any] = {
    "format_version": FORMAT_VERSION, "arrays": {}, "tolerance_db": 1.0,
    "writers": ["w"], "readers": ["w", "r"], "unavailable": {"q": "not built"}, "outcomes": {"exact": "same"},
    "stores": [{"writer": "w", "array": "gray-2d", "written": True, "codec": {"name": "jpeg"},
                "check_store": {"outcome": "warn", "requirements": ["JPEG-MCU-02"]},
                "cells": {"w": {"outcome": "exact", "psnr": 40.0}, "r": {"outcome": "refused", "message": "no <way>"}}},
               {"writer": "w", "array": "rgb", "written": False, "message": "NoEquivalent: no rgb"}],
}


def test_the_table_renders_with_its_refusals_numbered() -> None:
    text = st.render_markdown(TABLE)
    assert text.startswith("## Stores: writer × reader")
    assert "| w | gray-2d | `jpeg` | warn (JPEG-MCU-02) | exact | refused [1] |" in text
    assert "1. r reading w's gray-2d: no <way>" in text and "2. w cannot write rgb: NoEquivalent: no rgb" in text
    assert "not run: q: not built" in text
    html = st.html_section(TABLE)
    assert "<th>writer</th>" in html and "no &lt;way&gt;" in html and "<td>jpeg</td>" in html


def test_the_pages_and_matrix_json_carry_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report_main.model, "to_json", lambda m: {"implementations": []})
    monkeypatch.setattr(report_main.render_md, "render", lambda m: "# Matrix\n")
    monkeypatch.setattr(report_main.render_html, "render", lambda m: "<html><body><main><p>m</p></main></body></html>\n")
    source = tmp_path / "run"
    source.mkdir()
    (source / st.FILE).write_text(json.dumps(TABLE), encoding="utf-8")
    report_main.write_pages(object(), tmp_path / "pages", source)  # type: ignore[arg-type]
    assert json.loads((tmp_path / "pages" / "matrix.json").read_text())["stores"] == TABLE
    assert "## Stores: writer × reader" in (tmp_path / "pages" / "matrix.md").read_text()
    assert '<section id="stores">' in (tmp_path / "pages" / "matrix.html").read_text()
    report_main.write_pages(object(), tmp_path / "bare")  # type: ignore[arg-type]
    assert "stores" not in json.loads((tmp_path / "bare" / "matrix.json").read_text())


# ----------------------------------------------------------------- one real table


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return st.build_table(tmp_path_factory.mktemp("stores"))


def _row(table: dict[str, Any], writer: str, array: str) -> dict[str, Any]:
    return next(r for r in table["stores"] if (r["writer"], r["array"]) == (writer, array))


def test_every_writer_reads_its_own_stores_exactly(table: dict[str, Any]) -> None:
    rows = [r for r in table["stores"] if r["written"]]
    assert rows
    for row in rows:
        assert row["cells"][row["writer"]]["outcome"] == "exact", row
        assert row["cells"][row["writer"]]["psnr"] > 35, row


def test_jpeg_stores_pass_check_store_and_others_are_not_jpeg(table: dict[str, Any]) -> None:
    for row in (r for r in table["stores"] if r["written"]):
        expected = {"pass", "warn"} if row["codec"]["name"] == "jpeg" else {"not-jpeg"}
        assert row["check_store"]["outcome"] in expected, row


def test_zarrs_cannot_open_a_conforming_grayscale_store_written_by_zarr_python(table: dict[str, Any]) -> None:
    zarrs = [r for r in st.RUST_STACKS if r not in table["unavailable"]]
    if not zarrs:
        pytest.skip("the zarrs_jpeg harnesses are not built")
    row = _row(table, "zarr-python + jpeg", "gray-2d")
    assert "subsampling" not in row["codec"]["configuration"]
    for reader in zarrs:
        assert row["cells"][reader]["outcome"] == "refused" and "missing field `subsampling`" in row["cells"][reader]["message"]
        # ... while a store zarrs writes reads back in zarr-python with this project's codec.
        assert _row(table, reader, "gray-hw1")["cells"]["zarr-python + jpeg"]["outcome"] in ("exact", "close")


@pytest.mark.parametrize(("flags", "built"), [([], True), (["--no-stores"], False), (["--suites", "parse"], False)])
def test_a_report_run_builds_the_table_unless_asked_not_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          flags: list[str], built: bool) -> None:
    """The report builds the writer x reader table after the suites, and not with --no-stores or a selection."""
    calls: list[Path] = []
    monkeypatch.setattr(report_main.run, "run_all", lambda specs, out, options, log: [])
    monkeypatch.setattr(report_main.stores_table, "run_into", lambda out, log: calls.append(out))
    report_main.main(["--out", str(tmp_path / "out"), "--impl", "pillow", "--no-throughput", *flags])
    assert calls == ([tmp_path / "out"] if built else [])
