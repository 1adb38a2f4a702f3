"""The role ``build``: its case file, its suite's bite, the adapter contract and the protocol op.

Every deliberately wrong builder (tests/wrong_builders.py) is caught citing the rule it
breaks, every legal one (tests/legal_builders.py) passes, in-process and under --isolate
alike; the case file follows its schema and says what the spec's parse rules say.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from zarr_jpeg_conformance.adapters import ROLES, AdapterLoadError, load_adapter
from zarr_jpeg_conformance.adapters.remote import ExecAdapter, HarnessRejection
from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.core.errors import ConfigError
from zarr_jpeg_conformance.corpus.cases import build_cases
from zarr_jpeg_conformance.harnesses.server import Server
from zarr_jpeg_conformance.judging.checks import support_of

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "suites" / "test_build.py"
TESTS = Path(__file__).resolve().parent
SERVER = [sys.executable, "-m", "zarr_jpeg_conformance.harnesses.server"]
REQUIREMENTS = {r["id"]: r for r in json.loads((ROOT / "fixtures" / "requirements.json").read_text())["requirements"]}
FILES = sorted((ROOT / "fixtures" / "builds").glob("*.json"))
KEY_ORDER = ("id", "description", "requirements", "level", "options", "expect", "twin", "configuration", "comment")

pytest.importorskip("zarr")


def _raw_cases() -> list[dict[str, Any]]:
    return [c for path in FILES for c in json.loads(path.read_text())["cases"]]


def _as_codec(options: dict[str, Any]) -> dict[str, Any]:
    """The options as a configuration, with the spec's default quality where none is given (JPEG-Q-06)."""
    return {"name": "jpeg", "configuration": {"quality": 95, **options}}


# ------------------------------------------------------------------ the case file


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_case_file_matches_schema(path: Path) -> None:
    schema = json.loads((ROOT / "schema" / "build-cases.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in jsonschema.Draft202012Validator(schema).iter_errors(
        json.loads(path.read_text()))]
    assert not errors, errors
    keys = [list(c) for c in json.loads(path.read_text())["cases"]]
    assert all(k == [x for x in KEY_ORDER if x in k] for k in keys), "case keys out of the canonical order"


def test_ids_unique_and_requirements_known() -> None:
    ids = [c["id"] for c in _raw_cases()]
    assert ids and len(ids) == len(set(ids)), sorted(i for i, n in Counter(ids).items() if n > 1)
    unknown = {(c["id"], r) for c in _raw_cases() for r in c["requirements"] if r not in REQUIREMENTS}
    assert not unknown, unknown
    assert [c.id for c in build_cases()] == ids, "the reader in corpus.cases reads every case, in order"


@pytest.mark.parametrize("case", _raw_cases(), ids=lambda c: c["id"])
def test_case_says_what_the_parse_rules_say(case: dict[str, Any]) -> None:
    """The expected configuration is the options read by the spec's rules; refused options are invalid by them."""
    level = REQUIREMENTS[case["requirements"][0]]["level"]
    assert case["level"] == ("MAY" if level == "MAY" else "SHOULD" if level.startswith("SHOULD") else "MUST"), \
        "the level is that of the first requirement"
    try:
        config = parse_codec(_as_codec(case["options"]))
    except ConfigError as exc:
        assert case["expect"] != "built", f"the options are invalid: {exc}"
        assert exc.requirement in case["requirements"], f"{exc.requirement} decides, and is not cited"
        return
    assert case["expect"] == "built", "valid options must be built"
    expected = parse_codec({"name": "jpeg", "configuration": case["configuration"]})
    assert expected == config, f"the configuration of the options is {config}"
    optional = support_of(config).optional
    assert (case["level"] == "MAY") == (optional is not None), f"optional feature {optional}: level MAY iff one is used"
    if optional:
        assert optional in case["requirements"]


def test_every_build_requirement_has_cases() -> None:
    cited = Counter(r for c in _raw_cases() for r in c["requirements"])
    build = [rid for rid, r in REQUIREMENTS.items() if "build" in r["when"]]
    assert {"JPEG-Q-06", "JPEG-SUB-06", "JPEG-NAME-01", "JPEG-SUB-04"} <= set(build)
    assert all(cited[rid] >= 2 or rid == "JPEG-NAME-01" for rid in build), {rid: cited[rid] for rid in build}
    expects = Counter(c["expect"] for c in _raw_cases())
    assert expects["built"] and expects["refused"] and expects["either"], expects


# ------------------------------------------------------------------ the suite bites


@dataclass(frozen=True)
class Fault:
    adapter: str
    #: Case IDs (or parts of them) where the fault must show.
    cases: tuple[str, ...]
    outcome: str
    requirement: str


