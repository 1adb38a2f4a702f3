"""What an adapter says it puts under test: its roles, and for reports its kind and its language."""

from __future__ import annotations

#: What an adapter can be asked to do (its ``roles``): write streams, read them, and write
#: the codec object itself (``build``, optional: for implementations that offer a builder).
ROLES = frozenset({"encode", "decode", "build"})

#: What an adapter puts under test, for reports (its optional ``kind`` attribute):
KINDS = {
    "codec": "an implementation of the spec's jpeg codec",
    "library": "a JPEG library, called the way a codec author in that language would call it",
}


def kind_of(adapter: object) -> str:
    """The adapter's ``kind`` (a key of KINDS), "codec" when it does not say."""
    kind = getattr(adapter, "kind", "codec")
    return kind if kind in KINDS else "codec"


def language_of(adapter: object) -> str:
    """The adapter's ``language``, "Python" when it does not say (it is a Python object)."""
    return str(getattr(adapter, "language", None) or "Python")


__all__ = ["KINDS", "ROLES", "kind_of", "language_of"]
