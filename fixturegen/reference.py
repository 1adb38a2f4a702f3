"""The reference cases: every mode, size class and quality band, written by a reference encoder.

Other tables name a few of these as the streams they edit (the ``*_BASE`` ids below).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..core import color
from ..corpus.images import make_image
from ..corpus.modes import MODES, Mode
from ..corpus.streams import decode_requirements
from .encoders import Built, ic, planar
from .recipe import Recipe, wants

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
#: the kinds of KIND_ORDER (grayscale), COLOUR_KINDS or SMOOTH_CHROMA in turn.
BASE_KINDS = {
    RGB_BASE: "fluorescence",
    YCC_BASE: "natural",
    YCC420_BASE: "natural",
    GRAY_BASE: "natural",
    WIDE_BASE: "axes",
    SECOND_420: "axes",
}
#: Kinds for the colour modes: each has chroma that a colour or upsampling fault changes.
#: Constant images (zeros, full) are left to grayscale, where they test the plain path; in a
#: colour mode they cannot reveal a chroma fault. Chroma detail (noise, checker, edges) is
#: fine for subsampled modes since each case also stores an independent decode with chroma
#: repeated instead of interpolated (fixturegen.independent): the span of the two, not one
#: decoder's filter, is what a decode is judged by.
COLOUR_KINDS = ("natural", "gradient", "noise", "edges", "checker", "detail", "fluorescence", "ramp", "axes")
#: For factor sets no independent decoder reads (Go and the legacy TurboJPEG API know the five
#: common ones only): one expected decode, so chroma must change slowly at the scale of an MCU,
#: or repeating chroma would land as far from libjpeg's triangle filter as a colour fault.
SMOOTH_CHROMA = ("natural", "fluorescence", "axes")
SECOND_DECODER_FACTORS = {(1, 1), (2, 1), (1, 2), (2, 2), (4, 1)}
KIND_ORDER = ("natural", "gradient", "noise", "edges", "checker", "detail", "fluorescence", "ramp", "axes", "zeros", "full")
#: Odd sizes whose last chroma sample covers one real sample and one of padding, in every
#: direction the modes subsample; the "chroma-edges" image puts saturated colour there.
EDGE_SIZES = ((37, 53), (33, 49))
EDGE_MODES = ("ycbcr-420", "ycbcr-422", "ycbcr-440", "ycbcr-411")


def encode_reference(mode: Mode, image: np.ndarray, quality: int) -> Built:
    """imagecodecs where it has the mode's factors, core.scans' planar writer where it lacks them."""
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


def reference_recipes() -> list[Recipe]:
    recipes: list[Recipe] = []
    for mode in MODES:
        factors = mode.subsampling or ((1, 1),)
        mcu_h, mcu_w = 8 * max(v for _, v in factors), 8 * max(h for h, _ in factors)
        kinds = KIND_ORDER if mode.channels == 1 else COLOUR_KINDS if factors[0] in SECOND_DECODER_FACTORS else SMOOTH_CHROMA
        for size_name, (h, w) in SIZE_CLASSES:
            for q in QUALITIES:
                case_id = f"stream.reference.{mode.id}.q{q}.{h}x{w}"
                # The counter runs over every case so far, so the kinds rotate across modes too.
                kind = BASE_KINDS.get(case_id, kinds[len(recipes) % len(kinds)])
                recipes.append(_recipe(case_id, mode, size_name, h, w, q, kind, (mcu_h, mcu_w)))
        if mode.id in EDGE_MODES:
            for h, w in EDGE_SIZES:
                recipe = _recipe(f"stream.reference.{mode.id}.edges.{h}x{w}", mode, "unaligned", h, w, 90, "chroma-edges",
                                 (mcu_h, mcu_w))
                recipes.append(replace(recipe, comment=f"{h}x{w}: the last chroma sample of each row and column covers one "
                                       "real sample and padding; the image's last row and column are saturated colours, so "
                                       "a decoder's edge rule (which chroma sample they take) shows."))
    return recipes


def _recipe(case_id: str, mode: Mode, size_name: str, h: int, w: int, q: int, kind: str, mcu: tuple[int, int]) -> Recipe:
    aligned = h % mcu[0] == 0 and w % mcu[1] == 0
    requirements, level, expect = decode_requirements(mode)
    if not aligned:
        requirements += ("JPEG-MCU-01",)
    if mode.channels == 1:
        shape: tuple[int, ...] = (h, w, 1) if size_name in ("mcu8", "unaligned") else (h, w)
    else:
        shape = (h, w, 3)
    source: dict[str, Any] = {"image": {"kind": kind, "height": h, "width": w, "channels": mode.channels, "seed": 0}}
    if mode.decoded == "ycbcr":
        source["recipe"] = "the image's samples are taken as YCbCr"
    pad = "" if aligned else f"; MCU {mcu[0]}x{mcu[1]} does not divide it"
    return Recipe(
        id=case_id,
        category="reference",
        description=f"{MODE_TEXT[mode.id]}, quality {q}, {h}x{w} {kind} image",
        requirements=requirements,
        level=level,
        codec=mode.codec(q),
        chunk_shape=shape,
        expect=expect,
        source=source,
        build=lambda _b: encode_reference(mode, make_image(kind, h, w, mode.channels, 0), q),
        structure=wants(sof=0xC0, height=h, width=w, factors=mode.subsampling or ((1, 1),) * mode.channels),
        comment=f"Size class {size_name}: {h}x{w} is {SIZE_NOTES[size_name]}{pad}.",
    )