FAULTS = [
    Fault("DefaultQuality75", ("build.quality.default-",), "warn", "JPEG-Q-06"),
    Fault("SubsamplingForGrayscale", ("build.subsampling.grayscale-omitted", "build.subsampling.rgb-omitted"), "warn", "JPEG-SUB-06"),
    Fault("NumcodecsName", ("build.quality.",), "fail", "JPEG-NAME-01"),
    Fault("OmitsAllOnesSubsampling", ("build.subsampling.ycbcr-444",), "fail", "JPEG-SUB-04"),
    Fault("WritesUnchecked", ("build.invalid.quality-zero",), "fail", "JPEG-Q-01"),
    Fault("WritesUnchecked", ("build.subsampling.ycbcr-absent",), "fail", "JPEG-SUB-04"),
    Fault("ClampsQuality", ("build.invalid.quality-zero", "build.invalid.quality-above-max"), "fail", "silently corrected"),
    Fault("DropsDecodedColorSpace", ("build.decoded.passthrough",), "fail", "JPEG-DCS-01"),
    Fault("OwnParseRejects", ("build.subsampling.grayscale-omitted",), "fail", "its own parse of the codec object it built"),
    Fault("BuildsNothing", ("build.quality.min",), "fail", "not a codec object"),
    Fault("NumpyQuality", ("build.quality.min",), "fail", "not JSON"),
    Fault("ReadsBackDefaultSubsampling", ("build.subsampling.ycbcr-444",), "fail", "JPEG-SUB-02"),
]
LEGAL = ["ExplicitDecodedColorSpace", "NoDefaultQuality", "Defaults420", "WritesMustUnderstand", "NoRgb", "RgbWrittenNotEncoded"]
SPECS = ["zarr", *dict.fromkeys(f"wrong_builders:{f.adapter}" for f in FAULTS), *(f"legal_builders:{a}" for a in LEGAL)]


def _run_suite(tmp: Path, specs: list[str], *extra: str) -> dict[str, list[dict[str, Any]]]:
    """The build suite run once over every spec (a child pytest: tests/ on its path); records by spec."""
    results = tmp / "results.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(SUITE), *(f"--impl={s}" for s in specs), "--results", str(results),
         "-p", "no:cacheprovider", "-q", "-W", "ignore::UserWarning", *extra],
        cwd=tmp, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert results.exists(), f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    names = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(TESTS))
        for spec in specs:
            names[load_adapter(spec).name] = spec
    by_spec: dict[str, list[dict[str, Any]]] = {spec: [] for spec in specs}
    for line in results.read_text().splitlines():
        record = json.loads(line)
        by_spec[names[record["implementation"]]].append(record)
    return by_spec


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    return _run_suite(tmp_path_factory.mktemp("build"), SPECS)


def _not_passed(records: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return sorted((r["case"], r["outcome"], r["message"][:300]) for r in records if r["outcome"] not in ("pass", "unsupported"))


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f"{f.adapter}-{f.cases[0].split('.')[-1]}")
def test_wrong_builder_is_caught(runs: dict[str, list[dict[str, Any]]], fault: Fault) -> None:
    records = [r for r in runs[f"wrong_builders:{fault.adapter}"] if any(c in r["case"] for c in fault.cases)]
    assert records, f"no case ran for {fault}"
    hits = [r for r in records if r["outcome"] == fault.outcome and fault.requirement in r["message"]]
    assert hits, f"{fault.adapter} was not caught with {fault.outcome} citing {fault.requirement!r}: {_not_passed(records)}"


def test_the_correct_builder_passes_every_case(runs: dict[str, list[dict[str, Any]]]) -> None:
    """The zarr adapter (JpegCodec.to_dict) passes: only optional features its backend lacks are unsupported."""
    records = runs["zarr"]
    assert len(records) == len(build_cases()) and not _not_passed(records), _not_passed(records)
    assert all(r["outcome"] == "pass" for r in records if r["case"].startswith(("build.quality", "build.invalid")))


@pytest.mark.parametrize("adapter", LEGAL)
def test_legal_builder_passes(runs: dict[str, list[dict[str, Any]]], adapter: str) -> None:
    records = runs[f"legal_builders:{adapter}"]
    assert len(records) == len(build_cases()) and not _not_passed(records), _not_passed(records)
    unsupported = {r["case"] for r in records if r["outcome"] == "unsupported"}
    if adapter == "NoDefaultQuality":
        assert {"build.quality.default-grayscale", "build.quality.default-ycbcr-420"} <= unsupported
    if adapter == "NoRgb":
        assert {"build.subsampling.rgb-omitted", "build.subsampling.rgb-given-default"} <= unsupported
    if adapter == "RgbWrittenNotEncoded":  # what it built is judged; its encoder's refusal is the encoding suites' business
        rgb = [r for r in records if r["case"].startswith("build.subsampling.rgb-")]
        assert rgb and all(r["outcome"] == "pass" and "refused" in r["metrics"]["round_trip_encode"] for r in rgb), rgb
    if adapter == "Defaults420":
        built = next(r for r in records if r["case"] == "build.subsampling.ycbcr-absent")
        assert json.loads(built["metrics"]["written"])["configuration"]["subsampling"] == [[2, 2], [1, 1], [1, 1]]


