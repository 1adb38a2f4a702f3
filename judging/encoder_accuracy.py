"""Encoders judged at the coefficient level: the stream's quantized coefficients against the exact DCT of the input.

T.81 fixes what a baseline encoder writes for a block once its quantization table is chosen:
the level-shifted samples (A.3.1), their DCT (A.3.3), each coefficient divided by its step and
rounded (A.3.4). It leaves the arithmetic's accuracy to ITU-T T.83, whose encoder tests take a
quantized coefficient within one step of the reference. The Zarr spec fixes the samples: the
chunk as given for grayscale, rgb and YCbCr passthrough, the chunk converted by T.871's RGB ->
YCbCr equations for ycbcr (JPEG-ECS-04). So every coefficient of every stream is judged against
the exact DCT of the exact samples under the stream's own tables, and a fault nobody listed (a
level shift, another YCbCr matrix, swapped chroma, tables written in natural order) shows as
coefficients off by many steps, in whatever mode it happens.

What the spec leaves open is allowed, each freedom stated (:class:`Bounds`):

- the DCT's arithmetic: one step either way (T.83);
- rounding the converted samples to integers, and the downsampled ones again: every sample may
  be off by up to :attr:`Bounds.rounding` levels, which moves a coefficient by at most that times
  the sum of its basis function's magnitudes (``t81.dct.BASIS_L1``);
- quantizing toward zero (deadzone and trellis quantizers, mozjpeg): a coefficient may lie
  between zero and its rounded value;
- the padding of partial blocks (T.81 A.2.4 leaves it to the encoder): samples beyond the image
  are free, so a block is legal when some padding makes every coefficient fit (found by least
  squares over the padded samples);
- the chroma downsampling filter (T.81 A.1.1 defines sampling, not filtering): a subsampled
  block is legal when it fits one of the filters of :data:`DOWNSAMPLERS` (box, top-left point,
  centred triangle, co-sited triangle, centred cubic); samples near the image's edges, where
  filters handle the boundary their own ways, are free like padding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from ..core.config import JpegConfig
from .roots import SWAPPED_AXES_WORDS, default_taken_wrong
from .t81 import dct
from .t81.entropy import Coefficients
from .t81.reading import reading
from .t81.syntax import ZIGZAG, Frame
from .verdict import Cause
from .windows import cut_coefficients, windows

#: The DCT matrix over flattened blocks: coefficient v*8+u from sample y*8+x.
_D = np.kron(dct.BASIS, dct.BASIS)


@dataclass(frozen=True)
class Bounds:
    """How far a legal encoder's coefficient may lie from the exact one: in quantization steps, and in levels of the
    samples behind it."""

    #: Steps either way for the DCT's arithmetic (T.83's encoder tests: one step).
    steps: int = 1
    #: Levels each stored sample of a converted (ycbcr from RGB) component may be off by: the rounding to integers.
    rounding: float = 0.5
    #: Levels each sample of a downsampled component may be off by: rounded once more, by the filter.
    rounding_subsampled: float = 1.0
    #: Coefficient units an AC coefficient's arithmetic may be off by beyond T.83's step, before the samples are
    #: judged wrong (MUST). libjpeg's fast integer DCT (AAN with 8-bit constants, the legacy TurboJPEG API's default
    #: below quality 96: simplejpeg, cloud-volume) lies up to 11.3 units beyond rounding on AC coefficients of the
    #: corpus images, its accurate integer DCT 0.1 (``python -m zarr_jpeg_conformance.tools.accuracy_spread``).
    #: A DC coefficient is a sum, which every DCT computes exactly: none there, so a level shift (8 units) shows.
    arithmetic: float = 16.0


BOUNDS = Bounds()


@dataclass(frozen=True)
class Samples:
    """The samples a stream must store, (H, W, C) float64, each component's name, and how far rounding may move them.

    ``given``: per component, a plane already at the component's resolution that the stream stores as it is (no
    downsampling filter chosen by the encoder): what a fault hands the encoder; None for the rest."""

    planes: np.ndarray
    names: tuple[str, ...]
    rounding: float
    given: tuple[np.ndarray | None, ...] | None = None


@dataclass(frozen=True)
class Reference:
    """What one component of the stream must hold: candidate planes (one per legal way of making it) and which
    samples are constrained (the rest is padding or filter boundary, free)."""

    name: str
    candidates: tuple[tuple[str, np.ndarray], ...]
    constrained: np.ndarray
    rounding: float


@dataclass(frozen=True)
class Miss:
    """A block whose coefficients no legal encoder writes."""

    component: str
    row: int
    col: int
    #: (v, u) of the coefficient furthest outside, the stream's value, the interval allowed, how many steps outside.
    coefficient: tuple[int, int]
    got: int
    allowed: tuple[int, int]
    excess: int

    def __str__(self) -> str:
        v, u = self.coefficient
        return (f"{self.component} block at rows {self.row * 8}-{self.row * 8 + 7}, columns {self.col * 8}-{self.col * 8 + 7} "
                f"(of the component's samples): coefficient ({v}, {u}) is {self.got} where {self.allowed[0]} to "
                f"{self.allowed[1]} is allowed")


@dataclass(frozen=True)
class ComponentResult:
    name: str
    blocks: int
    #: Blocks no legal encoder writes (MUST), and blocks off by more than T.83's step (SHOULD).
    misses: int
    worst: Miss | None
    inaccurate: int
    worst_inaccurate: Miss | None
    #: Mean of (dequantized DC - exact DC) / 8 over the whole blocks: a level shift, in sample levels.
    dc_bias: float
    #: Misses among the blocks whose every sample is constrained (no padding, no filter boundary).
    whole_misses: int = 0
    #: Mean squared (dequantized - exact) over the judged coefficients, for the closest candidate: what is left
    #: when every block fits (quantization noise for the samples the stream holds, more for any other).
    residual: float = 0.0


def samples_of(config: JpegConfig, chunk: np.ndarray) -> Samples:
    """The samples a stream of ``config`` stores for ``chunk``: the chunk, or its YCbCr by T.871 in real numbers."""
    image = np.asarray(chunk).reshape(chunk.shape[0], chunk.shape[1], -1).astype(np.float64)
    if config.encoded_color_space == "ycbcr":
        names = ("Y", "Cb", "Cr")
        if config.decoded_color_space == "rgb":
            return Samples(rgb_to_ycbcr_exact(image), names, BOUNDS.rounding)
        return Samples(image, names, 0.0)
    return Samples(image, ("R", "G", "B") if image.shape[2] == 3 else ("Y",), 0.0)


def rgb_to_ycbcr_exact(rgb: np.ndarray, kr: float = 0.299, kb: float = 0.114) -> np.ndarray:
    """T.871 section 7's equations in real numbers, no rounding (``kr``, ``kb``: other matrices' luma weights)."""
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    y = kr * r + (1 - kr - kb) * g + kb * b
    return np.stack([y, (b - y) / (2 - 2 * kb) + 128, (r - y) / (2 - 2 * kr) + 128], axis=-1)


# -- the legal downsampling filters


def _box(plane: np.ndarray, fy: int, fx: int) -> np.ndarray:
    h, w = plane.shape[0] // fy, plane.shape[1] // fx
    return plane[:h * fy, :w * fx].reshape(h, fy, w, fx).mean(axis=(1, 3))


def _point(plane: np.ndarray, fy: int, fx: int) -> np.ndarray:
    h, w = plane.shape[0] // fy, plane.shape[1] // fx
    return plane[:h * fy:fy, :w * fx:fx]


def _filtered(plane: np.ndarray, fy: int, fx: int, weight: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
    """A separable filter, edge samples repeated, sampled once per footprint: ``weight(offsets, f)`` gives the taps
    at sample offsets from the footprint's first sample."""
    out = plane
    for axis, f in ((0, fy), (1, fx)):
        if f == 1:
            continue
        offsets = np.arange(-2 * f, 3 * f)
        taps = weight(offsets.astype(np.float64), f)
        taps = taps / taps.sum()
        n = out.shape[axis] // f
        acc = np.zeros(out.shape[:axis] + (n,) + out.shape[axis + 1:])
        for offset, tap in zip(offsets, taps, strict=True):
            if tap:
                index = np.clip(np.arange(n) * f + offset, 0, out.shape[axis] - 1)
                acc += tap * np.take(out, index, axis=axis)
        out = acc
    return out


