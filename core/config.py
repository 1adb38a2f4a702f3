"""Parsing of the ``jpeg`` codec object: the parse-time rules of the spec, in one place.

The rules here and ``schema/jpeg.schema.json`` must agree on every case of
``fixtures/configs`` (``tests/test_config_agreement.py`` proves it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

from .errors import ConfigError

ColorSpace = Literal["grayscale", "ycbcr", "rgb"]
Factors = tuple[tuple[int, int], ...]

COLOR_SPACES: tuple[ColorSpace, ...] = ("grayscale", "ycbcr", "rgb")
CONFIG_MEMBERS = frozenset({"quality", "encoded_color_space", "decoded_color_space", "subsampling"})
#: must_understand: Zarr v3 core allows it on any extension object, a codec too (JPEG-X-19).
CODEC_MEMBERS = frozenset({"name", "configuration", "must_understand"})
#: decoded -> encoded combinations of the spec's table (JPEG-DCS-03).
ALLOWED_COMBINATIONS: frozenset[tuple[str, str]] = frozenset(
    {("grayscale", "grayscale"), ("rgb", "ycbcr"), ("rgb", "rgb"), ("ycbcr", "ycbcr")}
)
DEFAULT_SUBSAMPLING: dict[str, Factors] = {
    "grayscale": ((1, 1),),
    "rgb": ((1, 1), (1, 1), (1, 1)),
}
#: The J:a:b schemes every implementation MUST support (JPEG-SUB-08), by luma factor.
REQUIRED_SCHEMES: dict[str, tuple[int, int]] = {
    "4:4:4": (1, 1),
    "4:2:2": (2, 1),
    "4:4:0": (1, 2),
    "4:2:0": (2, 2),
}
#: Factors allowed in ``subsampling`` (JPEG-SUB-01).
MIN_FACTOR, MAX_FACTOR = 1, 4


@dataclass(frozen=True)
class JpegConfig:
    """A parsed configuration with every default applied."""

    quality: int
    encoded_color_space: ColorSpace
    decoded_color_space: ColorSpace
    subsampling: Factors

    @property
    def components(self) -> int:
        """Component count fixed by ``encoded_color_space`` (JPEG-ECS-02)."""
        return 1 if self.encoded_color_space == "grayscale" else 3

    @property
    def luma_factors(self) -> tuple[int, int]:
        return self.subsampling[0]

    @property
    def mcu(self) -> tuple[int, int]:
        """MCU size as (height, width) in samples."""
        h, v = self.luma_factors
        return 8 * v, 8 * h

    @property
    def blocks_per_mcu(self) -> int:
        """Blocks in one interleaved MCU (T.81 B.2.3 allows at most 10)."""
        return sum(h * v for h, v in self.subsampling)

    @property
    def is_required_scheme(self) -> bool:
        """True for grayscale, rgb and the four schemes of JPEG-SUB-08."""
        return self.encoded_color_space != "ycbcr" or self.luma_factors in REQUIRED_SCHEMES.values()

    @property
    def optional_feature(self) -> str | None:
        """The requirement that makes support for this configuration optional, if any.

        Only grayscale and RGB -> YCbCr with the four J:a:b schemes must be supported
        (JPEG-ECS-08, JPEG-SUB-08); an implementation may reject the rest when parsing.
        """
        if self.encoded_color_space == "rgb":
            return "JPEG-ECS-09"
        if self.decoded_color_space == "ycbcr":
            return "JPEG-DCS-05"
        if not self.is_required_scheme:
            return "JPEG-X-04"
        return None

    def to_codec(self) -> dict[str, Any]:
        """The codec object, written minimally (``subsampling`` omitted where it is the default)."""
        cfg: dict[str, Any] = {"quality": self.quality, "encoded_color_space": self.encoded_color_space}
        default_decoded = "grayscale" if self.encoded_color_space == "grayscale" else "rgb"
        if self.decoded_color_space != default_decoded:
            cfg["decoded_color_space"] = self.decoded_color_space
        if self.encoded_color_space == "ycbcr":
            cfg["subsampling"] = [list(f) for f in self.subsampling]
        return {"name": "jpeg", "configuration": cfg}


def is_color_space(value: object) -> TypeGuard[ColorSpace]:
    """Whether ``value`` names one of the spec's color spaces."""
    return isinstance(value, str) and value in COLOR_SPACES


def _is_int(value: object) -> TypeGuard[int]:
    # bool is an int subclass in Python but not an integer in JSON.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_factor(value: object) -> TypeGuard[int]:
    return _is_int(value) and MIN_FACTOR <= value <= MAX_FACTOR


