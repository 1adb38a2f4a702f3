"""Other projects' Zarr codecs (adapters.ZARR_CODECS and the zarrs_jpeg harnesses): how each is built, what maps to
its configuration, whose verdicts the rows show, and where each runs."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance import harnesses
from zarr_jpeg_conformance.adapters import ZARR_CODECS, AdapterLoadError, kind_of, load_adapter
from zarr_jpeg_conformance.adapters.cft_zarr import to_cft_zarr
from zarr_jpeg_conformance.adapters.imagecodecs_zarr import imagecodecs_jpeg_object
from zarr_jpeg_conformance.adapters.osml_zarr import to_osml
from zarr_jpeg_conformance.adapters.zarr_codecs import (
    SPEC_MEMBERS,
    CodecRefusal,
    GivenLog,
    NoEquivalent,
    codec_refusals,
)
from zarr_jpeg_conformance.corpus.cases import config_cases
from zarr_jpeg_conformance.harnesses.server import _rejected
from zarr_jpeg_conformance.report.run import default_specs

ROOT = Path(__file__).resolve().parents[1]
GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}
YCBCR_420 = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr",
                                               "subsampling": [[2, 2], [1, 1], [1, 1]]}}


def _config(**members: Any) -> dict[str, Any]:
    return {"name": "jpeg", "configuration": {"encoded_color_space": "grayscale", **members}}


def _loaded(name: str) -> Any:
    try:
        return load_adapter(name)
    except AdapterLoadError as exc:
        pytest.skip(str(exc))


# ----------------------------------------------------------------- the mappings: values verbatim, or no equivalent


@pytest.mark.parametrize("quality", [-1, 0, 101, "90", None, 2.5])
def test_quality_goes_across_verbatim_for_the_codec_to_judge(quality: object) -> None:
    """This project's parser would refuse most of these (JPEG-Q-01); the codecs' own validation must see them."""
    assert to_cft_zarr(_config(quality=quality))["configuration"]["level"] == quality
    assert imagecodecs_jpeg_object(_config(quality=quality))["configuration"]["level"] == quality


def test_absent_members_stay_absent() -> None:
    """A missing quality or subsampling is the codec's to judge (its default, or a refusal), not filled in here."""
    codec = {"name": "jpeg", "configuration": {"encoded_color_space": "ycbcr"}}
    assert to_cft_zarr(codec) == {"name": "cft_zarr.jpeg", "configuration": {}}
    assert imagecodecs_jpeg_object(codec)["configuration"] == {"colorspace_data": "RGB", "colorspace_jpeg": "YCbCr"}


@pytest.mark.parametrize(
    ("luma", "name"), [([1, 1], "444"), ([2, 1], "422"), ([2, 2], "420"), ([1, 2], "440"), ([4, 1], "411")])
def test_subsampling_maps_to_the_imagecodecs_names(luma: list[int], name: str) -> None:
    codec = {**YCBCR_420, "configuration": {**YCBCR_420["configuration"], "subsampling": [luma, [1, 1], [1, 1]]}}
    assert to_cft_zarr(codec)["configuration"]["subsampling"] == name
    assert imagecodecs_jpeg_object(codec)["configuration"]["subsampling"] == name


@pytest.mark.parametrize(
    ("codec", "mapping", "words"),
    [
        ({"name": "imagecodecs_jpeg", "configuration": {}}, to_cft_zarr, "the spec's codec object"),
        ([1, 2], imagecodecs_jpeg_object, "the spec's codec object"),
        (_config(quality=90, optimize=True), to_cft_zarr, "optimize=True"),
        ({**GRAY, "must_understand": False}, imagecodecs_jpeg_object, "must_understand"),
        (_config(quality=90, encoded_color_space="cmyk"), imagecodecs_jpeg_object, "'cmyk'"),
        (_config(quality=90, encoded_color_space="rgb"), to_cft_zarr, "encoded_color_space 'rgb'"),
        ({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr",
                                            "subsampling": [[2, 2], [1, 1], [1, 1]]}}, to_osml, "decoded_color_space 'ycbcr'"),
        ({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr",
                                            "subsampling": [[3, 1], [1, 1], [1, 1]]}}, to_cft_zarr, "[[3, 1]"),
        (_config(quality=90, subsampling=[[2, 2]]), imagecodecs_jpeg_object, "[[2, 2]]"),
    ],
    ids=["other-name", "not-an-object", "unknown-member", "unknown-top-member", "unknown-color-space", "cft-rgb",
         "osml-ycbcr-out", "factors-unnamed", "gray-subsampled"],
)
def test_what_has_no_equivalent_is_refused_saying_so(codec: object, mapping: Any, words: str) -> None:
    with pytest.raises(NoEquivalent, match=r"^\S+: .*" + words.replace("[", r"\[").replace("(", r"\(")):
        mapping(codec)


