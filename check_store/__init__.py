"""check-store: is this Zarr store's ``jpeg`` data conformant, every chunk of it?

``python -m zarr_jpeg_conformance.check_store URL`` (or ``zarr-jpeg-check-store URL``) checks a
Zarr v3 array, or every array of a hierarchy, that uses the ``jpeg`` codec: its metadata
against the codec's parse rules, and every stored chunk against what the spec fixes for each
stream, from the chunk's header (or, with ``--decode``, by decoding it). Missing chunks are
fill, not errors; sharded arrays are read through their index. It runs on local threads, or
on a dask cluster with ``--scheduler ADDRESS``. Every read has a cap (:class:`Limits`), every
request of a remote store a deadline.

The functions below are the whole API; each task receives a URL and keys, never bytes.
"""

from __future__ import annotations

from .chunks import Options
from .limits import Limits
from .metadata import ArrayPlan, analyse, discover
from .records import Finding
from .run import Result, check
from .stores import StoreError, StoreSpec
from .tasks import check_batch

__all__ = ["ArrayPlan", "Finding", "Limits", "Options", "Result", "StoreError", "StoreSpec", "analyse", "check", "check_batch",
           "discover"]
