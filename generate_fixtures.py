"""Write, check and measure the stream corpus (fixtures/streams) and its sha256 manifest.

    python -m zarr_jpeg_conformance.generate_fixtures             # write; refuses to overwrite
    python -m zarr_jpeg_conformance.generate_fixtures --force     # rewrite everything
    python -m zarr_jpeg_conformance.generate_fixtures --check     # verify the committed corpus
    python -m zarr_jpeg_conformance.generate_fixtures --update-manifest
    python -m zarr_jpeg_conformance.generate_fixtures --measure   # numbers behind decode_tolerances
    python generate_fixtures.py ...                               # the same, from the repository root

Each case is a recipe below: how its stream is made (a reference encoder from pip, a tool
of Debian's libjpeg-turbo-progs, or a byte edit of another case's stream), the
configuration and chunk shape it is decoded under, and the verdict. The expected decode
is :func:`streams.reference_decode` of the stream. Generation is deterministic: the same
libraries give the same bytes. ``--check`` needs pip packages only (numpy, imagecodecs,
Pillow, jsonschema): it verifies the manifest, re-decodes every committed stream, and
rebuilds every recipe it can without cjpeg, comparing bytes, or decoded pixels where an
encoder's bytes legitimately differ across library versions.
"""

from __future__ import annotations

if __name__ == "__main__" and not __package__:
    # Run as a file: run the installed package's module instead, so relative imports work.
    import runpy

    runpy.run_module("zarr_jpeg_conformance.generate_fixtures", run_name="__main__", alter_sys=True)
    raise SystemExit(0)

import argparse
import hashlib
import importlib
import io
import json
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from .core import color, scans
from .core.config import parse_codec
from .core.markers import StreamInfo, inspect
from .decode_tolerances import FAMILIES, difference, family_for
from .harness import codec
from .images import make_image
from .modes import MODES, Mode
from .streams import CATEGORIES, decode_requirements, reference_decode

PACKAGE_ROOT = Path(__file__).resolve().parent
SCHEMA = Path(__file__).resolve().parent / "schema" / "stream-case.schema.json"
MANIFEST = ("streams", "manifest.json")
KEY_ORDER = (
    "id", "description", "category", "requirements", "level", "codec", "chunk_shape", "expect",
    "tolerance", "source", "encoder", "reference_decoder", "comment",
)  # fmt: skip

Built = tuple[bytes, dict[str, Any]]


# ============================================================================ recipes


@dataclass(frozen=True)
class Recipe:
    """How one case's stream is made, and what a decoder must do with it."""

    id: str
    category: str
    description: str
    requirements: tuple[str, ...]
    level: str
    codec: dict[str, Any]
    chunk_shape: tuple[int, ...]
    expect: str
    source: dict[str, Any]
    build: Callable[[Builder], Built]
    #: A program beyond pip that the build needs (generation only; --check skips the rebuild).
    tool: str | None = None
    #: What the built stream must declare; returns a complaint or None.
    structure: Callable[[StreamInfo], str | None] | None = None
    comment: str | None = None

    def paths(self, root: Path) -> list[Path]:
        folder = root / "streams" / self.category
        names = [".jpg", ".json"] + ([".npy"] if self.expect != "reject" else [])
        return [folder / f"{self.id}{ext}" for ext in names]


@dataclass
class Builder:
    """Gives recipes the streams of other cases: built in this run, or committed ones (--check)."""

    root: Path
    committed: bool
    built: dict[str, bytes] = field(default_factory=dict)
    categories: dict[str, str] = field(default_factory=dict)

    def stream(self, case_id: str) -> bytes:
        if not self.committed and case_id in self.built:
            return self.built[case_id]
        return (self.root / "streams" / self.categories[case_id] / f"{case_id}.jpg").read_bytes()


# ---------------------------------------------------------------------------- encoders


def _imagecodecs_version() -> str:
    import imagecodecs

    return f"{imagecodecs.__version__} ({imagecodecs.jpeg8_version()})"


def _pillow_version() -> str:
    import PIL
    from PIL import features

    return f"{PIL.__version__} (libjpeg-turbo {features.version_feature('libjpeg_turbo')})"


def _cjpeg_version() -> str:
    found = shutil.which("cjpeg")
    if not found:
        return "not installed"
    done = subprocess.run([found, "-version"], capture_output=True, text=True, check=False)
    return (done.stderr or done.stdout).strip()


def _jsonable(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}


def ic(image: np.ndarray, **options: Any) -> Built:
    """imagecodecs' jpeg8_encode (libjpeg-turbo, accurate DCT, standard Huffman tables)."""
    import imagecodecs

    data = imagecodecs.jpeg8_encode(np.ascontiguousarray(image), **options)
    return bytes(data), {"name": "imagecodecs.jpeg8_encode", "version": _imagecodecs_version(), "options": _jsonable(options)}


def pil(image: np.ndarray, mode: str, convert: str | None = None, **options: Any) -> Built:
    """Pillow's JPEG plugin (its bundled libjpeg-turbo)."""
    from PIL import Image

    im = Image.fromarray(np.ascontiguousarray(image), mode)
    if convert:
        im = im.convert(convert)
    buf = io.BytesIO()
    im.save(buf, "JPEG", **options)
    recorded = {"mode": mode, **({"convert": convert} if convert else {}), **options}
    return buf.getvalue(), {"name": "PIL.Image.save", "version": _pillow_version(), "options": recorded}


def cjpeg(image: np.ndarray, *args: str, scans_script: str | None = None) -> Built:
    """Debian's cjpeg (libjpeg-turbo-progs) on a binary PPM/PGM of ``image``."""
    exe = shutil.which("cjpeg")
    if exe is None:
        raise RuntimeError("cjpeg is not installed (Debian: apt-get install libjpeg-turbo-progs)")
    h, w = image.shape[:2]
    gray = image.ndim == 2
    header = f"{'P5' if gray else 'P6'}\n{w} {h}\n255\n".encode()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / ("in.pgm" if gray else "in.ppm")
        src.write_bytes(header + np.ascontiguousarray(image).tobytes())
        argv = list(args)
        if scans_script is not None:
            (Path(tmp) / "scans.txt").write_text(scans_script)
            argv += ["-scans", str(Path(tmp) / "scans.txt")]
        data = subprocess.run([exe, *argv, str(src)], capture_output=True, check=True).stdout
    options: dict[str, Any] = {"args": list(args)}
    if scans_script is not None:
        options["scans"] = scans_script
    return data, {"name": "cjpeg", "version": _cjpeg_version(), "options": options}


def planar(ycc: np.ndarray, factors: tuple[tuple[int, int], ...], quality: int) -> Built:
    """core.scans: one non-interleaved scan per component, from imagecodecs grayscale streams."""
    luma, chroma = scans.quant_tables(quality)
    gray = {"level": quality, "colorspace": "GRAY", "outcolorspace": "GRAY"}
    data = scans.encode_planar(
        ycc,
        factors=factors,
        component_ids=(1, 2, 3),
        adobe_transform=None,
        jfif=True,
        tables=[luma, chroma, chroma],
        encode_gray=lambda plane, _table: ic(plane, **gray)[0],
    )
    options = {"factors": [list(f) for f in factors], "component_ids": [1, 2, 3], "jfif": True,
               "gray_encoder": {"name": "imagecodecs.jpeg8_encode", "options": gray}}
    version = f"zarr-jpeg-conformance {__version__}, imagecodecs {_imagecodecs_version()}"
    return data, {"name": "zarr_jpeg_conformance.core.scans.encode_planar", "version": version, "options": options}


def _edited(base: bytes, how: str, **params: Any) -> dict[str, Any]:
    return {"name": "zarr_jpeg_conformance.generate_fixtures", "version": __version__,
            "options": {"edit": how, **params, "base_sha256": hashlib.sha256(base).hexdigest()}}


# ---------------------------------------------------------------------------- byte edits


def _segment(marker: int, payload: bytes) -> bytes:
    return bytes((0xFF, marker)) + (len(payload) + 2).to_bytes(2, "big") + payload


def _header(data: bytes) -> list[tuple[int, int, int]]:
    """(offset, marker, end) of each segment after SOI, up to and including the first SOS.

    Only for streams written by encoders (no fill bytes between segments).
    """
    out, pos = [], 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        end = pos + 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
        out.append((pos, marker, end))
        if marker == 0xDA:
            break
        pos = end
    return out


def _first(data: bytes, marker: int) -> tuple[int, int]:
    for start, m, end in _header(data):
        if m == marker:
            return start, end
    raise ValueError(f"no FF{marker:02X} segment")


