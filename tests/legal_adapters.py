"""Legal variants: implementations that make choices the spec leaves open, and must pass.

A suite that fails a correct encoder is as broken as one that passes a wrong one. Each
adapter here differs from the libjpeg-turbo defaults in a way the spec allows:
tables, entropy coding options, where an optional feature is refused. The bite tests run
them over the same selections as the wrong adapters.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import numpy as np
from PIL import Image

from zarr_jpeg_conformance.backends.imagecodecs import ImagecodecsAdapter
from zarr_jpeg_conformance.core.config import JpegConfig


class RestartsAndOptimizedTables(ImagecodecsAdapter):
    """Writes grayscale with restart markers every MCU row and optimized Huffman tables: still baseline (Pillow)."""

    name = "legal-restarts-optimized"

    def _encode_gray(self, plane: np.ndarray, quality: int) -> bytes:
        if max(plane.shape) > 65500:  # libjpeg's own limit under Pillow: the base refuses such sides (JPEG-X-03)
            return super()._encode_gray(plane, quality)
        buf = io.BytesIO()
        Image.fromarray(plane, "L").save(buf, "JPEG", quality=quality, optimize=True, restart_marker_rows=1)
        return buf.getvalue()


class RefusesRgbAtEncode(ImagecodecsAdapter):
    """Decodes rgb streams but does not write them: accepts rgb when parsing and refuses at encode."""

    name = "legal-rgb-decode-only"

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        if isinstance(parsed, JpegConfig) and parsed.encoded_color_space == "rgb":
            raise ValueError("this implementation reads rgb streams but does not write them")
        return super().encode(parsed, chunk)


class StrictParseCopy(ImagecodecsAdapter):
    """Keeps its own deep copy of the configuration (a parse that owns its result)."""

    name = "legal-parse-copy"

    def parse(self, codec: Mapping[str, Any]) -> JpegConfig:
        import copy

        return super().parse(copy.deepcopy(dict(codec)))


class LegalEncoder(ImagecodecsAdapter):
    """An encoder of ``tools.legal_encoders`` (decoding with libjpeg-turbo); where it cannot write a mode, libjpeg-turbo writes it."""

    encoder = ""

    def __init__(self) -> None:
        from zarr_jpeg_conformance.core.config import parse_codec
        from zarr_jpeg_conformance.tools.legal_encoders import ENCODERS

        super().__init__()
        self.name = f"legal-{self.encoder.replace(' ', '-').replace(',', '').lower()}"
        probe = parse_codec({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "rgb"}})
        for config in (probe, parse_codec({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}})):
            try:
                ENCODERS[self.encoder](config, np.zeros((8, 8, 3), np.uint8))
                return
            except LookupError:
                continue
            except ImportError as exc:
                raise RuntimeError(f"the legal encoder {self.encoder!r} cannot run here: {exc}") from exc
        raise RuntimeError(f"the legal encoder {self.encoder!r} cannot run here")

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        from zarr_jpeg_conformance.core.chunk import check_chunk
        from zarr_jpeg_conformance.tools.legal_encoders import ENCODERS

        assert isinstance(parsed, JpegConfig)
        image = check_chunk(parsed, chunk)
        try:
            return ENCODERS[self.encoder](parsed, image)
        except (LookupError, ImportError):
            return super().encode(parsed, chunk)


def _legal(encoder: str) -> type[LegalEncoder]:
    return type(f"Legal{len(encoder)}", (LegalEncoder,), {"encoder": encoder})


FastIntegerDct = _legal("fast integer DCT")
TablesOfQualityMinusOne = _legal("tables of quality q-1")
ChromaTableOnGAndB = _legal("chroma table on G and B")
MozjpegAnnexK = _legal("mozjpeg trellis, Annex K tables")
MozjpegImageMagick = _legal("mozjpeg trellis, ImageMagick tables")


class _FloorPinned(ImagecodecsAdapter):
    """Writes the fidelity cases' images at whatever quality lands next to their floor (judging.tolerances.PSNR_FLOORS).

    How quality maps to tables is the encoder's choice (JPEG-Q-03), so an encoder that maps
    each quality to a lower one is legal, whatever fidelity libjpeg's scale would give:
    ``AtTheFloors`` picks the lowest quality whose round trip still meets the floor,
    ``BelowTheFloors`` the highest one that misses it. Both pass: an encoder is held to what
    its own tables allow, not to the floors. Other chunks are written as asked.
    """

    above = True

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        from zarr_jpeg_conformance.corpus.images import make_image, psnr
        from zarr_jpeg_conformance.corpus.modes import MODES
        from zarr_jpeg_conformance.judging.tolerances import PSNR_FLOORS

        assert isinstance(parsed, JpegConfig)
        for (mode_id, kind, quality), floor in PSNR_FLOORS.items():
            mode = next(m for m in MODES if m.id == mode_id)
            if quality != parsed.quality or mode.codec(quality)["configuration"] != _configuration(parsed):
                continue
            image = make_image(kind, 64, 96, channels=mode.channels)
            if image.shape != chunk.shape or not np.array_equal(image, chunk):
                continue
            for q in (range(1, quality + 1) if self.above else range(quality, 0, -1)):
                config = JpegConfig(q, parsed.encoded_color_space, parsed.decoded_color_space, parsed.subsampling)
                data = super().encode(config, chunk)
                meets = psnr(chunk, super().decode(config, data, chunk.shape)) >= floor
                if meets == self.above:
                    return data
        return super().encode(parsed, chunk)


def _configuration(config: JpegConfig) -> dict[str, Any]:
    return config.to_codec()["configuration"]


class AtTheFloors(_FloorPinned):
    name = "legal-at-the-floors"


class BelowTheFloors(_FloorPinned):
    name = "legal-below-the-floors"
    above = False


class _QualityMapped(ImagecodecsAdapter):
    """Writes quality q with libjpeg's tables of ``_mapped(q)``: a monotone mapping whose ends stay ordered (JPEG-Q-03)."""

    def _mapped(self, quality: int) -> int:
        raise NotImplementedError

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        assert isinstance(parsed, JpegConfig)
        mapped = JpegConfig(self._mapped(parsed.quality), parsed.encoded_color_space, parsed.decoded_color_space,
                            parsed.subsampling)
        return super().encode(mapped, chunk)


class QualityMinusTen(_QualityMapped):
    """Quality q written with the tables of q - 10 (at least 1)."""

    name = "legal-quality-minus-ten"

    def _mapped(self, quality: int) -> int:
        return max(1, quality - 10)


class PlateauAt80(_QualityMapped):
    """Qualities 86-90 written at 80: each of those steps loses nothing, so only the SHOULD of each step (JPEG-X-16) warns."""

    name = "legal-plateau-at-80"

    def _mapped(self, quality: int) -> int:
        return 80 if 86 <= quality <= 90 else quality