_SPACES = {"GRAYSCALE": "grayscale", "RGB": "rgb", "YCbCr": "ycbcr", "MONO": "grayscale", "YCbCr601": "ycbcr"}
_FACTORS = {name: [list(luma), [1, 1], [1, 1]] for luma, name in {(1, 1): "444", (2, 1): "422", (2, 2): "420", (1, 2): "440",
                                                                    (4, 1): "411"}.items()}


def _spec_values(codec: Any, members: tuple[str, ...]) -> dict[str, Any]:
    """The members of the spec's configuration a mapping carries, as JSON: decoded_color_space with its default filled
    in, and subsampling left out where it is the grayscale or rgb default, as JSON integers (which no codec here has a
    member for: any other value must have been refused)."""
    config = dict(codec["configuration"])
    encoded = config.get("encoded_color_space")
    config.setdefault("decoded_color_space", "grayscale" if encoded == "grayscale" else "rgb")
    if encoded != "ycbcr" and "subsampling" in config and "subsampling" in members:
        assert json.dumps(config.pop("subsampling")) == json.dumps([[1, 1]] if encoded == "grayscale" else [[1, 1]] * 3)
    return {k: v for k, v in config.items() if k in members}


def _read_back(mapping: Any, given: dict[str, Any]) -> dict[str, Any]:
    """The spec's members as the codec's own configuration says them: the inverse of each mapping, value for value."""
    cfg = given["configuration"]
    out: dict[str, Any] = {}
    if "level" in cfg:
        out["quality"] = cfg["level"]
    if "subsampling" in cfg:
        out["subsampling"] = _FACTORS[cfg["subsampling"]]
    if mapping is imagecodecs_jpeg_object:
        out.update(encoded_color_space=_SPACES[cfg["colorspace_jpeg"]], decoded_color_space=_SPACES[cfg["colorspace_data"]])
    if mapping is to_osml:
        out.update(encoded_color_space=_SPACES[cfg["color_space"]])
    return out


#: Per mapping, the spec's members its codec's configuration carries.
_CARRIED = {to_cft_zarr: ("quality", "subsampling"), imagecodecs_jpeg_object: SPEC_MEMBERS, to_osml: ("encoded_color_space",)}


@pytest.mark.parametrize("case", config_cases(), ids=lambda c: c.id)
def test_each_mapping_gives_the_codec_the_spec_values_verbatim_or_refuses(case: Any) -> None:
    """On every configuration case: what a codec is given reads back as the spec's codec object, value for value as JSON
    (true is not 1, 2.0 is not 2), or the mapping refuses saying it has no equivalent. Python's == cannot tell:
    [[2, 2], [true, true], [true, true]] == [[2, 2], [1, 1], [1, 1]], which once gave the codecs 4:2:0 for it."""
    for mapping, members in _CARRIED.items():
        try:
            given = mapping(case.codec)
        except NoEquivalent:
            continue
        assert json.dumps(_read_back(mapping, given), sort_keys=True) == json.dumps(
            _spec_values(case.codec, members), sort_keys=True), (mapping.__name__, case.codec, given)


@pytest.mark.parametrize("factors", [[[2, 2], [True, True], [True, True]], [[2.0, 2.0], [1, 1], [1, 1]],
                                     [[True, True], [1, 1], [1, 1]]], ids=["bool-chroma", "float-luma", "bool-luma"])
def test_factors_that_are_not_json_integers_have_no_imagecodecs_name(factors: list[Any]) -> None:
    codec = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": factors}}
    for mapping in (to_cft_zarr, imagecodecs_jpeg_object):
        with pytest.raises(NoEquivalent, match="as JSON integers"):
            mapping(codec)
    gray = _config(quality=90, subsampling=[[True, True]])
    for mapping in (to_cft_zarr, imagecodecs_jpeg_object):
        with pytest.raises(NoEquivalent, match=r"\[\[true, true\]\]"):
            mapping(gray)


