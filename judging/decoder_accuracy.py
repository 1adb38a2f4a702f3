"""Decoders judged by the accuracy of their reconstruction, against an exact decode of the stream's coefficients.

T.81 defines decoding mathematically: dequantize, inverse DCT (A.3.3), undo the level shift,
clamp to 0-255. ITU-T T.83 tests a decoder by how close its reconstruction comes to that exact
one. The Zarr spec adds the colour rule (the stored colour space converted to
``decoded_color_space`` by T.871's equations) and the chunk's shape; it leaves the chroma
upsampler to the decoder. So a decode is judged, without guessing its faults, by three
invariants of every legal decoder (:func:`measure`):

- **components at full resolution**: each sample within :attr:`Accuracy.component` levels of the
  exact reconstruction (in the stored colour space: for an RGB decode of YCbCr, its luma read back
  by T.871's forward equations, where no channel was clipped);
- **every sample inside its envelope**: the range of colours the exact luma and the stored chroma
  around the sample (the chroma samples an interpolating upsampler blends) convert to, clamped to
  0-255 as every decoder clamps (:attr:`Accuracy.envelope`): a wrong matrix, a wrap-around at 256,
  swapped or reversed components, a constant or garbage decode fall outside;
- **chroma at its stored resolution**: the decoder's chroma, averaged over each stored sample's
  footprint, reproduces that sample, but for the blend of its neighbours an interpolating
  upsampler keeps (:attr:`Accuracy.footprint`: the share of the largest difference to a
  neighbour that leaks in); a shift by a chroma sample, a wrong siting, swapped Cb and Cr
  do not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.config import JpegConfig
from .t81 import dct
from .t81.entropy import Coefficients
from .windows import Window, cut_coefficients, windows

#: T.871's inverse equations: R, G, B from Y, Cb - 128, Cr - 128.
_INVERSE = np.array([[1.0, 0.0, 1.402], [1.0, -0.344136, -0.714136], [1.0, 1.772, 0.0]])
#: T.871's forward equations: Y, Cb - 128, Cr - 128 from R, G, B.
_FORWARD = np.linalg.inv(_INVERSE)


@dataclass(frozen=True)
class Accuracy:
    """How far a decode lies from the exact reconstruction, by each invariant (levels, or a share for footprints).

    None where the invariant does not apply to the stream (no chroma subsampled, nothing unclipped)."""

    #: Largest |decoded - exact| of a full-resolution component, in its stored colour space.
    component: float
    #: Where: (component, row, column) of that sample.
    component_at: tuple[str, int, int] | None
    #: Mean of (decoded - the exact reconstruction rounded as the decoder must round it) over the full-resolution
    #: samples: a decoder's bias (a level shift other than 128, rounding always up). See :func:`_bias`.
    bias: float
    #: Largest distance of a sample outside its envelope (levels), computed with the decoder allowed one level of
    #: IDCT error per component and half a level of rounding per output sample.
    envelope: float
    envelope_at: tuple[str, int, int] | None
    #: Largest (|footprint average - stored chroma| - allowance) / the largest neighbour difference, over footprints.
    footprint: float | None
    footprint_at: tuple[str, int, int] | None
    #: How the decoder's chroma moves inside a footprint as the stored chroma moves across it: the slope of the
    #: difference between a footprint's last and first samples against the stored chroma's gradient there (0 for
    #: chroma repeated, about +0.5 for an interpolating upsampler sited as JFIF sites chroma, negative for an
    #: upsampler that blends each sample with the neighbour on the wrong side); the lowest over components and axes.
    siting: float | None
    siting_at: str | None
    #: Samples judged by each invariant.
    judged: tuple[int, int, int]
    #: (H, W): the samples that break an invariant beyond :data:`BOUNDS` (component, envelope, or a footprint they lie
    #: in): where the decode is wrong, for naming a fault confined to a region (:func:`where_wrong`).
    wrong: np.ndarray | None = None
    #: The frame's MCU, (rows, columns) of samples.
    mcu: tuple[int, int] = (8, 8)


def exact_planes(coefficients: Coefficients) -> list[np.ndarray]:
    """The exact reconstruction of every component, float64, clamped to 0-255, cropped to its size (A.1.1)."""
    frame = coefficients.frame
    out = []
    for index in range(len(frame.components)):
        samples = dct.from_blocks(dct.inverse(coefficients.dequantized(index))) + dct.LEVEL_SHIFT
        height, width = frame.component_size(index)
        out.append(np.clip(samples[:height, :width], 0, 255))
    return out


#: Chroma samples each side an upsampler may blend (Catmull-Rom reaches 2; libjpeg's triangle filter 1).
REACH = 2
#: How far past the range of the chroma it blends an upsampler may overshoot, as a share of that range:
#: Catmull-Rom sited as JFIF sites chroma overshoots a step by 9/128 (0.07); Lanczos-3 by about 0.1.
OVERSHOOT = 0.15


def _neighbourhood(plane: np.ndarray, reduce: str, reach: int = REACH) -> np.ndarray:
    """The min or max of each sample's (2 reach + 1)-square neighbourhood (edges repeated)."""
    padded = np.pad(plane, reach, mode="edge")
    h, w = plane.shape
    span = 2 * reach + 1
    stack = np.stack([padded[dy:dy + h, dx:dx + w] for dy in range(span) for dx in range(span)])
    return stack.min(axis=0) if reduce == "min" else stack.max(axis=0)


