"""Conformance test suite and fixture corpus for the Zarr v3 ``jpeg`` codec."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("zarr-jpeg-conformance")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
