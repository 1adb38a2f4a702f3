"""Outcomes of conformance checks, and messages that cite the spec.

A check's outcome follows the level of the requirement it rests on: a broken MUST
fails, a broken SHOULD warns, an optional feature cleanly rejected is "unsupported".
Every message names the requirement, quotes the spec's words and says what was seen.
"""

from __future__ import annotations

import enum
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, NoReturn, TypeVar, cast

import pytest

from ..corpus.registry import requirements, severity

T = TypeVar("T")
#: Caps on text that reaches the results file and the terminal, in characters: an
#: implementation's exception or rejection text, a captured traceback, one judged message,
#: and a case's whole message. One implementation's 50 MB message must not swamp a report.
MAX_TEXT = 2000
MAX_TRACE = 4000
MAX_MESSAGE = 8000
MAX_RECORD = 16000


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """``text`` cut to about ``limit`` characters, keeping its start and its end and saying how much was cut.

    Both ends matter: the start says what went wrong, the end of a traceback or of a
    library's message says where.
    """
    if len(text) <= limit:
        return text
    keep = max(limit // 2, 1)
    return f"{text[:keep]}\n[... {len(text) - 2 * keep:,} characters cut ...]\n{text[-keep:]}"


class Outcome(str, enum.Enum):  # noqa: UP042 - StrEnum would change str() and format() of members
    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    UNSUPPORTED = "unsupported"
    #: The case could not be judged: something it stands on failed, and that root case holds the finding.
    BLOCKED = "blocked"
    ERROR = "error"
    CRASH = "crash"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class Cause:
    """What a codec does wrong, as its author would say it: one defect, however many cases and rules show it.

    ``stage`` (parse, encode, decode) and ``key`` (a short, stable name of the fault) are the defect's signature:
    failing cases with the same signature are one finding (``report.roots``). ``requirement`` is the rule the defect
    breaks, the one the finding is cited under; ``words`` name it, without the numbers of any one case (those stay in
    the case's message), so that every case of the defect says the same.
    """

    stage: str
    key: str
    requirement: str
    words: str

    @property
    def id(self) -> str:
        return f"{self.stage}.{self.key}"

    def record(self) -> dict[str, str]:
        """The results line's ``cause`` member (schema/results.schema.json)."""
        return {"id": self.id, "requirement": self.requirement, "words": clip(self.words, MAX_CAUSE)}


#: Cap on a cause's words in a results line.
MAX_CAUSE = 600


class Diagnosis(NamedTuple):
    """What a probe or a comparison found a failure to be about: the rule to cite, why in words, and the defect."""

    requirement: str
    why: str
    cause: Cause | None = None


class ConformanceWarning(UserWarning):
    """A SHOULD of the spec is not met: reported, never a failure."""


def cite(requirement: str) -> str:
    """``[JPEG-ECS-06 MUST] "<the spec's words>"`` for a requirement ID."""
    req = requirements().get(requirement)
    if req is None:
        return f"[{requirement}]"
    return f'[{req.id} {req.level}] "{req.text}"'


@dataclass(frozen=True)
class Attempt(Generic[T]):
    """The result of calling an implementation: a value, a clean rejection, or an error."""

    value: T | None = None
    rejection: BaseException | None = None
    error: BaseException | None = None

    @property
    def ok(self) -> bool:
        return self.rejection is None and self.error is None

    @property
    def result(self) -> T:
        """``value`` typed as the call's result, for reading once ``ok`` has been judged.

        Not a check: a call that was not ok gives None here as in ``value``, and the
        checks that read it report that.
        """
        return cast(T, self.value)

    def describe(self) -> str:
        exc = self.rejection or self.error
        if exc is None:
            return "accepted"
        kind = "rejected" if self.rejection is not None else "raised an error"
        return f"{kind}: {type(exc).__name__}: {clip(str(exc), MAX_TEXT)}"

    def trace(self) -> str:
        if self.error is None:
            return ""
        return clip("".join(traceback.format_exception(self.error)), MAX_TRACE)


def attempt(func: Callable[..., T], *args: Any) -> Attempt[T]:
    """Call an adapter method; ValueError/TypeError are rejections, anything else an error."""
    try:
        return Attempt(value=func(*args))
    except (ValueError, TypeError) as exc:
        return Attempt(rejection=exc)
    except Exception as exc:  # noqa: BLE001 - every other exception is the implementation's error
        return Attempt(error=exc)


def broken(level: str) -> Outcome:
    """The outcome of a check that did not hold, for a requirement of this level."""
    sev = severity(level)
    return Outcome.FAIL if sev == "MUST" else Outcome.WARN if sev == "SHOULD" else Outcome.UNSUPPORTED


#: Worst first: the outcome a test records is the worst of its checks.
ORDER = [Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT, Outcome.FAIL, Outcome.BLOCKED, Outcome.WARN, Outcome.UNSUPPORTED,
         Outcome.PASS]


class Judge:
    """Collects the outcome of one test of one implementation on one case."""

    def __init__(self, implementation: str, case: str, requirements: Sequence[str], level: str,
                 roots: dict[tuple[str, ...], str] | None = None) -> None:
        self.implementation = implementation
        self.case = case
        self.requirements = list(requirements)
        self.level = level
        self.metrics: dict[str, float | int | str] = {}
        self.outcome = Outcome.PASS
        self.messages: list[str] = []
        #: The finding this case shows: the requirement its first broken MUST cites, or for an
        #: error the stage and the exception's type (``parse: RuntimeError``).
        self.finding: str | None = None
        #: The defect the finding is (:class:`Cause`), where a diagnosis named it; None where the cause is unknown.
        self.cause: Cause | None = None
        #: What a blocked case would show once its root is fixed (``judging.roots.latent``): requirement, words, codec.
        self.latent: dict[str, Any] | None = None
        #: Asked for the cause of the first MUST that fails without one (:meth:`explaining`): a diagnosis too costly to
        #: run on every call, run only once something failed.
        self.explain: Callable[[], Cause | None] | None = None
        #: The case whose failure this one stands on (outcome BLOCKED).
        self.blocked_by: str | None = None
        #: Preconditions that failed in earlier cases of this session, by key: the case that became their root.
        self.roots: dict[tuple[str, ...], str] = roots if roots is not None else {}

    def _worse(self, outcome: Outcome) -> None:
        if ORDER.index(outcome) < ORDER.index(self.outcome):
            self.outcome = outcome

    def cite(self, requirement: str) -> None:
        """Add a requirement this test also rests on."""
        if requirement not in self.requirements:
            self.requirements.append(requirement)

    def require(self, ok: bool, requirement: str, observed: str, *, level: str | None = None,
                cause: Cause | None = None) -> None:
        """Judge one check: a broken MUST fails now, a broken SHOULD warns and goes on.

        ``cause``: the defect a diagnosis found behind the broken check; the first failure's names the finding."""
        self.cite(requirement)  # a check that holds is evidence for its requirement too
        if ok:
            return
        req = requirements().get(requirement)
        outcome = broken(level or (req.level if req else "MUST"))
        if outcome is Outcome.FAIL and self.finding is None:
            self.finding = requirement
            if cause is None and self.explain is not None:
                explain, self.explain = self.explain, None
                try:
                    cause = explain()
                except Exception as exc:  # noqa: BLE001 - a diagnosis that fails leaves the cause unnamed, not the verdict
                    self.messages.append(f"note: the cause was not looked for: {type(exc).__name__}: {clip(str(exc), MAX_TEXT)}")
            self.cause = self.cause or cause
        if cause is not None:
            observed = f"{observed} [cause: {cause.words}]" if cause.words not in observed else observed
        self.finish(outcome, f"{cite(requirement)}\n    observed: {observed}")

    @contextmanager
    def explaining(self, explain: Callable[[], Cause | None]) -> Iterator[None]:
        """Within the block, a MUST that fails without a cause asks ``explain`` for one."""
        before, self.explain = self.explain, explain
        try:
            yield
        finally:
            self.explain = before

    def block(self, root: str, why: str) -> NoReturn:
        """End the test as BLOCKED by the case ``root``: what it stands on failed there, so it is no second finding."""
        if root == self.case:
            raise ValueError(f"{self.case} cannot be blocked by itself")
        self.blocked_by = root
        self.outcome = Outcome.BLOCKED
        self.messages.append(f"blocked: by {root}: {clip(why, MAX_TEXT)}")
        pytest.skip(f"blocked by {root}: {self.implementation} / {self.case}: {clip(why, MAX_TEXT)}")

    def finish(self, outcome: Outcome, message: str) -> None:
        """Record an outcome; FAIL/ERROR end the test, UNSUPPORTED skips it, WARN warns."""
        message = clip(message)
        self._worse(outcome)
        self.messages.append(f"{outcome.value}: {message}")
        if outcome in (Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT):
            _fail(f"{self.implementation} / {self.case}: {outcome.value.upper()}\n  {message}")
        if outcome is Outcome.UNSUPPORTED:
            pytest.skip(f"unsupported: {self.implementation} / {self.case}: {message}")
        if outcome is Outcome.WARN:
            warnings.warn(ConformanceWarning(f"{self.implementation} / {self.case}: {message}"), stacklevel=3)

    def ordered_messages(self) -> list[str]:
        """The messages, worst outcome first: a MUST failure found after a SHOULD warning
        leads the record, as it decides the outcome. Equal outcomes keep their order, and
        lines without an outcome (notes) go last."""
        rank = {o.value: i for i, o in enumerate(ORDER)}
        return sorted(self.messages, key=lambda m: rank.get(m.split(":", 1)[0], len(ORDER)))

    def record(self) -> dict[str, Any]:
        return {
            "implementation": self.implementation,
            "case": self.case,
            "requirements": self.requirements,
            "level": self.level,
            "outcome": self.outcome.value,
            "message": clip("\n".join(self.ordered_messages()), MAX_RECORD),
            "metrics": self.metrics,
            **({"finding": self.finding} if self.finding and self.outcome in _FINDINGS else {}),
            **({"cause": self.cause.record()} if self.cause and self.outcome in _FINDINGS else {}),
            **({"blocked_by": self.blocked_by} if self.outcome is Outcome.BLOCKED else {}),
            **({"latent": self.latent} if self.latent and self.outcome is Outcome.BLOCKED else {}),
        }


#: Outcomes whose record names its finding.
_FINDINGS = frozenset({Outcome.FAIL, Outcome.ERROR, Outcome.CRASH, Outcome.TIMEOUT})


def _fail(message: str) -> NoReturn:
    pytest.fail(message, pytrace=False)
