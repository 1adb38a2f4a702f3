"""The same behaviour gets the same verdict, wherever an adapter refuses an optional feature.

An implementation that cannot write rgb, YCbCr passthrough or other sampling factors
may refuse them when parsing, or accept them (and decode them) and refuse at encode.
Either way it breaks no MUST: the suites must give both the same fails and errors (the
second gets more passes, from the decoding it does). Run over the suites that parse and
encode (the quality sweep left out for time: its refusals go through the same calls as
the fidelity cases'), for each base implementation available here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zarr_jpeg_conformance.adapters import AdapterLoadError, load_adapter
from zarr_jpeg_conformance.harnesses import Unavailable, command

pytest_plugins = ["pytester"]

SUITES = Path(__file__).resolve().parents[1] / "suites"
TESTS = Path(__file__).resolve().parent
#: Base implementations: this project's codec on imagecodecs, the Python library adapters, and
#: Java ImageIO through its exec: harness (the wrappers sit on the client side of the protocol).
BASES = ["imagecodecs", "simplejpeg", "opencv", "pyvips", "harness_java_imageio"]


def _available(name: str) -> str:
    if name.startswith("harness_"):
        try:
            command(name.removeprefix("harness_").replace("_", "-"))
        except Unavailable as exc:
            pytest.skip(f"{name} is not available here: {exc}")
        return name
    try:
        load_adapter(name)
    except AdapterLoadError as exc:
        pytest.skip(f"{name} is not available here: {exc}")
    return name


def _outcomes(pytester: pytest.Pytester, impl: str) -> dict[str, str]:
    results = pytester.path / f"{impl.replace(':', '_')}.jsonl"
    pytester.syspathinsert(TESTS)
    # The suites that call encode or parse: decode-only suites cannot tell where a writer refuses.
    suites = [str(SUITES / f"test_{name}.py") for name in ("parse", "chunks", "bitstream", "roundtrip", "colorspace")]
    pytester.runpytest_inprocess(
        *suites, f"--impl={impl}", "--results", str(results), "-k", "not quality_sweep",
        "--import-mode=importlib", "-p", "no:cacheprovider", "-q", "-W", "ignore::UserWarning",
    )
    return {r["case"]: r["outcome"] for r in map(json.loads, results.read_text().splitlines())}


@pytest.mark.parametrize("base", BASES)
def test_refusing_at_parse_or_at_encode_gives_the_same_verdict(pytester: pytest.Pytester, base: str) -> None:
    name = _available(base)
    parse = _outcomes(pytester, f"capability_wrappers:at_parse__{name}")
    encode = _outcomes(pytester, f"capability_wrappers:at_encode__{name}")
    assert parse and encode
    bad = {"fail", "error", "crash", "timeout"}
    parse_bad = {c: o for c, o in parse.items() if o in bad}
    encode_bad = {c: o for c, o in encode.items() if o in bad}
    assert parse_bad == encode_bad, (
        f"{name}: refusing at parse gives {sorted(parse_bad.items())}, at encode {sorted(encode_bad.items())}"
    )
    # Accepting at parse and refusing at encode leaves the decoding of those features judged.
    assert sum(o == "pass" for o in encode.values()) > sum(o == "pass" for o in parse.values())


@pytest.mark.parametrize(("configuration", "features"), [
    ({"encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}, []),
    ({"encoded_color_space": "ycbcr", "subsampling": [[4, 2], [1, 1], [1, 1]]}, ["JPEG-X-04"]),
    ({"encoded_color_space": "rgb"}, ["JPEG-ECS-09"]),
    ({"encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}, ["JPEG-DCS-05"]),
])
def test_each_optional_feature_is_named_by_the_rule_that_makes_it_optional(configuration: dict, features: list[str]) -> None:
    from zarr_jpeg_conformance.core.config import parse_codec
    from zarr_jpeg_conformance.judging.checks import support_of

    support = support_of(parse_codec({"name": "jpeg", "configuration": {"quality": 90, **configuration}}))
    assert [f.requirement for f in support.features] == features
    if features == ["JPEG-X-04"]:  # other factors may be refused at any stage, each time under JPEG-X-04
        assert support.features[0].afterwards == "JPEG-X-04" and support.refusable_at("decode") is support.features[0]


def test_a_decode_of_another_dtype_fails_the_dtype_rule() -> None:
    import numpy as np

    from zarr_jpeg_conformance.judging.checks import owned
    from zarr_jpeg_conformance.judging.verdict import Judge

    judge = Judge("impl", "case", ["JPEG-DEC-01"], "MUST")
    with pytest.raises(pytest.fail.Exception, match=r"(?s)JPEG-DT-01 MUST.*returned samples of dtype uint16, not uint8"):
        owned(judge, np.zeros((8, 8), np.uint16), (8, 8), "decode")
