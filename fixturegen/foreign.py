"""The foreign cases: valid JPEG that the codec's own encoders do not write.

Other encoders and options (optimized tables, restart intervals, several scans, progressive,
arithmetic, lossless, odd factors, 12/16-bit, CMYK), and colour-marker variants edited from
reference streams. Each row is one case; the verdicts are shared by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core import color
from ..corpus.modes import codec
from .edits import (
    JFIF,
    SOF,
    Edit,
    adobe,
    drop_app,
    drop_jfif,
    insert_before,
    segment,
    set_component_ids,
    unchanged,
    with_fill,
)
from .encoders import Built, cjpeg, ic, pil, planar
from .recipe import C420, C444, GRAY, Builder, Edited, Encoded, Recipe, Verdict, wants
from .reference import GRAY_BASE, RGB_BASE, YCC420_BASE, YCC_BASE

#: cjpeg -scans script: each component in its own sequential scan.
SEQ3 = "0: 0 63 0 0;\n1: 0 63 0 0;\n2: 0 63 0 0;\n"

BASELINE = Verdict(("JPEG-FMT-01", "JPEG-X-09", "JPEG-DEC-01"), "MUST", "decode")
NOT_BASELINE = Verdict(("JPEG-X-09", "JPEG-DEC-01"), "MAY", "decode-or-reject")
ODD_FACTORS = Verdict(("JPEG-X-04", "JPEG-DEC-01", "JPEG-SUB-01"), "MAY", "decode-or-reject")
TOO_DEEP = Verdict(("JPEG-X-10", "JPEG-DIM-03"), "SHOULD", "reject")
NO_MARKER = Verdict(("JPEG-DEC-01", "JPEG-X-06"), "MUST", "decode")
APP14_YCC = Verdict(("JPEG-DEC-01", "JPEG-ECS-12"), "MUST", "decode")
APP14_RGB = Verdict(("JPEG-ECS-12", "JPEG-DEC-01"), "MUST", "decode-or-reject")
RGB_IDS = Verdict(("JPEG-X-12", "JPEG-ECS-12"), "SHOULD", "decode-or-reject")
OTHER_CONFIGURATION = Verdict(("JPEG-DEC-01", "JPEG-DCS-03"), "MUST", "decode")
RGB_AS_YCBCR = Verdict(("JPEG-X-17", "JPEG-DEC-01"), "MAY", "decode-or-reject")
#: Component identifiers other than 1 / 1, 2, 3 / 'R', 'G', 'B': T.81 allows any of 0-255. Where APP14
#: (or a single component) fixes the colour space they must decode (JPEG-DEC-01's note); under JFIF,
#: which libjpeg's writers read as fixing 1, 2, 3, refusing them is warned (JPEG-X-21).
IDS_FIXED = Verdict(("JPEG-DEC-01", "JPEG-ECS-12"), "MUST", "decode")
IDS_RGB = Verdict(("JPEG-DEC-01", "JPEG-ECS-12"), "MUST", "decode-or-reject")
IDS_GRAY = Verdict(("JPEG-DEC-01", "JPEG-DEC-02"), "MUST", "decode")
IDS_JFIF = Verdict(("JPEG-X-21", "JPEG-DEC-01"), "SHOULD", "decode")
#: What an implementation that accepts rgb claims (JPEG-ECS-11): it decodes rgb streams.
RGB_CODEC = codec(90, "rgb")


def _odd_factors(h: int, v: int, interleaved: bool) -> Encoded:
    return Encoded(
        f"factors-{h}x{v}" + ("" if interleaved else "-non-interleaved"),
        f"ycbcr with luma factors [{h}, {v}] in "
        + ("one interleaved scan" if interleaved else "three non-interleaved scans") + ", 45x61 (written by cjpeg)",
        ODD_FACTORS, codec(85, "ycbcr", None, [(h, v), (1, 1), (1, 1)]), (45, 61, 3),
        lambda im: cjpeg(im, "-quality", "85", "-sample", f"{h}x{v},1x1,1x1", scans_script=None if interleaved else SEQ3),
        {"sof": 0xC0, "factors": ((h, v), (1, 1), (1, 1)), "scans": ((1, 2, 3),) if interleaved else ((1,), (2,), (3,))},
        "Factors beyond the four required schemes are optional (JPEG-X-04): a decoder MAY reject them "
        "cleanly, and one that decodes them must return libjpeg-turbo's pixels within the subsampled tolerance."
        + ("" if interleaved else " One interleaved MCU would hold h*v + 2 > 10 blocks, which T.81 B.2.3 forbids."),
        tool="cjpeg",
    )  # fmt: skip


def _colour_markers(name: str, base: str, how: str, edit: Edit, description: str, verdict: Verdict,
                    comment: str, jfif: bool, adobe_transform: int | None, ids: tuple[int, int, int],
                    decode_if_parsed: dict[str, Any] | None = None) -> Edited:  # fmt: skip
    """A 4:4:4 stream whose colour markers (JFIF, APP14, component ids) are edited."""
    structure = {"jfif": jfif, "adobe_transform": adobe_transform, "component_ids": ids}
    return Edited(name, description, verdict, base, edit, how, comment, codec=C444, structure=structure,
                  decode_if_parsed=decode_if_parsed)


RGB = (82, 71, 66)  # component ids 'R', 'G', 'B'
YCC = (1, 2, 3)
#: Identifiers that T.81 allows and no built-in encoder writes (Photoshop writes 0, 1, 2).
UNUSUAL_IDS = ((0, 1, 2), (2, 3, 4), (200, 201, 202))


def _renamed(ids: tuple[int, ...], before: Edit = unchanged) -> Edit:
    """An edit that applies ``before`` and then renames the frame's components to ``ids``."""
    return lambda data: set_component_ids(before(data), ids)


