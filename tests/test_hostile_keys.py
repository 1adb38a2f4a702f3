"""A key is data (issue 45): what a store names is decoded as a server would before it is confined, sent as the
name it is, and never followed off the store; what it names reaches the terminal as text.

Each test is a probe of the second hostile-input round, and its neighbours (another encoding of the same escape,
another store kind: a folder, a zip, http).
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("zarr")

from hostile_kit import (
    array,
    consolidated,
    meta,
    run_check,
    serving,
    two_by_two,
)

from zarr_jpeg_conformance.check_store import check
from zarr_jpeg_conformance.check_store.__main__ import main

#: ``..`` as servers and file systems may read it: percent-encoded (either case, twice, with an encoded slash),
#: as an overlong UTF-8 dot, as full-width dots (NFKC), below a folder of the store.
ESCAPES = ["%2e%2e/secret", "%2E%2E/secret", "%252e%252e/secret", "%2e%2e%2fsecret", "%c0%ae%c0%ae/secret",
           "\uff0e\uff0e/secret", "a/%2e%2e/%2e%2e/secret", "a/.%2e/../secret"]


@pytest.mark.parametrize("name", ESCAPES)
def test_every_reading_of_a_dot_dot_is_refused_and_plain_names_are_not(name: str) -> None:
    from zarr_jpeg_conformance.check_store.keys import MAX_KEY, leaves_store, suspect

    assert suspect(name) and leaves_store(name) is not None, name
    for plain in ("c/0/0", "a%20b", "caf\u00e9", "bad#1", "bad?x", "100%", "a.b/c..d", "%25", "x" * MAX_KEY):
        assert leaves_store(plain) is None, plain
    assert "more than any store's key (1,024)" in str(leaves_store("x" * (MAX_KEY + 1)))


def test_a_key_becomes_a_url_segment_by_segment() -> None:
    from zarr_jpeg_conformance.check_store.keys import quoted

    assert quoted("bad#1/c/0") == "bad%231/c/0" and quoted("bad?x") == "bad%3Fx"
    assert quoted("%2e%2e/x") == "%252e%252e/x" and quoted("a b/é") == "a%20b/%C3%A9"


def _traversal(tmp_path: Path, data: bytes, names: list[str]) -> Path:
    """A group whose consolidated metadata names an array at each of ``names``, a secret array beside the store,
    and a folder of each name inside the store (where a file system, not a server, would find it)."""
    two_by_two(tmp_path / "secret", data)
    store = consolidated(tmp_path / "trav.zarr", {name: meta([64, 64], [32, 32]) for name in names})
    for name in names:
        two_by_two(store / name, data)
    return store


def test_over_http_an_encoded_dot_dot_is_a_finding_never_a_request(tmp_path: Path, gray: bytes,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 45, high 1: consolidated metadata naming ``%2e%2e/secret`` made check-store read /secret/c/* over a
    plain static server and say CONFORMS, exit 0; and each other reading of ``..``."""
    store = _traversal(tmp_path, gray, ESCAPES)
    asked: list[str] = []
    with serving(tmp_path, log=asked) as base:
        assert main([f"{base}/{store.name}", "-q", "--scheduler", "sync"]) == 1
    out = capsys.readouterr().out
    assert out.count("outside the store") == len(ESCAPES) and out.rstrip().endswith("DOES NOT CONFORM"), out
    assert [p for p in asked if not p.startswith(f"/{store.name}/")] == [] and not [p for p in asked if "/c/" in p], asked


@pytest.mark.parametrize("kind", ["folder", "zip"])
def test_in_a_folder_or_a_zip_an_encoded_dot_dot_is_refused_too(tmp_path: Path, gray: bytes, kind: str) -> None:
    """The same name in a folder is a folder called ``%2e%2e``: still refused, whatever the store kind, since a
    server of that folder would read it as ``..``."""
    store = _traversal(tmp_path, gray, ["%2e%2e/secret"])
    url = str(store)
    if kind == "zip":
        url = str(tmp_path / "trav.zip")
        with zipfile.ZipFile(url, "w") as zf:
            for path in store.rglob("*"):
                if path.is_file():
                    zf.write(path, path.relative_to(store).as_posix())
    result = check(url, scheduler="sync")
    (found,) = result.arrays
    assert found.plan is None and found.positions == 0 and not result.conforms()
    assert "percent-decoded reads '../secret'" in found.metadata["findings"][0]["observed"]  # type: ignore[index]


#: Names a URL reads as something else when joined as a string: a fragment, a query, an escape, a parameter, a space.
URL_NAMES = ["bad#1", "bad?x", "bad%41", "bad;x", "bad x", "bad\u00e9"]