def _triangle(distance: np.ndarray) -> np.ndarray:
    return np.maximum(0.0, 1 - distance)


def _catmull_rom(distance: np.ndarray) -> np.ndarray:
    a, d = -0.5, distance
    return np.where(d < 1, (a + 2) * d**3 - (a + 3) * d**2 + 1,
                    np.where(d < 2, a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a, 0.0))


#: name -> downsample(plane, fy, fx) of the filters a legal encoder may use.
DOWNSAMPLERS: dict[str, Callable[[np.ndarray, int, int], np.ndarray]] = {
    "box": _box,
    "top-left point": _point,
    # Centred on the footprint's centre, (f - 1) / 2 from its first sample, as JFIF sites chroma.
    "centred triangle": lambda p, fy, fx: _filtered(p, fy, fx, lambda o, f: _triangle(np.abs(o - (f - 1) / 2) / f)),
    # Centred on the footprint's first sample (MPEG-2's siting).
    "co-sited triangle": lambda p, fy, fx: _filtered(p, fy, fx, lambda o, f: _triangle(np.abs(o) / f)),
    # Catmull-Rom (a = -0.5) stretched by f: Pillow's and most resizers' bicubic.
    "centred cubic": lambda p, fy, fx: _filtered(p, fy, fx, lambda o, f: _catmull_rom(np.abs(o - (f - 1) / 2) / f)),
}