def test_isolated_verdicts_are_the_in_process_ones(runs: dict[str, list[dict[str, Any]]], tmp_path: Path) -> None:
    """Through the protocol's build op (--isolate) the builders get the outcomes they get in-process."""
    spec = "wrong_builders:WritesUnchecked"  # pass, warn, fail and unsupported: one harness process covers them all
    outcomes = {r["case"]: r["outcome"] for r in _run_suite(tmp_path, [spec], "--isolate")[spec]}
    assert outcomes == {r["case"]: r["outcome"] for r in runs[spec]}
    assert {"pass", "warn", "fail", "unsupported"} <= set(outcomes.values()), outcomes


# ------------------------------------------------------------------ the contract and the protocol


def test_role_build_needs_a_build_method() -> None:
    assert "build" in ROLES and load_adapter("zarr").roles == {"encode", "decode", "build"}

    class NoBuild:
        name = "no-build"
        roles = frozenset({"encode", "decode", "build"})

        def versions(self) -> dict[str, str]:
            return {}

        def parse(self, codec: Any) -> Any: ...
        def encode(self, parsed: Any, chunk: Any) -> bytes: ...
        def decode(self, parsed: Any, data: bytes, shape: Any) -> Any: ...

    import zarr_jpeg_conformance.adapters as adapters

    with pytest.raises(AdapterLoadError, match="no build method"):
        adapters._instantiate(NoBuild(), "no-build")


def test_every_schema_knows_the_roles() -> None:
    """The protocol's start reply and the report's meta files accept exactly the adapter roles."""
    protocol = json.loads((ROOT / "schema" / "protocol" / "v1.schema.json").read_text())
    start = protocol["$defs"]["start-reply"]["oneOf"][0]["properties"]["roles"]["items"]["enum"]
    report = json.loads((ROOT / "schema" / "report-files.schema.json").read_text())
    metas = [d["properties"]["roles"]["items"]["enum"] for d in report["$defs"].values() if "roles" in d.get("properties", {})]
    assert metas and all(set(enum) == ROLES for enum in [start, *metas]), (start, metas)


def _check_messages(messages: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Every message against the protocol schema's request or reply; the ops sent, in order."""
    schema = json.loads((ROOT / "schema" / "protocol" / "v1.schema.json").read_text())
    validators = {d: jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{d}"})
                  for d in ("request", "reply", "frame-request", "frame-reply", "build-request", "build-reply")}
    ops, pending, binary = [], {}, False
    for direction, message in messages:
        if direction == "->":
            pending[message["seq"]] = op = message["op"]
            ops.append(op)
            kinds = ["frame-request" if binary else "request"] + (["build-request"] if op == "build" else [])
        else:
            op = pending.pop(message["seq"])
            kinds = ["frame-reply" if binary else "reply"] + (["build-reply"] if op == "build" else [])
            binary = binary or message.get("framing") == "binary"
        for kind in kinds:
            errors = [e.message for e in validators[kind].iter_errors(message)]
            assert not errors, (kind, message, errors[:3])
    return ops


def test_protocol_build_op() -> None:
    """The build op over the server, in both framings: a codec object, a rejection with its requirement."""
    for framings in (["json"], ["json", "binary"]):
        messages: list[tuple[str, dict[str, Any]]] = []
        with ExecAdapter([*SERVER, "zarr"], framings=framings, on_message=lambda d, m, seen=messages: seen.append((d, m))) as adapter:
            assert "build" in adapter.roles
            assert adapter.build({"encoded_color_space": "grayscale"}) == {
                "name": "jpeg", "configuration": {"quality": 95, "encoded_color_space": "grayscale"}}
            with pytest.raises(HarnessRejection) as info:
                adapter.build({"quality": 0, "encoded_color_space": "grayscale"})
            assert info.value.requirement == "JPEG-Q-01"
            with pytest.raises(TypeError, match="not JSON"):
                adapter.build({"quality": object()})
        assert _check_messages(messages).count("build") == 2


def test_server_build_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    """A build the server cannot carry out or carry back is the request's error, not a rejection."""
    server = Server("imagecodecs")  # no role build
    server.handle({"seq": 1, "op": "start", "protocol": 1})
    assert server.handle({"seq": 2, "op": "build", "options": {}})["status"] == "error"
    zarr_server = Server("zarr")
    zarr_server.handle({"seq": 1, "op": "start", "protocol": 1})
    assert zarr_server.handle({"seq": 2, "op": "build", "options": []})["status"] == "error"
    ok = zarr_server.handle({"seq": 3, "op": "build", "options": {"quality": 90, "encoded_color_space": "rgb"}})
    assert ok == {"seq": 3, "status": "ok", "codec": {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "rgb"}}}
    monkeypatch.syspath_prepend(str(TESTS))
    numpy_server = Server("wrong_builders:NumpyQuality")
    numpy_server.handle({"seq": 1, "op": "start", "protocol": 1})
    reply = numpy_server.handle({"seq": 2, "op": "build", "options": {"quality": 90, "encoded_color_space": "grayscale"}})
    assert reply["status"] == "error" and "cannot carry" in reply["message"]
