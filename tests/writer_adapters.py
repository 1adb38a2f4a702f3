"""Encoders on the numpy baseline writer (tests/baseline_writer.py), each making one choice: legal or not.

Each is the imagecodecs adapter with its encoder replaced (its decoder, libjpeg-turbo, is right),
so what the suites find is the writer's one choice. The legal ones must get no fail, warn or
error; each wrong one must fail under the rule its choice breaks, and the message must name the
cause (tests/test_invariants_bite.py).
"""

from __future__ import annotations

import numpy as np
from baseline_writer import Options, Writer

from zarr_jpeg_conformance.backends.imagecodecs import ImagecodecsAdapter
from zarr_jpeg_conformance.core.chunk import check_chunk
from zarr_jpeg_conformance.core.config import JpegConfig
from zarr_jpeg_conformance.core.errors import Unsupported


class _Written(ImagecodecsAdapter):
    """Writes every stream with the baseline writer under ``options``."""

    options = Options()

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        assert isinstance(parsed, JpegConfig)
        image = check_chunk(parsed, chunk)
        if max(image.shape[:2]) > 4096:  # the writer is plain Python: leave the sizes of the limits to libjpeg
            return super().encode(parsed, chunk)
        if sum(h * v for h, v in parsed.subsampling) > 10:
            # One interleaved scan holds at most 10 blocks an MCU (T.81 B.2.3); the writer writes no other scans.
            raise Unsupported("JPEG-X-04", f"the writer writes one interleaved scan: no factors {list(parsed.subsampling)}")
        options = self.options
        if parsed.encoded_color_space == "rgb":
            options = Options(**{**options.__dict__, "jfif": False, "adobe": 0})
        planes = image if parsed.components == 3 else image[:, :, 0]
        return Writer(options).write(planes, parsed.encoded_color_space, parsed.decoded_color_space,
                                     list(parsed.subsampling), parsed.quality)


def _writer(name: str, doc: str, **options: object) -> type[_Written]:
    return type(name, (_Written,), {"__doc__": doc, "name": f"writer-{name.lower()}", "options": Options(**options)})  # type: ignore[arg-type]


# Legal: choices the spec and T.81 leave to the encoder.
Plain = _writer("Plain", "The writer's defaults: libjpeg's choices.")
ZeroPadding = _writer("ZeroPadding", "Partial MCUs padded with zeros (T.81 A.2.4 leaves padding to the encoder).", padding="zero")
MirrorPadding = _writer("MirrorPadding", "Partial MCUs padded by mirroring the edge samples.", padding="mirror")
DeadzoneQuantizer = _writer("DeadzoneQuantizer", "AC coefficients rounded toward zero below a fraction of 0.8.",
                            quantizer="deadzone")
OptimizedHuffman = _writer("OptimizedHuffman", "Huffman tables optimal for the image (T.81 K.2).", optimized=True)
RestartEveryTwo = _writer("RestartEveryTwo", "A restart marker every 2 MCUs.", restart=2)
TablesAfterFrame = _writer("TablesAfterFrame", "DQT and DHT between the frame header and the scan (T.81 B.2.1 allows it).",
                           tables_after_frame=True)
SeparateCrTable = _writer("SeparateCrTable", "Cr quantized with a table of its own (Tq 2).", separate_cr_table=True)
PointChroma = _writer("PointChroma", "Chroma downsampled by keeping each footprint's top-left sample.", downsample="point")
Deringing = _writer("Deringing", "Samples at 255 stored up to 263: a decoder clamps them back (mozjpeg's overshoot deringing).",
                    overshoot=8)
TriangleChroma = _writer("TriangleChroma", "Chroma downsampled by a centred triangle filter.", downsample="triangle")

# Wrong: each breaks T.81 or the spec once.
ZeroPadBits = _writer("ZeroPadBits", "Pads the entropy-coded data with 0-bits before a marker (T.81 F.1.2.3: 1-bits).",
                      pad_bit=0)
RestartAfterLast = _writer("RestartAfterLast", "Writes a restart marker after the last MCU too.", restart=2,
                           rst_after_last=True)
RestartSlip = _writer("RestartSlip", "DRI says 2 MCUs an interval; the markers come every 3.", restart=2, restart_slip=1)
ThirdHuffmanTable = _writer("ThirdHuffmanTable", "Chroma on Huffman tables with id 2: baseline has ids 0 and 1.",
                            chroma_huffman_id=2)
ScanSe64 = _writer("ScanSe64", "Writes Se = 64 in the scan header (sequential scans have Se = 63).", se=64)
LevelShift127 = _writer("LevelShift127", "Level-shifts samples by 127 instead of 128.", level_shift=127)
Bt709 = _writer("Bt709", "Converts RGB to YCbCr with the BT.709 matrix.", matrix="bt709")
SwapsChroma = _writer("SwapsChroma", "Writes Cb where Cr goes and Cr where Cb goes.", swap_chroma=True)
WrapsAt256 = _writer("WrapsAt256", "Converts RGB to YCbCr modulo 256: pure blue's Cb (255.5) becomes 0.", wrap=True)
NaturalOrderTables = _writer("NaturalOrderTables", "Writes the quantization tables in natural, not zigzag, order.",
                             table_order="natural")