def _app14_for_jfif(data: bytes) -> bytes:
    return insert_before(drop_jfif(data), 0xDB, adobe(1))


def _unusual_ids(ids: tuple[int, int, int]) -> tuple[Edited, ...]:
    """Streams whose component identifiers are valid in T.81 but none of 1, 2, 3 or 'R', 'G', 'B'."""
    named, listed = "-".join(map(str, ids)), ", ".join(map(str, ids))
    return (
        _colour_markers(
            f"component-ids-{named}-jfif", YCC_BASE, f"component ids set to {listed}", _renamed(ids),
            f"ycbcr 4:4:4 with JFIF APP0 and component ids {listed}", IDS_JFIF,
            "JFIF fixes YCbCr whatever the ids (T.871); T.81 allows any id 0-255. Refusing it is warned (JPEG-X-21).",
            jfif=True, adobe_transform=None, ids=ids),
        _colour_markers(
            f"component-ids-{named}-app14-transform1", YCC_BASE,
            f"JFIF APP0 replaced by APP14 transform 1; component ids set to {listed}", _renamed(ids, _app14_for_jfif),
            f"ycbcr 4:4:4 with APP14 transform 1, no JFIF, component ids {listed}", IDS_FIXED,
            "APP14 transform 1 says YCbCr; T.81 allows any id 0-255, so the stream decodes (JPEG-DEC-01).",
            jfif=False, adobe_transform=1, ids=ids),
        _colour_markers(
            f"component-ids-{named}-app14-transform0", RGB_BASE, f"component ids of the rgb stream set to {listed}",
            _renamed(ids), f"rgb with APP14 transform 0 and component ids {listed}", IDS_RGB,
            "APP14 transform 0 says RGB; T.81 allows any id 0-255 (JPEG-DEC-01). A decoder that cannot honour "
            "APP14 rejects it (JPEG-ECS-12); one that accepts rgb configurations must decode it.",
            jfif=False, adobe_transform=0, ids=ids, decode_if_parsed=RGB_CODEC),
    )  # fmt: skip


