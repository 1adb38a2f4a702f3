"""Parse: every configuration case of fixtures/configs is accepted or rejected as the spec says.

A rejection of an invalid case counts only where the implementation accepts the case's valid
twin (one place away, ``twin`` in the corpus): otherwise the case is ``blocked`` by the twin,
since the rejection may be for another reason. A valid configuration refused is charged to the
rule the refusal is about where a probe finds it (``judging.roots.parse_diagnosis``).
"""

from __future__ import annotations

import pytest

from zarr_jpeg_conformance.corpus.cases import config_cases, twin_of
from zarr_jpeg_conformance.judging.checks import case_params, judge_error, no_equivalent, raised
from zarr_jpeg_conformance.judging.roots import judge_twin, latent, parse_diagnosis
from zarr_jpeg_conformance.judging.verdict import Outcome, attempt


@pytest.mark.parametrize("case", case_params(config_cases()))
def test_parse(impl, case, judge) -> None:
    """The implementation accepts valid configurations and rejects invalid ones (for their own fault)."""
    got = attempt(impl.parse, case.codec)
    judge.metrics["verdict"] = "accepted" if got.ok else "rejected" if got.rejection else "error"
    if got.error is not None:
        judge_error(judge, "parse", got)
    where = f"case {case.id} ({case.description}), codec {case.codec!r}"
    if case.valid and got.rejection is not None:
        diagnosis = parse_diagnosis(impl.parse, case.codec)
        if case.level == "MAY" and diagnosis is None:
            # Refused for what makes it optional: no probe, which keeps every value's JSON form, finds the refusal to be
            # about something required, so the case keeps its level.
            judge.finish(Outcome.UNSUPPORTED, f"optional configuration refused ({case.requirements[0]}): {raised(got)}")
        requirement, why, cause = diagnosis or (case.requirements[0], "", None)
        judge.require(False, requirement, f"{where}: valid, but parse refused it: {raised(got)}" + (f"; {why}" if why else ""),
                      level=case.level if requirement == case.requirements[0] else None, cause=cause)
    if not case.valid and got.ok:
        judge.require(False, case.requirements[0], f"{where}: invalid, but parse accepted it", level=case.level)
    if not case.valid and no_equivalent(got):
        # The adapter's refusal, not the codec's: its configuration cannot say this (a boolean factor, a member it has
        # not), so the codec never saw it; neither a pass nor a fail of the codec's (results line's given: no_equivalent).
        pytest.skip(f"not asked: {impl.name}'s adapter has no equivalent of this configuration in its codec's own "
                    f"({raised(got)}): the codec never saw it")
    if not case.valid:
        judge.metrics["rejection"] = raised(got)[:200]
        twin = twin_of(case)
        judge_twin(judge, twin, lambda: attempt(impl.parse, twin.codec), impl.name,
                   lambda: parse_diagnosis(impl.parse, twin.codec) is not None,
                   lambda: latent(impl.parse, twin.codec, case.codec))
