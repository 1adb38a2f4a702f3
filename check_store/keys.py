"""A key is data: what a store names is read the way any server may read it before it is confined to the store.

A key (a chunk key, or the path of an array in a hierarchy's metadata) is joined to a folder or
a URL. A web server percent-decodes a URL path, some decode it twice, and some fold Unicode
(a full-width full stop is a dot to NFKC): ``%2e%2e/secret`` is ``../secret`` to them.
:func:`leaves_store` therefore judges every reading of a key (as written, percent-decoded
until it no longer changes, NFKC-folded), and refuses the key when any of them would leave the
store. :func:`quoted` is how a key becomes part of a URL: each segment percent-encoded whole,
so that ``#``, ``?``, ``%`` and ``/`` inside a name stay in that name, and a server reads the
key that was meant, never another.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import quote, unquote

__all__ = ["MAX_KEY", "leaves_store", "quoted", "suspect"]

#: Longest key (or node path) read, in characters: object stores (S3, GCS, Azure) hold keys of at most
#: 1024 bytes, so a longer name in a hierarchy's metadata names nothing any store can hold.
MAX_KEY = 1024
#: Rounds of percent-decoding looked at: a key encoded more often than this is refused, not decoded on.
_DECODINGS = 8


def suspect(key: str) -> bool:
    """Whether a key could leave the store: a cheap look at every key read (:func:`leaves_store` decides).

    Plain chunk keys (``c/0/12``) are ASCII without ``%``, dots at a segment's start, empty
    segments or a scheme, and pass at the cost of a few ``in`` tests.
    """
    return (key[:1] in ("/", ".", "") or "/." in key or "//" in key or "\\" in key or "\x00" in key or ":" in key
            or "%" in key or not key.isascii() or len(key) > MAX_KEY)


def leaves_store(path: str) -> str | None:
    """Why a key or node path would leave the store (or name no place in it); None when it stays inside."""
    shown = repr(path[:200]) + ("..." if len(path) > 200 else "")
    if len(path) > MAX_KEY:
        return f"{shown} is {len(path):,} characters long, more than any store's key ({MAX_KEY:,})"
    readings, problem = _readings(path)
    if problem is not None:
        return f"{shown} {problem}"
    for reading, how in readings:
        why = _leaves(reading)
        if why is not None:
            return f"{shown} {why}" if not how else f"{shown} {how} {reading[:200]!r}, which {why}"
    return None


def _readings(path: str) -> tuple[list[tuple[str, str]], str | None]:
    """The key as written and as servers may read it (reading, how it was made: '' for the key as written), or
    why it cannot be read at all."""
    out = [(path, "")]
    current = path
    for n in range(1, _DECODINGS + 2):
        try:
            decoded = unquote(current, errors="strict")
        except UnicodeDecodeError:
            # %c0%ae and the like: an overlong or stray byte, which some servers read as '.' or '/'.
            return out, "percent-encodes bytes that are not UTF-8"
        if decoded == current:
            break
        if n > _DECODINGS:
            return out, f"is still percent-encoded after {_DECODINGS} decodings"
        out.append((decoded, "percent-decoded" + (f" {n} times" if n > 1 else "") + " reads"))
        current = decoded
    folded = [(unicodedata.normalize("NFKC", text), "NFKC-folded reads") for text, _ in out]
    return out + [f for f, (text, _) in zip(folded, out, strict=True) if f[0] != text], None


def _leaves(path: str) -> str | None:
    if path.startswith("/") or "\\" in path or "\x00" in path:
        return "is an absolute path, or holds a backslash or NUL"
    parts = path.split("/")
    bad = next((p for p in parts if p in ("", ".", "..")), None)
    if bad is not None:
        return f"has a {bad!r} segment" if bad else "has an empty segment"
    if ":" in parts[0]:
        return "starts with a scheme or a drive"
    return None


def quoted(key: str) -> str:
    """``key`` as the path of a URL: each segment percent-encoded whole (``bad#1`` -> ``bad%231``)."""
    return "/".join(quote(segment, safe="") for segment in key.split("/"))
