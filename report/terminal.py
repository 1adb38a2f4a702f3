"""Text for a terminal: what an implementation, a harness or a results file says is shown, never obeyed.

Implementation names, versions, reasons and messages come from code and files the user did not write; an escape
sequence among them (ESC [ 2 J, an OSC title, a bidirectional override) would clear the screen, rewrite the printed
verdict or reorder it. Every control character and every other character that prints nothing is shown as its
escape (``\\x1b``, ``\\u202e``), newlines and tabs included: one log line stays one line.
"""

from __future__ import annotations

__all__ = ["printable"]


_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` with every character that is not printable (str.isprintable; a space is) escaped."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)