def test_the_adapter_logs_what_its_codec_was_given_and_what_it_could_not_give() -> None:
    """What every results line of such a row carries (judging.plugin, ``given``)."""
    log = GivenLog()
    start = log.count
    log.add(GRAY, {"name": "cft_zarr.jpeg", "configuration": {"level": 90}})
    log.add(GRAY, {"name": "cft_zarr.jpeg", "configuration": {"level": 90}})
    log.add(_config(quality=90, subsampling=[[True, True]]), None, "no equivalent")
    assert log.since(start) == [{"codec": GRAY, "given": {"name": "cft_zarr.jpeg", "configuration": {"level": 90}}},
                                {"codec": _config(quality=90, subsampling=[[True, True]]), "given": None,
                                 "no_equivalent": "no equivalent"}]
    assert log.since(log.count) == []


def test_an_explicit_subsampling_of_ones_outside_ycbcr_maps_to_no_subsampling() -> None:
    """Factors of 1 are what grayscale (and rgb) mean anyway: said explicitly, they are no reason to refuse."""
    gray = _config(quality=90, subsampling=[[1, 1]])
    rgb = _config(quality=90, encoded_color_space="rgb", subsampling=[[1, 1]] * 3)
    assert to_cft_zarr(gray) == {"name": "cft_zarr.jpeg", "configuration": {"level": 90}}
    for codec in (gray, rgb):
        assert "subsampling" not in imagecodecs_jpeg_object(codec)["configuration"]


def test_a_codec_package_is_found_by_its_distribution_and_its_registered_name() -> None:
    from zarr_jpeg_conformance.adapters.zarr_codecs import installed

    assert installed("numpy", "jpeg")  # this project registers "jpeg"
    with pytest.raises(ImportError, match=r"^numpy \S+ registers no zarr codec named 'no-such-codec'$"):
        installed("numpy", "no-such-codec")
    with pytest.raises(ImportError, match=r"is not installed \(pip install 'zarr-jpeg-conformance\[zarr-codecs\]'\)$"):
        installed("no-such-distribution", "jpeg")
    with pytest.raises(ImportError, match=r"\[zarr-codecs\]'; it needs this\)$"):
        installed("no-such-distribution", "jpeg", "it needs this")


def test_osml_decodes_only_what_its_own_parse_returned() -> None:
    adapter = _loaded("osml-imagery-io")
    with pytest.raises(TypeError, match="expected a parsed codec from"):
        adapter.decode(GRAY, b"", (8, 8))


def test_osml_parse_gives_osmls_own_verdict_on_the_configuration_before_any_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """parse builds osml's codec from the configuration (its registry's ``from_dict``), so what osml refuses is refused
    at parse, not at the first chunk's decode. Shown with osml's registry stood in for: osml needs Python >= 3.12, and
    this holds wherever it is installed."""
    from zarr_jpeg_conformance.adapters import osml_zarr

    asked: list[Any] = []

    def registry(codec_object: Any) -> Any:
        asked.append(codec_object)
        raise ValueError("osml refuses this configuration")

    monkeypatch.setattr(osml_zarr, "registry_codec", registry)
    adapter = object.__new__(osml_zarr.OsmlAdapter)  # its __init__ only asks which osml is installed
    with pytest.raises(ValueError, match="osml refuses"):
        adapter.parse(GRAY)
    assert asked == [to_osml(GRAY)]


def test_osml_reads_a_chunk_as_a_block_of_its_size() -> None:
    rgb = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "rgb"}}
    assert to_osml(rgb, (16, 24, 3))["configuration"] == {
        "bits_per_pixel": 8, "num_bands": 3, "block_width": 24, "block_height": 16, "imode": "P", "color_space": "RGB"}
    assert to_osml(YCBCR_420, (8, 8, 3))["configuration"]["color_space"] == "YCbCr601"
    assert to_osml(GRAY, (8, 4))["configuration"]["num_bands"] == 1


@pytest.mark.parametrize("module", ["zarr_codecs", "cft_zarr", "osml_zarr", "imagecodecs_zarr"])
def test_no_verdict_comes_from_this_projects_parser(module: str) -> None:
    """The rows show the codecs' own verdicts: of core they import at most the migration's JpegConfig type."""
    tree = ast.parse((ROOT / "adapters" / f"{module}.py").read_text(encoding="utf-8"))
    from_core = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
                 and node.module.lstrip(".").startswith("core") for alias in node.names}
    assert from_core <= {"JpegConfig"}, from_core


