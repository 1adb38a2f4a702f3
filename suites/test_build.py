"""Build: the codec object an implementation writes for a user's options (the optional role ``build``).

The spec has rules for whoever writes the metadata, not only for whoever reads it. For
every case of ``fixtures/builds`` the implementation's builder is given the options and
what it writes is judged: JSON with the name ``jpeg`` (JPEG-NAME-01), a valid configuration
by ``schema/jpeg.schema.json`` and the parse rules (JPEG-CFG-01 and the rule it breaks),
meaning what the user asked for (each member's requirement), 95 where no quality was given
(JPEG-Q-06, SHOULD), ``subsampling`` left out for grayscale and rgb (JPEG-SUB-06, SHOULD)
and written for ycbcr (JPEG-SUB-04). The implementation's own parse must then accept what it
wrote, and an implementation that also encodes must write the stream that configuration
asks for. Options that make no valid configuration are refused: nothing is written for them,
neither invalid metadata nor a "corrected" configuration the user did not ask for.

A default ``decoded_color_space`` may be written or left out: JPEG-SUB-06 speaks only of
``subsampling``, and the spec defines the default, so both forms mean the same.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import jsonschema
import pytest
from jsonschema.exceptions import best_match

from zarr_jpeg_conformance.core.config import CODEC_MEMBERS, CONFIG_MEMBERS, JpegConfig, parse_codec
from zarr_jpeg_conformance.core.errors import ConfigError
from zarr_jpeg_conformance.corpus.cases import BuildCase, build_cases, twin_of
from zarr_jpeg_conformance.corpus.images import make_image
from zarr_jpeg_conformance.corpus.registry import load_json
from zarr_jpeg_conformance.judging.checks import case_params, judge_error, judge_refusal, raised, support_of
from zarr_jpeg_conformance.judging.read_back import check_samples
from zarr_jpeg_conformance.judging.roots import judge_twin
from zarr_jpeg_conformance.judging.verdict import Attempt, Outcome, attempt
from zarr_jpeg_conformance.judging.written import check_written

pytestmark = pytest.mark.roles("build")

#: Per member: the requirement a written value rests on when the user gave it, and when it is a default.
_MEMBER_RULES = {
    "quality": ("JPEG-Q-01", "JPEG-Q-06"),
    "encoded_color_space": ("JPEG-ECS-01", "JPEG-ECS-07"),
    "decoded_color_space": ("JPEG-DCS-01", "JPEG-DCS-02"),
    "subsampling": ("JPEG-SUB-02", "JPEG-SUB-05"),
}
#: Height and width of the chunk encoded under the implementation's own parse: one 16x16 MCU of 4:2:0.
_CHUNK = 16


@cache
def _schema() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_json("schema", "jpeg.schema.json"))


@pytest.mark.parametrize("case", case_params(build_cases()))
def test_build(impl: Any, case: BuildCase, judge: Any) -> None:
    """The builder writes a valid, minimal codec object for valid options, and refuses invalid ones."""
    # A copy: a builder that edits its options cannot change the case for the next implementation.
    options = json.loads(json.dumps(case.options))
    got = attempt(impl.build, options)
    judge.metrics["verdict"] = "built" if got.ok else "refused" if got.rejection else "error"
    where = f"case {case.id} ({case.description}), options {case.options!r}"
    if got.error is not None:
        judge_error(judge, "build", got)
    if got.rejection is not None:
        if case.expect == "built":
            _judge_refusal(judge, case, got, where)
        if case.expect == "refused":
            # A refusal counts only where the builder builds the valid twin, one option away.
            twin = twin_of(case)
            judge_twin(judge, twin, lambda: attempt(impl.build, json.loads(json.dumps(twin.options))), impl.name)
        return  # refused options that make no valid configuration, or ones it may refuse
    if case.expect == "refused":
        _judge_built_invalid(judge, case, got.value, where)
    codec, config = _written(judge, got.value, where)
    assert case.configuration is not None  # the case file's schema: built and either cases have one
    _judge_members(judge, case, codec, config, where)
    _judge_round_trip(judge, impl, codec, config, where)


def _judge_refusal(judge: Any, case: BuildCase, got: Attempt[Any], where: str) -> None:
    if "quality" not in case.options:
        # Offering a default is a convenience the spec does not ask for; JPEG-Q-06 applies to those that offer one.
        judge.cite("JPEG-Q-06")
        judge.finish(Outcome.UNSUPPORTED, f"{where}: build refused options without quality, so the builder offers "
                                          f"no default quality (JPEG-Q-06 applies to those that do): {raised(got)}")
    assert case.configuration is not None
    judge_refusal(judge, support_of(_config(case.configuration)), "parse", f"{where}: build of valid options", got)


def _judge_built_invalid(judge: Any, case: BuildCase, value: object, where: str) -> None:
    """Options that make no valid configuration were built: a fail, whatever was written."""
    try:
        parse_codec({"name": "jpeg", "configuration": {"quality": 95, **case.options}})
    except ConfigError as exc:
        why = str(exc)
    else:  # the case file's lint keeps this from happening
        why = "see the case"
    try:
        parse_codec(value)  # type: ignore[arg-type]
    except (ValueError, TypeError, AttributeError) as exc:
        what = f"which is itself invalid ({exc})"
    else:
        what = "a valid configuration the user did not ask for: the problem was silently corrected"
    judge.metrics["written"] = _short(value)
    judge.cite("JPEG-CFG-01")
    judge.require(False, case.requirements[0],
                  f"{where}: the options make no valid configuration ({why}), so nothing may be written; "
                  f"build wrote {_short(value)}, {what}")


def _written(judge: Any, value: object, where: str) -> tuple[dict[str, Any], JpegConfig]:
    """What was written, as zarr.json holds it, judged: JSON, the name, a valid configuration."""
    try:
        codec = json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        judge.require(False, "JPEG-CFG-01", f"{where}: build returned {_short(value)}, which is not JSON "
                                            f"and cannot be written to zarr.json: {exc}")
    judge.metrics["written"] = json.dumps(codec)
    judge.require(isinstance(codec, dict), "JPEG-CFG-01",
                  f"{where}: build returned {type(codec).__name__} {_short(codec)}, not a codec object")
    judge.require(codec.get("name") == "jpeg", "JPEG-NAME-01", f"{where}: build wrote the name {codec.get('name')!r} "
                                                                f"in {_short(codec)}")
    judged = codec
    while True:
        try:
            config = parse_codec(judged)
            break
        except ConfigError as exc:
            judge.cite("JPEG-CFG-01")
            judge.require(False, exc.requirement, f"{where}: build wrote {_short(codec)}, which the parse rules reject: {exc.reason}")
            # Only a SHOULD gets here (a member the spec does not define, JPEG-X-01): warned, and
            # the rest is judged on the members the spec defines.
            trimmed = _defined_members(judged)
            if trimmed == judged:
                judge.finish(Outcome.ERROR, f"{where}: the suite cannot read {_short(codec)} past {exc}")
            judged = trimmed
    if judged is codec:
        # The schema says the same as the parse rules (tests/test_config_agreement.py): a second opinion.
        error = best_match(_schema().iter_errors(codec))
        judge.require(error is None, "JPEG-CFG-01",
                      f"{where}: build wrote {_short(codec)}, which schema/jpeg.schema.json rejects: "
                      f"{error.message if error else ''} (at /{'/'.join(map(str, error.absolute_path)) if error else ''})")
    return codec, config


def _defined_members(codec: dict[str, Any]) -> dict[str, Any]:
    """``codec`` with only the members the spec and Zarr core define (a boolean must_understand kept)."""
    out = {k: v for k, v in codec.items() if k in CODEC_MEMBERS and (k != "must_understand" or isinstance(v, bool))}
    if isinstance(out.get("configuration"), dict):
        out["configuration"] = {k: v for k, v in out["configuration"].items() if k in CONFIG_MEMBERS}
    return out


def _judge_members(judge: Any, case: BuildCase, codec: dict[str, Any], config: JpegConfig, where: str) -> None:
    """Every member means what the options asked for, or the spec's default; subsampling minimal."""
    assert case.configuration is not None
    written = codec["configuration"]
    for member, want in case.configuration.items():
        have = _plain(getattr(config, member))
        given = member in case.options
        how = "written as" if member in written else "left out, which means"
        asked = f"the options give {case.options[member]!r}" if given else f"the default is {want!r}"
        judge.require(have == want, _MEMBER_RULES[member][0 if given else 1],
                      f"{where}: build wrote {_short(codec)}: {member} {how} {have!r}; {asked}")
    if config.encoded_color_space in ("grayscale", "rgb"):
        judge.require("subsampling" not in written, "JPEG-SUB-06",
                      f"{where}: build wrote subsampling {written.get('subsampling')!r} for encoded_color_space "
                      f"{config.encoded_color_space!r}: that is its default, which a written configuration leaves out")