def references(samples: Samples, frame: Frame) -> list[Reference]:
    """The reference of each frame component of the stream (as many as the samples have components)."""
    height, width = samples.planes.shape[:2]
    out = []
    for index, component in enumerate(frame.components[:samples.planes.shape[2]]):
        plane = samples.planes[:, :, index]
        constrained = np.zeros(frame.component_size(index), bool)
        fy, fx = frame.v_max // component.v, frame.h_max // component.h
        name = samples.names[index]
        given = samples.given[index] if samples.given is not None else None
        if given is not None:
            constrained[:given.shape[0], :given.shape[1]] = True
            out.append(Reference(name, (("given", given),), constrained, samples.rounding))
        elif (fy, fx) == (1, 1):
            constrained[:height, :width] = True
            out.append(Reference(name, (("exact", plane),), constrained, samples.rounding))
        elif frame.v_max % component.v or frame.h_max % component.h:
            # A ratio that is not whole (factors 3 and 2): no footprint to judge by; the read-back judges the samples.
            out.append(Reference(name, (), constrained, samples.rounding))
        else:
            # Whole footprints only, one sample in from every edge: the filters' boundary rules differ there.
            constrained[1:height // fy - 1, 1:width // fx - 1] = True
            candidates = tuple((filter_name, down(plane, fy, fx)) for filter_name, down in DOWNSAMPLERS.items())
            rounding = BOUNDS.rounding_subsampled if samples.rounding else BOUNDS.rounding
            out.append(Reference(name, candidates, constrained, rounding))
    return out


# -- judging one component


def _intervals(exact: np.ndarray, slack: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The legal (lo, hi) of each coefficient, in steps: rounded from exact +- slack, +- steps, and anything toward zero
    (a deadzone or trellis quantizer)."""
    lo = np.floor(exact - slack + 0.5) - steps
    hi = np.floor(exact + slack + 0.5) + steps
    return np.where(lo > 0, 0, lo), np.where(hi < 0, 0, hi)


def _fit(blocks: np.ndarray, mask: np.ndarray, dequantized: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The exact coefficients in steps of the blocks, their free samples (``~mask``) chosen by least squares to make
    them fit the stream's: blocks (N, 64) level-shifted, dequantized (N, 64), table (64,)."""
    known = blocks[:, mask] @ _D[:, mask].T
    if mask.all():
        return known / table
    free, solve = _solver(mask.tobytes(), table.tobytes())
    solution = ((dequantized - known) / table) @ solve.T
    return (known + solution @ free.T) / table


@lru_cache(maxsize=256)
def _solver(mask: bytes, table: bytes) -> tuple[np.ndarray, np.ndarray]:
    """(DCT columns of the free samples, the weighted least-squares solve for them) of one mask and table."""
    free = _D[:, ~np.frombuffer(mask, bool)]
    weighted = free / np.frombuffer(table, np.float64)[:, None]
    # The normal equations: the free columns of the orthonormal DCT are orthonormal, so this is well conditioned,
    # and a small solve, unlike an SVD, stays fast on a busy machine.
    return free, np.linalg.solve(weighted.T @ weighted, weighted.T)


#: Levels within which a sample at the end of the range counts as there (the rounding of converted samples).
SATURATED = 0.5


def _exact(samples: np.ndarray, masks: np.ndarray, judged: np.ndarray, dequantized: np.ndarray,
           table: np.ndarray) -> np.ndarray:
    """The exact coefficients in steps of every judged block of ``samples`` (:func:`_level_shifted_blocks`), its free
    samples fitted (:func:`_fit`)."""
    rows, cols = masks.shape[:2]
    exact = np.zeros((rows, cols, 64))
    flat = masks[judged]
    keys, inverse = np.unique(np.packbits(flat, axis=1), axis=0, return_inverse=True)
    where = np.argwhere(judged)
    for group in range(len(keys)):
        rr, cc = where[inverse.reshape(-1) == group].T
        exact[rr, cc] = _fit(samples[rr, cc], masks[rr[0], cc[0]], dequantized[rr, cc], table)
    return exact


def _level_shifted_blocks(plane: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """(rows, cols, 64) level-shifted samples of ``plane``, zero past its end."""
    padded = np.zeros((rows * 8, cols * 8))
    h, w = min(plane.shape[0], rows * 8), min(plane.shape[1], cols * 8)
    padded[:h, :w] = plane[:h, :w]
    return dct.to_blocks(padded - dct.LEVEL_SHIFT, rows, cols).reshape(rows, cols, 64)


def _exact_past_the_end(samples: np.ndarray, masks: np.ndarray, touched: np.ndarray, dequantized: np.ndarray,
                        table: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The exact coefficients in steps of the ``touched`` blocks, with the samples at an end of the range
    (``ends``: +1 at 255) free past it: a decoder clamps to 0-255, so an encoder may store any value beyond
    the end there (mozjpeg's overshoot deringing does).

    The free values are a witness: fitted by least squares to the stream's coefficients, those that fall
    short of the end pinned at it and the rest fitted again. The witness is an input a legal encoder may
    have been given, so a block that fits it is legal; the fit need not be the best one (a block it misses
    is judged by the other ways too)."""
    end_value = 255 - dct.LEVEL_SHIFT
    # First every block at once (blocks with the same free samples share one solve); then, one by one, the
    # blocks where a free value fell short of its end.
    fitted_masks = masks & (ends == 0)
    exact = _exact(samples, fitted_masks, touched, dequantized, table)
    for r, c in np.argwhere(touched):
        free = ~fitted_masks[r, c]
        values = samples[r, c].copy()
        values[free] = _free_values(exact[r, c], free, table)
        side = ends[r, c]
        pinned = False
        for _ in range(4):  # each round pins the samples that fell short of their end; a few suffice
            short = free & (((side > 0) & (values < end_value)) | ((side < 0) & (values > -dct.LEVEL_SHIFT)))
            if not short.any():
                break
            pinned = True
            values[short & (side > 0)] = end_value
            values[short & (side < 0)] = -dct.LEVEL_SHIFT
            free &= ~short
            known = _D[:, ~free] @ values[~free]
            values[free] = np.linalg.lstsq(_D[:, free] / table[:, None], (dequantized[r, c] - known) / table,
                                           rcond=None)[0]
        if pinned:
            exact[r, c] = (_D @ values) / table
    return exact


def _free_values(exact: np.ndarray, free: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The free samples' values a fit chose, read back from its exact coefficients (in steps): the DCT is orthonormal."""
    return (_D.T @ (exact * table))[free]


def _worst(excess: np.ndarray, judged: np.ndarray, got: np.ndarray, lo: np.ndarray, hi: np.ndarray,
           name: str) -> tuple[np.ndarray, Miss | None]:
    """(per-block largest excess, the worst block's Miss or None)."""
    per_block = np.where(judged, excess.max(axis=2), 0)
    if not per_block.any():
        return per_block, None
    r, c = np.unravel_index(int(np.argmax(per_block)), per_block.shape)
    k = int(np.argmax(excess[r, c]))
    return per_block, Miss(name, int(r), int(c), divmod(k, 8), int(got[r, c, k]), (int(lo[r, c, k]), int(hi[r, c, k])),
                           int(per_block[r, c]))


def judge_component(quantized: np.ndarray, table: np.ndarray, reference: Reference, bounds: Bounds = BOUNDS) -> ComponentResult:
    """Judge every block of one component that holds a constrained sample; blocks of padding alone are free.

    A block passes when it fits one of the reference's candidates (a legal downsampling filter)."""
    rows, cols = quantized.shape[:2]
    height, width = reference.constrained.shape
    grid = np.zeros((rows * 8, cols * 8), bool)
    grid[:min(height, rows * 8), :min(width, cols * 8)] = reference.constrained[:rows * 8, :cols * 8]
    masks = dct.to_blocks(grid, rows, cols).reshape(rows, cols, 64)
    judged: np.ndarray = np.asarray(masks.any(axis=2))
    flat_table = table.reshape(64).astype(np.float64)
    rounding = reference.rounding * dct.BASIS_L1.reshape(64)
    arithmetic = np.full(64, bounds.arithmetic)
    arithmetic[0] = 0.0
    slack_t83, slack_must = rounding / flat_table, (rounding + arithmetic) / flat_table
    got = quantized.reshape(rows, cols, 64).astype(np.float64)
    dequantized = got * flat_table
    best = {"must": np.full((rows, cols), np.inf), "t83": np.full((rows, cols), np.inf)}
    worst: dict[str, Miss | None] = {"must": None, "t83": None}
    bias, residual = 0.0, np.inf
    for index, (_, plane) in enumerate(reference.candidates):
        samples = _level_shifted_blocks(plane, rows, cols)
        ways = [_exact(samples, masks, judged, dequantized, flat_table)]
        if judged.any():  # how far, in levels of coefficient energy, the stream lies from this candidate's exact DCT
            residual = min(residual, float((((got - ways[0]) * flat_table)[judged] ** 2).mean()))
        if index == 0:
            whole = masks.all(axis=2)
            if whole.any():
                bias = float((dequantized[whole, 0] - ways[0][whole, 0] * flat_table[0]).mean()) / 8
        ends = _ends(plane, masks)
        touched: np.ndarray = np.asarray(judged & ends.any(axis=2))
        if touched.any():
            ways.append(_exact_past_the_end(samples, masks, touched, dequantized, flat_table, ends))
        for way, exact in enumerate(ways):
            for tier, slack in (("must", slack_must), ("t83", slack_t83)):
                lo, hi = _intervals(exact, slack, bounds.steps)
                excess = np.maximum(np.maximum(lo - got, got - hi), 0)
                per_block, miss = _worst(excess, touched if way else judged, got, lo, hi, reference.name)
                if way:  # the witness past the end speaks only for the blocks it was fitted to
                    per_block = np.where(touched, per_block, np.inf)
                if miss is not None and (worst[tier] is None or np.sum(per_block > 0) < np.sum(best[tier] > 0)):
                    worst[tier] = miss
                best[tier] = np.minimum(best[tier], per_block)
    count = {tier: int(np.sum(judged & (best[tier] > 0))) for tier in best}
    whole_misses = int(np.sum(masks.all(axis=2) & (best["must"] > 0)))
    return ComponentResult(reference.name, int(judged.sum()), count["must"], worst["must"] if count["must"] else None,
                           count["t83"], worst["t83"] if count["t83"] else None, bias, whole_misses,
                           residual if np.isfinite(residual) else 0.0)


def _ends(plane: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """(rows, cols, 64): +1 where a constrained sample of ``plane`` is at 255, else 0 (overshoot deringing raises the
    brightest samples only: mozjpeg's works on the maximum value alone)."""
    rows, cols = masks.shape[:2]
    padded = np.full((rows * 8, cols * 8), 128.0)
    h, w = min(plane.shape[0], rows * 8), min(plane.shape[1], cols * 8)
    padded[:h, :w] = plane[:h, :w]
    ends = np.where(padded >= 255 - SATURATED, 1, 0)
    return dct.to_blocks(ends, rows, cols).reshape(rows, cols, 64) * masks


def judge_coefficients(coefficients: Coefficients, samples: Samples, tables: Sequence[np.ndarray] | None = None,
          bounds: Bounds = BOUNDS) -> list[ComponentResult]:
    """Every component of a decoded stream judged against the samples it must store (``tables``: other tables)."""
    refs = references(samples, coefficients.frame)
    tables = coefficients.tables if tables is None else tables
    return [judge_component(coefficients.quantized[i], tables[i], ref, bounds) for i, ref in enumerate(refs)]


# -- naming the cause


#: One fault, one sentence, whatever the mode: read as BGR before the conversion or written reversed without one.
REVERSED_WORDS = "the three components read in reverse order (BGR for RGB)"


def _cause(key: str, requirement: str, words: str) -> Cause:
    return Cause("encode", key, requirement, words)


#: The interleaved chunk read as planes one after the other (channel-outermost): what an encoder whose input is
#: planar YUV (libjpeg-turbo's tjCompressFromYUV) writes when handed the chunk's bytes as they are.
PLANAR_READ = _cause("planar-read", "JPEG-ENC-02", "the interleaved (H, W, 3) chunk read as three planes one after the "
                     "other (channel-outermost, as a planar YUV input): the stream's components are the chunk's bytes "
                     "[0, HW), [HW, 2HW), [2HW, 3HW)")
#: Full-resolution chroma planes handed to an encoder that expects them subsampled already (mozjpeg-rs's planar API):
#: it stores the first samples of each plane, in raster order, as the subsampled plane.
CHROMA_NOT_SUBSAMPLED = _cause("chroma-not-subsampled", "JPEG-ENC-03", "the full-resolution Cb and Cr planes handed to "
                               "an encoder that expects them subsampled: the stream's chroma is the first "
                               "ceil(H/v)*ceil(W/h) samples of each full plane in raster order, not the plane subsampled")


def planar_image(chunk: np.ndarray) -> np.ndarray:
    """The (H, W, C) chunk as an encoder reads it that takes its bytes for planes one after the other."""
    height, width, channels = chunk.shape[0], chunk.shape[1], chunk.shape[2]
    return np.ascontiguousarray(np.asarray(chunk)).reshape(channels, height, width).transpose(1, 2, 0)


def _first_samples(samples: Samples, frame: Frame) -> Samples | None:
    """``samples`` with each subsampled plane replaced by the first samples of its full-resolution plane in raster
    order (:data:`CHROMA_NOT_SUBSAMPLED`); None where no component is subsampled."""
    given: list[np.ndarray | None] = []
    for index, component in enumerate(frame.components[:samples.planes.shape[2]]):
        rows, cols = frame.component_size(index)
        if (component.v, component.h) == (frame.v_max, frame.h_max) or rows * cols > samples.planes[..., index].size:
            given.append(None)
            continue
        given.append(samples.planes[..., index].reshape(-1)[:rows * cols].reshape(rows, cols))
    return Samples(samples.planes, samples.names, samples.rounding, tuple(given)) if any(g is not None for g in given) else None


def layout_cause(data: bytes, config: JpegConfig, chunk: np.ndarray) -> Cause | None:
    """The fault of layout a written stream's coefficients fit, under the stream's own frame (whatever factors it has):
    the chunk read as planes (:data:`PLANAR_READ`), chroma handed over unsubsampled (:data:`CHROMA_NOT_SUBSAMPLED`).
    None where the stream is not read, does not fit the chunk's size, or fits neither."""
    found = reading(data)
    coefficients = found.coefficients
    chunk = np.asarray(chunk)
    if coefficients is None or chunk.ndim != 3 or chunk.shape[2] != 3:
        return None
    frame = coefficients.frame
    if (frame.height, frame.width) != chunk.shape[:2] or len(frame.components) != 3:
        return None
    right = samples_of(config, chunk)
    as_written = judge_coefficients(coefficients, right)
    if _misses(as_written) <= 0.02 * sum(r.blocks for r in as_written):
        return None  # the chunk as it is explains the stream: a fault of layout would explain nothing more
    for cause, samples in ((PLANAR_READ, lambda: samples_of(config, planar_image(chunk))),
                           (CHROMA_NOT_SUBSAMPLED, lambda: _first_samples(right, frame))):
        candidate = samples()
        if candidate is None or (candidate.given is None and np.array_equal(candidate.planes, right.planes)):
            continue  # the same samples either way (a 1x1 chunk read as planes): no evidence for the fault
        results = judge_coefficients(coefficients, candidate)
        blocks = sum(r.blocks for r in results)
        if blocks and _misses(results) <= 0.02 * blocks:
            return cause
    return None


def _misses(results: Sequence[ComponentResult]) -> int:
    return sum(r.misses for r in results)


def _hypotheses(config: JpegConfig, chunk: np.ndarray, samples: Samples, coefficients: Coefficients,
                results: Sequence[ComponentResult]) -> Iterator[tuple[Cause, Samples, Sequence[np.ndarray] | None]]:
    """Faults worth trying, the ones about the samples first: each as the samples (and tables) the faulty encoder used."""
    planes, names, rounding = samples.planes, samples.names, samples.rounding
    if not chunk.flags.c_contiguous:
        read = np.ravel(chunk, order="K").reshape(chunk.shape)
        yield (_cause("memory-order", "JPEG-ENC-02", "the samples read in the chunk's memory order, not in C order"),
               samples_of(config, read), None)
    biases = [r.dc_bias for r in results if r.blocks]
    shift = round(float(np.mean(biases))) if biases else 0
    if shift and all(np.sign(b) == np.sign(shift) for b in biases):
        yield (_cause("level-shift", "JPEG-FMT-01", f"every sample level-shifted by {128 - shift} instead of 128 (T.81 "
                      f"A.3.1): the DC coefficients are {shift * 8:+d} units off"), Samples(planes + shift, names, rounding),
               None)
    if planes.shape[2] == 3:
        image = np.asarray(chunk).reshape(planes.shape).astype(np.float64)
        converted = config.encoded_color_space == "ycbcr" and config.decoded_color_space == "rgb"
        if converted:
            yield (_cause("encode-reversed", "JPEG-ENC-03", REVERSED_WORDS),
                   Samples(rgb_to_ycbcr_exact(image[:, :, ::-1]), names, rounding), None)
        else:
            yield (_cause("converted", kept_requirement(config), "an RGB -> YCbCr conversion applied to samples the "
                          "configuration stores as they are"), Samples(rgb_to_ycbcr_exact(image), names, BOUNDS.rounding), None)
            yield (_cause("encode-reversed", "JPEG-ENC-03", REVERSED_WORDS),
                   Samples(planes[:, :, ::-1], names, rounding), None)
        if names[0] == "Y":
            yield (_cause("chroma-swapped", "JPEG-ENC-03", "Cb and Cr written in each other's place"),
                   Samples(planes[:, :, [0, 2, 1]], names, rounding), None)
        yield PLANAR_READ, samples_of(config, planar_image(chunk)), None
        first = _first_samples(samples, coefficients.frame)
        if first is not None:
            yield CHROMA_NOT_SUBSAMPLED, first, None
        if converted:
            yield (_cause("encode-skipped-ycbcr", "JPEG-ECS-04", "the RGB input stored unconverted in a stream that says "
                          "YCbCr (RGB -> YCbCr skipped)"), Samples(image, names, 0.0), None)
            for words, kr, kb in (("BT.709", 0.2126, 0.0722), ("BT.2020", 0.2627, 0.0593)):
                yield (_cause(words.lower().replace(".", ""), "JPEG-ECS-04", f"the {words} YCbCr matrix instead of "
                              "T.871's (BT.601 full range)"), Samples(rgb_to_ycbcr_exact(image, kr, kb), names, rounding),
                       None)
            studio = rgb_to_ycbcr_exact(image)
            studio[..., 0] = 16 + studio[..., 0] * 219 / 255
            studio[..., 1:] = 128 + (studio[..., 1:] - 128) * 224 / 255
            yield (_cause("studio-range", "JPEG-ECS-04", "studio-range YCbCr (BT.601 16-235) instead of T.871's full range"),
                   Samples(studio, names, rounding), None)
            yield (_cause("wraps", "JPEG-ECS-04", "RGB -> YCbCr computed modulo 256 instead of clamped: a Cb or Cr of "
                          "255.5 (pure blue, pure red) wraps to 0"),
                   Samples(np.floor(rgb_to_ycbcr_exact(image) + 0.5) % 256, names, 0.0), None)
    if planes.shape[0] == planes.shape[1] and planes.shape[0] > 1:
        yield (_cause("swapped-axes", "JPEG-DIM-01", SWAPPED_AXES_WORDS),
               Samples(np.ascontiguousarray(planes.swapaxes(0, 1)), names, rounding), None)
    natural = [t.reshape(64)[ZIGZAG].reshape(8, 8) for t in coefficients.tables]
    yield (_cause("natural-order-tables", "JPEG-FMT-01", "quantization tables written in natural (row-major) order "
                  "instead of zigzag order (T.81 B.2.4.1): the coefficients were quantized by tables other than the "
                  "stream's"), samples, natural)


def explain(config: JpegConfig, chunk: np.ndarray, samples: Samples, coefficients: Coefficients,
            results: Sequence[ComponentResult]) -> Cause | None:
    """The fault under which the stream's coefficients fit best (few blocks miss, far fewer than as written; among
    those, the one they lie closest to), or None.

    A fault of the tables needs blocks whose every sample is the chunk's (no padding to fit, no filter's boundary):
    in a chunk of one row, padding fits other tables as well as the stream's."""
    before = _misses(results)
    whole_before = sum(r.whole_misses for r in results)
    best: tuple[int, float, Cause] | None = None
    for cause, other, tables in _hypotheses(config, chunk, samples, coefficients, results):
        if tables is not None and not whole_before:
            continue
        after = judge_coefficients(coefficients, other, tables)
        misses = _misses(after)
        fits = misses * 10 <= before and misses <= 0.02 * sum(r.blocks for r in results)
        # Among faults that fit, the one the coefficients lie closest to: at quality 1 several fit every block.
        score = (misses, sum(r.residual * r.blocks for r in after))
        if fits and (tables is None or sum(r.whole_misses for r in after) == 0) and (best is None or score < best[:2]):
            best = (*score, cause)
    return best[2] if best else None


def kept_requirement(config: JpegConfig) -> str:
    """The rule that says what an encoder keeps of the chunk's samples under ``config``."""
    if config.encoded_color_space == "grayscale":
        return "JPEG-ECS-03"  # stored as-is
    if config.encoded_color_space == "rgb":
        return "JPEG-ECS-05"  # stored as-is, no conversion
    return "JPEG-ECS-04" if config.decoded_color_space == "rgb" else "JPEG-DCS-03"




# -- the check


def check_coefficients(judge: Any, data: bytes, config: JpegConfig, chunk: np.ndarray, where: str,
                       defaults: Callable[[], bytes | None] | None = None) -> None:
    """Judge a written stream's quantized coefficients against the chunk (a stream whose syntax failed is not read).

    A block no legal encoder writes fails under the rule of the cause that explains it, else under the
    rule of what the configuration keeps of the samples; blocks only less accurate than T.83 asks warn
    (JPEG-X-23). ``defaults`` writes the chunk again with the omitted decoded_color_space written out:
    where that stream fits, the default was taken wrong (JPEG-DCS-02).
    """
    found = reading(data)
    coefficients = found.coefficients
    chunk = np.asarray(chunk)
    if coefficients is None or found.offences or chunk.ndim < 2:
        return
    frame = coefficients.frame
    channels = chunk.shape[2] if chunk.ndim == 3 else 1
    if (frame.height, frame.width) != chunk.shape[:2] or len(frame.components) != channels:
        return  # the frame does not fit the chunk: judging.written says so
    samples = samples_of(config, chunk)
    results = _judged(coefficients, config, chunk, samples)
    blocks = sum(r.blocks for r in results)
    misses = [r for r in results if r.misses]
    judge.metrics.update(coefficient_blocks=blocks, coefficient_misses=sum(r.misses for r in results),
                         coefficient_t83=sum(r.inaccurate for r in results))
    if misses:
        cause = explain(config, chunk, samples, coefficients, results)
        requirement, words = (cause.requirement, f"it looks like {cause.words}") if cause else (
            kept_requirement(config), "no classic fault explains the coefficients: the rule of what the stream keeps is cited")
        again = defaults() if defaults is not None else None
        if again is not None and _fits(again, config, chunk):
            requirement, words, cause = default_taken_wrong("encode")
        worst = max((r.worst for r in misses if r.worst), key=lambda m: m.excess)
        judge.require(False, requirement,
                      f"{where} holds quantized coefficients no legal encoder writes for the chunk under the stream's own "
                      f"tables, in {sum(r.misses for r in misses)} of {blocks} blocks ({_per_component(misses)}); the "
                      f"furthest: {worst}, {worst.excess} step(s) outside (the exact DCT of the samples the configuration "
                      f"stores, +- 1 step and the rounding of converted samples, anything toward zero, padding and "
                      f"chroma filters free): {words}", cause=cause)
    inaccurate = [r for r in results if r.inaccurate]
    if inaccurate:
        worst = max((r.worst_inaccurate for r in inaccurate if r.worst_inaccurate), key=lambda m: m.excess)
        judge.require(False, "JPEG-X-23",
                      f"{where} holds coefficients more than one step from the exact DCT's in {sum(r.inaccurate for r in inaccurate)} "
                      f"of {blocks} blocks ({_per_component(inaccurate, inaccurate=True)}); the furthest: {worst}, "
                      f"{worst.excess} step(s) outside: a DCT less accurate than T.83's encoder tests allow")


def _per_component(results: Sequence[ComponentResult], inaccurate: bool = False) -> str:
    return ", ".join(f"{r.name} {r.inaccurate if inaccurate else r.misses} of {r.blocks}" for r in results)


def _judged(coefficients: Coefficients, config: JpegConfig, chunk: np.ndarray, samples: Samples) -> list[ComponentResult]:
    """:func:`judge_coefficients`, on windows for a large chunk (``judging.windows``: each window's blocks, with a
    margin's, judged against the window's samples; a filter's boundary inside the window is free as at an edge)."""
    frame = coefficients.frame
    cuts = windows(frame.height, frame.width, (8 * frame.v_max, 8 * frame.h_max))
    if cuts is None:
        return judge_coefficients(coefficients, samples)
    parts = []
    for w in cuts:
        results = judge_coefficients(cut_coefficients(coefficients, w), samples_of(config, w.cut(chunk)))
        offsets = [w.start // (8 * (frame.h_max if w.axis else frame.v_max)) * (c.h if w.axis else c.v)
                   for c in frame.components]
        parts.append([_moved(r, offset, w.axis) for r, offset in zip(results, offsets, strict=False)])
    return [_sum(list(rs)) for rs in zip(*parts, strict=True)]


def _moved(result: ComponentResult, blocks: int, axis: int) -> ComponentResult:
    """A window's result with its misses placed back in the whole component's block grid."""
    def move(miss: Miss | None) -> Miss | None:
        if miss is None:
            return None
        return replace(miss, col=miss.col + blocks) if axis else replace(miss, row=miss.row + blocks)
    return replace(result, worst=move(result.worst), worst_inaccurate=move(result.worst_inaccurate))


def _sum(results: list[ComponentResult]) -> ComponentResult:
    """One component's results over windows."""
    blocks = sum(r.blocks for r in results)
    worst = [r.worst for r in results if r.worst is not None]
    inaccurate = [r.worst_inaccurate for r in results if r.worst_inaccurate is not None]
    weights = [r.blocks for r in results] if blocks else None
    return ComponentResult(results[0].name, blocks, sum(r.misses for r in results),
                           max(worst, key=lambda m: m.excess) if worst else None, sum(r.inaccurate for r in results),
                           max(inaccurate, key=lambda m: m.excess) if inaccurate else None,
                           float(np.average([r.dc_bias for r in results], weights=weights)),
                           sum(r.whole_misses for r in results),
                           float(np.average([r.residual for r in results], weights=weights)))


def _fits(data: bytes, config: JpegConfig, chunk: np.ndarray) -> bool:
    found = reading(data)
    if found.coefficients is None or found.offences:
        return False
    return not any(r.misses for r in judge_coefficients(found.coefficients, samples_of(config, chunk)))



__all__ = ["BOUNDS", "CHROMA_NOT_SUBSAMPLED", "DOWNSAMPLERS", "PLANAR_READ", "Bounds", "ComponentResult", "Miss", "Reference",
           "Samples", "check_coefficients", "explain", "judge_coefficients", "judge_component", "kept_requirement",
           "layout_cause", "planar_image", "references", "rgb_to_ycbcr_exact", "samples_of"]