# ----------------------------------------------------------------- rejections are the codec's documented exceptions


class _DocumentedError(RuntimeError):
    pass


def test_a_documented_exception_is_a_rejection_naming_its_type_and_others_stay_errors() -> None:
    with pytest.raises(CodecRefusal, match=r"^_DocumentedError: bad stream$") as refused, codec_refusals(_DocumentedError):
        raise _DocumentedError("bad stream")
    assert isinstance(refused.value, ValueError)
    assert _rejected(refused.value)["exception"] == "_DocumentedError", "the harness reply names the codec's type"
    with pytest.raises(RuntimeError) as crashed, codec_refusals(_DocumentedError):
        raise RuntimeError("a bug")
    assert not isinstance(crashed.value, ValueError)


# ----------------------------------------------------------------- the codecs themselves (when installed)


def test_cft_zarr_judges_its_own_configuration_and_writes_its_name() -> None:
    cft = _loaded("cft-zarr")
    assert kind_of(cft) == "codec" and cft.versions()["writes"] == "cft_zarr.jpeg"
    image = (np.arange(32 * 48) % 251).astype(np.uint8).reshape(32, 48)
    # Its level is int(level): a quality of 0 or -1 is accepted (JPEG-Q-01 would refuse both) ...
    for quality in (0, -1):
        assert cft.encode(cft.parse(_config(quality=quality)), image)[:2] == b"\xff\xd8"
    # ... and one int() cannot read is its ValueError.
    with pytest.raises(ValueError, match="invalid literal"):
        cft.parse(_config(quality="high"))


def test_cft_zarr_decodes_a_corrupt_stream_to_zeros() -> None:
    """What its decoder does (a finding, JPEG-DEC-01): any stream it cannot decode becomes a chunk of zeros."""
    cft = _loaded("cft-zarr")
    out = cft.decode(cft.parse(GRAY), b"\xff\xd8 not a jpeg stream", (4, 4))
    assert out.shape == (4, 4) and not out.any()


@pytest.mark.parametrize("codec", [GRAY, YCBCR_420], ids=["gray", "ycbcr-420"])
def test_osml_reads_what_cft_zarr_writes_as_cft_zarr_reads_it(codec: dict[str, Any]) -> None:
    cft, osml = _loaded("cft-zarr"), _loaded("osml-imagery-io")
    assert osml.roles == frozenset({"decode"}) and osml.versions()["reads"].endswith("/codecs/jpeg")
    rng = np.random.default_rng(7)
    shape = (16, 24) if codec is GRAY else (16, 24, 3)
    image = rng.integers(0, 256, shape, dtype=np.uint8)
    stream = cft.encode(cft.parse(codec), image)
    np.testing.assert_array_equal(osml.decode(osml.parse(codec), stream, shape), cft.decode(cft.parse(codec), stream, shape))


def test_osml_refuses_a_corrupt_stream() -> None:
    osml = _loaded("osml-imagery-io")
    with pytest.raises(ValueError, match="Decode error"):
        osml.decode(osml.parse(GRAY), b"\xff\xd8 not a jpeg stream", (4, 4))


# ----------------------------------------------------------------- where each runs


def test_each_codec_is_one_row_of_the_default_matrix() -> None:
    specs = default_specs()
    assert {"cft-zarr", "osml-imagery-io"} <= set(specs)
    for name in ("zarrs-jpeg-turbo", "zarrs-jpeg-rust", "imagecodecs_jpeg"):
        assert [s for s in specs if s.endswith(f"-m zarr_jpeg_conformance.harnesses {name}")], name
        assert harnesses.HARNESSES[name].kind == "codec"
    assert set(ZARR_CODECS) & set(specs) == {"cft-zarr", "osml-imagery-io"}


