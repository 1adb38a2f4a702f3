"""matrix.html as a reader sees it: rendered by headless Chromium, measured, clicked.

A wide matrix (nineteen rows in all three groups, a decode-only row, long messages) is
written and opened in Debian's Chromium through playwright-core (installed for the
browser-chromium harness by ``harnesses install``). The page must load without errors or
requests, fit a 1400-pixel window without sideways scrolling, keep every table inside the
page, show the row groups and the parse, protection and corpus sections, open a cell's
list in full view (also in the last column), and keep the matrix's header in view while
its rows scroll. A screenshot is left in the test's folder.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from zarr_jpeg_conformance.harnesses import CHROMIUM, NODE_DIR, Unavailable
from zarr_jpeg_conformance.report import model, render_html

BUILTINS = ("turbojpeg", "imagecodecs", "pillow", "zarr")
LIBRARIES = ("simplejpeg", "opencv", "pyvips", "node-jpeg-js", "node-pdfjs", "node-sharp", "node-jsquash", "node-cornerstone",
             "browser-chromium", "java-imageio", "java-twelvemonkeys", "go-image-jpeg", "rust-zune-jpeg", "rust-image")
CODECS = ("zarrs-codec",)
LONG = ("observed: the decode lies max |diff| 255, mean |diff| 76.833 outside the expected decode (libjpeg-turbo's under the "
        "spec's colour rule); it looks like an inverse YCbCr transform applied to samples the stream stores untransformed ") * 3

SCRIPT = r"""
import { createRequire } from "node:module";
const [, , packageJson, chromiumPath, pagePath, shotPath] = process.argv;
const { chromium } = createRequire(packageJson)("playwright-core");
const browser = await chromium.launch({ executablePath: chromiumPath, headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run"] });
const problems = [];
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on("console", (m) => { if (m.type() === "error") problems.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("request", (r) => { if (!r.url().startsWith("file:")) problems.push(`request: ${r.url()}`); });
  await page.goto(`file://${pagePath}`);
  const facts = await page.evaluate(() => {
    const main = document.querySelector("main").getBoundingClientRect();
    const wide = [...document.querySelectorAll("table")].filter((t) => t.getBoundingClientRect().right > main.right + 1)
      .map((t) => `${t.closest("section").id}: ${Math.round(t.getBoundingClientRect().right - main.right)} px`);
    return {
      sections: [...document.querySelectorAll("main > section")].map((s) => s.id),
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      wide,
      groups: [...document.querySelectorAll("#summary tr.group-head th")].map((th) => th.firstChild.textContent.trim()),
      rotated: getComputedStyle(document.querySelector("#requirements th.impl")).writingMode,
      parsers: document.querySelectorAll("#parsing th.parser").length,
    };
  });
  const openList = async (selector) => {
    const cell = page.locator(selector).first();
    await cell.locator("summary").click();
    return cell.locator("ul").first().evaluate((ul) => {
      const r = ul.getBoundingClientRect();
      return { left: r.left, right: r.right, width: r.width, cellWidth: ul.closest("td").getBoundingClientRect().width,
               visible: getComputedStyle(ul).visibility === "visible" && r.height > 0 };
    });
  };
  facts.firstList = await openList("#requirements td.cell:not(.end):has(details)");
  facts.lastList = await openList("#requirements td.cell.end:has(details)");
  await page.keyboard.press("Escape");
  const rows = page.locator("table.requirements tbody tr");
  await rows.nth(Math.floor((await rows.count()) * 0.6)).scrollIntoViewIfNeeded();
  facts.headerTop = await page.locator("table.requirements thead th.impl").first().evaluate((th) => th.getBoundingClientRect().top);
  facts.tableTop = await page.locator("table.requirements").evaluate((t) => t.getBoundingClientRect().top);
  await page.screenshot({ path: shotPath });
  console.log(JSON.stringify({ facts, problems }));
} finally {
  await browser.close();
}
"""


def _tools() -> tuple[str, str, Path]:
    node = shutil.which("node")
    package = NODE_DIR / "package.json"
    if node is None or not (NODE_DIR / "node_modules" / "playwright-core").is_dir():
        pytest.skip("node or playwright-core missing: run `python -m zarr_jpeg_conformance.harnesses install`")
    try:
        chromium = CHROMIUM.executable()
    except Unavailable as exc:
        pytest.skip(str(exc))
    return node, chromium, package


def _wide_matrix() -> model.Matrix:
    impls = [model.Implementation(name=n, spec=n, roles=("decode", "encode"), kind="codec", language="Python") for n in BUILTINS]
    impls += [model.Implementation(name=n, spec=f"exec:{n}", roles=("decode",) if "js" in n or "browser" in n else ("decode", "encode"),
                                   versions={"parse": "harness shim" if n.startswith(("node", "browser")) else n}, kind="library",
                                   language="JavaScript (Node.js)") for n in LIBRARIES]
    impls += [model.Implementation(name=n, spec=f"exec:{n}", roles=("decode", "encode"), kind="codec", language="Rust") for n in CODECS]
    results = []
    for k, impl in enumerate(impls):
        for rid in ("JPEG-DEC-01", "JPEG-ECS-12", "JPEG-DIM-03", "JPEG-X-07", "JPEG-SUB-08"):
            for n in range(3):
                bad = impl.kind == "library" and (k + n) % 3 == 0
                outcome = "fail" if bad else "pass"
                message = f'fail: [{rid} MUST] "..."\n    {LONG}' if bad else ""
                results.append(model.CaseResult(impl.name, f"stream.malformed.{rid.lower()}-{n}", outcome, "MUST", (rid,), message, {},
                                                test="test_decode_streams.py::test_malformed[x]"))
        results.append(model.CaseResult(impl.name, "config.quality.zero", "pass", "MUST", ("JPEG-Q-01",), "", {},
                                        test="test_parse.py::test_parse[x]"))
    results.append(model.CaseResult(model.NO_IMPL, "schema.corpus_is_not_empty", "pass", "MUST", (), "", {}, test="test_schema.py::t"))
    return model.build(results, implementations=impls, environment={"generated": "2026-11-30 00:00 UTC"})


def test_the_page_reads_well_in_chromium(tmp_path: Path) -> None:
    node, chromium, package = _tools()
    page = tmp_path / "matrix.html"
    matrix = _wide_matrix()
    page.write_text(render_html.render(matrix), encoding="utf-8")
    script = tmp_path / "check.mjs"
    script.write_text(SCRIPT, encoding="utf-8")
    shot = tmp_path / "matrix.png"
    done = subprocess.run([node, str(script), str(package), chromium, str(page), str(shot)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    said: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    facts = said["facts"]
    assert said["problems"] == []
    assert facts["sections"] == ["summary", "roots", "parsing", "protection", "requirements", "cross", "rate-distortion", "throughput",
                                 "spec-notes", "spec-review", "corpus", "environment"]
    assert facts["overflow"] <= 0, "the page scrolls sideways in a 1400-pixel window"
    assert facts["wide"] == [], f"tables wider than the page: {facts['wide']}"
    assert facts["groups"] == ["This project's spec-aware codec, over one library each (the built-ins)", "Codecs of Zarr implementations",
                               "Libraries, as a codec author would call them"]
    assert facts["rotated"] == "vertical-rl" and facts["parsers"] == len({i.parser for i in matrix.implementations})
    for name in ("firstList", "lastList"):
        box = facts[name]
        # An open cell shows its cases in a box wider than the narrow column, all of it inside the window.
        assert box["visible"] and box["width"] > 3 * box["cellWidth"] and box["left"] >= 0 and box["right"] <= 1400, (name, box)
    # Rows scrolled under the top of the window: the matrix's header stays in view.
    assert facts["tableTop"] < 0 and 0 <= facts["headerTop"] < 60, facts
    assert shot.stat().st_size > 10_000
