"""The run as JSON (``report.json``) and as the text summary printed at the end."""

from __future__ import annotations

import platform
from collections import Counter
from contextlib import suppress
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from .. import __version__
from ..core.config import REQUIRED_SCHEMES, JpegConfig
from ..corpus.registry import requirements
from .records import MAX_TEXT, cap, printable
from .run import ArrayResult, Result

__all__ = ["FORMAT_VERSION", "describe_config", "lines", "to_json"]

#: Bumped when a consumer of report.json must change.
FORMAT_VERSION = 1


def describe_config(config: JpegConfig | None) -> str:
    """``ycbcr 4:2:0 q90``, ``grayscale q85``, ``rgb q90``."""
    if config is None:
        return "invalid configuration"
    if config.encoded_color_space == "ycbcr":
        scheme = next((k for k, v in REQUIRED_SCHEMES.items() if v == config.luma_factors),
                      f"factors {[list(f) for f in config.subsampling]}")
        space = f"ycbcr {scheme}" + (" (YCbCr input)" if config.decoded_color_space == "ycbcr" else "")
    else:
        space = config.encoded_color_space
    return f"{space} q{config.quality}"


def _versions() -> dict[str, str]:
    out = {"zarr-jpeg-conformance": __version__, "python": platform.python_version()}
    for name in ("zarr", "dask", "distributed", "fsspec", "numpy"):
        with suppress(PackageNotFoundError):
            out[name] = version(name)
    return out


def _array(a: ArrayResult) -> dict[str, Any]:
    plan = a.plan
    counts = Counter(a.counts)
    stored = sum(counts[k] for k in ("pass", "warn", "fail", "error"))
    return {
        "path": "/" + a.node.path,
        "outcome": a.outcome,
        "metadata": plan.about if plan else {"codecs": a.node.metadata.get("codecs")},
        "jpeg": describe_config(plan.config) if plan else None,
        "image": list(plan.image) if plan and plan.image else None,
        "sharded": bool(plan and plan.shard),
        "grid": list(plan.grid) if plan else None,
        "chunks": a.total,
        "checked": a.positions,
        "stored": stored,
        "counts": {k: counts[k] for k in ("pass", "warn", "fail", "error", "fill")},
        "not_visited": a.not_visited,
        "requirements": dict(sorted(a.requirements.items())),
        "metadata_findings": a.metadata,
        "map": a.map.to_json() if a.map else None,
    }


def to_json(result: Result, *, strict: bool = False) -> dict[str, Any]:
    totals = result.totals()
    reqs = sorted({r for a in result.arrays for r in a.requirements})
    return {
        "format_version": FORMAT_VERSION,
        "tool": "zarr-jpeg-conformance check-store",
        "store": result.store,
        "kind": result.kind,
        "mode": "decode" if result.options.decode else "header",
        "decoder": result.options.decoder if result.options.decode else None,
        "reference": result.options.reference,
        "engine": result.engine,
        "started": result.started,
        "seconds": round(result.seconds, 3),
        "conforms": result.conforms(strict),
        "strict": strict,
        "interrupted": result.interrupted,
        "interruption": result.interruption or None,
        "totals": {k: totals[k] for k in ("pass", "warn", "fail", "error", "fill")},
        "arrays": [_array(a) for a in result.arrays],
        "skipped_arrays": result.skipped,
        "requirements": {r: {"level": requirements()[r].level, "text": requirements()[r].text} for r in reqs if r in requirements()},
        "records": result.records,
        "records_dropped": result.dropped,
        "versions": _versions(),
    }


def _n(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def lines(result: Result, *, strict: bool = False, examples: int = 3) -> list[str]:
    """The summary printed on stdout at the end of a run."""
    totals = result.totals()
    stored = sum(totals[k] for k in ("pass", "warn", "fail", "error"))
    mode = f"decoded with {result.options.decoder}" if result.options.decode else "header only"
    if result.options.reference:
        mode += f", compared with {result.options.reference}"
    rate = stored / result.seconds if result.seconds else 0.0
    out = [f"check-store {__version__}: {result.store} ({result.kind}), {mode}, on {result.engine}"]
    for a in result.arrays:
        plan = a.plan
        what = (f"{tuple(plan.shape)} chunks {tuple(plan.grid_chunk)}" + (f" (shards of {tuple(plan.shard.inner)})" if plan.shard else "")
                + f", jpeg {describe_config(plan.config)}") if plan else "not checked"
        c = a.counts
        tally = ", ".join(f"{c[k]:,} {k}" for k in ("pass", "warn", "fail", "error", "fill") if c[k]) or "no chunks"
        if a.not_visited:
            tally += f", {a.not_visited:,} not visited"
        out.append(f"  /{cap(a.node.path, 200):<20} {a.outcome.upper():<5} {what}: {tally}")
        if a.metadata:
            for f in a.metadata["findings"]:
                out.append(f"      zarr.json {f['outcome']} [{f['requirement'] or 'check-store'}] {f['observed']}")
    if result.skipped:
        out.append(f"  ({len(result.skipped)} array(s) without jpeg not checked: {', '.join(cap(p, 200) for p in result.skipped[:5])})")
    out.append(f"{_n(stored, 'chunk')} checked in {result.seconds:.1f} s ({rate:,.0f} chunks/s): {totals['pass']:,} conform, "
               f"{totals['warn']:,} warn, {totals['fail']:,} fail, {totals['error']:,} error; {totals['fill']:,} missing (fill value)")
    by_req: dict[str, list[dict[str, Any]]] = {}
    for rec in result.records:
        for f in rec["findings"]:
            by_req.setdefault(f["requirement"] or "check-store", []).append({**f, "case": rec["case"]})
    for rid, found in sorted(by_req.items(), key=lambda kv: (kv[1][0]["outcome"] != "fail", kv[0])):
        count = sum(a.requirements[rid] for a in result.arrays) or len(found)
        out.append(f"  {rid:<12} {found[0]['outcome']:<5} {_n(count, 'chunk')}")
        for f in found[:examples]:
            out.append(f"      {cap(f['case'], 200)}: {f['observed']}")
    if result.interrupted:
        planned = sum(a.total for a in result.arrays)
        done = sum(a.positions for a in result.arrays)
        out.append(f"INTERRUPTED ({result.interruption or 'Ctrl-C'}) after {done:,} of {planned:,} chunk positions: the findings "
                   "above are those of the chunks checked before; the rest were not checked")
    else:
        verdict = "CONFORMS" if result.conforms(strict) else "DOES NOT CONFORM"
        out.append(f"{verdict}" + (" (warnings count: --strict)" if strict else ""))
    # Names and values are the store's: each line is capped, and shown as text, never as the terminal's commands.
    return [printable(cap(line, MAX_TEXT + 400)) for line in out]
