"""The configuration cases once per parser, not once per row that shares it.

Rows that parse with the same code (this project's ``core.config``, the Node harnesses'
shim, the Rust harnesses' common crate ...) get the same verdicts on the parse suite's
cases, except where a row refuses an optional feature of its own at parse time (rgb,
sampling factors its library cannot write). So each parser's results are shown once: a
case on which every row of the parser agrees counts once, and a case on which they differ
is listed with what each row got.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .rows import writer_setting


@dataclass(frozen=True)
class ParseCase:
    """One configuration case under one parser."""

    case: str
    #: The outcome every row of the parser got, or "varies".
    outcome: str
    #: Row -> its result, in row order.
    rows: Mapping[str, object]
    writer_setting: bool

    @property
    def varies(self) -> bool:
        return self.outcome == VARIES


#: The outcome of a case whose rows disagree (the cell lists them).
VARIES = "varies"


@dataclass
class ParserGroup:
    """A parser and the rows whose configuration cases it decides."""

    parser: str
    rows: list[str]
    cases: dict[str, ParseCase] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for c in self.cases.values():
            found[c.outcome] = found.get(c.outcome, 0) + 1
        return found


def parser_groups(parser_of: Mapping[str, str], cases: Mapping[str, Mapping[str, object]]) -> list[ParserGroup]:
    """Group rows by parser (first appearance order) and fold their parse cases.

    ``parser_of``: row -> parser, in row order; ``cases``: row -> case ID -> result (any
    object with ``outcome``).
    """
    groups: dict[str, ParserGroup] = {}
    for row, parser in parser_of.items():
        groups.setdefault(parser, ParserGroup(parser, [])).rows.append(row)
    for group in groups.values():
        ids: dict[str, None] = {}
        for row in group.rows:
            ids.update((c, None) for c, r in cases.get(row, {}).items() if getattr(r, "parse", False))
        for case in ids:
            got = {row: cases[row][case] for row in group.rows if case in cases.get(row, {})}
            outcomes = {getattr(r, "outcome", "?") for r in got.values()}
            outcome = outcomes.pop() if len(outcomes) == 1 else VARIES
            group.cases[case] = ParseCase(case, outcome, got, writer_setting(case))
    return [g for g in groups.values() if g.cases]


def representative(case: ParseCase) -> object:
    """The result shown for a case all rows agree on: the first row's."""
    return next(iter(case.rows.values()))


def differing(groups: Sequence[ParserGroup]) -> list[tuple[ParserGroup, ParseCase]]:
    """Every case on which the rows of one parser disagree."""
    return [(g, c) for g in groups for c in g.cases.values() if c.varies]


__all__ = ["VARIES", "ParseCase", "ParserGroup", "differing", "parser_groups", "representative"]