def _as_int(value: object) -> object:
    """90.0 is the integer 90 in the JSON data model and in JSON Schema (JPEG-X-02)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _parse_quality(cfg: Mapping[str, Any]) -> int:
    if "quality" not in cfg:
        raise ConfigError("JPEG-Q-05", "configuration has no 'quality' (it is required and has no default)")
    q = _as_int(cfg["quality"])
    if not _is_int(q):
        raise ConfigError("JPEG-Q-01", f"'quality' must be an integer, got {q!r}")
    if not 1 <= q <= 100:
        raise ConfigError("JPEG-Q-01", f"'quality' must be in the range 1-100, got {q}")
    return q


def _parse_color_space(cfg: Mapping[str, Any], key: str, requirement: str) -> ColorSpace:
    value = cfg[key]
    if not is_color_space(value):
        raise ConfigError(requirement, f"{key!r} must be one of {', '.join(COLOR_SPACES)}, got {value!r}")
    return value


def _parse_factors(value: object, components: int) -> Factors:
    if not isinstance(value, list | tuple):
        raise ConfigError("JPEG-SUB-01", f"'subsampling' must be an array of [h, v] pairs, got {value!r}")
    # The shape first: a flat [2, 2, 1, 1, 1, 1] is not pairs at all, whatever its length.
    for entry in value:
        if not isinstance(entry, list | tuple) or len(entry) != 2:
            raise ConfigError("JPEG-SUB-01", f"each 'subsampling' entry must be a pair [h, v], got {entry!r}")
    if len(value) != components:
        raise ConfigError(
            "JPEG-CFG-01",
            f"'subsampling' has {len(value)} entries but the encoded color space has {components} component(s)",
        )
    factors = []
    for entry in value:
        h, v = (_as_int(f) for f in entry)
        if not (_is_factor(h) and _is_factor(v)):
            raise ConfigError("JPEG-SUB-01", f"sampling factors must be integers in the range 1-4, got {entry!r}")
        factors.append((h, v))
    return tuple(factors)


def parse_codec(codec: Mapping[str, Any]) -> JpegConfig:
    """Parse a whole codec object ``{"name": "jpeg", "configuration": {...}}``.

    Raises :class:`ConfigError` (a ``ValueError``) citing the broken requirement.
    """
    if not isinstance(codec, Mapping):
        raise ConfigError("JPEG-CFG-01", f"codec object must be a JSON object, got {type(codec).__name__}")
    if codec.get("name") != "jpeg":
        raise ConfigError("JPEG-NAME-01", f"codec name must be 'jpeg', got {codec.get('name')!r}")
    extra = set(codec) - CODEC_MEMBERS
    if extra:
        raise ConfigError("JPEG-X-01", f"codec object has unknown member(s): {', '.join(sorted(map(str, extra)))}")
    if "must_understand" in codec and not isinstance(codec["must_understand"], bool):
        raise ConfigError("JPEG-X-19", f"'must_understand' must be true or false, got {codec['must_understand']!r}")
    cfg = codec.get("configuration")
    if not isinstance(cfg, Mapping):
        raise ConfigError("JPEG-Q-05", f"codec object needs a 'configuration' object, got {cfg!r}")
    extra = set(cfg) - CONFIG_MEMBERS
    if extra:
        raise ConfigError("JPEG-X-01", f"configuration has unknown member(s): {', '.join(sorted(map(str, extra)))}")

    quality = _parse_quality(cfg)
    if "encoded_color_space" not in cfg:
        raise ConfigError("JPEG-ECS-07", "configuration has no 'encoded_color_space' (it is required)")
    encoded = _parse_color_space(cfg, "encoded_color_space", "JPEG-ECS-01")
    if "decoded_color_space" in cfg:
        decoded = _parse_color_space(cfg, "decoded_color_space", "JPEG-DCS-01")
    else:
        decoded = "grayscale" if encoded == "grayscale" else "rgb"
    if (decoded, encoded) not in ALLOWED_COMBINATIONS:
        raise ConfigError(
            "JPEG-DCS-04", f"decoded_color_space {decoded!r} with encoded_color_space {encoded!r} is not allowed"
        )

    components = 1 if encoded == "grayscale" else 3
    if "subsampling" not in cfg:
        if encoded == "ycbcr":
            raise ConfigError("JPEG-SUB-04", "'subsampling' is required with encoded_color_space 'ycbcr'")
        subsampling = DEFAULT_SUBSAMPLING[encoded]
    else:
        subsampling = _parse_factors(cfg["subsampling"], components)
        if encoded == "ycbcr":
            _luma, *chroma = subsampling
            if any(c != (1, 1) for c in chroma):
                raise ConfigError("JPEG-SUB-03", f"chroma sampling factors must be [1, 1], got {list(map(list, chroma))}")
        elif subsampling != DEFAULT_SUBSAMPLING[encoded]:
            raise ConfigError(
                "JPEG-SUB-07",
                f"'subsampling' with {encoded!r} must equal the default "
                f"{[list(f) for f in DEFAULT_SUBSAMPLING[encoded]]}, got {[list(f) for f in subsampling]}",
            )
    return JpegConfig(quality, encoded, decoded, subsampling)
