"""Small helpers shared by the suites: case parameters, and calls to an implementation judged as they return."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import pytest

from ..core.config import JpegConfig, parse_codec
from .verdict import Outcome, attempt

T = TypeVar("T")
_MARK = {"MUST": pytest.mark.must, "SHOULD": pytest.mark.should, "MAY": pytest.mark.may}


def level_mark(level: str) -> pytest.MarkDecorator:
    """The must / should / may marker of a requirement level."""
    return _MARK[level]


def case_params(cases: Iterable[Any]) -> list[Any]:
    """pytest params with the case ID as test ID and the case's level as marker."""
    return [pytest.param(c, id=c.id, marks=level_mark(c.level)) for c in cases]


def reference_config(codec_obj: Mapping[str, Any]) -> JpegConfig:
    """The spec's reading of a (valid) codec object, from the shared core."""
    return parse_codec(codec_obj)


def parsed_or_verdict(judge: Any, impl: Any, codec_obj: Mapping[str, Any]) -> object:
    """Parse a valid configuration with the implementation, judging a rejection.

    Rejecting an optional feature (rgb, YCbCr passthrough, other factors) is
    'unsupported'; rejecting a configuration every implementation must support fails.
    """
    optional = reference_config(codec_obj).optional_feature
    got = attempt(impl.parse, codec_obj)
    if got.error is not None:
        judge.finish(Outcome.ERROR, f"parse raised an error on a valid configuration: {got.describe()}\n{got.trace()}")
    if got.rejection is not None:
        if optional:
            judge.cite(optional)
            judge.finish(Outcome.UNSUPPORTED, f"optional feature rejected when parsing ({optional}): {got.describe()}")
        judge.require(False, "JPEG-SUB-08" if "subsampling" in codec_obj["configuration"] else "JPEG-ECS-08",
                      f"a configuration every implementation must support was {got.describe()}")
    return got.value


def succeed(judge: Any, what: str, func: Callable[..., T], *args: Any) -> T:
    """Call an adapter method that must succeed here: a rejection fails, any other exception errs."""
    got = attempt(func, *args)
    if not got.ok:
        judge.finish(Outcome.ERROR if got.error else Outcome.FAIL, f"{what} {got.describe()}\n{got.trace()}")
    return got.result