def _judge_round_trip(judge: Any, impl: Any, codec: dict[str, Any], config: JpegConfig, where: str) -> None:
    """Its own parse reads what it wrote; its encoder, if any, writes the stream that configuration asks for."""
    support = support_of(config)
    what = f"{where}: its own parse of the codec object it built, {_short(codec)},"
    got = attempt(impl.parse, codec)
    if got.error is not None:
        judge_error(judge, what, got)
    if got.rejection is not None:
        judge_refusal(judge, support, "parse", what, got)
    if "encode" not in impl.roles:
        return
    channels = 1 if config.encoded_color_space == "grayscale" else 3
    chunk = make_image("natural", _CHUNK, _CHUNK, channels=channels)
    chunk = chunk[..., 0] if channels == 1 else chunk
    encoded = attempt(impl.encode, got.value, chunk.copy())
    what = f"{where}: encode of a {_CHUNK}x{_CHUNK} chunk under its own parse of the built object"
    if encoded.error is not None:
        judge_error(judge, what, encoded)
    if encoded.rejection is not None:
        feature = support.refusable_at("encode")
        if feature is not None:
            # Writing an optional feature is judged by the encoding suites; what was built stands.
            judge.metrics["round_trip_encode"] = f"refused, an optional feature ({feature.requirement})"
            return
        judge_refusal(judge, support, "encode", what, encoded)
    data = encoded.value
    judge.require(isinstance(data, bytes | bytearray | memoryview), "JPEG-FMT-01",
                  f"{what} returned {type(data).__name__}, not the bytes of a JPEG stream")
    assert isinstance(data, bytes | bytearray | memoryview)
    what = "encode under its own parse of the built object"
    check_written(judge, bytes(data), config, chunk.shape, what)
    check_samples(judge, bytes(data), config, chunk, what)


def _config(configuration: dict[str, Any]) -> JpegConfig:
    return parse_codec({"name": "jpeg", "configuration": configuration})


def _plain(value: object) -> object:
    """Tuples as lists, so a parsed member compares with the case file's JSON."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _short(value: object, limit: int = 300) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__: list[str] = []