def _gray_id(cid: int, jfif: bool) -> Edited:
    """A grayscale stream whose one component has identifier ``cid``, with or without JFIF."""
    return Edited(
        f"component-ids-gray-{cid}-{'jfif' if jfif else 'no-jfif'}",
        f"grayscale {'with' if jfif else 'without'} JFIF APP0, component id {cid}",
        IDS_JFIF if jfif else IDS_GRAY, GRAY_BASE, _renamed((cid,), unchanged if jfif else drop_jfif),
        f"component id set to {cid}" + ("" if jfif else "; JFIF APP0 removed"),
        "One component is grayscale whatever its id; T.81 allows any id 0-255"
        + (", and JFIF says Y. Refusing it is warned (JPEG-X-21)." if jfif else ", so the stream decodes (JPEG-DEC-01)."),
        codec=GRAY, chunk_shape=(32, 96), structure={"jfif": jfif, "component_ids": (cid,)})


COMPONENT_IDS: tuple[Edited, ...] = (
    *(row for ids in UNUSUAL_IDS for row in _unusual_ids(ids)),
    *(_gray_id(cid, jfif) for cid in (0, 255) for jfif in (True, False)),
)

#: Every decode combination the spec defines, in both directions (JPEG-DEC-01: the stream, not
#: encoded_color_space, decides), and the one it leaves open (JPEG-X-17).
COMBINATIONS: tuple[Edited, ...] = (
    Edited("ycbcr-under-rgb-configuration", "a ycbcr 4:4:4 stream decoded under an rgb configuration",
           OTHER_CONFIGURATION, YCC_BASE, lambda d: d, "unchanged; decoded under encoded_color_space rgb",
           "The stream stores YCbCr (JFIF): decoded_color_space rgb asks for RGB, so the samples are converted, "
           "whatever encoded_color_space says (JPEG-DEC-01). An implementation without rgb rejects the "
           "configuration when parsing (unsupported).",
           codec=RGB_CODEC, chunk_shape=(48, 80, 3), structure={"jfif": True, "adobe_transform": None}),
    Edited("rgb-under-ycbcr-configuration", "an rgb stream (APP14 transform 0) decoded under a ycbcr 4:2:0 configuration",
           APP14_RGB, RGB_BASE, lambda d: d, "unchanged; decoded under encoded_color_space ycbcr, 4:2:0",
           "The stream stores RGB (APP14 transform 0): the samples come back as stored, whatever encoded_color_space "
           "and subsampling say (JPEG-DEC-01). A decoder that cannot honour APP14 rejects it (JPEG-ECS-12); one that "
           "accepts rgb configurations claims it can (JPEG-ECS-11) and must decode it.",
           codec=C420, chunk_shape=(48, 80, 3), structure={"jfif": False, "adobe_transform": 0},
           decode_if_parsed=RGB_CODEC),
    Edited("rgb-under-passthrough-configuration",
           "an rgb stream (APP14 transform 0) decoded under decoded_color_space ycbcr", RGB_AS_YCBCR, RGB_BASE,
           lambda d: d, "unchanged; decoded under encoded and decoded_color_space ycbcr, 4:4:4",
           "The spec's table has no row for RGB samples returned as YCbCr: a decoder MAY convert the stored RGB by "
           "the JFIF equations (the expected decode does) or MAY reject it (JPEG-X-17).",
           codec=codec(90, "ycbcr", "ycbcr", [(1, 1), (1, 1), (1, 1)]), chunk_shape=(48, 80, 3),
           structure={"jfif": False, "adobe_transform": 0}),
)

