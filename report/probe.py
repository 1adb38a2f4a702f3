"""Load one implementation in a throwaway process and print what the report needs to know about it.

``python -m zarr_jpeg_conformance.report.probe SPEC`` prints one JSON object:
``{"spec", "available": true, "name", "roles", "versions", "kind", "language"}`` or ``{"spec", "available":
false, "reason"}``. Loading happens here, not in the report's process, so a backend that
crashes on import or leaks native state cannot take the report down.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from ..adapters import AdapterLoadError, load_adapter
from ..adapters.labels import kind_of, language_of
from ..adapters.process import DEFAULT_MEMORY_LIMIT
from ..harnesses import spec_memory_limit


def probe(spec: str) -> dict[str, Any]:
    """What load_adapter(spec) gives: name, roles, versions, kind and language (adapters.labels),
    or the reason it fails."""
    try:
        adapter = load_adapter(spec, memory_limit=spec_memory_limit(spec, DEFAULT_MEMORY_LIMIT))
    except AdapterLoadError as exc:
        return {"spec": spec, "available": False, "reason": str(exc)}
    try:
        versions = {str(k): str(v) for k, v in adapter.versions().items()}
    except Exception as exc:  # noqa: BLE001 - a broken versions() is shown, not fatal
        versions = {"versions()": f"raised {type(exc).__name__}: {exc}"}
    return {"spec": spec, "available": True, "name": adapter.name, "roles": sorted(adapter.roles), "versions": versions,
            "kind": kind_of(adapter), "language": language_of(adapter)}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m zarr_jpeg_conformance.report.probe SPEC", file=sys.stderr)
        return 2
    print(json.dumps(probe(args[0])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