def _sof(data: bytes) -> tuple[int, int]:
    for start, m, end in _header(data):
        if m in (0xC0, 0xC1, 0xC2):
            return start, end
    raise ValueError("no SOF segment")


def _entropy(data: bytes) -> tuple[int, int]:
    """Span of the entropy-coded data of a single-scan stream (between SOS and EOI)."""
    _, sos_end = _first(data, 0xDA)
    return sos_end, data.rindex(b"\xff\xd9")


def drop_app(data: bytes, marker: int, signature: bytes) -> bytes:
    for start, m, end in _header(data):
        if m == marker and data[start + 4 : start + 4 + len(signature)] == signature:
            return data[:start] + data[end:]
    raise ValueError(f"no FF{marker:02X} {signature!r} segment")


def insert_before(data: bytes, marker: int, segment: bytes) -> bytes:
    start, _ = _first(data, marker) if marker != 0xC0 else _sof(data)
    return data[:start] + segment + data[start:]


def set_component_ids(data: bytes, ids: tuple[int, ...]) -> bytes:
    """Rename the frame's components (SOF and the SOS of a single-scan stream)."""
    out = bytearray(data)
    sof, _ = _sof(data)
    old = [out[sof + 10 + 3 * k] for k in range(out[sof + 9])]
    mapping = dict(zip(old, ids, strict=True))
    for k in range(len(old)):
        out[sof + 10 + 3 * k] = ids[k]
    sos, _ = _first(data, 0xDA)
    for k in range(out[sos + 4]):
        out[sos + 5 + 2 * k] = mapping[out[sos + 5 + 2 * k]]
    return bytes(out)


def patch(data: bytes, offset: int, value: bytes) -> bytes:
    return data[:offset] + value + data[offset + len(value) :]


