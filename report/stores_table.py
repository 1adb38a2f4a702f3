"""The store interop table: every Zarr stack that writes JPEG chunks writes the same arrays, every stack that reads reads
every store ("Stores: writer x reader").

Writers: zarr-python with this project's ``jpeg`` codec, with imagecodecs_jpeg (in the Python >= 3.12 venv of
harnesses/python), cft-zarr, and zarrs with zarrs_jpeg on both backends (their harness binaries' ``write-store``).
Readers: the writers and osml-imagery-io. The arrays are adapters.store_interop.ARRAYS. A cell is

- ``exact``: the reader returns what the writer's own stack reads back;
- ``close``: another result, within 1 dB PSNR of the writer's own read (against the source array);
- ``wrong``: another result, further off (or another shape);
- ``refused``: the reader refused (its message), ``other-codec`` when the store names a codec it does not
  register, ``crash`` when its process died, ``timeout`` when its process took more than TIMEOUT seconds (it is
  ended with all it started; the rest of the table stands).

Every written store also goes through check-store, its command on each writer's folder of stores (the ``jpeg``
ones: the others name no ``jpeg`` codec).

    python -m zarr_jpeg_conformance.report.stores_table [OUT.json]   # print the table; write it as JSON
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..adapters import store_interop as si
from ..corpus.images import psnr
from ..harnesses import BUILDS, HARNESSES, Unavailable, command
from . import children
from .outfolder import write_text
from .saved import FORMAT_VERSION, ReportFileError, read_json

__all__ = ["OUTCOMES", "READERS", "WRITERS", "build_table", "render_markdown"]

#: The rust stacks: stack name -> harness binary.
RUST_STACKS = {"zarrs + zarrs_jpeg (turbojpeg)": "zarrs-jpeg-turbo", "zarrs + zarrs_jpeg (backend-rust)": "zarrs-jpeg-rust"}
#: The stack that runs in the Python >= 3.12 venv.
VENV_STACK = "zarr-python + imagecodecs_jpeg"
WRITERS = ("zarr-python + jpeg", VENV_STACK, "cft-zarr", *RUST_STACKS)
READERS = (*WRITERS, "osml-imagery-io")
OUTCOMES = {"exact": "reads what the writer's stack reads", "close": "within 1 dB PSNR of the writer's own read",
            "wrong": "further off, or another shape", "refused": "refused, with the reader's message",
            "other-codec": "the store names a codec this stack does not register", "crash": "the reader's process died",
            "timeout": "the step took more than 120 s and was stopped", "not-written": "the writer could not write it"}
#: How many dB below the writer's own read a reader may be and still be ``close``.
TOLERANCE_DB = 1.0
TIMEOUT = 120
#: A step's returncode where it took more than TIMEOUT seconds and was stopped.
TIMED_OUT = None


def _run(argv: list[str], env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """A step in a child process (ended with all it started at TIMEOUT seconds: returncode TIMED_OUT)."""
    try:
        return children.run(argv, TIMEOUT, {**os.environ, **(env or {})})
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, TIMED_OUT, "", f"it took more than {TIMEOUT:g} s and was stopped")  # type: ignore[arg-type]


def _failed(done: subprocess.CompletedProcess[str], exception: str) -> dict[str, Any]:
    """A step that did not succeed: refused (exit 1: the stack's own error), crashed, or timed out."""
    if done.returncode is TIMED_OUT:
        return {"ok": False, "exception": "timeout", "message": done.stderr, "refused": False}
    crashed = done.returncode not in (0, 1)
    return {"ok": False, "exception": "crash" if crashed else exception, "message": done.stderr.strip()[-500:], "refused": not crashed}


class _Stacks:
    """How each stack writes and reads here, or why it cannot."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.unavailable: dict[str, str] = {}
        self.binaries: dict[str, str] = {}
        for stack, harness in RUST_STACKS.items():
            try:
                self.binaries[stack] = command(harness)[0]
            except Unavailable as exc:
                self.unavailable[stack] = str(exc)
        try:
            BUILDS["python"].check_built()
        except Unavailable as exc:
            self.unavailable[VENV_STACK] = str(exc)
        for stack, dist in (("cft-zarr", "cft-zarr"), ("osml-imagery-io", "osml-imagery-io")):
            from importlib.metadata import PackageNotFoundError, version

            try:
                version(dist)
            except PackageNotFoundError:
                self.unavailable[stack] = f"{dist} is not installed (pip install 'zarr-jpeg-conformance[zarr-codecs]')"
        self.venv_ops: list[dict[str, Any]] = []

    def venv_batch(self, ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Run ops in the imagecodecs_jpeg venv, one process for the batch."""
        job = self.work / f"venv-job-{len(self.venv_ops)}.json"
        self.venv_ops += ops
        job.write_text(json.dumps(ops), encoding="utf-8")
        harness = HARNESSES["imagecodecs_jpeg"]
        python = harness.argv(BUILDS["python"].path)[0]
        done = _run([python, "-m", "zarr_jpeg_conformance.adapters.store_interop", str(job)], dict(harness.environment))
        try:
            return list(json.loads(done.stdout.strip().splitlines()[-1]))
        except (ValueError, IndexError):
            failed = _failed(done, "crash") if done.returncode is TIMED_OUT else \
                {"ok": False, "exception": "crash", "message": (done.stderr or done.stdout)[-500:], "refused": False}
            return [failed for _ in ops]

    def write_rust(self, stack: str, name: str, folder: Path) -> dict[str, Any]:
        folder.mkdir(parents=True, exist_ok=True)
        array = si.ARRAYS[name]
        # What a zarrs user builds: zarrs_jpeg refuses a configuration without subsampling.
        spec = {"shape": array.shape, "chunks": array.chunks, "shards": array.shards,
                "codec": si.spec_codec(name, explicit_subsampling=True)}
        data = folder.parent / f"{folder.name}.raw"
        data.write_bytes(si.source(name).tobytes())
        done = _run([self.binaries[stack], "write-store", str(folder), str(data), json.dumps(spec)])
        data.unlink()
        if done.returncode != 0:
            return _failed(done, "zarrs")
        return {"ok": True, "codec": si.serializer_codec(json.loads((folder / "zarr.json").read_text()))}

    def read_rust(self, stack: str, folder: Path, out: Path) -> dict[str, Any]:
        raw = out.with_suffix(".raw")
        done = _run([self.binaries[stack], "read-store", str(folder), str(raw)])
        if done.returncode != 0:
            return _failed(done, "zarrs")
        shape = json.loads((folder / "zarr.json").read_text())["shape"]
        np.save(out, np.frombuffer(raw.read_bytes(), np.uint8).reshape(shape))
        return {"ok": True}


def _check_stores(root: Path) -> dict[str, dict[str, Any]]:
    """check-store's verdict on every store a writer wrote under ``root`` (a group of them): array name -> its
    outcome and the requirements its findings cite. Run as its command (``check_store`` imports the report's CSS)."""
    (root / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}}), encoding="utf-8")
    out = root.parent / f"{root.name}-check-store"
    done = _run([sys.executable, "-m", "zarr_jpeg_conformance.check_store", str(root), "--out", str(out), "-q",
                 "--scheduler", "sync"])
    report = out / "report.json"
    if done.returncode is TIMED_OUT:
        return {name: {"outcome": "timeout", "message": f"check-store: {done.stderr}"} for name in si.ARRAYS}
    if not report.is_file():
        message = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no report"]
        return {name: {"outcome": "not-jpeg" if done.returncode == 2 else "error", "message": message[0]} for name in si.ARRAYS}
    found = {a["path"].strip("/"): a for a in json.loads(report.read_text(encoding="utf-8"))["arrays"]}
    return {name: ({"outcome": found[name]["outcome"], "requirements": sorted(found[name].get("requirements") or {})}
                   if name in found else {"outcome": "not-jpeg", "message": "check-store: it names no jpeg codec"})
            for name in si.ARRAYS}