def test_the_two_zarrs_jpeg_backends_are_built_by_separate_cargo_invocations() -> None:
    """Features unify over the packages of one cargo build: together both binaries would run libjpeg-turbo."""
    build = harnesses.BUILDS["rust"]
    first, (then,) = build.command(["cargo", "cmake", "nasm"]), build.then
    assert first[-2:] == ["--exclude", "zarrs-jpeg-rust"] and "--workspace" in first
    assert then(["cargo", "cmake", "nasm"])[-2:] == ["-p", "zarrs-jpeg-rust"]
    manifest = (ROOT / "harnesses" / "rust" / "zarrs-jpeg-rust" / "Cargo.toml").read_text(encoding="utf-8")
    assert '"backend-rust"' in manifest and "default-features = false" in manifest
    lock = (ROOT / "harnesses" / "rust" / "Cargo.lock").read_text(encoding="utf-8")
    assert 'name = "zarrs_jpeg"\nversion = "0.2.0"' in lock


def test_without_a_python_312_the_imagecodecs_jpeg_harness_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harnesses.NewestPython, "candidates", lambda self: [])
    with pytest.raises(harnesses.Unavailable, match=r"no Python >= 3\.12 on this machine.*imagecodecs-zarr needs one"):
        harnesses.PYTHON_312.executable()
    outcome = harnesses.install(["python"])
    assert outcome["python"].startswith("skipped: no Python >= 3.12")


# ----------------------------------------------------------------- zarrs_jpeg, as zarrs builds it (when built)


@pytest.fixture(params=["zarrs-jpeg-turbo", "zarrs-jpeg-rust"])
def zarrs_jpeg(request: pytest.FixtureRequest) -> Any:
    try:
        harnesses.command(request.param)
    except harnesses.Unavailable as exc:
        pytest.skip(str(exc))
    adapter = load_adapter(f"exec:{sys.executable} -m zarr_jpeg_conformance.harnesses {request.param}")
    yield adapter
    adapter.close()


def test_zarrs_jpeg_parse_verdicts_are_its_own(zarrs_jpeg: Any) -> None:
    """What this project's parser would decide the other way round: the row shows zarrs_jpeg's verdicts."""
    versions = zarrs_jpeg.versions()
    assert versions["zarrs_jpeg"] == "0.2.0" and versions["parse"].startswith("zarrs_jpeg 0.2.0 through zarrs ")
    assert ("Turbo" in versions["backend"]) == (zarrs_jpeg.name == "zarrs-jpeg-turbo"), versions["backend"]
    with pytest.raises(ValueError, match="missing field `subsampling`"):
        zarrs_jpeg.parse(GRAY)  # valid for the spec (JPEG-SUB-06: subsampling SHOULD be omitted)
    zarrs_jpeg.parse(_config(quality=0, subsampling=[[1, 1]]))  # invalid for the spec (JPEG-Q-01)


def test_zarrs_jpeg_decodes_through_zarrs_codec_chain_whose_size_check_refuses_a_short_chunk(zarrs_jpeg: Any) -> None:
    """As zarrs' array API calls it: a pass-through decode of a 4:2:0 stream that hands over fewer samples than the chunk
    holds (zarrs_jpeg 0.2.0's turbo backend returns libjpeg-turbo's planar buffer) is zarrs' refusal naming both counts,
    not a harness error; the rust backend returns the whole chunk."""
    codec = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr",
                                               "subsampling": [[2, 2], [1, 1], [1, 1]]}}
    stream = load_adapter("turbojpeg").encode(load_adapter("turbojpeg").parse(YCBCR_420), np.full((32, 96, 3), 99, np.uint8))
    parsed = zarrs_jpeg.parse(codec)
    if zarrs_jpeg.name == "zarrs-jpeg-rust":
        assert zarrs_jpeg.decode(parsed, stream, (32, 96, 3)).shape == (32, 96, 3)
        return
    with pytest.raises(ValueError, match="the size of a decoded chunk is 4608, expected 9216"):
        zarrs_jpeg.decode(parsed, stream, (32, 96, 3))


def test_zarrs_jpeg_cannot_represent_an_empty_chunk(zarrs_jpeg: Any) -> None:
    parsed = zarrs_jpeg.parse(_config(quality=90, subsampling=[[1, 1]]))
    with pytest.raises(ValueError, match="NonZeroU64, a 0-length axis"):
        zarrs_jpeg.encode(parsed, np.zeros((0, 8), np.uint8))
    image = (np.arange(16 * 24) % 251).astype(np.uint8).reshape(16, 24)
    stream = zarrs_jpeg.encode(parsed, image)
    assert zarrs_jpeg.decode(parsed, stream, (16, 24)).shape == (16, 24)