def _full(plane: np.ndarray, fy: int, fx: int, height: int, width: int) -> np.ndarray:
    """A component plane repeated up to the image's size (each sample over its footprint)."""
    return np.repeat(np.repeat(plane, fy, axis=0), fx, axis=1)[:height, :width]


def _argmax(values: np.ndarray, names: tuple[str, ...]) -> tuple[float, tuple[str, int, int] | None]:
    if not values.size or not np.isfinite(values).any():
        return 0.0, None
    flat = int(np.nanargmax(values))
    index = np.unravel_index(flat, values.shape)
    name = names[index[2]] if values.ndim == 3 else names[0]
    return float(values[index]), (name, int(index[0]), int(index[1]))


def measure(out: np.ndarray, coefficients: Coefficients, stored: str, decoded: str, *, idct: float = 1.0,
            rounding: float = 0.5, judged: np.ndarray | None = None) -> Accuracy:
    """Measure a decode ``out`` (H, W) or (H, W, C) of a stream against its exact reconstruction.

    ``stored``: the stream's colour space by the spec's rule; ``decoded``: the configuration's
    decoded_color_space; ``idct``: the levels of IDCT error allowed per component in the envelope;
    ``judged`` (H, W): the samples measured (a window's margin is read, not judged), default all.
    """
    frame = coefficients.frame
    height, width = frame.height, frame.width
    exact = exact_planes(coefficients)
    got = np.asarray(out, np.float64).reshape(height, width, -1)
    factors = [(frame.v_max // c.v, frame.h_max // c.h) for c in frame.components]
    full = [(fy, fx) == (1, 1) for fy, fx in factors]
    names = ("Y", "Cb", "Cr") if stored == "ycbcr" else ("R", "G", "B") if len(exact) == 3 else ("Y",)
    convert = stored == "ycbcr" and decoded == "rgb"
    # The envelope: the colours the exact planes allow at each sample, before and after clamping.
    lo, hi = [], []
    for k, plane in enumerate(exact):
        fy, fx = factors[k]
        if full[k]:
            lo.append(plane[:height, :width] - idct)
            hi.append(plane[:height, :width] + idct)
        else:
            low_k, high_k = _neighbourhood(plane, "min"), _neighbourhood(plane, "max")
            over = OVERSHOOT * (high_k - low_k)
            lo.append(_full(low_k - over, fy, fx, height, width) - idct)
            hi.append(_full(high_k + over, fy, fx, height, width) + idct)
    if convert:
        centred_lo = np.stack([lo[0], lo[1] - 128, lo[2] - 128], axis=-1)
        centred_hi = np.stack([hi[0], hi[1] - 128, hi[2] - 128], axis=-1)
        positive, negative = np.clip(_INVERSE, 0, None), np.clip(_INVERSE, None, 0)
        low = np.einsum("ij,hwj->hwi", positive, centred_lo) + np.einsum("ij,hwj->hwi", negative, centred_hi)
        high = np.einsum("ij,hwj->hwi", positive, centred_hi) + np.einsum("ij,hwj->hwi", negative, centred_lo)
        out_names: tuple[str, ...] = ("R", "G", "B")
        # Where no colour the exact planes allow needs clamping, the decode can be read back to YCbCr exactly.
        unclipped = ((low >= 0) & (high <= 255)).all(axis=2)
        read = np.einsum("ij,hwj->hwi", _FORWARD, got)
        read[..., 1:] += 128
    else:
        low, high = np.stack(lo, axis=-1), np.stack(hi, axis=-1)
        out_names = names
        unclipped = np.ones((height, width), bool)
        read = got
    low, high = np.clip(low, 0, 255) - rounding, np.clip(high, 0, 255) + rounding
    outside = np.maximum(np.maximum(low - got, got - high), 0)
    if judged is not None:
        unclipped = unclipped & judged
        outside = np.where(judged[..., None], outside, 0.0)
    envelope, envelope_at = _argmax(outside, out_names)
    # Full-resolution components, each sample, in the stored colour space.
    diffs = np.full((height, width, len(exact)), np.nan)
    for k, plane in enumerate(exact):
        if full[k]:
            diffs[..., k] = np.where(unclipped, read[..., k] - plane, np.nan)
    component, component_at = _argmax(np.abs(diffs), names)
    bias = _bias(got, read, exact, full, unclipped, convert)
    limit = BOUNDS.component_converted if convert else BOUNDS.component
    wrong = (outside > BOUNDS.envelope).any(axis=2) | (np.nan_to_num(np.abs(diffs), nan=0.0) > limit).any(axis=2)
    # Chroma at its stored resolution.
    footprint, footprint_at, footprints = None, None, 0
    for k, plane in enumerate(exact):
        if full[k]:
            continue
        fy, fx = factors[k]
        rows, cols = plane.shape
        pad = np.zeros((rows * fy, cols * fx))
        weight = np.zeros((rows * fy, cols * fx))
        pad[:height, :width] = np.where(unclipped, read[..., k], 0)
        weight[:height, :width] = unclipped
        sums = pad.reshape(rows, fy, cols, fx).sum(axis=(1, 3))
        counts = weight.reshape(rows, fy, cols, fx).sum(axis=(1, 3))
        whole = counts == np.minimum(fy, height - np.arange(rows)[:, None] * fy) * np.minimum(fx, width - np.arange(cols)[None, :] * fx)
        average = np.where(whole, sums / np.maximum(counts, 1), np.nan)
        spread = np.maximum(_neighbourhood(plane, "max") - plane, plane - _neighbourhood(plane, "min"))
        share = (np.abs(average - plane) - (idct + rounding)) / np.maximum(spread, 1.0)
        value, at = _argmax(share[..., None], (names[k],))
        footprints += int(np.isfinite(share).sum())
        wrong |= _full(np.nan_to_num(share, nan=0.0) > BOUNDS.footprint, fy, fx, height, width)
        if at is not None and (footprint is None or value > footprint):
            footprint, footprint_at = value, at
    siting, siting_at = None, None
    for k, plane in enumerate(exact):
        for axis, f in enumerate(factors[k]):
            slope = _siting(read[..., k], unclipped, plane, f, axis, factors[k], height, width)
            if slope is not None and (siting is None or slope < siting):
                siting, siting_at = slope, f"{names[k]} {'vertically' if axis == 0 else 'horizontally'}"
    return Accuracy(component, component_at, bias, envelope, envelope_at, footprint, footprint_at, siting, siting_at,
                    (int(np.isfinite(diffs).sum()), int(outside.size), footprints), wrong,
                    (8 * frame.v_max, 8 * frame.h_max))


def _bias(got: np.ndarray, read: np.ndarray, exact: list[np.ndarray], full: list[bool], unclipped: np.ndarray,
          convert: bool) -> float:
    """The mean of (decoded - exact, rounded as the decoder rounds its output), unbiased for every legal decoder.

    Without conversion the decoder's samples are the exact ones rounded. With it, the RGB the exact luma and the
    decoder's own chroma (read back from its RGB) give, made integers: so the rounding of flat colours, the same in
    every sample, does not add up to a bias, and a level shift of luma shows in every channel. T.871 gives the
    conversion in real numbers; a decoder may round its results or truncate them (jpeg-js truncates, half a level
    below rounding on average, every sample within a level of the exact conversion), so the bias is the smaller
    against either. A level shift other than 128 is in the IDCT's output, so it shows on the decodes that convert
    nothing too, where rounding is the only way.
    """
    if not convert:
        diffs = [(got[..., k] - np.rint(plane))[unclipped] for k, plane in enumerate(exact) if full[k]]
        return float(np.mean(diffs)) if diffs and diffs[0].size >= BIAS_MIN_SAMPLES else 0.0
    if not full[0] or unclipped.sum() < BIAS_MIN_SAMPLES:
        return 0.0
    own = np.stack([np.rint(exact[0]), read[..., 1] - 128, read[..., 2] - 128], axis=-1)
    converted = np.einsum("ij,hwj->hwi", _INVERSE, own)
    means = [float((got - integer(converted))[unclipped].mean()) for integer in (np.rint, np.floor)]
    return min(means, key=abs)


#: Samples below which a mean says nothing: one block's worth (a legal IDCT may differ by one level on a sample).
BIAS_MIN_SAMPLES = 64


#: Gradients below this many levels per chroma sample say nothing about siting (rounding and IDCT noise).
SITING_MIN_GRADIENT = 4.0


def _siting(decoded: np.ndarray, unclipped: np.ndarray, plane: np.ndarray, f: int, axis: int,
            factors: tuple[int, int], height: int, width: int) -> float | None:
    """The siting slope of one subsampled axis of one component (see :attr:`Accuracy.siting`), or None."""
    if f == 1:
        return None
    fy, fx = factors
    usable_rows, usable_cols = (height // fy), (width // fx)
    if min(usable_rows, usable_cols) < 3:
        return None
    block = decoded[:usable_rows * fy, :usable_cols * fx].reshape(usable_rows, fy, usable_cols, fx)
    fine: np.ndarray = np.asarray(unclipped[:usable_rows * fy, :usable_cols * fx].reshape(usable_rows, fy, usable_cols, fx)
                                  .all(axis=(1, 3)))
    if axis == 1:
        inner = (block[:, :, :, -1] - block[:, :, :, 0]).mean(axis=1)
        gradient = np.zeros((usable_rows, usable_cols))
        gradient[:, 1:-1] = (plane[:usable_rows, 2:usable_cols] - plane[:usable_rows, :usable_cols - 2]) / 2
        keep = fine.copy()
        keep[:, [0, -1]] = False
    else:
        inner = (block[:, -1, :, :] - block[:, 0, :, :]).mean(axis=2)
        gradient = np.zeros((usable_rows, usable_cols))
        gradient[1:-1, :] = (plane[2:usable_rows, :usable_cols] - plane[:usable_rows - 2, :usable_cols]) / 2
        keep = fine.copy()
        keep[[0, -1], :] = False
    keep &= np.abs(gradient) >= SITING_MIN_GRADIENT
    if keep.sum() < 4:
        return None
    g, d = gradient[keep], inner[keep]
    return float((g * d).sum() / (g * g).sum())


def applies(coefficients: Coefficients | None, config: JpegConfig, stored: str | None, samples: int) -> bool:
    """Whether a decode of this stream can be judged by :func:`measure`: coefficients read, a colour rule the
    spec gives (not rgb read as YCbCr), and the frame's samples filling the chunk."""
    if coefficients is None or stored not in ("grayscale", "rgb", "ycbcr"):
        return False
    frame = coefficients.frame
    components = len(frame.components)
    if (stored == "grayscale") != (config.decoded_color_space == "grayscale") or (stored, config.decoded_color_space) == (
            "rgb", "ycbcr"):
        return False
    return components in (1, 3) and frame.height * frame.width * components == samples





def accuracy_of(out: np.ndarray, data: bytes, config: JpegConfig) -> Accuracy | None:
    """:func:`measure` of a decode of ``data`` under ``config``, or None where it does not apply (:func:`applies`)."""
    from .t81.reading import reading

    found = reading(data)
    stored = found.stream.stored_color_space
    if not applies(found.coefficients, config, stored, int(np.asarray(out).size)):
        return None
    assert found.coefficients is not None and stored is not None
    frame = found.coefficients.frame
    cuts = windows(frame.height, frame.width, (8 * frame.v_max, 8 * frame.h_max))
    if cuts is None:
        return measure(out, found.coefficients, stored, config.decoded_color_space)
    got = np.asarray(out).reshape(frame.height, frame.width, -1)
    parts = [(w, measure(w.cut(got), cut_coefficients(found.coefficients, w), stored, config.decoded_color_space,
                         judged=w.judged(*w.cut(got).shape[:2]))) for w in cuts]
    return _joined(parts, frame.height, frame.width)


def _joined(parts: list[tuple[Window, Accuracy]], height: int, width: int) -> Accuracy:
    """The accuracy of a large decode from its windows' (positions back in the whole image's samples)."""
    def placed(at: tuple[str, int, int] | None, w: Window) -> tuple[str, int, int] | None:
        if at is None:
            return None
        name, row, col = at
        return (name, row, col + w.start) if w.axis else (name, row + w.start, col)

    def largest(value: str) -> tuple[float | None, tuple[str, int, int] | None]:
        found = [(getattr(a, value), placed(getattr(a, f"{value}_at"), w)) for w, a in parts if getattr(a, value) is not None]
        return max(found, key=lambda f: f[0]) if found else (None, None)

    component, component_at = largest("component")
    envelope, envelope_at = largest("envelope")
    footprint, footprint_at = largest("footprint")
    sited = [(a.siting, a.siting_at) for _, a in parts if a.siting is not None]
    siting, siting_at = min(sited, key=lambda s: s[0]) if sited else (None, None)
    counts = [a.judged[0] for _, a in parts]
    bias = float(np.average([a.bias for _, a in parts], weights=counts)) if sum(counts) else 0.0
    wrong = np.zeros((height, width), bool)
    for w, a in parts:
        if a.wrong is not None:
            if w.axis:
                wrong[:, w.start:w.stop] |= a.wrong
            else:
                wrong[w.start:w.stop, :] |= a.wrong
    judged = tuple(int(sum(a.judged[i] for _, a in parts)) for i in range(3))
    return Accuracy(float(component or 0.0), component_at, bias, float(envelope or 0.0), envelope_at, footprint,
                    footprint_at, siting, siting_at, (judged[0], judged[1], judged[2]), wrong, parts[0][1].mcu)


def metrics(accuracy: Accuracy | None) -> dict[str, float | str]:
    """The accuracy as results-file metrics."""
    if accuracy is None:
        return {"accuracy": "not judged by the exact decode"}
    out: dict[str, float | str] = {"acc_component": round(accuracy.component, 3), "acc_bias": round(accuracy.bias, 3),
                                   "acc_envelope": round(accuracy.envelope, 3)}
    if accuracy.footprint is not None:
        out["acc_footprint"] = round(accuracy.footprint, 3)
    if accuracy.siting is not None:
        out["acc_siting"] = round(accuracy.siting, 3)
    return out


@dataclass(frozen=True)
class Bounds:
    """What a legal decoder stays within, measured over every decoder this project ships (the closing note of
    issue 44 has the numbers: ``report`` runs record each decode's ``acc_*`` metrics)."""

    #: Levels a full-resolution component may lie from the exact reconstruction: T.83's decoder tests take an
    #: integer sample within one level of the exact one rounded, so 1.5 from the exact value; half a level more
    #: where the decode is RGB read back to YCbCr (each channel was rounded). Measured: 1.35 at most (Go's
    #: image/jpeg); libjpeg-turbo's fast integer IDCT 5.8-10.8, a studio-range decode 20, BT.709 22.
    component: float = 1.5
    component_converted: float = 2.0
    #: Levels the mean of (decoded - exact, rounded) may reach: rounding is unbiased. A decoder that adds one level
    #: reaches 1.0.
    bias: float = 0.5
    #: Levels a sample may lie outside its envelope. Measured: 0.97 at most (zune-jpeg's upsampler at quality 20);
    #: BT.709 36, a wrap-around at 256 or swapped chroma 250 or more.
    envelope: float = 1.5
    #: Share of the largest neighbour difference a footprint's chroma average may miss its stored sample by.
    #: libjpeg's triangle filter keeps 9/16 of the weight inside the footprint (7/16 leaks), Catmull-Rom 0.75
    #: (0.55 in absolute weights); measured 0.41 at most; chroma shifted by a sample, or the last sample of an odd
    #: edge taken from its neighbour, 0.98.
    footprint: float = 0.6
    #: The lowest siting slope: 0 for chroma repeated, +0.5 for an interpolating upsampler; -0.53 for one that
    #: blends with the neighbour on the wrong side. Measured: 0.0 at the lowest.
    siting: float = -0.25


BOUNDS = Bounds()


def problems(accuracy: Accuracy, convert: bool, bounds: Bounds = BOUNDS) -> list[str]:
    """What a decode breaks, in words with the numbers and where; empty for a decode every legal decoder could give."""
    out = []
    component = bounds.component_converted if convert else bounds.component
    if accuracy.component > component:
        name, row, col = accuracy.component_at or ("?", 0, 0)
        read = " (the RGB decode read back to YCbCr)" if convert else ""
        out.append(f"sample {name} at row {row}, column {col} lies {accuracy.component:.2f} levels from the exact "
                   f"reconstruction{read}, beyond the {component} levels T.83's decoder accuracy allows")
    if abs(accuracy.bias) > bounds.bias:
        # The level-shift reading holds only where no sample strays far beyond the mean shift; a large mean from a
        # few far samples (a wrong colour transform) is reported as the mean alone.
        uniform = accuracy.component <= abs(accuracy.bias) + component
        reading = ": every sample shifted, as by a level shift other than 128" if uniform else ""
        out.append(f"the samples lie {accuracy.bias:+.2f} levels from the exact reconstruction on average (at most "
                   f"{bounds.bias}){reading}")
    if accuracy.envelope > bounds.envelope:
        name, row, col = accuracy.envelope_at or ("?", 0, 0)
        out.append(f"sample {name} at row {row}, column {col} lies {accuracy.envelope:.1f} levels outside every value "
                   f"the stream's luma and the chroma around it give (at most {bounds.envelope})")
    if accuracy.footprint is not None and accuracy.footprint > bounds.footprint:
        name, row, col = accuracy.footprint_at or ("?", 0, 0)
        out.append(f"the decoded {name}, averaged over the samples stored {name} sample ({row}, {col}) covers, misses it "
                   f"by {accuracy.footprint:.2f} of the largest difference to its neighbours (at most {bounds.footprint}): "
                   "chroma is not where the stream stores it")
    if accuracy.siting is not None and accuracy.siting < bounds.siting:
        out.append(f"{accuracy.siting_at}, the decoded chroma moves against the stored chroma inside each footprint "
                   f"(slope {accuracy.siting:.2f}, at least {bounds.siting}): the upsampler blends each sample with "
                   "the neighbour on the wrong side")
    return out


@dataclass(frozen=True)
class Region:
    """Where a decode is wrong: how many samples of how many, their rows and columns, and whether they all lie in the
    partial MCUs at the image's right or bottom edge (the columns or rows past the last whole MCU)."""

    count: int
    total: int
    rows: tuple[int, int]
    columns: tuple[int, int]
    #: "right", "bottom", "right and bottom", or "" where the wrong samples are not confined to the partial MCUs.
    edge: str
    size: tuple[int, int]

    def __str__(self) -> str:
        inside = (f", all in the partial MCU{'s' if self.edge == 'right and bottom' else ''} at the {self.edge} edge"
                  if self.edge else "")
        return (f"{self.count} of {self.total} samples wrong, in rows {self.rows[0]}-{self.rows[1]} and columns "
                f"{self.columns[0]}-{self.columns[1]} of {self.size[0]}x{self.size[1]}{inside}")


def where_wrong(wrong: np.ndarray | None, mcu: tuple[int, int]) -> Region | None:
    """The :class:`Region` of a map of wrong samples (H, W); None where none is wrong."""
    if wrong is None or not wrong.any():
        return None
    height, width = wrong.shape[:2]
    rows, cols = np.nonzero(wrong)
    whole_h, whole_w = height // mcu[0] * mcu[0], width // mcu[1] * mcu[1]
    right = width % mcu[1] != 0 and bool((cols >= whole_w).all())
    bottom = height % mcu[0] != 0 and bool((rows >= whole_h).all())
    either = bool(((cols >= whole_w) & (width % mcu[1] != 0) | (rows >= whole_h) & (height % mcu[0] != 0)).all())
    edge = "right" if right else "bottom" if bottom else "right and bottom" if either else ""
    return Region(int(wrong.sum()), int(wrong.size), (int(rows.min()), int(rows.max())), (int(cols.min()), int(cols.max())),
                  edge, (height, width))


def _triangle(plane: np.ndarray, fy: int, fx: int, height: int, width: int) -> np.ndarray:
    """A plane upsampled by libjpeg's triangle filter where a factor is 2 (3/4 of the nearest sample, 1/4 of the next,
    edges repeated), repeated otherwise."""
    p = plane
    for axis, f in ((0, fy), (1, fx)):
        if f != 2:
            p = np.repeat(p, f, axis=axis)
            continue
        n = p.shape[axis]
        before = np.take(p, np.clip(np.arange(n) - 1, 0, n - 1), axis=axis)
        after = np.take(p, np.clip(np.arange(n) + 1, 0, n - 1), axis=axis)
        p = np.stack([0.75 * p + 0.25 * before, 0.75 * p + 0.25 * after], axis=axis + 1).reshape(
            *p.shape[:axis], -1, *p.shape[axis + 1:])
    return p[:height, :width]


def exact_ycbcr(coefficients: Coefficients, upsampling: str = "repeat") -> np.ndarray:
    """The exact reconstruction's planes at full resolution, (H, W, C) float64, never rounded."""
    frame = coefficients.frame
    up = _triangle if upsampling == "triangle" else _full
    return np.stack([up(plane, frame.v_max // c.v, frame.h_max // c.h, frame.height, frame.width)
                     for plane, c in zip(exact_planes(coefficients), frame.components, strict=True)], axis=-1)


def exact_decode(coefficients: Coefficients, stored: str, decoded: str, shape: tuple[int, ...],
                 upsampling: str = "repeat") -> np.ndarray:
    """The exact reconstruction as a chunk: chroma repeated over its footprints (or ``upsampling="triangle"``),
    converted by T.871 in real numbers, rounded and clamped. A legal decode, not the only one: faults are named
    against the legal one closest to the decode."""
    image = exact_ycbcr(coefficients, upsampling)
    if stored == "ycbcr" and decoded == "rgb":
        centred = image - np.array([0.0, 128.0, 128.0])
        image = np.einsum("ij,hwj->hwi", _INVERSE, centred)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8).reshape(shape)


__all__ = ["BOUNDS", "Accuracy", "Bounds", "Region", "accuracy_of", "applies", "exact_decode", "exact_planes", "exact_ycbcr",
           "measure", "metrics", "problems", "where_wrong"]