def test_over_http_names_a_url_reads_differently_are_read_as_the_folder_reads_them(tmp_path: Path) -> None:
    """Issue 45, high 2: arrays ``bad#1`` and ``bad?x`` with garbage chunks failed as a folder and CONFORMED over
    http (every read went to ``bad``: no such key, so fill). Now every name is one segment of the URL."""
    store = consolidated(tmp_path / "names.zarr", {name: meta([64, 64], [32, 32]) for name in URL_NAMES})
    for name in URL_NAMES:
        array(store / name, [64, 64], [32, 32], {f"c/{i}/{j}": b"garbage" for i in range(2) for j in range(2)})
    folder = check(str(store), scheduler="sync")
    with serving(tmp_path) as base:
        http = check(f"{base}/names.zarr", scheduler="sync")
    assert folder.totals()["fail"] == 4 * len(URL_NAMES) == http.totals()["fail"], http.totals()
    assert sorted(r["case"] for r in http.records) == sorted(r["case"] for r in folder.records)


def _redirecting(target: str) -> Any:
    def answer(handler: Any) -> None:
        handler.send_response(302)
        handler.send_header("Location", target)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    return answer


@pytest.mark.parametrize("where", ["other origin", "same origin, another path", "a sibling that starts with the store's name"])
def test_a_redirect_off_the_store_is_not_followed(tmp_path: Path, gray: bytes, where: str) -> None:
    """Issue 45, low: redirects were followed to any origin. A chunk redirected off the store's origin and path is an
    error naming where it was sent; one redirected within the store is read."""
    store = two_by_two(tmp_path / "store.zarr", gray)
    two_by_two(tmp_path / "store.zarr-private", b"not a jpeg")
    (store / "moved").mkdir()
    os.replace(store / "c" / "1" / "1", store / "moved" / "11")
    other: list[str] = []
    with serving(tmp_path / "store.zarr-private", log=other) as elsewhere:
        targets = {"other origin": f"{elsewhere}/c/0/0", "same origin, another path": "/moved-away/c/0/0",
                   "a sibling that starts with the store's name": "../../../store.zarr-private/c/0/0"}
        routes = {"/store.zarr/c/0/0": _redirecting(targets[where]), "/store.zarr/c/1/1": _redirecting("/store.zarr/moved/11")}
        asked: list[str] = []
        with serving(tmp_path, routes=routes, log=asked) as base:
            result = check(f"{base}/store.zarr", scheduler="sync")
    assert other == [] and not [p for p in asked if "private" in p], (other, asked)
    assert result.totals()["pass"] == 3 and result.totals()["error"] == 1, result.totals()
    (rec,) = result.records
    assert rec["key"] == "c/0/0" and "off the store's origin and path: not followed" in rec["message"], rec["message"]


def test_a_symbolic_link_into_a_sibling_whose_name_starts_with_the_stores_is_outside(tmp_path: Path, gray: bytes) -> None:
    """``data.zarr`` -> ``data.zarr-private/...``: the store's path is a prefix of the target's string, not of its
    path; a folder link and a chunk link into the sibling are both refused, never read."""
    two_by_two(tmp_path / "data.zarr-private", b"not a jpeg")
    store = two_by_two(tmp_path / "data.zarr", gray)
    os.rename(store / "c" / "1", tmp_path / "gone")
    (store / "c" / "1").symlink_to(tmp_path / "data.zarr-private" / "c" / "1")  # a folder of chunks, linked out
    (store / "c" / "0" / "1").unlink()
    (store / "c" / "0" / "1").symlink_to("../../../data.zarr-private/c/0/1")  # a chunk, linked out
    result = check(str(store), scheduler="sync", batch=4)
    assert result.totals()["pass"] == 1 and result.totals()["error"] == 3 and result.totals()["fail"] == 0, result.totals()
    assert all("symbolic link out of the store" in r["message"] for r in result.records)


def test_names_are_capped_and_escape_codes_reach_the_terminal_as_text(tmp_path: Path) -> None:
    """Issue 45, medium and low: escape codes in array names reached the terminal raw (and could rewrite the printed
    verdict); long array names were printed whole. Now every line is escaped and capped: the verdict is the last
    line, as printed."""
    forged = "\x1b[2K\x1b[1A\rCONFORMS\x1b[8m\u202e"
    deep = "/".join(("n" * 240,) * 4)  # a path of 963 characters: within what a store can hold, too long to print
    store = consolidated(tmp_path / "names.zarr", {forged: meta([32, 32], [32, 32]), deep: meta([32, 32], [32, 32])})
    for name in (forged, deep):
        array(store / name, [32, 32], [32, 32], {"c/0/0": b"garbage"})
    done = run_check([str(store), "-q"], address_space=None)
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "DOES NOT CONFORM"
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", done.stdout + done.stderr), done.stdout
    assert "\\x1b[2K\\x1b[1A\\x0dCONFORMS" in done.stdout
    assert deep not in done.stdout and max(map(len, lines)) < 2500


def test_a_name_longer_than_any_key_is_refused_not_read(tmp_path: Path) -> None:
    store = consolidated(tmp_path / "long.zarr", {"x" * 5000: meta([32, 32], [32, 32])})
    done = run_check([str(store), "-q", "--out", str(tmp_path / "out")], address_space=None)
    assert done.returncode == 1 and "more than any store's key (1,024)" in done.stdout, done.stdout + done.stderr
    assert "x" * 300 not in done.stdout
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["arrays"][0]["checked"] == 0