FOREIGN: tuple[Encoded | Edited, ...] = (
    *COMBINATIONS,
    Encoded("optimized-huffman", "ycbcr 4:2:0 with optimized Huffman tables, 48x64 (written by Pillow)", BASELINE, C420, (48, 64, 3),
            lambda im: pil(im, "RGB", quality=85, subsampling=2, optimize=True), {"sof": 0xC0},
            "Optimized tables are still baseline (T.81 Annex K tables are only examples): every decoder decodes them."),
    Encoded("restart-every-mcu", "ycbcr 4:2:0 with a restart marker after every MCU, 45x61 (written by cjpeg)", BASELINE, C420,
            (45, 61, 3), lambda im: cjpeg(im, "-quality", "85", "-restart", "1B"), {"sof": 0xC0, "restart_interval": 1},
            "Restart intervals (DRI, RST0-RST7, wrapping around) are part of baseline: every decoder decodes them.",
            tool="cjpeg"),
    Encoded("restart-every-row", "grayscale with a restart marker after every MCU row, 48x64 (written by Pillow)", BASELINE, GRAY,
            (48, 64, 1), lambda im: pil(im, "L", quality=85, restart_marker_rows=1), {"sof": 0xC0, "restart_interval": 8},
            "Restart intervals are part of baseline: every decoder decodes them."),
    Encoded("non-interleaved-420", "ycbcr 4:2:0 in three non-interleaved sequential scans, 45x61 (written by cjpeg)", BASELINE,
            C420, (45, 61, 3), lambda im: cjpeg(im, "-quality", "85", scans_script=SEQ3),
            {"sof": 0xC0, "scans": ((1,), (2,), (3,))},
            "A baseline frame may code its components in several scans (T.81 B.2.1): still SOF0, every decoder decodes it.",
            tool="cjpeg"),
    Encoded("non-interleaved-tables-per-scan",
            "ycbcr 4:2:2 in three scans, Huffman tables redefined per scan, 40x56 (written by core/scans.py)", BASELINE,
            codec(85, "ycbcr", None, [(2, 1), (1, 1), (1, 1)]), (40, 56, 3),
            lambda im: planar(color.rgb_to_ycbcr(im), ((2, 1), (1, 1), (1, 1)), 85),
            {"sof": 0xC0, "scans": ((1,), (2,), (3,))},
            "What the built-in adapters write for factor sets their library lacks: DHT before each SOS, one "
            "quantization table per component. Baseline (T.81 B.2.1): every decoder decodes it.",
            prepared="converted to YCbCr with core.color.rgb_to_ycbcr"),
    Edited("comment-and-app-segments", "ycbcr 4:2:0 with COM, APP1 (Exif) and APP2 segments, 48x80", BASELINE,
           YCC420_BASE,
           lambda d: insert_before(
               d, 0xDB,
               segment(0xFE, b"written by zarr-jpeg-conformance")
               + segment(0xE1, b"Exif\x00\x00MM\x00\x2a\x00\x00\x00\x08\x00\x00\x00\x00\x00\x00")
               + segment(0xE2, b"unrelated application data\x00" + bytes(range(64))),
           ),
           "COM, APP1 'Exif' and APP2 segments inserted before the DQT",
           "Decoders skip COM and unknown APPn segments (T.81 B.2.4.5, B.2.4.6).",
           structure={"comments": 1, "app_segments": (0xE0, 0xE1, 0xE2)}),
    Edited("fill-bytes", "ycbcr 4:2:0 with 0xFF fill bytes before its header markers, 48x80", BASELINE, YCC420_BASE,
           with_fill, "three 0xFF fill bytes inserted before every marker from DQT to SOS",
           "Any marker may be preceded by 0xFF fill bytes (T.81 B.1.1.2).", structure={"sof": 0xC0, "problems": ()}),
    Encoded("progressive-420", "ycbcr 4:2:0 progressive (SOF2), 45x61 (written by cjpeg)", NOT_BASELINE, C420, (45, 61, 3),
            lambda im: cjpeg(im, "-quality", "85", "-progressive"), {"sof": 0xC2},
            "Not baseline: a decoder MAY reject it cleanly, or decode it (to the same pixels) (JPEG-X-09).", tool="cjpeg"),
    Encoded("progressive-gray", "grayscale progressive (SOF2), 48x64 (written by Pillow)", NOT_BASELINE, GRAY, (48, 64, 1),
            lambda im: pil(im, "L", quality=85, progressive=True), {"sof": 0xC2},
            "Not baseline: a decoder MAY reject it cleanly, or decode it (JPEG-X-09)."),
    Encoded("arithmetic-420", "ycbcr 4:2:0 arithmetic-coded (SOF9), 45x61 (written by cjpeg)", NOT_BASELINE, C420, (45, 61, 3),
            lambda im: cjpeg(im, "-quality", "85", "-arithmetic"), {"sof": 0xC9},
            "Not baseline: a decoder MAY reject it cleanly (the JavaScript decoders do), or decode it (JPEG-X-09).", tool="cjpeg"),
    Encoded("extended-16bit-tables",
            "ycbcr 4:2:0 extended sequential (SOF1) with 16-bit quantization tables, 45x61 (written by cjpeg)", NOT_BASELINE,
            C420, (45, 61, 3), lambda im: cjpeg(im, "-quality", "5"), {"sof": 0xC1, "precision": 8, "dqt_precisions": (1, 1)},
            "cjpeg without -baseline writes quantization values above 255, so SOF1: 8-bit samples, not baseline (JPEG-X-09).",
            tool="cjpeg"),
    Encoded("lossless-8bit", "grayscale lossless (SOF3), 8-bit, 48x64 (written by imagecodecs)", NOT_BASELINE, GRAY, (48, 64, 1),
            lambda im: ic(im, lossless=True), {"sof": 0xC3, "precision": 8},
            "An 8-bit stream that is not a DCT process: a decoder MAY reject it (JPEG-X-09); decoding it must be exact."),
    *(_odd_factors(h, v, interleaved=True) for h, v in ((3, 1), (1, 3), (2, 4), (4, 2), (4, 1), (1, 4))),
    _odd_factors(4, 4, interleaved=False),
    _odd_factors(3, 3, interleaved=False),
    Encoded("precision-12", "grayscale 12-bit extended sequential (SOF1), 48x64 (written by imagecodecs)", TOO_DEEP, GRAY,
            (48, 64, 1), lambda im: ic(im.astype(np.uint16) * 16, level=90, bitspersample=12),
            {"sof": 0xC1, "precision": 12},
            "12-bit samples cannot be returned as uint8 without loss: a decoder SHOULD reject (JPEG-X-10); "
            "some JavaScript decoders return wrong 8-bit data.",
            prepared="8-bit samples times 16, as uint16"),
    Encoded("lossless-16bit", "grayscale lossless (SOF3), 16-bit, 48x64 (written by imagecodecs)", TOO_DEEP, GRAY, (48, 64, 1),
            lambda im: ic(im.astype(np.uint16) * 257, lossless=True, bitspersample=16), {"sof": 0xC3, "precision": 16},
            "16-bit samples cannot be returned as uint8 without loss: a decoder SHOULD reject (JPEG-X-10).",
            prepared="8-bit samples times 257, as uint16"),
    Encoded("cmyk", "CMYK (4 components, APP14 transform 0), 48x64 (written by Pillow)", TOO_DEEP, C444, (48, 64, 3),
            lambda im: pil(im, "RGB", convert="CMYK", quality=90), {"sof": 0xC0, "adobe_transform": 0},
            "Four components fit no chunk shape: a decoder SHOULD reject (JPEG-X-10); some libraries "
            "silently convert to three channels.",
            prepared="converted to CMYK by Pillow"),
    _colour_markers(
        "no-jfif", YCC_BASE, "JFIF APP0 removed", drop_jfif,
        "ycbcr 4:4:4 without JFIF APP0 or APP14, component ids 1, 2, 3", NO_MARKER,
        "No colour marker and ids 1, 2, 3: YCbCr by every rule (T.871, libjpeg, pdf.js); decoders must convert it.",
        jfif=False, adobe_transform=None, ids=YCC),
    _colour_markers(
        "app14-transform1", YCC_BASE, "JFIF APP0 replaced by APP14 Adobe transform 1",
        lambda d: insert_before(drop_jfif(d), 0xDB, adobe(1)),
        "ycbcr 4:4:4 with APP14 transform 1 (YCbCr) and no JFIF", APP14_YCC,
        "APP14 says YCbCr (the spec's decoding step: APP14, when present, indicates the stored colour space).",
        jfif=False, adobe_transform=1, ids=YCC),
    _colour_markers(
        "app14-transform1-rgb-ids", YCC_BASE,
        "JFIF APP0 replaced by APP14 transform 1; component ids set to 'R','G','B'",
        lambda d: set_component_ids(insert_before(drop_jfif(d), 0xDB, adobe(1)), RGB),
        "ycbcr 4:4:4 with APP14 transform 1 and component ids 'R','G','B'", APP14_YCC,
        "APP14 wins over component ids: the samples are YCbCr (every decoder measured agrees).",
        jfif=False, adobe_transform=1, ids=RGB),
    _colour_markers(
        "app14-transform0-ycc-ids", RGB_BASE, "component ids of the rgb stream set to 1, 2, 3",
        lambda d: set_component_ids(d, YCC),
        "rgb with APP14 transform 0 and component ids 1, 2, 3", APP14_RGB,
        "APP14 transform 0 says the samples are not transformed: return them as stored, or reject (JPEG-ECS-12). "
        "An implementation that accepts rgb configurations decodes rgb streams (JPEG-ECS-11), so it must decode "
        "this one: decoding ignores encoded_color_space (JPEG-DEC-01).",
        jfif=False, adobe_transform=0, ids=YCC, decode_if_parsed=RGB_CODEC),
    _colour_markers(
        "rgb-ids-no-app14", RGB_BASE, "APP14 removed from the rgb stream",
        lambda d: drop_app(d, 0xEE, b"Adobe"),
        "rgb with component ids 'R','G','B' and neither JFIF nor APP14", RGB_IDS,
        "No colour marker, but ids 'R','G','B': libjpeg and pdf.js read RGB, jpeg-js and jpgjs convert (JPEG-X-12).",
        jfif=False, adobe_transform=None, ids=RGB),
    _colour_markers(
        "jfif-app14-transform0", RGB_BASE, "JFIF APP0 inserted before the APP14 of the rgb stream",
        lambda d: d[:2] + JFIF + d[2:],
        "rgb with both JFIF APP0 and APP14 transform 0, component ids 'R','G','B'", APP14_RGB,
        "Decoders disagree (backends.md 11.4): libjpeg lets JFIF win and converts, pdf.js lets APP14 win. The spec's "
        "decoding step says APP14 indicates the stored colour space, so the raw components, or a clean rejection "
        "(JPEG-ECS-12); a converted decode fails.",
        jfif=True, adobe_transform=0, ids=RGB),
    _colour_markers(
        "jfif-app14-transform0-ycc-ids", RGB_BASE, "JFIF APP0 inserted and component ids set to 1, 2, 3",
        lambda d: set_component_ids(d[:2] + JFIF + d[2:], YCC),
        "rgb with both JFIF APP0 and APP14 transform 0, component ids 1, 2, 3", APP14_RGB,
        "As jfif-app14-transform0, without the 'R','G','B' ids that hint at RGB: APP14 still decides (JPEG-ECS-12).",
        jfif=True, adobe_transform=0, ids=YCC),
    *COMPONENT_IDS,
    # APP14 is a misc segment: it may stand before any frame or scan header (T.81 B.2.4, B.2.1). A decoder that
    # looks for it only right after SOI, or only before the frame header, reads these as YCbCr.
    _colour_markers(
        "app14-transform0-after-tables", RGB_BASE, "the rgb stream's APP14 moved from after SOI to just before the frame "
        "header", lambda d: insert_before(drop_app(d, 0xEE, b"Adobe"), SOF, adobe(0)),
        "rgb with APP14 transform 0 after the quantization tables, before the frame header", APP14_RGB,
        "APP14 may stand anywhere among the tables and misc segments (T.81 B.2.4): where it stands changes nothing "
        "(JPEG-ECS-12, JPEG-DEC-01).", jfif=False, adobe_transform=0, ids=RGB, decode_if_parsed=RGB_CODEC),
    _colour_markers(
        "app14-transform0-after-frame", RGB_BASE, "the rgb stream's APP14 moved from after SOI to just before the scan "
        "header", lambda d: insert_before(drop_app(d, 0xEE, b"Adobe"), 0xDA, adobe(0)),
        "rgb with APP14 transform 0 after the frame header and the Huffman tables, before the scan", APP14_RGB,
        "Tables and misc segments may stand between the frame header and the scan header (T.81 B.2.1): an APP14 there "
        "still says the samples are RGB (JPEG-ECS-12, JPEG-DEC-01).", jfif=False, adobe_transform=0, ids=RGB,
        decode_if_parsed=RGB_CODEC),
)


