"""What a stream's own quantization tables and sampling factors allow: the yardstick of an encoder's fidelity.

The spec leaves quality -> tables to the encoder (JPEG-Q-03), so no PSNR per quality can be
required of a stream. What can be required is that the encoder loses no more than its own
tables lose: the chunk it was given is written again by a reference encoder with the
stream's tables (per component, as the stream assigns them) and factors, in the colour space
the configuration stores, and both streams are decoded by the reference decoder. Subsampled
components are written both ways an encoder may downsample them (each block's mean, or its
first sample), and the encoder is held to the looser of the two. A wrong
colour conversion, reversed components, swapped axes or a broken DCT lose far more than the
tables do; a coarse table mapping loses the same on both sides.

The reference encoder is this project's planar writer (``core.scans.encode_planar``) over
Pillow's libjpeg: no library takes per-component tables *and* any sampling factors 1-4 (Pillow
writes three factor sets and gives Cb and Cr one table; libjpeg-turbo's TurboJPEG takes a
quality, not tables), and the planar writer, built for the corpus, takes both.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np

from ..core import color, scans
from ..core.config import JpegConfig
from ..core.markers import inspect

RGB_IDS, YCBCR_IDS = (82, 71, 66), (1, 2, 3)


def _gray(plane: np.ndarray, table: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    # Pillow takes tables in natural (row-major) order and writes one baseline scan.
    Image.fromarray(plane, "L").save(buf, "JPEG", qtables=[[int(x) for x in np.ravel(table)]])
    return buf.getvalue()


def stored_samples(config: JpegConfig, chunk: np.ndarray) -> np.ndarray:
    """The (H, W, C) samples a stream of ``config`` stores for ``chunk``: the colour conversion of the spec's table."""
    image = chunk.reshape(chunk.shape[0], chunk.shape[1], -1)
    if config.encoded_color_space == "ycbcr" and config.decoded_color_space == "rgb":
        return color.rgb_to_ycbcr(image)
    return image


def point_sampled(stored: np.ndarray, factors: Sequence[tuple[int, int]]) -> np.ndarray:
    """``stored`` with each subsampled component's plane replaced by the first sample of each of its blocks, repeated.

    Written by a box-averaging writer, that is the component an encoder writes that keeps one
    sample per block instead of the block's mean (the jpeg-encoder crate): T.81 leaves chroma
    downsampling to the encoder, so both are legal.
    """
    out = np.array(stored, copy=True)
    h_max, v_max = max(h for h, _ in factors), max(v for _, v in factors)
    height, width = out.shape[:2]
    for i, (h, v) in enumerate(factors):
        fh, fv = h_max // h, v_max // v
        if (fh, fv) != (1, 1):
            kept = out[::fv, ::fh, i]
            out[..., i] = np.repeat(np.repeat(kept, fv, axis=0), fh, axis=1)[:height, :width]
    return out


def encode_with_tables(config: JpegConfig, chunk: np.ndarray, tables: Sequence[np.ndarray],
                       factors: Sequence[tuple[int, int]] | None = None, *, point: bool = False) -> bytes:
    """A baseline stream of ``chunk`` under ``config`` with ``tables[i]`` (8x8, natural order) on component i.

    ``point``: subsampled components keep one sample per block (:func:`point_sampled`), not the block's mean.
    """
    factors = tuple(factors or config.subsampling)
    stored = stored_samples(config, chunk)
    if point:
        stored = point_sampled(stored, factors)
    rgb = config.encoded_color_space == "rgb"
    grayscale = config.encoded_color_space == "grayscale"
    return scans.encode_planar(stored, factors=factors,
                               component_ids=(1,) if grayscale else RGB_IDS if rgb else YCBCR_IDS,
                               adobe_transform=0 if rgb else None, jfif=not rgb, tables=list(tables), encode_gray=_gray)


def own_tables(data: bytes) -> tuple[list[np.ndarray], tuple[tuple[int, int], ...]]:
    """(table of each component, in natural order; factors of each component) as ``data`` declares them.

    Raises ``LookupError`` for a stream whose tables cannot be read (then there is no yardstick).
    """
    from PIL import Image

    info = inspect(data)
    try:
        with Image.open(io.BytesIO(data)) as image:
            quantization = getattr(image, "quantization", None) or {}  # set by Pillow's JPEG plugin only
            declared = {int(k): np.asarray(v, np.uint16).reshape(8, 8) for k, v in quantization.items()}
    except (OSError, ValueError, SyntaxError) as exc:
        raise LookupError(f"the stream's quantization tables cannot be read: {exc}") from exc
    missing = [c.tq for c in info.components if c.tq not in declared]
    if not info.components or missing:
        raise LookupError(f"the stream's components use tables {missing} that it does not define")
    return [declared[c.tq] for c in info.components], tuple((c.h, c.v) for c in info.components)


def subsampled(data: bytes) -> bool:
    """Whether a component of ``data`` has fewer samples than another (so its downsampling is the encoder's choice)."""
    factors = {(c.h, c.v) for c in inspect(data).components}
    return len(factors) > 1


def rewritten(config: JpegConfig, chunk: np.ndarray, data: bytes, *, point: bool = False) -> bytes:
    """``chunk`` written again by the reference encoder with the tables and factors of ``data`` (``point``: see
    :func:`encode_with_tables`)."""
    tables, factors = own_tables(data)
    if len(tables) != config.components:
        raise LookupError(f"the stream has {len(tables)} components, the configuration {config.components}")
    try:
        return encode_with_tables(config, chunk, tables, factors, point=point)
    except ValueError as exc:  # 16-bit tables, factors that do not divide the maxima: not baseline either
        raise LookupError(f"the reference encoder cannot write tables and factors {list(factors)} baseline: {exc}") from exc
    except OSError as exc:  # libjpeg's own limit, 65500 a side (JPEG-X-03 makes 65501-65535 optional)
        raise LookupError(f"the reference encoder cannot write a {chunk.shape[0]}x{chunk.shape[1]} chunk: {exc}") from exc


__all__ = ["encode_with_tables", "own_tables", "point_sampled", "rewritten", "stored_samples", "subsampled"]
