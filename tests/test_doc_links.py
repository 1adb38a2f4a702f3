"""Every relative link of the README and of docs/*.md leads somewhere: to a file or folder of the
repository, and, with ``#anchor``, to a heading of the page it names, by GitHub's rules for heading
anchors. Pages move and headings are renamed; a reader following a link should never land nowhere.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: A Markdown link or image, ``[text](target)`` or ``![alt](target "title")``, not inside code.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks and inline code, where links and headings live."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: its rendered text in lower case, everything but letters, digits,
    spaces, hyphens and underscores dropped, each space a hyphen (github-slugger)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"<[^>]+>", "", text).lower()
    return "".join(c for c in text if c.isalnum() or c in " -_").replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors of a Markdown page: one per heading, repeats numbered ``-1``, ``-2`` as GitHub does."""
    text = re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", text, re.M):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return frozenset(found)


def _links(page: Path) -> list[str]:
    return [m.group(1) for m in LINK.finditer(_prose(page.read_text(encoding="utf-8")))]


def test_the_slug_follows_github() -> None:
    assert slug("Add the suite to your codec's CI") == "add-the-suite-to-your-codecs-ci"
    assert slug("Stores: writer × reader") == "stores-writer--reader"
    assert slug("Migrating from `imagecodecs_jpeg`") == "migrating-from-imagecodecs_jpeg"
    assert slug("Optional features: the same behaviour, the same verdict") == "optional-features-the-same-behaviour-the-same-verdict"
    assert slug("Rust: `Codec`") == "rust-codec"


def test_the_checker_sees_links_and_skips_code() -> None:
    text = "A [page](docs/a.md#x) and ![img](b.png \"t\").\n```sh\n[not](a link)\n```\nand `[nor](this)`.\n"
    assert [m.group(1) for m in LINK.finditer(_prose(text))] == ["docs/a.md#x", "b.png"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    links = _links(page)
    assert links or page.name == "protocol.md", f"{page.name} links nowhere: is the link pattern still right?"
    broken = []
    for target in links:
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...: outside the repository
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.is_relative_to(ROOT) or not resolved.exists():
            broken.append(f"{target}: no such file or folder in the repository")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: {resolved.name} has no heading with the anchor #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}:\n  " + "\n  ".join(broken)
