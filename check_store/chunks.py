"""What each stored JPEG must be, checked from its header and its last bytes, or decoded whole.

A header-only check reads the first :data:`HEAD` bytes of a chunk (more if its marker
segments run longer) and its last :data:`TAIL` bytes (from a store read through zarr, one
range request of the first :data:`FIRST` bytes, which hold all of a small chunk, and a second
for the tail only of a longer one), and judges what
the spec fixes for every stream: a baseline frame (SOF0, 8-bit samples and tables), the
chunk's height and width, the component count and sampling factors of the configuration,
the colour-space markers of its ``encoded_color_space``, and EOI as the last bytes. What a
header cannot show (a corrupt byte inside the entropy-coded data, trailing bytes that
themselves end in FFD9) is left to ``--decode``, which reads each chunk whole, reads it by
T.81's rules byte by byte (``judging.t81``: restart markers, pad bits, table ids, the MCU count)
and decodes it with a strict decoder.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.markers import SOS, StreamInfo, inspect, inspect_headers
from .metadata import ArrayPlan
from .records import Finding, error, finding

__all__ = ["FIRST", "HEAD", "TAIL", "Options", "check_header", "check_whole", "header_extent"]

#: Bytes read from the start of a chunk: a libjpeg header (JFIF, two DQT, SOF, four DHT,
#: SOS) is about 620 bytes; longer ones (ICC profiles, EXIF) are read again in full.
HEAD = 1024
#: Bytes read from the end: enough to find an EOI followed by a few bytes of junk.
TAIL = 64
#: Bytes asked for first of a chunk of a store read through zarr (http, object stores, zip): a chunk no
#: longer than this is read in one request, not two (its head, then its tail), since a request costs
#: more than the bytes it saves; judged, only its first HEAD and last TAIL bytes count all the same.
FIRST = 16384
#: A header longer than this is not a chunk header (metadata blobs do not belong in chunks).
HEAD_MAX = 1 << 20

SOF_NAMES = {
    0xC0: "SOF0 (baseline DCT)", 0xC1: "SOF1 (extended sequential DCT)", 0xC2: "SOF2 (progressive DCT)",
    0xC3: "SOF3 (lossless)", 0xC5: "SOF5 (differential sequential)", 0xC6: "SOF6 (differential progressive)",
    0xC7: "SOF7 (differential lossless)", 0xC9: "SOF9 (arithmetic sequential)", 0xCA: "SOF10 (arithmetic progressive)",
    0xCB: "SOF11 (arithmetic lossless)", 0xCD: "SOF13 (arithmetic differential sequential)",
    0xCE: "SOF14 (arithmetic differential progressive)", 0xCF: "SOF15 (arithmetic differential lossless)",
}


@dataclass(frozen=True)
class Options:
    """How chunks are checked: header only, or decoded (and compared with a second decoder)."""

    decode: bool = False
    #: The backend that decodes (``--decode``); None: the first of turbojpeg, imagecodecs, pillow that loads.
    decoder: str | None = None
    #: A second backend whose decode must agree within the suite's tolerances (``--reference``).
    reference: str | None = None
    #: How records name the store.
    store: str = ""


#: Headers seen lately (SOI through the first SOS segment): the chunks of an array share one.
_KNOWN: list[bytes] = []


def header_extent(data: bytes) -> int | None:
    """Bytes from the start of ``data`` to the end of its first SOS segment.

    Negative ``-n`` when the marker segments run past the end of ``data`` and at least ``n``
    bytes are needed; None when the walk cannot go on (no SOI, garbage where a marker
    belongs, EOI before any scan): the inspector then says what is wrong. A header seen
    before is recognized by comparing bytes, without walking its segments again.
    """
    for known in _KNOWN:
        if data.startswith(known):
            return len(known)
    end = _walk_headers(data)
    if end is not None and end > 0:
        if len(_KNOWN) >= 8:
            _KNOWN.pop(0)
        _KNOWN.append(data[:end])
    return end


def _walk_headers(data: bytes) -> int | None:
    n = len(data)
    if data[:2] != b"\xff\xd8":
        return None
    pos = 2
    while True:
        while pos + 1 < n and data[pos] == 0xFF and data[pos + 1] == 0xFF:
            pos += 1  # fill bytes
        if pos + 4 > n:
            return -(pos + 4)
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        if marker in (0xD8, 0xD9) or marker < 0xC0:
            return None
        end = pos + 2 + ((data[pos + 2] << 8) | data[pos + 3])
        if end > n:
            return -end
        if marker == SOS:
            return end
        pos = end


def _describe(info: StreamInfo) -> dict[str, Any]:
    return {
        "frame": SOF_NAMES.get(info.sof, f"FF{info.sof:02X}") if info.sof is not None else None,
        "precision": info.precision,
        "size": f"{info.height}x{info.width}" if info.height is not None else None,
        "components": len(info.components),
        "sampling": [[c.h, c.v] for c in info.components],
        "jfif": info.jfif,
        "adobe_transform": info.adobe_transform,
    }


def _axis(name: str, got: int, want: int, mcu: int) -> str:
    if got == want:
        return ""
    d = abs(got - want)
    side = "short" if got < want else "too many"
    if d == mcu:
        size = f"exactly one {mcu}-{name} MCU"
    elif d % mcu == 0:
        size = f"{d // mcu} MCUs of {mcu} {name}s"
    elif d < mcu:
        size = f"less than one {mcu}-{name} MCU"
    else:
        size = f"{d / mcu:.2f} MCUs of {mcu} {name}s"
    return f"{d} {name}{'s' if d != 1 else ''} {side} ({size})"


def _judge(plan: ArrayPlan, info: StreamInfo, boundary: bool) -> list[Finding]:
    """The findings of one stream's declared structure against the array's configuration."""
    assert plan.image is not None
    out: list[Finding] = []
    if not info.soi:
        return [finding("JPEG-FMT-01", f"not a JPEG stream: it does not start with SOI ({info.length} bytes)")]
    if info.problems:
        out.append(finding("JPEG-FMT-01", "malformed JPEG structure: " + "; ".join(info.problems[:5])))
    if info.sof is None:
        return out or [finding("JPEG-FMT-01", "no frame header (SOF)")]
    if info.sof != 0xC0:
        out.append(finding("JPEG-GEN-01", f"frame is {SOF_NAMES.get(info.sof, f'FF{info.sof:02X}')}: the codec writes "
                           "baseline JPEG (SOF0, sequential DCT, Huffman-coded)"))
    if info.precision != 8 or any(info.dqt_precisions):
        out.append(finding("JPEG-ENC-04", f"sample precision {info.precision} bits, quantization table precisions "
                           f"{list(info.dqt_precisions)} (0 = 8-bit): baseline JPEG has 8-bit samples and 8-bit tables"))
    height, width, components = plan.image
    factors = tuple((c.h, c.v) for c in info.components)
    if (info.height, info.width) != (height, width):
        h_max = max((f[0] for f in factors), default=1)
        v_max = max((f[1] for f in factors), default=1)
        if plan.config is not None:
            v_mcu, h_mcu = plan.config.mcu
        else:
            v_mcu, h_mcu = 8 * v_max, 8 * h_max
        parts = [p for p in (_axis("row", info.height or 0, height, v_mcu), _axis("column", info.width or 0, width, h_mcu)) if p]
        note = (" This is a boundary chunk: Zarr pads boundary chunks to the full chunk shape, so their images are "
                f"{height}x{width} too.") if boundary else ""
        out.append(finding("JPEG-DIM-01", f"frame is {info.height}x{info.width} (HxW), the chunk's image is {height}x{width}: "
                           f"{', '.join(parts)}.{note}"))
    n = len(info.components)
    if n != components:
        extra = f" ({info.libjpeg_color_space or 'unknown'}, APP14 transform {info.adobe_transform})" if n == 4 else ""
        out.append(finding("JPEG-ECS-02", f"{n} component{'s' if n != 1 else ''}{extra}; the chunk shape has {components}"
                           + (f" and encoded_color_space {plan.config.encoded_color_space!r} has {plan.config.components}"
                              if plan.config is not None else "")))
    config = plan.config
    if config is None or n != config.components:
        return out
    if factors != config.subsampling:
        requirement = {"rgb": "JPEG-SUB-09", "grayscale": "JPEG-SUB-05"}.get(config.encoded_color_space, "JPEG-SUB-02")
        out.append(finding(requirement, f"sampling factors {[list(f) for f in factors]}, the configuration's "
                           f"{[list(f) for f in config.subsampling]}"))
    if config.encoded_color_space == "rgb":
        if info.adobe_transform != 0:
            seen = "no APP14 Adobe marker" if info.adobe_transform is None else f"APP14 transform {info.adobe_transform} (YCbCr)"
            out.append(finding("JPEG-ECS-06", f"{seen}: encoded_color_space 'rgb' needs APP14 transform 0, or decoders "
                               "apply an inverse YCbCr transform"))
        if info.jfif:
            out.append(finding("JPEG-X-05", "a JFIF APP0 marker in an rgb stream: libjpeg-family decoders let it win over "
                               "APP14 and convert the samples"))
    else:
        if config.encoded_color_space == "ycbcr" and not (info.stored_color_space == "ycbcr" == info.libjpeg_color_space):
            out.append(finding("JPEG-ECS-04", f"the stream marks its samples as {info.stored_color_space} by the spec's rule "
                               f"(APP14 decides) and as {info.libjpeg_color_space} by libjpeg's (JFIF decides), not as YCbCr "
                               f"(JFIF {info.jfif}, APP14 transform {info.adobe_transform})"))
        if not info.jfif:
            out.append(finding("JPEG-X-06", "no JFIF APP0 marker"))
    return out


def _ending(tail: bytes) -> Finding | None:
    """What the last bytes of a stream say about its end: EOI last, or not."""
    if tail.endswith(b"\xff\xd9"):
        return None
    at = tail.find(b"\xff\xd9")
    if at >= 0:
        return finding("JPEG-FMT-01", f"{len(tail) - at - 2} bytes after the EOI marker (decoders MAY ignore or reject "
                       "them, JPEG-X-11)")
    return finding("JPEG-FMT-01", f"no EOI marker at the end (the last {len(tail)} bytes hold none): the stream is "
                   f"truncated, or has more than {TAIL - 2} bytes after its EOI")


#: (headers, what they are judged against) -> (findings, what they declare). The chunks of an
#: array share their headers, so each distinct header is parsed and judged once per process.
_JUDGED: dict[tuple[Any, ...], tuple[list[Finding], dict[str, Any]]] = {}
_JUDGED_MAX = 256


def check_header(plan: ArrayPlan, head: bytes, tail: bytes, boundary: bool) -> tuple[list[Finding], dict[str, Any]]:
    """Judge a chunk from its first bytes (at least through the first SOS segment) and its last bytes.

    The end of the stream is judged from ``tail`` alone, so the headers are inspected as if
    EOI followed them: the inspector then stops at the first scan.
    """
    end = header_extent(head)
    ended = head[:end] if end is not None and end > 0 else None
    key = (ended, plan.image, plan.config, boundary)
    judged = _JUDGED.get(key) if ended is not None else None
    if judged is None:
        info = inspect_headers(ended + b"\xff\xd9") if ended is not None else inspect(head + b"\xff\xd9", entropy=False)
        judged = _judge(plan, info, boundary), _describe(info)
        if ended is not None:
            if len(_JUDGED) >= _JUDGED_MAX:
                _JUDGED.clear()
            _JUDGED[key] = judged
    findings = list(judged[0])
    ending = _ending(tail)
    if ending is not None:
        findings.append(ending)
    seen = dict(judged[1]) if findings else {}
    if findings:
        seen["eoi_last"] = ending is None
    return findings, seen


def check_whole(plan: ArrayPlan, data: bytes, boundary: bool, options: Options,
                limit: int | None = None) -> tuple[list[Finding], dict[str, Any]]:
    """Judge a whole chunk: every marker, then a strict decode (and a second decoder's, within tolerance).

    ``limit``: the most bytes a decode may make (``--max-chunk-bytes``); a chunk whose image is
    larger is not decoded, and says so.
    """
    info = inspect(data)
    findings = _judge(plan, info, boundary)
    if options.decode:
        findings += _syntax(data)
    seen = _describe(info)
    seen["bytes"] = len(data)
    seen["eoi_last"] = info.eoi and not info.trailing_bytes
    if options.decode and plan.config is not None and not any(f.outcome == "fail" for f in findings):
        assert plan.image is not None
        made = math.prod(plan.image)
        if limit is not None and made > limit:
            findings.append(error(f"decoding this chunk makes a {plan.image[0]}x{plan.image[1]}x{plan.image[2]} image of "
                                  f"{made:,} bytes, more than {limit:,} (--max-chunk-bytes): not decoded"))
        else:
            findings += _decode(plan, data, options, info)
    return findings, seen


def _syntax(data: bytes) -> list[Finding]:
    """Every offence against T.81 the judge's own reading finds (``judging.t81``: pad bits, restart markers, table ids,
    the MCU count, ...), which no decoder that accepts the stream shows: one finding a rule, the first offences named."""
    from ..judging.t81.reading import reading
    from ..judging.t81.syntax import FMT, GEN, listed

    found = reading(data)
    out = []
    for requirement in (GEN, FMT):
        offences = [o for o in found.offences if o.requirement == requirement and o.about != "process"]
        if offences:
            out.append(finding(requirement, f"breaks T.81: {listed(offences)}"))
    return out


def decoder_name(options: Options) -> str:
    """The backend ``--decode`` uses: the one named, else the strictest that loads."""
    from ..backends import BackendUnavailable, load_backend

    if options.decoder:
        return options.decoder
    for name in ("turbojpeg", "imagecodecs", "pillow"):
        try:
            load_backend(name)
        except BackendUnavailable:
            continue
        return name
    raise RuntimeError("no JPEG backend loads: install zarr-jpeg-conformance[turbojpeg] (and Debian's libturbojpeg0)")


def _attempt(backend: str, plan: ArrayPlan, data: bytes) -> tuple[np.ndarray | None, Finding | None]:
    from ..backends import load_backend
    from ..core.errors import Unsupported

    assert plan.config is not None and plan.image is not None
    adapter = load_backend(backend)
    largest = max(plan.image[:2])
    if largest > adapter.max_dimension:
        # 65501-65535 is a valid size that decoders MAY not support: a limit of this decoder, not of the chunk.
        return None, error(f"{backend} cannot decode this chunk (an optional feature, JPEG-X-03): its images are "
                           f"{plan.image[0]}x{plan.image[1]}, beyond this decoder's limit of {adapter.max_dimension}; "
                           "decode with a backend without that limit (imagecodecs)")
    try:
        return adapter.decode(plan.config, data, plan.image), None
    except Unsupported as exc:
        return None, error(f"{backend} cannot decode this chunk (an optional feature, {exc.requirement}): {exc.reason}")
    except (ValueError, TypeError) as exc:
        return None, finding("JPEG-FMT-01", f"a strict decoder ({backend}) rejects the stream: {exc}")
    except Exception as exc:  # noqa: BLE001 - a decoder's crash is reported on the chunk, not raised
        return None, error(f"{backend} raised {type(exc).__name__}: {exc}")


def _decode(plan: ArrayPlan, data: bytes, options: Options, info: StreamInfo) -> list[Finding]:
    from ..judging.decode_tolerances import diagnose, family_for, judge_decode
    from ..judging.legal_decoders import with_repeated_chroma

    assert plan.config is not None
    primary = decoder_name(options)
    got, problem = _attempt(primary, plan, data)
    if problem is not None or options.reference is None:
        return [problem] if problem is not None else []
    expected, problem = _attempt(options.reference, plan, data)
    if problem is not None:
        return [Finding(problem.requirement, problem.outcome, f"{primary} decodes it, but {problem.observed}")]
    assert got is not None and expected is not None
    # The reference's decode, and the same stream with chroma repeated where that can be made:
    # the span of legal decodes the suites judge a decoder by.
    references = with_repeated_chroma(expected, data, plan.config, expected.shape)
    ok, beyond, bounds = judge_decode(got, references, family_for(info))
    if ok:
        return []
    diagnosis = diagnose(got, expected, info.stored_color_space, plan.config.decoded_color_space)
    why = f"; it looks like {diagnosis[1]}" if diagnosis else ""
    return [finding(diagnosis[0] if diagnosis else "JPEG-DEC-01",
                    f"{primary}'s decode lies {beyond} outside {options.reference}'s (and the same with chroma repeated), "
                    f"beyond the '{family_for(info)}' slack (max {bounds[0]}, mean {bounds[1]}){why}")]


