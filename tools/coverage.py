"""How well each requirement is tested: corpus cases that cite it, and what a matrix run reached.

``python -m zarr_jpeg_conformance.tools.coverage [REPORT_DIR]`` prints, for every requirement
of ``fixtures/requirements.json``: the corpus cases that cite it (configurations, chunks,
streams, stores, builds), and, given a report folder (``report --out DIR``), the distinct
cases whose results cite it (a check that held cites its requirement too) and the
implementations it reached, meaning a result citing it that is not ``unsupported``. Then
the requirements counted by those numbers, and the ones nothing tests.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from itertools import pairwise
from pathlib import Path

from ..corpus import cases as case_files
from ..corpus.registry import requirements
from ..corpus.stores import all_cases as store_cases
from ..corpus.streams import stream_cases


def corpus_citations() -> Counter[str]:
    """Corpus cases per requirement ID."""
    found: list[Iterable[str]] = []
    found += [c.requirements for c in case_files.config_cases()]
    found += [c.requirements for c in case_files.chunk_cases()]
    found += [c.requirements for c in stream_cases()]
    found += [c.requirements for c in store_cases()]
    builds = getattr(case_files, "build_cases", None)
    if builds is not None:
        found += [c.requirements for c in builds()]
    return Counter(r for reqs in found for r in set(reqs))


def run_citations(report: Path) -> tuple[dict[str, set[str]], dict[str, set[str]], set[str]]:
    """(cases per requirement, implementations reached per requirement, every implementation) of a report folder."""
    cases: dict[str, set[str]] = defaultdict(set)
    reached: dict[str, set[str]] = defaultdict(set)
    impls: set[str] = set()
    for path in sorted((report / "results").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            impl = record["implementation"]
            if impl != "-":
                impls.add(impl)
            for req in record["requirements"]:
                cases[req].add(record["case"])
                if impl != "-" and record["outcome"] != "unsupported":
                    reached[req].add(impl)
    return cases, reached, impls


def _bucket(n: int, edges: Sequence[int]) -> str:
    for low, high in pairwise(edges):
        if low <= n < high:
            return f"{low}" if high == low + 1 else f"{low}-{high - 1}"
    return f"{edges[-1]}+"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.tools.coverage", description=__doc__.splitlines()[0])
    parser.add_argument("report", nargs="?", type=Path, help="a report folder (report --out DIR) to count what a run reached")
    args = parser.parse_args(argv)
    registry = requirements()
    corpus = corpus_citations()
    cases: dict[str, set[str]] = {}
    reached: dict[str, set[str]] = {}
    impls: set[str] = set()
    if args.report:
        if not (args.report / "results").is_dir():
            parser.error(f"{args.report} has no results/ folder: give the folder a report run wrote (--out)")
        cases, reached, impls = run_citations(args.report)
    header = f"{'requirement':13} {'level':10} {'kind':14} {'corpus':>6}"
    if args.report:
        header += f" {'cases':>6} {'impls':>9}"
    print(header)
    for rid, req in registry.items():
        line = f"{rid:13} {req.level:10} {req.kind:14} {corpus.get(rid, 0):6d}"
        if args.report:
            line += f" {len(cases.get(rid, ())):6d} {len(reached.get(rid, ())):4d}/{len(impls):<4d}"
        print(line)
    print()
    edges = [0, 1, 3, 10, 30]

    def counted(numbers: Counter[str]) -> str:
        order = sorted(numbers, key=lambda k: int(k.split("-")[0].rstrip("+")))
        return ", ".join(f"{k}: {numbers[k]}" for k in order)

    print("corpus cases per requirement:", counted(Counter(_bucket(corpus.get(r, 0), edges) for r in registry)))
    if args.report:
        print("cases of the run per requirement:", counted(Counter(_bucket(len(cases.get(r, ())), edges) for r in registry)))

        def share(rid: str) -> str:
            n = len(reached.get(rid, ()))
            return "none" if not n else "all" if n == len(impls) else "half or more" if 2 * n >= len(impls) else "fewer than half"

        shares = Counter(share(r) for r in registry)
        kinds = ("all", "half or more", "fewer than half", "none")
        print(f"implementations reached (of {len(impls)}):", ", ".join(f"{k}: {shares[k]}" for k in kinds))
        print("cited by no result:", ", ".join(r for r in registry if not cases.get(r)) or "none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