def _cell(read: Mapping[str, Any], got: np.ndarray | None, name: str, reference: np.ndarray | None) -> dict[str, Any]:
    if not read.get("ok"):
        if read.get("exception") == "OtherCodec":
            return {"outcome": "other-codec", "message": read["message"]}
        if read.get("exception") == "timeout":
            return {"outcome": "timeout", "message": str(read.get("message"))}
        return {"outcome": "refused" if read.get("refused") else "crash",
                "message": f"{read.get('exception')}: {read.get('message')}"}
    want = si.source(name)
    assert got is not None
    if got.shape != want.shape:
        return {"outcome": "wrong", "message": f"shape {got.shape}, the array is {want.shape}"}
    quality = round(float(psnr(want, got)), 2)
    if reference is not None and np.array_equal(got, reference):
        return {"outcome": "exact", "psnr": quality}
    floor = float(psnr(want, reference)) - TOLERANCE_DB if reference is not None and reference.shape == want.shape else 30.0
    return {"outcome": "close" if quality >= floor else "wrong", "psnr": quality}


def build_table(work: Path, log: Callable[[str], None] = lambda _: None) -> dict[str, Any]:
    """Write every array with every writer under ``work``, read every store with every reader: the table as JSON."""
    stacks = _Stacks(work)
    writes: dict[tuple[str, str], dict[str, Any]] = {}
    folder = {(w, a): work / _slug(w) / a for w in WRITERS for a in si.ARRAYS}
    venv_writes = [{"op": "write", "stack": VENV_STACK, "array": a, "folder": str(folder[VENV_STACK, a])} for a in si.ARRAYS]
    for writer in WRITERS:
        if writer in stacks.unavailable:
            continue
        log(f"stores: {writer} writes {len(si.ARRAYS)} arrays")
        if writer == VENV_STACK:
            writes.update({(writer, a): r for a, r in zip(si.ARRAYS, stacks.venv_batch(venv_writes), strict=True)})
            continue
        for name in si.ARRAYS:
            target = folder[writer, name]
            if writer in RUST_STACKS:
                writes[writer, name] = stacks.write_rust(writer, name, target)
            else:
                writes[writer, name] = si.run_op({"op": "write", "stack": writer, "array": name, "folder": str(target)})
    written = [key for key, w in writes.items() if w.get("ok")]
    reads: dict[tuple[str, str, str], dict[str, Any]] = {}
    out = {key: work / "reads" / f"{_slug(key[0])}--{key[1]}" for key in written}
    (work / "reads").mkdir(parents=True, exist_ok=True)
    for reader in READERS:
        if reader in stacks.unavailable:
            continue
        log(f"stores: {reader} reads {len(written)} stores")
        paths = {key: out[key].with_name(f"{out[key].name}--{_slug(reader)}.npy") for key in written}
        if reader == VENV_STACK:
            ops = [{"op": "read", "stack": reader, "folder": str(folder[key]), "out": str(paths[key])} for key in written]
            reads.update({(reader, *key): r for key, r in zip(written, stacks.venv_batch(ops), strict=True)})
            continue
        for key in written:
            if reader in RUST_STACKS:
                reads[reader, *key] = stacks.read_rust(reader, folder[key], paths[key])
            else:
                reads[reader, *key] = si.run_op({"op": "read", "stack": reader, "folder": str(folder[key]), "out": str(paths[key])})
    checks = {writer: _check_stores(work / _slug(writer)) for writer in WRITERS if writer not in stacks.unavailable}
    stores = []
    for writer in WRITERS:
        for name in si.ARRAYS:
            if writer in stacks.unavailable:
                continue
            w = writes[writer, name]
            row: dict[str, Any] = {"writer": writer, "array": name}
            if not w.get("ok"):
                row.update({"written": False, "message": f"{w.get('exception')}: {w.get('message')}"})
                stores.append(row)
                continue
            row.update({"written": True, "codec": w.get("codec"), "check_store": checks[writer][name]})
            loaded = {r: np.load(p) for r in READERS
                      if reads.get((r, writer, name), {}).get("ok")
                      and (p := out[writer, name].with_name(f"{out[writer, name].name}--{_slug(r)}.npy")).exists()}
            reference = loaded.get(writer)
            row["cells"] = {r: _cell(reads[r, writer, name], loaded.get(r), name, reference)
                            for r in READERS if (r, writer, name) in reads}
            stores.append(row)
    return {"format_version": FORMAT_VERSION,
            "arrays": {n: {"shape": list(a.shape), "chunks": list(a.chunks), "shards": list(a.shards) if a.shards else None,
                           "codec": dict(a.codec)} for n, a in si.ARRAYS.items()},
            "writers": list(WRITERS), "readers": list(READERS), "unavailable": stacks.unavailable,
            "outcomes": OUTCOMES, "tolerance_db": TOLERANCE_DB, "stores": stores}