def noise_bytes(n: int, label: str) -> bytes:
    """Pseudo-random bytes that never change: SHA-256 in counter mode, not a numpy generator."""
    blocks = (hashlib.sha256(f"{label}:{i}".encode()).digest() for i in range(-(-n // 32)))
    return b"".join(blocks)[:n]


JFIF = _segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")


def adobe(transform: int) -> bytes:
    return _segment(0xEE, b"Adobe" + (100).to_bytes(2, "big") + bytes(4) + bytes((transform,)))


# ---------------------------------------------------------------------------- structure checks


def wants(**expected: Any) -> Callable[[StreamInfo], str | None]:
    """A check that the built stream declares these StreamInfo attributes (or factors=...)."""

    def check(info: StreamInfo) -> str | None:
        for key, want in expected.items():
            got = tuple((c.h, c.v) for c in info.components) if key == "factors" else getattr(info, key)
            if got != want:
                return f"{key} is {got!r}, expected {want!r}"
        return None

    return check


# ---------------------------------------------------------------------------- reference streams

#: (name, (H, W)): a multiple of every MCU size, of 8 and 16 only, of 8 only, of none.
SIZE_CLASSES = (("mcu32", (32, 96)), ("mcu16", (48, 80)), ("mcu8", (40, 24)), ("unaligned", (37, 53)))
#: Quality bands: coarse tables (large DCT errors), the usual default, near-transparent.
QUALITIES = (20, 75, 95)
SIZE_NOTES = {
    "mcu32": "a multiple of every MCU size (8, 16, 32)",
    "mcu16": "a multiple of 8 and 16, not of 32",
    "mcu8": "a multiple of 8, not of 16",
    "unaligned": "a multiple of no MCU size: the decoder crops partial MCUs",
}
IMAGECODECS_FACTORS = {(1, 1), (2, 1), (1, 2), (2, 2), (4, 1)}
MODE_TEXT = {
    "gray": "grayscale",
    "ycbcr-444": "ycbcr 4:4:4",
    "ycbcr-422": "ycbcr 4:2:2",
    "ycbcr-440": "ycbcr 4:4:0",
    "ycbcr-420": "ycbcr 4:2:0",
    "rgb": "rgb (APP14 transform 0)",
    "passthrough-444": "ycbcr passthrough 4:4:4",
    "passthrough-420": "ycbcr passthrough 4:2:0",
    "ycbcr-411": "ycbcr 4:1:1",
    "ycbcr-42": "ycbcr [4, 2] (non-interleaved scans)",
    "ycbcr-44": "ycbcr [4, 4] (non-interleaved scans)",
}
RGB_BASE = "stream.reference.rgb.q75.48x80"
YCC_BASE = "stream.reference.ycbcr-444.q75.48x80"
YCC420_BASE = "stream.reference.ycbcr-420.q75.48x80"
GRAY_BASE = "stream.reference.gray.q75.32x96"
WIDE_BASE = "stream.reference.ycbcr-444.q75.32x96"
SECOND_420 = "stream.reference.ycbcr-420.q95.48x80"
#: Reference cases that other cases are edits of get content worth editing; the rest take
#: the kinds of KIND_ORDER (SMOOTH_CHROMA when subsampled) in turn.
BASE_KINDS = {
    RGB_BASE: "fluorescence",
    YCC_BASE: "natural",
    YCC420_BASE: "natural",
    GRAY_BASE: "natural",
    WIDE_BASE: "axes",
    SECOND_420: "axes",
}
#: Kinds whose chroma changes slowly at the scale of an MCU, for the subsampled modes: there
#: the upsampling filter is the decoder's choice, and on chroma detail (noise, checker,
#: edges, detail, ramp, gradient at 24 px) a box filter lands 10-28 levels from libjpeg's
#: triangle filter on average, as far as a wrong colour transform lands on natural content
#: (``--measure``); no tolerance could tell the two apart there.
SMOOTH_CHROMA = ("natural", "fluorescence", "axes", "zeros", "full")
KIND_ORDER = ("natural", "gradient", "noise", "edges", "checker", "detail", "fluorescence", "ramp", "axes", "zeros", "full")


def _encode_reference(mode: Mode, image: np.ndarray, quality: int) -> Built:
    if mode.encoded == "grayscale":
        return ic(image[:, :, 0], level=quality, colorspace="GRAY", outcolorspace="GRAY")
    if mode.encoded == "rgb":
        return ic(image, level=quality, colorspace="RGB", outcolorspace="RGB")
    luma = mode.subsampling[0] if mode.subsampling else (1, 1)
    space = "YCbCr" if mode.decoded == "ycbcr" else "RGB"
    if luma in IMAGECODECS_FACTORS:
        return ic(image, level=quality, colorspace=space, outcolorspace="YCbCr", subsampling=luma)
    ycc = image if mode.decoded == "ycbcr" else color.rgb_to_ycbcr(image)
    return planar(ycc, mode.subsampling or (), quality)


def reference_recipes() -> Iterator[Recipe]:
    n = 0
    for mode in MODES:
        factors = mode.subsampling or ((1, 1),)
        mcu_h, mcu_w = 8 * max(v for _, v in factors), 8 * max(h for h, _ in factors)
        subsampled = len(set(factors)) > 1
        for size_name, (h, w) in SIZE_CLASSES:
            for q in QUALITIES:
                case_id = f"stream.reference.{mode.id}.q{q}.{h}x{w}"
                kinds = SMOOTH_CHROMA if subsampled else KIND_ORDER
                kind = BASE_KINDS.get(case_id, kinds[n % len(kinds)])
                n += 1
                aligned = h % mcu_h == 0 and w % mcu_w == 0
                requirements, level, expect = decode_requirements(mode)
                if not aligned:
                    requirements += ("JPEG-MCU-01",)
                if mode.channels == 1:
                    shape: tuple[int, ...] = (h, w, 1) if size_name in ("mcu8", "unaligned") else (h, w)
                else:
                    shape = (h, w, 3)
                image_id = {"kind": kind, "height": h, "width": w, "channels": mode.channels, "seed": 0}
                source: dict[str, Any] = {"image": image_id}
                if mode.decoded == "ycbcr":
                    source["recipe"] = "the image's samples are taken as YCbCr"
                pad = "" if aligned else f"; MCU {mcu_h}x{mcu_w} does not divide it"
                yield Recipe(
                    id=case_id,
                    category="reference",
                    description=f"{MODE_TEXT[mode.id]}, quality {q}, {h}x{w} {kind} image",
                    requirements=requirements,
                    level=level,
                    codec=mode.codec(q),
                    chunk_shape=shape,
                    expect=expect,
                    source=source,
                    build=lambda _b, mode=mode, kind=kind, h=h, w=w, q=q: _encode_reference(
                        mode, make_image(kind, h, w, mode.channels, 0), q
                    ),
                    structure=wants(sof=0xC0, height=h, width=w, factors=mode.subsampling or ((1, 1),) * mode.channels),
                    comment=f"Size class {size_name}: {h}x{w} is {SIZE_NOTES[size_name]}{pad}.",
                )


# ---------------------------------------------------------------------------- foreign streams

SEQ3 = "0: 0 63 0 0;\n1: 0 63 0 0;\n2: 0 63 0 0;\n"
C444 = codec(90, "ycbcr", None, [(1, 1), (1, 1), (1, 1)])
C420 = codec(90, "ycbcr", None, [(2, 2), (1, 1), (1, 1)])
GRAY = codec(90, "grayscale")


def _natural(h: int, w: int, channels: int = 3) -> np.ndarray:
    img = make_image("natural", h, w, channels, 0)
    return np.ascontiguousarray(img[:, :, 0]) if channels == 1 else img


def _nat_source(h: int, w: int, channels: int = 3, recipe: str | None = None) -> dict[str, Any]:
    src: dict[str, Any] = {"image": {"kind": "natural", "height": h, "width": w, "channels": channels, "seed": 0}}
    if recipe:
        src["recipe"] = recipe
    return src


def _derived(base: str, recipe: str) -> dict[str, Any]:
    return {"derived_from": base, "recipe": recipe}


def _marker_variant(
    name: str, base: str, recipe: str, edit: Callable[[bytes], bytes], description: str,
    requirements: tuple[str, ...], level: str, expect: str, comment: str, **structure: Any,
) -> Recipe:  # fmt: skip
    return Recipe(
        id=f"stream.foreign.{name}",
        category="foreign",
        description=description,
        requirements=requirements,
        level=level,
        codec=C444,
        chunk_shape=(48, 80, 3),
        expect=expect,
        source=_derived(base, recipe),
        build=lambda b: (edit(b.stream(base)), _edited(b.stream(base), name)),
        structure=wants(**structure),
        comment=comment,
    )


def _odd_factor(h: int, v: int, interleaved: bool) -> Recipe:
    scan = "" if interleaved else "-non-interleaved"
    text = "one interleaved scan" if interleaved else "three non-interleaved scans"
    return Recipe(
        id=f"stream.foreign.factors-{h}x{v}{scan}",
        category="foreign",
        description=f"ycbcr with luma factors [{h}, {v}] in {text}, 45x61, cjpeg",
        requirements=("JPEG-X-04", "JPEG-DEC-01", "JPEG-SUB-01"),
        level="MAY",
        codec=codec(85, "ycbcr", None, [(h, v), (1, 1), (1, 1)]),
        chunk_shape=(45, 61, 3),
        expect="decode-or-reject",
        source=_nat_source(45, 61),
        build=lambda _b: cjpeg(_natural(45, 61), "-quality", "85", "-sample", f"{h}x{v},1x1,1x1",
                               scans_script=None if interleaved else SEQ3),
        tool="cjpeg",
        structure=wants(sof=0xC0, factors=((h, v), (1, 1), (1, 1)), scans=((1, 2, 3),) if interleaved else ((1,), (2,), (3,))),
        comment="Factors beyond the four required schemes are optional (JPEG-X-04): a decoder MAY reject them "
        "cleanly, and one that decodes them must return libjpeg-turbo's pixels within the subsampled tolerance."
        + ("" if interleaved else " One interleaved MCU would hold h*v + 2 > 10 blocks, which T.81 B.2.3 forbids."),
    )


def foreign_recipes() -> Iterator[Recipe]:
    baseline_variant = ("JPEG-FMT-01", "JPEG-X-09", "JPEG-DEC-01")
    yield Recipe(
        id="stream.foreign.optimized-huffman",
        category="foreign",
        description="ycbcr 4:2:0 with optimized Huffman tables, 48x64, Pillow",
        requirements=baseline_variant, level="MUST", codec=C420, chunk_shape=(48, 64, 3), expect="decode",
        source=_nat_source(48, 64),
        build=lambda _b: pil(_natural(48, 64), "RGB", quality=85, subsampling=2, optimize=True),
        structure=wants(sof=0xC0),
        comment="Optimized tables are still baseline (T.81 Annex K tables are only examples): every decoder decodes them.",
    )
    yield Recipe(
        id="stream.foreign.restart-every-mcu",
        category="foreign",
        description="ycbcr 4:2:0 with a restart marker after every MCU, 45x61, cjpeg",
        requirements=baseline_variant, level="MUST", codec=C420, chunk_shape=(45, 61, 3), expect="decode",
        source=_nat_source(45, 61),
        build=lambda _b: cjpeg(_natural(45, 61), "-quality", "85", "-restart", "1B"),
        tool="cjpeg",
        structure=wants(sof=0xC0, restart_interval=1),
        comment="Restart intervals (DRI, RST0-RST7, wrapping around) are part of baseline: every decoder decodes them.",
    )
    yield Recipe(
        id="stream.foreign.restart-every-row",
        category="foreign",
        description="grayscale with a restart marker after every MCU row, 48x64, Pillow",
        requirements=baseline_variant, level="MUST", codec=GRAY, chunk_shape=(48, 64), expect="decode",
        source=_nat_source(48, 64, 1),
        build=lambda _b: pil(_natural(48, 64, 1), "L", quality=85, restart_marker_rows=1),
        structure=wants(sof=0xC0, restart_interval=8),
        comment="Restart intervals are part of baseline: every decoder decodes them.",
    )
    yield Recipe(
        id="stream.foreign.non-interleaved-420",
        category="foreign",
        description="ycbcr 4:2:0 in three non-interleaved sequential scans, 45x61, cjpeg",
        requirements=baseline_variant, level="MUST", codec=C420, chunk_shape=(45, 61, 3), expect="decode",
        source=_nat_source(45, 61),
        build=lambda _b: cjpeg(_natural(45, 61), "-quality", "85", scans_script=SEQ3),
        tool="cjpeg",
        structure=wants(sof=0xC0, scans=((1,), (2,), (3,))),
        comment="A baseline frame may code its components in several scans (T.81 B.2.1): still SOF0, every decoder decodes it.",
    )
    yield Recipe(
        id="stream.foreign.non-interleaved-tables-per-scan",
        category="foreign",
        description="ycbcr 4:2:2 in three scans, Huffman tables redefined per scan, 40x56, core/scans.py",
        requirements=baseline_variant, level="MUST", codec=codec(85, "ycbcr", None, [(2, 1), (1, 1), (1, 1)]),
        chunk_shape=(40, 56, 3), expect="decode",
        source=_nat_source(40, 56, recipe="converted to YCbCr with core.color.rgb_to_ycbcr"),
        build=lambda _b: planar(color.rgb_to_ycbcr(_natural(40, 56)), ((2, 1), (1, 1), (1, 1)), 85),
        structure=wants(sof=0xC0, scans=((1,), (2,), (3,))),
        comment="What the built-in adapters write for factor sets their library lacks: DHT before each SOS, one "
        "quantization table per component. Baseline (T.81 B.2.1): every decoder decodes it.",
    )
    yield Recipe(
        id="stream.foreign.comment-and-app-segments",
        category="foreign",
        description="ycbcr 4:2:0 with COM, APP1 (Exif) and APP2 segments, 48x80",
        requirements=baseline_variant, level="MUST", codec=C420, chunk_shape=(48, 80, 3), expect="decode",
        source=_derived(YCC420_BASE, "COM, APP1 'Exif' and APP2 segments inserted before the DQT"),
        build=lambda b: (
            insert_before(
                b.stream(YCC420_BASE), 0xDB,
                _segment(0xFE, b"written by zarr-jpeg-conformance")
                + _segment(0xE1, b"Exif\x00\x00MM\x00\x2a\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00")
                + _segment(0xE2, b"unrelated application data\x00" + bytes(range(64))),
            ),
            _edited(b.stream(YCC420_BASE), "comment-and-app-segments"),
        ),
        structure=wants(comments=1, app_segments=(0xE0, 0xE1, 0xE2)),
        comment="Decoders skip COM and unknown APPn segments (T.81 B.2.4.5, B.2.4.6).",
    )
    yield Recipe(
        id="stream.foreign.fill-bytes",
        category="foreign",
        description="ycbcr 4:2:0 with 0xFF fill bytes before its header markers, 48x80",
        requirements=baseline_variant, level="MUST", codec=C420, chunk_shape=(48, 80, 3), expect="decode",
        source=_derived(YCC420_BASE, "three 0xFF fill bytes inserted before every marker from DQT to SOS"),
        build=lambda b: (_with_fill(b.stream(YCC420_BASE)), _edited(b.stream(YCC420_BASE), "fill-bytes")),
        structure=wants(sof=0xC0, problems=()),
        comment="Any marker may be preceded by 0xFF fill bytes (T.81 B.1.1.2).",
    )
    may_accept = ("JPEG-X-09", "JPEG-DEC-01")
    yield Recipe(
        id="stream.foreign.progressive-420",
        category="foreign",
        description="ycbcr 4:2:0 progressive (SOF2), 45x61, cjpeg",
        requirements=may_accept, level="MAY", codec=C420, chunk_shape=(45, 61, 3), expect="decode-or-reject",
        source=_nat_source(45, 61),
        build=lambda _b: cjpeg(_natural(45, 61), "-quality", "85", "-progressive"),
        tool="cjpeg",
        structure=wants(sof=0xC2),
        comment="Not baseline: a decoder MAY reject it cleanly, or decode it (to the same pixels) (JPEG-X-09).",
    )
    yield Recipe(
        id="stream.foreign.progressive-gray",
        category="foreign",
        description="grayscale progressive (SOF2), 48x64, Pillow",
        requirements=may_accept, level="MAY", codec=GRAY, chunk_shape=(48, 64), expect="decode-or-reject",
        source=_nat_source(48, 64, 1),
        build=lambda _b: pil(_natural(48, 64, 1), "L", quality=85, progressive=True),
        structure=wants(sof=0xC2),
        comment="Not baseline: a decoder MAY reject it cleanly, or decode it (JPEG-X-09).",
    )
    yield Recipe(
        id="stream.foreign.arithmetic-420",
        category="foreign",
        description="ycbcr 4:2:0 arithmetic-coded (SOF9), 45x61, cjpeg",
        requirements=may_accept, level="MAY", codec=C420, chunk_shape=(45, 61, 3), expect="decode-or-reject",
        source=_nat_source(45, 61),
        build=lambda _b: cjpeg(_natural(45, 61), "-quality", "85", "-arithmetic"),
        tool="cjpeg",
        structure=wants(sof=0xC9),
        comment="Not baseline: a decoder MAY reject it cleanly (the JavaScript decoders do), or decode it (JPEG-X-09).",
    )
    yield Recipe(
        id="stream.foreign.extended-16bit-tables",
        category="foreign",
        description="ycbcr 4:2:0 extended sequential (SOF1) with 16-bit quantization tables, 45x61, cjpeg",
        requirements=may_accept, level="MAY", codec=C420, chunk_shape=(45, 61, 3), expect="decode-or-reject",
        source=_nat_source(45, 61),
        build=lambda _b: cjpeg(_natural(45, 61), "-quality", "5"),
        tool="cjpeg",
        structure=wants(sof=0xC1, precision=8, dqt_precisions=(1, 1)),
        comment="cjpeg without -baseline writes quantization values above 255, so SOF1: 8-bit samples, not baseline (JPEG-X-09).",
    )
    yield Recipe(
        id="stream.foreign.lossless-8bit",
        category="foreign",
        description="grayscale lossless (SOF3), 8-bit, 48x64, imagecodecs",
        requirements=may_accept, level="MAY", codec=GRAY, chunk_shape=(48, 64), expect="decode-or-reject",
        source=_nat_source(48, 64, 1),
        build=lambda _b: ic(_natural(48, 64, 1), lossless=True),
        structure=wants(sof=0xC3, precision=8),
        comment="An 8-bit stream that is not a DCT process: a decoder MAY reject it (JPEG-X-09); decoding it must be exact.",
    )
    for h, v in ((3, 1), (1, 3), (2, 4), (4, 2), (4, 1), (1, 4)):
        yield _odd_factor(h, v, interleaved=True)
    yield _odd_factor(4, 4, interleaved=False)
    yield _odd_factor(3, 3, interleaved=False)
    reject_x10 = ("JPEG-X-10", "JPEG-DIM-03")
    yield Recipe(
        id="stream.foreign.precision-12",
        category="foreign",
        description="grayscale 12-bit extended sequential (SOF1), 48x64, imagecodecs",
        requirements=reject_x10, level="SHOULD", codec=GRAY, chunk_shape=(48, 64), expect="reject",
        source=_nat_source(48, 64, 1, "8-bit samples times 16, as uint16"),
        build=lambda _b: ic(_natural(48, 64, 1).astype(np.uint16) * 16, level=90, bitspersample=12),
        structure=wants(sof=0xC1, precision=12),
        comment="12-bit samples cannot be returned as uint8 without loss: a decoder SHOULD reject (JPEG-X-10); "
        "some JavaScript decoders return wrong 8-bit data.",
    )
    yield Recipe(
        id="stream.foreign.lossless-16bit",
        category="foreign",
        description="grayscale lossless (SOF3), 16-bit, 48x64, imagecodecs",
        requirements=reject_x10, level="SHOULD", codec=GRAY, chunk_shape=(48, 64), expect="reject",
        source=_nat_source(48, 64, 1, "8-bit samples times 257, as uint16"),
        build=lambda _b: ic(_natural(48, 64, 1).astype(np.uint16) * 257, lossless=True, bitspersample=16),
        structure=wants(sof=0xC3, precision=16),
        comment="16-bit samples cannot be returned as uint8 without loss: a decoder SHOULD reject (JPEG-X-10).",
    )
    yield Recipe(
        id="stream.foreign.cmyk",
        category="foreign",
        description="CMYK (4 components, APP14 transform 0), 48x64, Pillow",
        requirements=reject_x10, level="SHOULD", codec=C444, chunk_shape=(48, 64, 3), expect="reject",
        source=_nat_source(48, 64, recipe="converted to CMYK by Pillow"),
        build=lambda _b: pil(_natural(48, 64), "RGB", convert="CMYK", quality=90),
        structure=wants(sof=0xC0, adobe_transform=0),
        comment="Four components fit no chunk shape: a decoder SHOULD reject (JPEG-X-10); some libraries "
        "silently convert to three channels.",
    )
    yield from _marker_variants()


def _with_fill(data: bytes) -> bytes:
    out = bytearray()
    last = 0
    for start, marker, _ in _header(data):
        if marker in (0xDB, 0xC4, 0xC0, 0xDA):
            out += data[last:start] + b"\xff\xff\xff"
            last = start
    return bytes(out + data[last:])


def _marker_variants() -> Iterator[Recipe]:
    honor = ("JPEG-ECS-12", "JPEG-DEC-01")
    no_jfif = lambda d: drop_app(d, 0xE0, b"JFIF\x00")  # noqa: E731
    yield _marker_variant(
        "no-jfif", YCC_BASE, "JFIF APP0 removed", no_jfif,
        "ycbcr 4:4:4 without JFIF APP0 or APP14, component ids 1, 2, 3",
        ("JPEG-DEC-01", "JPEG-X-06"), "MUST", "decode",
        "No colour marker and ids 1, 2, 3: YCbCr by every rule (T.871, libjpeg, pdf.js); decoders must convert it.",
        jfif=False, adobe_transform=None, component_ids=(1, 2, 3),
    )
    yield _marker_variant(
        "app14-transform1", YCC_BASE, "JFIF APP0 replaced by APP14 Adobe transform 1",
        lambda d: insert_before(no_jfif(d), 0xDB, adobe(1)),
        "ycbcr 4:4:4 with APP14 transform 1 (YCbCr) and no JFIF",
        ("JPEG-DEC-01", "JPEG-ECS-12"), "MUST", "decode",
        "APP14 says YCbCr (the spec's decoding step: APP14, when present, indicates the stored colour space).",
        jfif=False, adobe_transform=1, component_ids=(1, 2, 3),
    )
    yield _marker_variant(
        "app14-transform1-rgb-ids", YCC_BASE, "JFIF APP0 replaced by APP14 transform 1; component ids set to 'R','G','B'",
        lambda d: set_component_ids(insert_before(no_jfif(d), 0xDB, adobe(1)), (82, 71, 66)),
        "ycbcr 4:4:4 with APP14 transform 1 and component ids 'R','G','B'",
        ("JPEG-DEC-01", "JPEG-ECS-12"), "MUST", "decode",
        "APP14 wins over component ids: the samples are YCbCr (every decoder measured agrees).",
        jfif=False, adobe_transform=1, component_ids=(82, 71, 66),
    )
    yield _marker_variant(
        "app14-transform0-ycc-ids", RGB_BASE, "component ids of the rgb stream set to 1, 2, 3",
        lambda d: set_component_ids(d, (1, 2, 3)),
        "rgb with APP14 transform 0 and component ids 1, 2, 3",
        honor, "MUST", "decode-or-reject",
        "APP14 transform 0 says the samples are not transformed: return them as stored, or reject (JPEG-ECS-12).",
        jfif=False, adobe_transform=0, component_ids=(1, 2, 3),
    )
    yield _marker_variant(
        "rgb-ids-no-app14", RGB_BASE, "APP14 removed from the rgb stream",
        lambda d: drop_app(d, 0xEE, b"Adobe"),
        "rgb with component ids 'R','G','B' and neither JFIF nor APP14",
        ("JPEG-X-12", "JPEG-ECS-12"), "SHOULD", "decode-or-reject",
        "No colour marker, but ids 'R','G','B': libjpeg and pdf.js read RGB, jpeg-js and jpgjs convert (JPEG-X-12).",
        jfif=False, adobe_transform=None, component_ids=(82, 71, 66),
    )
    yield _marker_variant(
        "jfif-app14-transform0", RGB_BASE, "JFIF APP0 inserted before the APP14 of the rgb stream",
        lambda d: d[:2] + JFIF + d[2:],
        "rgb with both JFIF APP0 and APP14 transform 0, component ids 'R','G','B'",
        honor, "MUST", "decode-or-reject",
        "Decoders disagree (backends.md 11.4): libjpeg lets JFIF win and converts, pdf.js lets APP14 win. The spec's "
        "decoding step says APP14 indicates the stored colour space, so the raw components, or a clean rejection "
        "(JPEG-ECS-12); a converted decode fails.",
        jfif=True, adobe_transform=0, component_ids=(82, 71, 66),
    )
    yield _marker_variant(
        "jfif-app14-transform0-ycc-ids", RGB_BASE, "JFIF APP0 inserted and component ids set to 1, 2, 3",
        lambda d: set_component_ids(d[:2] + JFIF + d[2:], (1, 2, 3)),
        "rgb with both JFIF APP0 and APP14 transform 0, component ids 1, 2, 3",
        honor, "MUST", "decode-or-reject",
        "As jfif-app14-transform0, without the 'R','G','B' ids that hint at RGB: APP14 still decides (JPEG-ECS-12).",
        jfif=True, adobe_transform=0, component_ids=(1, 2, 3),
    )


# ---------------------------------------------------------------------------- malformed streams


def _malformed(
    name: str, description: str, requirements: tuple[str, ...], level: str, base: str | None,
    edit: Callable[[bytes], bytes], recipe: str, comment: str, *, codec_obj: dict[str, Any] = C420,
    shape: tuple[int, ...] = (48, 80, 3), expect: str = "reject", structure: Any = None,
) -> Recipe:  # fmt: skip
    def build(b: Builder) -> Built:
        original = b.stream(base) if base else b""
        return edit(original), _edited(original, name)

    return Recipe(
        id=f"stream.malformed.{name}",
        category="malformed",
        description=description,
        requirements=requirements,
        level=level,
        codec=codec_obj,
        chunk_shape=shape,
        expect=expect,
        source=_derived(base, recipe) if base else {"recipe": recipe},
        build=build,
        structure=structure,
        comment=comment,
    )


def _cut(fraction: float) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        start, end = _entropy(data)
        return data[: start + int((end - start) * fraction)]

    return edit


def _cut_with_eoi(data: bytes) -> bytes:
    start, end = _entropy(data)
    return data[: start + (end - start) // 2] + b"\xff\xd9"


def _first_dht_payload(data: bytes) -> int:
    start, _ = _first(data, 0xC4)
    return start + 4


def _oversubscribed(data: bytes) -> bytes:
    # Two 1-bit codes fill the whole code space, so every longer code overflows it
    # (T.81 C.2); the symbol count stays the same, so the segment still parses.
    p = _first_dht_payload(data)
    counts = bytearray(data[p + 1 : p + 17])
    donor = next(i for i in range(15, 0, -1) if counts[i] >= 2)
    counts[0] += 2
    counts[donor] -= 2
    return patch(data, p + 1, bytes(counts))


def _dht_cut(data: bytes) -> bytes:
    start, end = _first(data, 0xC4)
    length = end - start - 2
    return data[:start + 2] + (length - 8).to_bytes(2, "big") + data[start + 4 : end - 8] + data[end:]


def malformed_recipes() -> Iterator[Recipe]:
    dec = ("JPEG-DEC-01",)
    trunc = ("JPEG-X-07", "JPEG-DEC-01")
    yield _malformed("empty", "zero bytes", dec, "MUST", None, lambda _d: b"", "b''",
                     "Nothing to decode: a clean rejection (ValueError or TypeError), not a crash.")
    yield _malformed("random-bytes", "4096 pseudo-random bytes", dec, "MUST", None,
                     lambda _d: noise_bytes(4096, "random-bytes"), "SHA-256 counter-mode bytes, label 'random-bytes'",
                     "Not a JPEG stream.")
    yield _malformed("soi-only", "the SOI marker alone", dec, "MUST", None, lambda _d: b"\xff\xd8", "FFD8",
                     "PyTurboJPEG 1.x returns a (0, 0, 3) array for it (backends.md 11.13).")
    yield _malformed("soi-eoi", "SOI followed by EOI", dec, "MUST", None, lambda _d: b"\xff\xd8\xff\xd9", "FFD8 FFD9",
                     "No frame, no scan.")
    yield _malformed("data-before-soi", "a stream preceded by 16 bytes of text", dec, "MUST", YCC420_BASE,
                     lambda d: b"not a jpeg start" + d, "16 ASCII bytes prepended",
                     "A JPEG stream starts with SOI (T.81 B.2.1); libjpeg refuses anything else.")
    yield _malformed("headers-no-scan", "tables and frame header, then EOI, no scan", dec, "MUST", YCC420_BASE,
                     lambda d: d[: _first(d, 0xDA)[0]] + b"\xff\xd9", "cut before SOS, EOI appended",
                     "A frame with no scan holds no samples.")
    yield _malformed("headers-only", "tables and frame header only, cut before SOS", dec, "MUST", YCC420_BASE,
                     lambda d: d[: _first(d, 0xDA)[0]], "cut before SOS",
                     "No scan and no EOI.")
    yield _malformed("truncated-after-sos", "cut right after the scan header", trunc, "SHOULD", YCC420_BASE,
                     _cut(0.0), "cut at the first byte of entropy-coded data",
                     "No entropy-coded data at all: a decoder SHOULD reject rather than return a grey chunk (JPEG-X-07).")
    for pct in (10, 50, 90):
        yield _malformed(f"truncated-{pct}", f"entropy-coded data cut at {pct} %", trunc, "SHOULD", YCC420_BASE,
                         _cut(pct / 100), f"cut at {pct} % of the entropy-coded data",
                         "Several libraries return the missing rows as grey, silently (backends.md 6): a decoder "
                         "SHOULD reject (JPEG-X-07).")
    yield _malformed("truncated-50-gray", "grayscale, entropy-coded data cut at 50 %", trunc, "SHOULD", GRAY_BASE,
                     _cut(0.5), "cut at 50 % of the entropy-coded data", "As truncated-50, one component (JPEG-X-07).",
                     codec_obj=GRAY, shape=(32, 96))
    yield _malformed("truncated-50-with-eoi", "entropy-coded data cut at 50 %, then EOI", trunc, "SHOULD", YCC420_BASE,
                     _cut_with_eoi, "cut at 50 % of the entropy-coded data, EOI appended",
                     "Structurally complete, but the scan ends early: only decoding shows it. libjpeg warns "
                     "('premature end of data segment') and fills the rest; a decoder SHOULD reject (JPEG-X-07).")
    yield _malformed("missing-eoi", "complete entropy-coded data without the EOI marker", trunc, "SHOULD", YCC420_BASE,
                     lambda d: d[:-2], "last two bytes (EOI) removed",
                     "Every sample is there, but the stream is cut (JPEG-X-07 counts a missing EOI as truncation).")
    trailing = ("JPEG-X-11", "JPEG-DEC-01")
    yield _malformed("trailing-garbage", "512 pseudo-random bytes after EOI", trailing, "MAY", YCC420_BASE,
                     lambda d: d + noise_bytes(512, "trailing-garbage"), "512 SHA-256 counter-mode bytes appended",
                     "The image before EOI is complete: a decoder MAY ignore what follows or MAY reject (JPEG-X-11).",
                     expect="decode-or-reject")
    yield Recipe(
        id="stream.malformed.concatenated",
        category="malformed",
        description="a second, different stream right after EOI",
        requirements=trailing,
        level="MAY",
        codec=C420,
        chunk_shape=(48, 80, 3),
        expect="decode-or-reject",
        source=_derived(YCC420_BASE, "stream.reference.ycbcr-420.q95.48x80 appended after EOI"),
        build=lambda b: (
            b.stream(YCC420_BASE) + b.stream(SECOND_420),
            _edited(b.stream(YCC420_BASE), "concatenated"),
        ),
        comment="Every decoder measured returns the first image (backends.md 6): it MAY do so, or MAY reject (JPEG-X-11).",
    )
    sof = lambda d: _sof(d)[0]  # noqa: E731
    yield _malformed("forged-65535x65535", "frame header claims 65535x65535, data of a 48x80 image",
                     ("JPEG-DIM-03", "JPEG-X-13", "JPEG-X-03"), "MUST", YCC420_BASE,
                     lambda d: patch(d, sof(d) + 5, b"\xff\xff\xff\xff"), "SOF height and width set to 65535",
                     "The chunk is 48x80: reject from the header alone. imagecodecs decodes such a header into "
                     "4.3 GB in 26 s (backends.md 11.15); memory must stay bounded by the chunk (JPEG-X-13).",
                     structure=wants(height=65535, width=65535))
    shape_req = ("JPEG-DIM-03", "JPEG-DEC-03")
    yield _malformed("size-mismatch", "a 48x80 stream decoded into a 48x64 chunk", shape_req, "MUST", YCC420_BASE,
                     lambda d: d, "unchanged; decoded into a chunk of another size",
                     "The samples cannot be reshaped to the chunk shape (JPEG-DIM-03).", shape=(48, 64, 3))
    factor_req = ("JPEG-X-08", "JPEG-DIM-03")
    yield _malformed("transposed", "a 32x96 stream decoded into a 96x32 chunk (same sample count)", factor_req,
                     "SHOULD", WIDE_BASE, lambda d: d, "unchanged; decoded into the transposed chunk shape",
                     "Reshaping would work, but a swapped height and width is the mark of an axis-order bug (JPEG-X-08).",
                     codec_obj=C444, shape=(96, 32, 3))
    yield _malformed("refactorized", "a 32x96 stream decoded into a 64x48 chunk (same sample count)", factor_req,
                     "SHOULD", WIDE_BASE, lambda d: d, "unchanged; decoded into another factorization of 3072 samples",
                     "Reshaping would work but scrambles the image (JPEG-X-08).", codec_obj=C444, shape=(64, 48, 3))
    yield _malformed("gray-into-color-chunk", "a grayscale stream decoded into an (H, W, 3) chunk", shape_req,
                     "MUST", GRAY_BASE, lambda d: d, "unchanged; decoded under a ycbcr configuration into (32, 96, 3)",
                     "One component cannot fill three (JPEG-DIM-03).", codec_obj=C444, shape=(32, 96, 3))
    yield _malformed("color-into-gray-chunk", "a 3-component stream decoded into an (H, W) chunk", shape_req,
                     "MUST", WIDE_BASE, lambda d: d, "unchanged; decoded under a grayscale configuration into (32, 96)",
                     "Three components do not fit one; reading only luma would be a conversion the spec does not "
                     "define (JPEG-DEC-02).", codec_obj=GRAY, shape=(32, 96))
    yield _malformed("huffman-oversubscribed", "first Huffman table declares more codes than fit", dec, "MUST",
                     YCC420_BASE, _oversubscribed, "two more 1-bit codes, two fewer of the longest length",
                     "No valid code assignment exists (T.81 C.2); libjpeg: 'Bogus Huffman table definition'.")
    yield _malformed("huffman-cut", "a DHT segment 8 bytes shorter than its code counts need", dec, "MUST",
                     YCC420_BASE, _dht_cut, "DHT length reduced by 8 and its last 8 bytes removed",
                     "The table's symbols run past its segment.")
    yield _malformed("quantization-index", "a DQT defines table 5 (only 0-3 exist)", dec, "MUST", YCC420_BASE,
                     lambda d: patch(d, _first(d, 0xDB)[0] + 4, b"\x05"), "Pq/Tq byte of the first DQT set to 0x05",
                     "T.81 B.2.4.1 allows table ids 0-3.")
    yield _malformed("quantization-undefined", "the frame uses a quantization table that is never defined", dec,
                     "MUST", YCC420_BASE, lambda d: patch(d, sof(d) + 12, b"\x03"), "Tq of component 1 set to 3",
                     "Nothing to dequantize with; libjpeg: 'Quantization table 0x03 was not defined'.")
    yield _malformed("sampling-factor-5", "a frame component declares sampling factor 5", dec, "MUST", YCC420_BASE,
                     lambda d: patch(d, sof(d) + 11, b"\x51"), "H/V byte of component 1 set to 0x51",
                     "T.81 B.2.2 allows factors 1-4.")
    yield _malformed("height-zero", "frame header declares height 0 (DNL)", dec, "MUST", YCC420_BASE,
                     lambda d: patch(d, sof(d) + 5, b"\x00\x00"), "SOF height set to 0",
                     "A height defined later by DNL: libjpeg does not support it, and the chunk fixes the height.")
    yield _malformed("scan-unknown-component", "the scan names a component the frame lacks", dec, "MUST",
                     YCC420_BASE, lambda d: patch(d, _first(d, 0xDA)[0] + 5, b"\x09"), "first scan component id set to 9",
                     "T.81 B.2.3: scan components must be frame components.")


def all_recipes() -> list[Recipe]:
    recipes = [*reference_recipes(), *foreign_recipes(), *malformed_recipes()]
    seen: set[str] = set()
    for r in recipes:
        if r.id in seen:
            raise CorpusError(f"two recipes share the id {r.id}")
        seen.add(r.id)
    return recipes


# ============================================================================ making cases


class CorpusError(Exception):
    """A case cannot be made, or the committed corpus does not match its recipe."""


@dataclass(frozen=True)
class Made:
    recipe: Recipe
    data: bytes
    encoder: dict[str, Any]
    expected: np.ndarray | None
    tolerance: str | None
    reference_decoder: dict[str, Any] | None

    def sidecar(self) -> dict[str, Any]:
        r = self.recipe
        doc: dict[str, Any] = {
            "id": r.id,
            "description": r.description,
            "category": r.category,
            "requirements": list(r.requirements),
            "level": r.level,
            "codec": r.codec,
            "chunk_shape": list(r.chunk_shape),
            "expect": r.expect,
            "tolerance": self.tolerance,
            "source": r.source,
            "encoder": self.encoder,
            "reference_decoder": self.reference_decoder,
            "comment": r.comment,
        }
        return {k: doc[k] for k in KEY_ORDER if doc[k] is not None}


def wrong_transform(data: bytes, decoded_color_space: str, chunk_shape: tuple[int, ...]) -> np.ndarray | None:
    """The decode a decoder with the wrong colour rule returns: transform skipped, or applied to RGB."""
    import imagecodecs

    stored = inspect(data).stored_color_space
    if stored == "ycbcr" and decoded_color_space == "rgb":
        space, out = "YCbCr", "YCbCr"  # conversion skipped
    elif stored in ("rgb", "ycbcr"):
        space, out = "YCbCr", "RGB"  # an inverse YCbCr transform applied where none belongs
    else:
        return None
    return np.asarray(imagecodecs.jpeg8_decode(data, colorspace=space, outcolorspace=out)).reshape(chunk_shape)


def _bites(made_id: str, data: bytes, decoded: str, shape: tuple[int, ...], expected: np.ndarray, family: str) -> None:
    wrong = wrong_transform(data, decoded, shape)
    if wrong is not None and difference(wrong, expected).within(FAMILIES[family]):
        raise CorpusError(
            f"{made_id}: a wrong-colour-transform decode passes the {family!r} tolerance "
            f"({difference(wrong, expected)}); pick another image for it"
        )


def make(recipe: Recipe, builder: Builder) -> Made:
    data, encoder = recipe.build(builder)
    info = inspect(data)
    if recipe.structure is not None:
        complaint = recipe.structure(info)
        if complaint:
            raise CorpusError(f"{recipe.id}: the built stream's {complaint}")
    if recipe.expect == "reject":
        return Made(recipe, data, encoder, None, None, None)
    config = parse_codec(recipe.codec)
    expected = reference_decode(data, config, recipe.chunk_shape)
    family = family_for(info)
    _bites(recipe.id, data, config.decoded_color_space, recipe.chunk_shape, expected, family)
    decoder = {
        "name": "zarr_jpeg_conformance.streams.reference_decode",
        "version": f"imagecodecs {_imagecodecs_version()}",
        "options": {"stored_color_space": info.stored_color_space, "decoded_color_space": config.decoded_color_space},
    }
    return Made(recipe, data, encoder, expected, family, decoder)


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def _json(doc: Any) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _sidecar_text(doc: dict[str, Any]) -> str:
    """One member per line, each value on one line, as the configuration corpus is written."""
    members = (f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in doc.items())
    return "{\n" + ",\n".join(members) + "\n}\n"


def write(made: Made, root: Path) -> None:
    jpg, sidecar, *npy = made.recipe.paths(root)
    jpg.parent.mkdir(parents=True, exist_ok=True)
    jpg.write_bytes(made.data)
    sidecar.write_text(_sidecar_text(made.sidecar()), encoding="utf-8")
    if npy:
        assert made.expected is not None
        npy[0].write_bytes(_npy(made.expected))


# ============================================================================ manifest


def versions() -> dict[str, str]:
    return {
        "zarr-jpeg-conformance": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "imagecodecs": _imagecodecs_version(),
        "Pillow": _pillow_version(),
        "cjpeg": _cjpeg_version(),
    }


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def corpus_files(root: Path) -> dict[str, str]:
    """sha256 of every file under streams/ and stores/, by path relative to ``root``."""
    skip = root.joinpath(*MANIFEST)
    files = {}
    for sub in ("streams", "stores"):
        for path in sorted((root / sub).rglob("*")) if (root / sub).is_dir() else []:
            if path.is_file() and path != skip and "__pycache__" not in path.parts:
                files[path.relative_to(root).as_posix()] = _sha256(path)
    return files


def write_manifest(root: Path, library_versions: dict[str, str]) -> None:
    doc = {"format_version": 1, "generator": "generate_fixtures.py", "versions": library_versions, "files": corpus_files(root)}
    root.joinpath(*MANIFEST).write_text(_json(doc), encoding="utf-8")


def build_stores(root: Path) -> None:
    """``root``/fixtures/stores comes from another module; build it when that module is there."""
    name = f"{__package__}.stores"
    try:
        module = importlib.import_module(name)
    except ImportError as exc:
        print(f"note: fixtures/stores not built: {name} cannot be imported ({exc})")
        return
    build = getattr(module, "build", None)
    if not callable(build):
        print(f"note: fixtures/stores not built: {name} has no build()")
        return
    build(root)


# ============================================================================ commands


def generate(root: Path, force: bool, stores: bool = True) -> int:
    recipes = all_recipes()
    targets = {p for r in recipes for p in r.paths(root)} | {root.joinpath(*MANIFEST)}
    existing = sorted(p for p in targets if p.exists())
    if existing and not force:
        shown = "\n  ".join(str(p.relative_to(root)) for p in existing[:5])
        print(f"refusing to overwrite {len(existing)} existing file(s) under {root} (use --force):\n  {shown}", file=sys.stderr)
        return 2
    if force:
        for category in CATEGORIES:
            for stale in (root / "streams" / category).glob("*") if (root / "streams" / category).is_dir() else []:
                if stale not in targets:
                    stale.unlink()
    builder = Builder(root, committed=False, categories={r.id: r.category for r in recipes})
    for recipe in recipes:
        made = make(recipe, builder)
        builder.built[recipe.id] = made.data
        write(made, root)
    if stores:
        build_stores(root.parent)
    write_manifest(root, versions())
    files = corpus_files(root)
    size = sum((root / p).stat().st_size for p in files)
    print(f"wrote {len(recipes)} stream cases; {len(files)} files, {size / 1e6:.2f} MB under {root}")
    return 0


def _schema_errors(doc: Any) -> list[str]:
    import jsonschema
    from referencing import Registry, Resource

    schemas = [json.loads(p.read_text(encoding="utf-8")) for p in (SCHEMA, SCHEMA.with_name("jpeg.schema.json"))]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
    validator = jsonschema.Draft202012Validator(schemas[0], registry=registry)
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in validator.iter_errors(doc)]


def _check_manifest(root: Path, problems: list[str]) -> None:
    path = root.joinpath(*MANIFEST)
    if not path.is_file():
        problems.append(f"no manifest at {path.relative_to(root)}")
        return
    listed = json.loads(path.read_text(encoding="utf-8"))["files"]
    present = corpus_files(root)
    for name in sorted(set(listed) | set(present)):
        if name not in present:
            problems.append(f"manifest lists {name}, which is missing")
        elif name not in listed:
            problems.append(f"{name} is not in the manifest (run --update-manifest if it belongs there)")
        elif listed[name] != present[name]:
            problems.append(f"{name}: sha256 differs from the manifest")


def _committed(recipe: Recipe, root: Path) -> tuple[bytes, dict[str, Any], np.ndarray | None]:
    jpg, sidecar, *npy = recipe.paths(root)
    expected = np.load(io.BytesIO(npy[0].read_bytes()), allow_pickle=False) if npy else None
    return jpg.read_bytes(), json.loads(sidecar.read_text(encoding="utf-8")), expected


def _check_sidecar(recipe: Recipe, doc: dict[str, Any]) -> list[str]:
    from .corpus import requirements

    problems = [f"sidecar {e}" for e in _schema_errors(doc)]
    for key in ("description", "requirements", "level", "codec", "chunk_shape", "expect", "source", "comment"):
        want = getattr(recipe, key)
        want = list(want) if isinstance(want, tuple) else want
        if doc.get(key) != want:
            problems.append(f"sidecar {key} {doc.get(key)!r} differs from the recipe's {want!r}")
    registry = requirements()
    unknown = [r for r in recipe.requirements if r not in registry]
    if unknown:
        problems.append(f"cites requirements missing from the registry: {unknown}")
    elif recipe.level not in {registry[r].severity for r in recipe.requirements}:
        problems.append(f"level {recipe.level} is the level of none of its requirements")
    return problems


def _check_stream(recipe: Recipe, data: bytes, doc: dict[str, Any], expected: np.ndarray | None) -> list[str]:
    info = inspect(data)
    problems = []
    if recipe.structure is not None and (complaint := recipe.structure(info)):
        problems.append(f"committed stream's {complaint}")
    if expected is None:
        return problems
    if expected.dtype != np.uint8 or expected.shape != recipe.chunk_shape:
        return [*problems, f"expected decode is {expected.dtype} {expected.shape}"]
    config = parse_codec(recipe.codec)
    again = reference_decode(data, config, recipe.chunk_shape)
    if not np.array_equal(again, expected):
        problems.append(f"installed libjpeg-turbo decodes the committed stream differently: {difference(again, expected)}")
    if doc.get("tolerance") != family_for(info):
        problems.append(f"tolerance {doc.get('tolerance')!r}, but the stream's structure says {family_for(info)!r}")
    try:
        _bites(recipe.id, data, config.decoded_color_space, recipe.chunk_shape, expected, family_for(info))
    except CorpusError as exc:
        problems.append(str(exc))
    return problems


def _check_rebuild(recipe: Recipe, builder: Builder, data: bytes, expected: np.ndarray | None) -> tuple[str, list[str]]:
    """(what happened, problems) when the recipe is built again with the installed libraries."""
    if recipe.tool is not None and shutil.which(recipe.tool) is None:
        return f"not rebuilt (needs {recipe.tool})", []
    rebuilt, _ = recipe.build(builder)
    if rebuilt == data:
        return "rebuilt: identical bytes", []
    if expected is not None:
        diff = difference(reference_decode(rebuilt, parse_codec(recipe.codec), recipe.chunk_shape), expected)
        family = family_for(inspect(data))
        if not diff.within(FAMILIES[family]):
            return "rebuilt: other bytes", [f"rebuilt stream decodes outside the {family!r} tolerance: {diff}"]
        print(f"  {recipe.id}: encoder bytes differ, decoded pixels agree ({diff})")
        return "rebuilt: other bytes, decoded pixels within tolerance", []
    complaint = recipe.structure(inspect(rebuilt)) if recipe.structure else None
    return "rebuilt: other bytes, same structure (reject case)", [f"rebuilt stream's {complaint}"] if complaint else []


def check(root: Path) -> int:
    problems: list[str] = []
    _check_manifest(root, problems)
    recipes = all_recipes()
    known = {p for r in recipes for p in r.paths(root)}
    for category in CATEGORIES:
        folder = root / "streams" / category
        for path in sorted(folder.glob("*")) if folder.is_dir() else []:
            if path not in known:
                problems.append(f"{path.relative_to(root).as_posix()} belongs to no recipe")
    builder = Builder(root, committed=True, categories={r.id: r.category for r in recipes})
    tally: Counter[str] = Counter()
    for recipe in recipes:
        missing = [p.relative_to(root).as_posix() for p in recipe.paths(root) if not p.is_file()]
        if missing:
            problems.append(f"{recipe.id}: missing {', '.join(missing)}")
            continue
        data, doc, expected = _committed(recipe, root)
        what, rebuild = _check_rebuild(recipe, builder, data, expected)
        tally[what] += 1
        found = _check_sidecar(recipe, doc) + _check_stream(recipe, data, doc, expected) + rebuild
        problems += [f"{recipe.id}: {p}" for p in found]
    size = sum(f.stat().st_size for f in (root / "streams").rglob("*") if f.is_file())
    print(f"checked {len(recipes)} stream cases ({size / 1e6:.2f} MB under streams/)")
    for what, n in sorted(tally.items()):
        print(f"  {n:4d} {what}")
    for p in problems:
        print(f"PROBLEM {p}", file=sys.stderr)
    print("corpus OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


def update_manifest(root: Path) -> int:
    path = root.joinpath(*MANIFEST)
    old = json.loads(path.read_text(encoding="utf-8")).get("versions") if path.is_file() else None
    # The versions describe the libraries that generated the corpus, not this environment.
    write_manifest(root, old or versions())
    print(f"manifest rewritten: {len(corpus_files(root))} files")
    return 0


# ============================================================================ measurements


def _netpbm(data: bytes) -> np.ndarray:
    """Pixels of a binary PGM/PPM as djpeg writes it (no comments)."""
    header = re.match(rb"(P[56])\s+(\d+)\s+(\d+)\s+\d+\s", data)
    if header is None:
        raise ValueError("not a binary PGM/PPM")
    channels = 1 if header[1] == b"P5" else 3
    return np.frombuffer(data[header.end() :], np.uint8).reshape(int(header[3]), int(header[2]), channels)


def _simulated(data: bytes, stored: str, output: str, shape: tuple[int, ...]) -> dict[str, np.ndarray | None]:
    """Decodes by libjpeg-turbo with its non-default, non-libjpeg-like options.

    fast-upsample (PyTurboJPEG TJFLAG_FASTUPSAMPLE: box chroma upsampling instead of the
    triangle filter, as the JavaScript decoders do), with fast-dct (TJFLAG_FASTDCT: a less
    accurate IDCT), and djpeg -nosmooth -dct float (box upsampling, float IDCT) for the
    factor sets the legacy TurboJPEG API cannot read.
    """
    out: dict[str, np.ndarray | None] = {"fast-upsample": None, "fast-upsample+fast-dct": None}
    try:
        import turbojpeg as tj

        t = tj.TurboJPEG()
    except (ImportError, OSError, RuntimeError):
        tj = None
    for name in list(out) if tj else []:
        flags = tj.TJFLAG_FASTUPSAMPLE | (tj.TJFLAG_FASTDCT if name.endswith("fast-dct") else 0)
        try:
            if output == "ycbcr":
                # Planes as stored (chroma not upsampled); replicating each chroma sample
                # over its luma block is box upsampling.
                luma, *chroma = t.decode_to_yuv_planes(data, flags=flags)
                planes = [luma] + [
                    np.repeat(np.repeat(c, luma.shape[0] // c.shape[0], 0), luma.shape[1] // c.shape[1], 1) for c in chroma
                ]
                out[name] = np.stack([pl[: shape[0], : shape[1]] for pl in planes], axis=-1).reshape(shape)
            else:
                fmt = tj.TJPF_GRAY if stored == "grayscale" else tj.TJPF_RGB
                out[name] = np.asarray(t.decode(data, pixel_format=fmt, flags=flags)).reshape(shape)
        except (OSError, ValueError):
            out[name] = None
    exe = shutil.which("djpeg")
    out["djpeg-nosmooth-float"] = None
    if exe and output != "ycbcr":
        done = subprocess.run([exe, "-nosmooth", "-dct", "float", "-pnm"], input=data, capture_output=True, check=False)
        if done.returncode == 0:
            out["djpeg-nosmooth-float"] = _netpbm(done.stdout).reshape(shape)
    return out


def _raw_library(name: str, data: bytes) -> str:
    """What the library behind a built-in adapter does with a stream, called as the adapter calls it."""
    try:
        if name == "imagecodecs":
            import imagecodecs

            shape = np.asarray(imagecodecs.jpeg8_decode(data)).shape
        elif name == "pillow":
            from PIL import Image

            with Image.open(io.BytesIO(data), formats=["JPEG"]) as im:
                im.load()
                shape = np.asarray(im).shape
        else:
            import turbojpeg as tj

            flags = tj.TJFLAG_ACCURATEDCT | tj.TJFLAG_STOPONWARNING
            shape = np.asarray(tj.TurboJPEG().decode(data, pixel_format=tj.TJPF_RGB, flags=flags)).shape
    except Exception as exc:  # noqa: BLE001 - any refusal counts; its type is reported
        return f"raises {type(exc).__name__}"
    return f"RETURNS {tuple(shape)}"


def measure() -> int:
    """Print, for the package's corpus, how far other decodes lie from each expected decode."""
    from .adapters import available_builtins
    from .streams import stream_cases

    adapters = {n: a for n, a in available_builtins().items() if not isinstance(a, Exception)}
    worst: dict[tuple[str, str], tuple[int, float]] = {}
    print("case | family | " + " | ".join(adapters) + " | fast-upsample | +fast-dct | djpeg -nosmooth -dct float | wrong transform")
    for case in stream_cases():
        if not case.has_expected:
            continue
        data, expected, config = case.data(), case.expected(), parse_codec(case.codec)
        info = inspect(data)
        cells = []
        for adapter in adapters.values():
            try:
                got = adapter.decode(adapter.parse(case.codec), data, case.chunk_shape)
                cells.append(str(difference(np.asarray(got), expected).max_abs))
            except (ValueError, TypeError):
                cells.append("rejects")
        sims = _simulated(data, str(info.stored_color_space), config.decoded_color_space, case.chunk_shape)
        if info.libjpeg_color_space != info.stored_color_space:
            sims = dict.fromkeys(sims)  # libjpeg would convert: these decodes say nothing about tolerance
        for name, got in sims.items():
            if got is None:
                cells.append("n/a")
                continue
            d = difference(got, expected)
            cells.append(f"{d.max_abs} ({d.mean_abs:.2f})")
            old = worst.get((str(case.tolerance), name), (0, 0.0))
            worst[(str(case.tolerance), name)] = (max(old[0], d.max_abs), max(old[1], d.mean_abs))
        wrong = wrong_transform(data, config.decoded_color_space, case.chunk_shape)
        if wrong is None:
            cells.append("-")
        else:
            d = difference(wrong, expected)
            cells.append(f"{d.max_abs} ({d.mean_abs:.2f})")
            old = worst.get((str(case.tolerance), "wrong transform, least"), (999, 999.0))
            worst[(str(case.tolerance), "wrong transform, least")] = (min(old[0], d.max_abs), min(old[1], d.mean_abs))
        print(f"{case.id} | {case.tolerance} | " + " | ".join(cells))
    print("\nper family: largest max (largest mean) of each simulated decoder; least of the wrong transforms")
    for (family, name), (mx, mean) in sorted(worst.items()):
        print(f"  {family:10s} {name:28s} {mx:4d} ({mean:.2f})   tolerance: {FAMILIES[family].max_abs} ({FAMILIES[family].mean_abs})")
    print("\nraw libraries on the cases a decoder must or may reject (RETURNS = no error without core's checks)")
    for case in stream_cases():
        if case.expect != "decode" and case.category != "reference":
            if case.id.endswith("forged-65535x65535"):
                print(f"{case.id}: imagecodecs not called (decodes 65535x65535 into 4.3 GB, backends.md 11.15)")
                names = [n for n in adapters if n != "imagecodecs"]
            else:
                names = list(adapters)
            print(f"{case.id} [{case.expect}]: " + "; ".join(f"{n} {_raw_library(n, case.data())}" for n in names))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.generate_fixtures", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=PACKAGE_ROOT,
                        help="folder holding fixtures/ (default: the package's own folder)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--check", action="store_true", help="verify the corpus under --out; write nothing")
    action.add_argument("--update-manifest", action="store_true", help="only rewrite the sha256 manifest")
    action.add_argument("--measure", action="store_true", help="print decoder differences behind decode_tolerances")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.add_argument("--skip-stores", action="store_true", help="write the streams only; leave fixtures/stores as it is")
    args = parser.parse_args(argv)
    root = args.out.resolve() / "fixtures"
    try:
        if args.check:
            return check(root)
        if args.update_manifest:
            return update_manifest(root)
        if args.measure:
            return measure()
        return generate(root, args.force, stores=not args.skip_stores)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
