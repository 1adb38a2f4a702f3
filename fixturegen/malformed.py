"""The malformed cases: broken streams, and streams that do not fit the chunk they are decoded into.

Each row is one byte edit of a reference stream (or of nothing); the defaults are a
4:2:0 configuration, a (48, 80, 3) chunk and a rejection.
"""

from __future__ import annotations

from .edits import SOF, cut, cut_before_scan, dht_cut, noise_bytes, oversubscribed, patched, unchanged
from .flat import progressive_repeats, sequential_repeats
from .recipe import C444, GRAY, Edited, Recipe, Verdict
from .reference import GRAY_BASE, SECOND_420, WIDE_BASE, YCC420_BASE

EOI = b"\xff\xd9"

BROKEN = Verdict(("JPEG-X-22", "JPEG-DEC-01"), "SHOULD", "reject")
TRUNCATED = Verdict(("JPEG-X-07", "JPEG-DEC-01"), "SHOULD", "reject")
TRAILING = Verdict(("JPEG-X-11", "JPEG-DEC-01"), "MAY", "decode-or-reject")
FORGED = Verdict(("JPEG-DIM-03", "JPEG-X-13", "JPEG-X-03"), "MUST", "reject")
WRONG_SIZE = Verdict(("JPEG-DIM-03", "JPEG-DEC-03"), "MUST", "reject")
REFACTORED = Verdict(("JPEG-X-08", "JPEG-DEC-03", "JPEG-DIM-03"), "MAY", "decode-or-reject")
COMPONENTS = Verdict(("JPEG-X-18", "JPEG-DIM-03", "JPEG-DEC-02"), "SHOULD", "reject")
TOO_SHORT = Verdict(("JPEG-X-07", "JPEG-X-13"), "SHOULD", "reject")
REPEATED_SCANS = Verdict(("JPEG-X-14", "JPEG-X-15"), "SHOULD", "reject")
TOO_MANY_MARKERS = Verdict(("JPEG-X-15", "JPEG-X-09"), "MAY", "decode-or-reject")
#: Empty COM segments put before the frame of the many-markers case: past MAX_MARKERS (core.limits).
COMMENTS = 1100