def _slug(stack: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in stack).strip("-")


_SHORT = {"exact": "exact", "close": "close", "wrong": "WRONG", "refused": "refused", "other-codec": "other codec",
          "crash": "CRASH", "timeout": "TIMEOUT"}


def _one_line(text: object) -> str:
    """A message as one line of a table or a list: a reader's message may hold newlines (and a line after one that
    starts with a number was read as the next note)."""
    return " ".join(str(text).split())


def _layout(table: Mapping[str, Any]) -> tuple[list[str], list[list[str]], list[str]]:
    """The table as both pages show it: its header, its rows (cells as text), and the numbered notes."""
    readers = [r for r in table["readers"] if r not in table["unavailable"]]
    header = ["writer", "array", "codec written", "check-store", *readers]
    rows: list[list[str]] = []
    notes: list[str] = []
    for row in table["stores"]:
        if not row["written"]:
            notes.append(f"{row['writer']} cannot write {row['array']}: {_one_line(row['message'])}")
            rows.append([row["writer"], row["array"], "not written", "", *("" for _ in readers)])
            continue
        codec = row["codec"] or {}
        cells = []
        for reader in readers:
            cell = row["cells"].get(reader, {})
            text = _SHORT.get(cell.get("outcome", ""), "")
            if "psnr" in cell and cell["outcome"] != "exact":
                text += f" {cell['psnr']:.1f} dB"
            if cell.get("outcome") in ("refused", "crash", "wrong", "timeout") and cell.get("message"):
                notes.append(f"{reader} reading {row['writer']}'s {row['array']}: {_one_line(cell['message'])}")
                text += f" [{len(notes)}]"
            cells.append(text)
        check = row["check_store"]["outcome"]
        if row["check_store"].get("requirements"):
            check += f" ({', '.join(row['check_store']['requirements'])})"
        rows.append([row["writer"], row["array"], f"`{codec.get('name', '?')}`", check, *cells])
    return header, rows, notes


