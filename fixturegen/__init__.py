"""The stream corpus generator behind ``generate_fixtures.py``: case tables and the commands that use them.

Case tables (one row a case): :mod:`.reference`, :mod:`.foreign`, :mod:`.malformed`,
joined by :mod:`.cases`; the row types and the Recipe in :mod:`.recipe`; how streams are
written in :mod:`.encoders` and :mod:`.edits`. Commands: :func:`.make.generate` (write),
:func:`.check.check`, :func:`.manifest.update_manifest`, :func:`.measure.measure`.
"""

from __future__ import annotations

from .check import check
from .make import generate
from .manifest import update_manifest, versions
from .measure import measure
from .recipe import CorpusError

__all__ = ["CorpusError", "check", "generate", "measure", "update_manifest", "versions"]