MALFORMED: tuple[Edited, ...] = (
    Edited("empty", "zero bytes", BROKEN, None, unchanged, "b''",
           "Nothing to decode: a clean rejection (ValueError or TypeError), not a crash."),
    Edited("random-bytes", "4096 pseudo-random bytes", BROKEN, None, lambda _d: noise_bytes(4096, "random-bytes"),
           "SHA-256 counter-mode bytes, label 'random-bytes'", "Not a JPEG stream."),
    Edited("soi-only", "the SOI marker alone", BROKEN, None, lambda _d: b"\xff\xd8", "FFD8",
           "PyTurboJPEG 1.x returns a (0, 0, 3) array for it (backends.md 11.13)."),
    Edited("soi-eoi", "SOI followed by EOI", BROKEN, None, lambda _d: b"\xff\xd8" + EOI, "FFD8 FFD9",
           "No frame, no scan."),
    Edited("data-before-soi", "a stream preceded by 16 bytes of text", BROKEN, YCC420_BASE,
           lambda d: b"not a jpeg start" + d, "16 ASCII bytes prepended",
           "A JPEG stream starts with SOI (T.81 B.2.1); libjpeg refuses anything else."),
    Edited("headers-no-scan", "tables and frame header, then EOI, no scan", BROKEN, YCC420_BASE,
           cut_before_scan(then=EOI), "cut before SOS, EOI appended", "A frame with no scan holds no samples."),
    Edited("headers-only", "tables and frame header only, cut before SOS", BROKEN, YCC420_BASE,
           cut_before_scan(), "cut before SOS", "No scan and no EOI."),
    Edited("truncated-after-sos", "cut right after the scan header", TRUNCATED, YCC420_BASE,
           cut(0.0), "cut at the first byte of entropy-coded data",
           "No entropy-coded data at all: a decoder SHOULD reject rather than return a grey chunk (JPEG-X-07)."),
    *(
        Edited(f"truncated-{pct}", f"entropy-coded data cut at {pct} %", TRUNCATED, YCC420_BASE,
               cut(pct / 100), f"cut at {pct} % of the entropy-coded data",
               "Several libraries return the missing rows as grey, silently (backends.md 6): a decoder "
               "SHOULD reject (JPEG-X-07).")
        for pct in (10, 50, 90)
    ),
    Edited("truncated-50-gray", "grayscale, entropy-coded data cut at 50 %", TRUNCATED, GRAY_BASE,
           cut(0.5), "cut at 50 % of the entropy-coded data", "As truncated-50, one component (JPEG-X-07).",
           codec=GRAY, chunk_shape=(32, 96)),
    Edited("truncated-50-with-eoi", "entropy-coded data cut at 50 %, then EOI", TRUNCATED, YCC420_BASE,
           cut(0.5, then=EOI), "cut at 50 % of the entropy-coded data, EOI appended",
           "Structurally complete, but the scan ends early: only decoding shows it. libjpeg warns "
           "('premature end of data segment') and fills the rest; a decoder SHOULD reject (JPEG-X-07)."),
    Edited("missing-eoi", "complete entropy-coded data without the EOI marker", TRUNCATED, YCC420_BASE,
           lambda d: d[:-2], "last two bytes (EOI) removed",
           "Every sample is there, but the stream is cut (JPEG-X-07 counts a missing EOI as truncation)."),
    Edited("trailing-garbage", "512 pseudo-random bytes after EOI", TRAILING, YCC420_BASE,
           lambda d: d + noise_bytes(512, "trailing-garbage"), "512 SHA-256 counter-mode bytes appended",
           "The image before EOI is complete: a decoder MAY ignore what follows or MAY reject (JPEG-X-11)."),
    Edited("concatenated", "a second, different stream right after EOI", TRAILING, YCC420_BASE,
           unchanged, f"{SECOND_420} appended after EOI",
           "Every decoder measured returns the first image (backends.md 6): it MAY do so, or MAY reject (JPEG-X-11).",
           appended=SECOND_420),
    Edited("forged-65535x65535", "frame header claims 65535x65535, data of a 48x80 image", FORGED, YCC420_BASE,
           patched(SOF, 5, b"\xff\xff\xff\xff"), "SOF height and width set to 65535",
           "The chunk is 48x80: reject from the header alone. imagecodecs decodes such a header into "
           "4.3 GB in 26 s (backends.md 11.15); memory must stay bounded by the chunk (JPEG-X-13).",
           structure={"height": 65535, "width": 65535}),
    Edited("forged-small", "frame header and chunk say 2048x2048, the data is a 48x80 image's", TOO_SHORT, YCC420_BASE,
           patched(SOF, 5, (2048).to_bytes(2, "big") * 2), "SOF height and width set to 2048",
           "The frame fits the chunk, but its 98304 blocks need at least 24576 bytes of entropy-coded data "
           "(2 bits a block in a sequential Huffman scan, T.81 F.1.2) and the whole stream is 1478 bytes: it is "
           "truncated, and can be rejected from its length before 12 MB are allocated (JPEG-X-07, JPEG-X-13). "
           "imagecodecs returns such a stream as grey fill: 768 MB in 2-8 s for a 16000x16000 header (tools/bombs.py).",
           chunk_shape=(2048, 2048, 3), structure={"height": 2048, "width": 2048}),
    Edited("progressive-repeated-scans", "progressive 256x256 grayscale: one DC scan, then the same AC scan 501 times",
           REPEATED_SCANS, None, lambda _d: progressive_repeats(256, 256, 500),
           "built by fixturegen.flat.progressive_repeats(256, 256, 500): a flat grey image",
           "Every repeat is a first scan of coefficients already sent (T.81 G.1.1.1.2) and costs 12 bytes but a "
           "pass over all blocks; libjpeg warns about none. 10001 such scans of a 2048x2048 frame take 11-24 s "
           "in every backend (tools/bombs.py). A decoder SHOULD reject (JPEG-X-14).",
           codec=GRAY, chunk_shape=(256, 256), structure={"sof": 0xC2}),
    Edited("sequential-repeated-scans", "baseline 64x64x3, scans of components 1, 2, 3, then component 1's 100 times more",
           REPEATED_SCANS, None, lambda _d: sequential_repeats(64, 64, 100),
           "built by fixturegen.flat.sequential_repeats(64, 64, 100): a flat grey image",
           "A sequential frame codes each component in one scan (T.81 4.5, B.2.3); libjpeg decodes every repeat "
           "again, without a warning, because the first scan did not hold all components (JPEG-X-14).",
           codec=C444, chunk_shape=(64, 64, 3), structure={"sof": 0xC0}),
    Edited("many-markers", f"a 48x80 4:2:0 stream after {COMMENTS} empty COM segments", TOO_MANY_MARKERS, YCC420_BASE,
           lambda d: d[:2] + b"\xff\xfe\x00\x02" * COMMENTS + d[2:], f"{COMMENTS} COM segments of length 2 after SOI",
           "Legal, but more markers than any encoder writes: a decoder MAY reject it (JPEG-X-15), as it may decode "
           "it; what it decodes must be the image. Marker segments cost work by their number, not the frame's size.",
           structure={"comments": COMMENTS}),
    Edited("size-mismatch", "a 48x80 stream decoded into a 48x64 chunk", WRONG_SIZE, YCC420_BASE,
           unchanged, "unchanged; decoded into a chunk of another size",
           "The samples cannot be reshaped to the chunk shape (JPEG-DIM-03).", chunk_shape=(48, 64, 3)),
    Edited("transposed", "a 32x96 stream decoded into a 96x32 chunk (same sample count)", REFACTORED, WIDE_BASE,
           unchanged, "unchanged; decoded into the transposed chunk shape",
           "The decoding steps reshape the raster samples to the chunk shape, which works here; a swapped height and width "
           "is also the mark of an axis-order bug, so a decoder MAY reject it instead (JPEG-X-08).",
           codec=C444, chunk_shape=(96, 32, 3)),
    Edited("refactorized", "a 32x96 stream decoded into a 64x48 chunk (same sample count)", REFACTORED, WIDE_BASE,
           unchanged, "unchanged; decoded into another factorization of 3072 samples",
           "The raster samples reshaped to the chunk shape, as the decoding steps say, or a rejection (JPEG-X-08).", codec=C444, chunk_shape=(64, 48, 3)),
    Edited("gray-into-color-chunk", "a grayscale stream decoded into an (H, W, 3) chunk", COMPONENTS, GRAY_BASE,
           unchanged, "unchanged; decoded under a ycbcr configuration into (32, 96, 3)",
           "One component does not fill three; repeating it in every channel would be a conversion the spec's "
           "table does not list (JPEG-X-18).", codec=C444, chunk_shape=(32, 96, 3)),
    Edited("color-into-gray-chunk", "a 3-component stream decoded into an (H, W) chunk", COMPONENTS, WIDE_BASE,
           unchanged, "unchanged; decoded under a grayscale configuration into (32, 96)",
           "Three components do not fit one; reading only luma would be a conversion the spec does not "
           "define (JPEG-X-18).", codec=GRAY, chunk_shape=(32, 96)),
    # Off by less than one MCU: the realistic writer bug of padding a chunk to the MCU, or
    # cropping it. The samples cannot be reshaped to the chunk (JPEG-DIM-03).
    Edited("padded-to-mcu", "a 48x80 stream decoded into a 45x77 chunk (the writer padded to the MCU)", WRONG_SIZE,
           YCC420_BASE, unchanged, "unchanged; decoded into a chunk 3 rows and 3 columns smaller",
           "The stream is larger than the chunk by less than one 16x16 MCU: a decoder must not crop it (JPEG-DIM-03).",
           chunk_shape=(45, 77, 3)),
    Edited("cropped-rows", "a 48x80 stream decoded into a 51x80 chunk (the writer dropped rows)", WRONG_SIZE,
           YCC420_BASE, unchanged, "unchanged; decoded into a chunk 3 rows larger",
           "The stream lacks 3 rows of the chunk: a decoder must not pad them (JPEG-DIM-03).", chunk_shape=(51, 80, 3)),
    Edited("one-column-more", "a 32x96 grayscale stream decoded into a 32x95 chunk", WRONG_SIZE, GRAY_BASE,
           unchanged, "unchanged; decoded into a chunk one column narrower",
           "One column too many (JPEG-DIM-03).", codec=GRAY, chunk_shape=(32, 95)),
    Edited("one-row-fewer", "a 32x96 grayscale stream decoded into a 33x96 chunk", WRONG_SIZE, GRAY_BASE,
           unchanged, "unchanged; decoded into a chunk one row taller",
           "One row missing (JPEG-DIM-03).", codec=GRAY, chunk_shape=(33, 96)),
    Edited("huffman-oversubscribed", "first Huffman table declares more codes than fit", BROKEN, YCC420_BASE,
           oversubscribed, "two more 1-bit codes, two fewer of the longest length",
           "No valid code assignment exists (T.81 C.2); libjpeg: 'Bogus Huffman table definition'."),
    Edited("huffman-cut", "a DHT segment 8 bytes shorter than its code counts need", BROKEN, YCC420_BASE,
           dht_cut, "DHT length reduced by 8 and its last 8 bytes removed", "The table's symbols run past its segment."),
    Edited("quantization-index", "a DQT defines table 5 (only 0-3 exist)", BROKEN, YCC420_BASE,
           patched(0xDB, 4, b"\x05"), "Pq/Tq byte of the first DQT set to 0x05", "T.81 B.2.4.1 allows table ids 0-3."),
    Edited("quantization-undefined", "the frame uses a quantization table that is never defined", BROKEN, YCC420_BASE,
           patched(SOF, 12, b"\x03"), "Tq of component 1 set to 3",
           "Nothing to dequantize with; libjpeg: 'Quantization table 0x03 was not defined'."),
    Edited("sampling-factor-5", "a frame component declares sampling factor 5", BROKEN, YCC420_BASE,
           patched(SOF, 11, b"\x51"), "H/V byte of component 1 set to 0x51", "T.81 B.2.2 allows factors 1-4."),
    Edited("height-zero", "frame header declares height 0 (DNL)", BROKEN, YCC420_BASE,
           patched(SOF, 5, b"\x00\x00"), "SOF height set to 0",
           "A height defined later by DNL: libjpeg does not support it, and the chunk fixes the height."),
    Edited("scan-unknown-component", "the scan names a component the frame lacks", BROKEN, YCC420_BASE,
           patched(0xDA, 5, b"\x09"), "first scan component id set to 9",
           "T.81 B.2.3: scan components must be frame components."),
)


def malformed_recipes() -> list[Recipe]:
    return [row.recipe("malformed") for row in MALFORMED]
