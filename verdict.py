"""Outcomes of conformance checks, and messages that cite the spec.

A check's outcome follows the level of the requirement it rests on: a broken MUST
fails, a broken SHOULD warns, an optional feature cleanly rejected is "unsupported".
Every message names the requirement, quotes the spec's words and says what was seen.
"""

from __future__ import annotations

import enum
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .corpus import requirements

T = TypeVar("T")
#: Cap on captured tracebacks: one implementation's giant trace must not swamp a report.
MAX_TRACE = 4000


class Outcome(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    UNSUPPORTED = "unsupported"
    ERROR = "error"
    CRASH = "crash"
    TIMEOUT = "timeout"


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

    def describe(self) -> str:
        exc = self.rejection or self.error
        if exc is None:
            return "accepted"
        kind = "rejected" if self.rejection is not None else "raised an error"
        return f"{kind}: {type(exc).__name__}: {exc}"

    def trace(self) -> str:
        if self.error is None:
            return ""
        text = "".join(traceback.format_exception(self.error))
        return text if len(text) <= MAX_TRACE else text[: MAX_TRACE // 2] + "\n...\n" + text[-MAX_TRACE // 2 :]


def attempt(func: Callable[..., T], *args: Any) -> Attempt[T]:
    """Call an adapter method; ValueError/TypeError are rejections, anything else an error."""
    try:
        return Attempt(value=func(*args))
    except (ValueError, TypeError) as exc:
        return Attempt(rejection=exc)
    except Exception as exc:  # noqa: BLE001 - every other exception is the implementation's error
        return Attempt(error=exc)


def severity(level: str) -> str:
    return "MUST" if level.startswith("MUST") else "SHOULD" if level.startswith("SHOULD") else "MAY"


def broken(level: str) -> Outcome:
    """The outcome of a check that did not hold, for a requirement of this level."""
    sev = severity(level)
    return Outcome.FAIL if sev == "MUST" else Outcome.WARN if sev == "SHOULD" else Outcome.UNSUPPORTED