def _intro(table: Mapping[str, Any]) -> str:
    return ("Each writer writes each array to a store of its own; each reader reads every store. "
            + "; ".join(f"**{k}**: {v}" for k, v in table["outcomes"].items()) + ".")


def render_markdown(table: Mapping[str, Any]) -> str:
    """The table as Markdown: one row per written store, one column per reader, then the refusals' messages."""
    header, rows, notes = _layout(table)
    lines = ["## Stores: writer × reader", "", _intro(table), ""]
    if table["unavailable"]:
        lines += [f"- not run: {stack}: {_one_line(why)}" for stack, why in table["unavailable"].items()] + [""]
    lines += ["| " + " | ".join(header) + " |", "|---|---|---|---|" + "---|" * (len(header) - 4)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    if notes:
        lines += ["", *(f"{i}. {note}" for i, note in enumerate(notes, 1))]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="stores-") as work:
        table = build_table(Path(work), log=lambda text: print(text, file=sys.stderr))
    if argv:
        Path(argv[0]).write_text(json.dumps(table, indent=1), encoding="utf-8")
    print(render_markdown(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))


# ----------------------------------------------------------------- the report's hooks

#: The file a report run writes the table to, beside results/ (re-rendered with --from).
FILE = "stores.json"


def run_into(out: Path, log: Callable[[str], None]) -> None:
    """Build the table and write it to ``out/stores.json`` (a failure is logged and written as the reason)."""
    with tempfile.TemporaryDirectory(prefix="stores-") as work:
        try:
            table: dict[str, Any] = build_table(Path(work), log)
        except Exception as exc:  # noqa: BLE001 - the table is a part of the report; its failure is shown, not raised
            table = {"format_version": FORMAT_VERSION, "error": f"{type(exc).__name__}: {exc}"}
    write_text(out / FILE, json.dumps(table, indent=1) + "\n")


def load(folder: Path) -> dict[str, Any] | None:
    """The table a run wrote into ``folder``, if any; ReportFileError naming the file if it is damaged or of another
    version (schema/report-files.schema.json, ``stores``)."""
    path = folder / FILE
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_file():
        raise ReportFileError(f"{path}: not a file")
    return read_json(path, "stores")


def markdown_section(table: Mapping[str, Any] | None) -> str:
    if table is None:
        return ""
    if "error" in table:
        return f"\n## Stores: writer × reader\n\nThe table could not be built: {table['error']}\n"
    return "\n" + render_markdown(table)


def html_section(table: Mapping[str, Any] | None) -> str:
    """The table as an HTML section (the Markdown table's cells, escaped)."""
    from html import escape

    if table is None:
        return ""
    if "error" in table:
        return f'<section id="stores"><h2>Stores: writer × reader</h2><p>{escape(table["error"])}</p></section>'
    header, rows, notes = _layout(table)

    def cells(row: list[str], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{escape(c.strip('`'))}</{tag}>" for c in row) + "</tr>"

    return ('<section id="stores"><h2>Stores: writer × reader</h2>'
            f"<p>{escape(_intro(table).replace('**', ''))}</p>"
            + "".join(f"<p>{escape(f'- not run: {stack}: {_one_line(why)}')}</p>" for stack, why in table["unavailable"].items())
            + f"<table>{cells(header, 'th')}{''.join(cells(r, 'td') for r in rows)}</table>"
            + "<ol>" + "".join(f"<li>{escape(n)}</li>" for n in notes) + "</ol></section>")