#: Chunks of neuroglancer precomputed writers (cloud-volume, TensorStore), as fixtures/stores holds them.
NEUROGLANCER = ("ng-cloudvolume-gray", "ng-cloudvolume-rgb", "ng-tensorstore-gray", "ng-tensorstore-rgb")
NEUROGLANCER_CHUNK = Verdict(("JPEG-INT-01", "JPEG-DEC-01"), "MUST", "decode")


def _neuroglancer(store: str) -> Recipe:
    """A stream case of the one chunk a neuroglancer store holds, decoded as the [reshape, jpeg] chain sees it."""
    from ..corpus.registry import load_json, resource

    meta = load_json("fixtures", "stores", f"{store}.zarr", "zarr.json")
    sidecar = load_json("fixtures", "stores", f"{store}.json")
    z, y, x, c = meta["chunk_grid"]["configuration"]["chunk_shape"]
    jpeg = next(o for o in meta["codecs"] if o["name"] == "jpeg")
    producer = sidecar["producer"]

    def build(b: Builder) -> Built:
        # From the store as generated (stores are written before the streams) or, when only the
        # streams are made again (--skip-stores, --check), as the package holds it.
        local = b.root / "stores" / f"{store}.zarr" / "c" / "0" / "0" / "0" / "0"
        chunk = local if local.is_file() else resource("fixtures", "stores", f"{store}.zarr", "c", "0", "0", "0", "0")
        data = chunk.read_bytes()
        return data, {"name": producer["writer"], "version": producer["library"],
                      "options": {"quality": producer["quality"], "from": f"fixtures/stores/{store}.zarr/c/0/0/0/0"}}

    return Recipe(
        id=f"stream.foreign.neuroglancer-{store.removeprefix('ng-')}", category="foreign",
        description=f"a {store.removeprefix('ng-').split('-')[0]} neuroglancer chunk of a [z={z}, y={y}, x={x}, c={c}] volume",
        requirements=NEUROGLANCER_CHUNK.requirements, level=NEUROGLANCER_CHUNK.level, codec=jpeg,
        chunk_shape=(z * y, x, c), expect=NEUROGLANCER_CHUNK.expect,
        source={"recipe": f"the one chunk of fixtures/stores/{store}.zarr, unchanged"},
        build=build, structure=wants(sof=0xC0, height=z * y, width=x),
        comment="What neuroglancer precomputed writers store, read as the spec's [reshape, jpeg] chain reads it: "
                "an image of height z*y and width x (JPEG-INT-01, JPEG-INT-02).",
    )


def foreign_recipes() -> list[Recipe]:
    return [row.recipe("foreign") for row in FOREIGN] + [_neuroglancer(store) for store in NEUROGLANCER]
