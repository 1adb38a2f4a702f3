"""Parse: every configuration case of fixtures/configs is accepted or rejected as the spec says."""

from __future__ import annotations

import pytest

from zarr_jpeg_conformance.corpus.cases import config_cases
from zarr_jpeg_conformance.judging.checks import case_params, judge_error, raised
from zarr_jpeg_conformance.judging.verdict import Outcome, attempt


@pytest.mark.parametrize("case", case_params(config_cases()))
def test_parse(impl, case, judge) -> None:
    """The implementation accepts valid configurations and rejects invalid ones."""
    got = attempt(impl.parse, case.codec)
    judge.metrics["verdict"] = "accepted" if got.ok else "rejected" if got.rejection else "error"
    if got.error is not None:
        judge_error(judge, "parse", got)
    where = f"case {case.id} ({case.description}), codec {case.codec!r}"
    if case.valid and got.rejection is not None:
        if case.level == "MAY":
            judge.finish(Outcome.UNSUPPORTED, f"optional configuration refused ({case.requirements[0]}): {raised(got)}")
        judge.require(False, case.requirements[0], f"{where}: valid, but parse refused it: {raised(got)}", level=case.level)
    if not case.valid and got.ok:
        judge.require(False, case.requirements[0], f"{where}: invalid, but parse accepted it", level=case.level)
