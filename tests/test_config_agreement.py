"""The shared core's parser, the JSON Schema and the corpus agree on every configuration case."""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from zarr_jpeg_conformance.core.config import JpegConfig, parse_codec
from zarr_jpeg_conformance.core.errors import ConfigError
from zarr_jpeg_conformance.corpus.cases import config_cases
from zarr_jpeg_conformance.corpus.registry import load_json

SCHEMA = Draft202012Validator(load_json("schema", "jpeg.schema.json"))


@pytest.mark.parametrize("case", config_cases(), ids=lambda c: c.id)
def test_core_parser_agrees_with_schema_and_corpus(case) -> None:
    """parse_codec accepts exactly the cases the schema accepts, and the case says so too."""
    schema_ok = SCHEMA.is_valid(case.codec)
    try:
        parsed = parse_codec(case.codec)
        core_ok, why = True, ""
    except ConfigError as exc:
        core_ok, why = False, str(exc)
        assert exc.requirement in case.requirements, f"{case.id}: rejection cites {exc.requirement}, the case {case.requirements}"
    assert core_ok == schema_ok == case.valid, f"{case.id}: core={core_ok} ({why}) schema={schema_ok} case={case.valid}"
    if core_ok:
        # What the core writes back is valid and means the same configuration.
        written = parsed.to_codec()
        assert SCHEMA.is_valid(written), written
        assert parse_codec(json.loads(json.dumps(written))) == parsed


def test_defaults_are_applied() -> None:
    """decoded_color_space and subsampling defaults depend only on the configuration."""
    gray = parse_codec({"name": "jpeg", "configuration": {"quality": 95, "encoded_color_space": "grayscale"}})
    rgb = parse_codec({"name": "jpeg", "configuration": {"quality": 95, "encoded_color_space": "rgb"}})
    assert gray == JpegConfig(95, "grayscale", "grayscale", ((1, 1),))
    assert rgb == JpegConfig(95, "rgb", "rgb", ((1, 1), (1, 1), (1, 1)))
    assert rgb.optional_feature == "JPEG-ECS-09" and gray.optional_feature is None


def test_rejections_cite_the_rule() -> None:
    """Each rejection names the requirement it rests on."""
    cases = {
        "JPEG-NAME-01": {"name": "JPEG", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}},
        "JPEG-Q-05": {"name": "jpeg", "configuration": {"encoded_color_space": "grayscale"}},
        "JPEG-SUB-04": {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr"}},
        "JPEG-DCS-04": {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "rgb", "decoded_color_space": "ycbcr"}},
        "JPEG-SUB-03": {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [2, 1], [1, 1]]}},
        "JPEG-X-01": {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale", "level": 3}},
    }
    for requirement, codec in cases.items():
        with pytest.raises(ConfigError) as info:
            parse_codec(codec)
        assert info.value.requirement == requirement, (codec, str(info.value))
