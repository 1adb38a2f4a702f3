"""Wrappers that move where an implementation refuses an optional feature, and nothing else.

The capability model says a clean refusal of an optional feature is 'unsupported'
wherever it happens. These wrappers take any adapter and make it refuse the same
features either when parsing or when encoding (decoding stays the inner adapter's), so
``tests/test_capability.py`` can show that the verdict does not depend on where an
adapter refuses.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

import numpy as np

from zarr_jpeg_conformance.adapters import load_adapter
from zarr_jpeg_conformance.core.config import JpegConfig, parse_codec


def _optional(config: JpegConfig) -> str | None:
    """The writer-side features these wrappers refuse: rgb, passthrough, factors beyond the four schemes."""
    if config.encoded_color_space == "rgb":
        return "rgb"
    if config.decoded_color_space == "ycbcr":
        return "YCbCr passthrough"
    if not config.is_required_scheme:
        return f"sampling factors {[list(f) for f in config.subsampling]}"
    return None


class _Wrapped:
    stage = ""

    def __init__(self, inner: str) -> None:
        self.inner = load_adapter(inner)
        self.name = f"{self.inner.name}-refuses-at-{self.stage}"
        self.roles = self.inner.roles
        self.kind = getattr(self.inner, "kind", "codec")

    def versions(self) -> dict[str, str]:
        return self.inner.versions()

    def close(self) -> None:
        # A harness process behind exec: is stopped with the session.
        getattr(self.inner, "close", lambda: None)()

    def parse(self, codec: Mapping[str, Any]) -> object:
        return self.inner.parse(codec), codec

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        inner, _ = parsed  # type: ignore[misc]
        return self.inner.encode(inner, chunk)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        inner, _ = parsed  # type: ignore[misc]
        return self.inner.decode(inner, data, chunk_shape)


class RefusesAtParse(_Wrapped):
    """Refuses the writer-side optional features when parsing (and so never decodes them)."""

    stage = "parse"

    def parse(self, codec: Mapping[str, Any]) -> object:
        feature = _optional(parse_codec(codec))
        if feature:
            raise ValueError(f"{feature} is not supported")
        return super().parse(codec)


class RefusesAtEncode(_Wrapped):
    """Accepts them when parsing, decodes them, and refuses to write them."""

    stage = "encode"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        _, codec = parsed  # type: ignore[misc]
        feature = _optional(parse_codec(codec))
        if feature:
            raise ValueError(f"writing {feature} is not supported")
        return super().encode(parsed, chunk)


def inner_spec(name: str) -> str:
    """The ``--impl`` of a base: a built-in or library adapter, or a shipped harness (``harness_NAME``) over ``exec:``."""
    if name.startswith("harness_"):
        return f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses {name.removeprefix('harness_').replace('_', '-')}"
    return name.replace("_", "-")


def __getattr__(name: str) -> object:
    """``at_parse__NAME`` / ``at_encode__NAME``: a factory of the wrapper around the base NAME (see inner_spec)."""
    stage, _, inner = name.partition("__")
    kinds = {"at_parse": RefusesAtParse, "at_encode": RefusesAtEncode}
    if stage in kinds and inner:
        return lambda: kinds[stage](inner_spec(inner))
    raise AttributeError(name)
