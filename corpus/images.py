"""Deterministic test images: the same bytes on every machine and every run.

Each kind probes something different in a JPEG codec: smooth gradients (quantization of
low frequencies), noise (worst case for the DCT), edges and checkerboards (ringing,
chroma bleeding, axis mix-ups), fine detail (high frequencies), constants (exact round
trips), a natural photograph, and independent "fluorescence" channels whose values a
color transform would destroy.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .registry import resource

KINDS = ("gradient", "noise", "edges", "checker", "detail", "zeros", "full", "natural", "fluorescence", "ramp", "axes",
         "offsets", "luma", "chroma-edges", "gamut")
#: The corners of the RGB cube (black, the primaries, the secondaries, white) and saturated blends between them:
#: where a colour conversion without clamping wraps at 256, and another matrix than T.871's is far off.
GAMUT = ((0, 0, 0), (255, 0, 0), (0, 255, 0), (0, 0, 255), (0, 255, 255), (255, 0, 255), (255, 255, 0), (255, 255, 255),
         (255, 128, 0), (0, 128, 255), (128, 0, 255), (128, 128, 128))
#: The public-domain NASA portrait shipped by scikit-image (astronaut), a 192x192 crop.
NATURAL = ("fixtures", "images", "astronaut-192.npy")


@cache
def _natural() -> np.ndarray:
    with resource(*NATURAL).open("rb") as f:
        return np.load(f, allow_pickle=False)


def _grid(height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    y, x = np.mgrid[0:height, 0:width]
    return y.astype(np.float64), x.astype(np.float64)


def _tile(src: np.ndarray, height: int, width: int) -> np.ndarray:
    """Mirror-tile a source image to any size, so content has no seams."""
    reps_y = -(-height // src.shape[0])
    reps_x = -(-width // src.shape[1])
    rows = [src if i % 2 == 0 else src[::-1] for i in range(reps_y)]
    col = np.concatenate(rows, axis=0)
    cols = [col if i % 2 == 0 else col[:, ::-1] for i in range(reps_x)]
    return np.concatenate(cols, axis=1)[:height, :width]


def make_image(kind: str, height: int, width: int, channels: int = 3, seed: int = 0) -> np.ndarray:
    """A uint8 image of shape (height, width, channels) of the given kind."""
    if kind not in KINDS:
        raise ValueError(f"unknown image kind {kind!r}; one of {', '.join(KINDS)}")
    y, x = _grid(height, width)
    rng = np.random.default_rng(seed)
    planes: list[np.ndarray] = []
    for c in range(channels):
        if kind == "gradient":
            p = 255 * (0.5 + 0.5 * np.sin(2 * np.pi * (x / max(width, 2) * (c + 1) * 0.7 + y / max(height, 2) * (0.9 - 0.2 * c))))
        elif kind == "ramp":
            # Distinct, axis-asymmetric ramp per channel: a transposed or channel-swapped
            # decode is far off everywhere, not only at edges.
            p = (x * (3 + c) + y * (1 + 2 * c) + 40 * c) % 256
        elif kind == "axes":
            # Smooth (survives any subsampling) but different along each axis and in each
            # channel: red follows x, green follows y, blue both; gray is asymmetric.
            u, v = x / max(width - 1, 1), y / max(height - 1, 1)
            p = [30 + 195 * u, 30 + 195 * v, 225 - 120 * u - 75 * v][c] if channels == 3 else 20 + 150 * u + 70 * v
        elif kind in ("offsets", "luma"):
            # For chunks smaller than an MCU: detail only in luma, so that no chroma
            # subsampling or upsampling rule changes a sample by more than a few levels,
            # while swapped axes (x and y weigh differently) or channels are tens of levels
            # off. "offsets" is RGB whose channels differ by constants (constant chroma);
            # "luma" is YCbCr input (passthrough) with constant Cb and Cr.
            base = 40 + 105 * x / max(width - 1, 1) + 45 * y / max(height - 1, 1)
            p = base + 30 * (c - 1) if kind == "offsets" or c == 0 else np.full((height, width), (100.0, 160.0)[c - 1])
        elif kind == "chroma-edges":
            # Smooth and dull inside, saturated colours in the last column and the last row:
            # where an odd size leaves a chroma sample covering one real sample and padding, a
            # decoder's edge rule (which chroma sample the last samples take) shows, and little
            # else does.
            p = [100 + 40 * x / max(width, 1), 110 + 30 * y / max(height, 1), np.full((height, width), 120.0)][c % 3] \
                if channels == 3 else 100 + 40 * x / max(width, 1)
            p = np.array(p, dtype=np.float64)
            p[:, -1] = (230, 40, 60)[c % 3] if channels == 3 else 230
            p[-1, :] = (40, 200, 230)[c % 3] if channels == 3 else 40
        elif kind == "gamut":
            # 16x16 patches (whole MCUs of every required scheme), one colour of GAMUT each: every colour once in
            # each 48x64 area, in an order (times 5, coprime with 12) that puts unlike colours side by side.
            index = (((y // 16) * 4 + x // 16) * 5).astype(np.int64) % len(GAMUT)
            p = np.array([colour[c % 3] for colour in GAMUT], dtype=np.float64)[index]
        elif kind == "noise":
            p = rng.integers(0, 256, size=(height, width)).astype(np.float64)
        elif kind == "edges":
            p = np.where((x + 2 * y + 17 * c) % 48 < 24, 235.0, 20.0)
        elif kind == "checker":
            p = np.where(((x // 8) + (y // 8) + c) % 2 == 0, 255.0, 0.0)
        elif kind == "detail":
            p = 127.5 + 127.5 * np.cos(np.pi * (x * (0.9 + 0.03 * c) + y * 0.45))
        elif kind == "zeros":
            p = np.zeros((height, width))
        elif kind == "full":
            p = np.full((height, width), 255.0)
        elif kind == "natural":
            src = _natural()
            p = _tile(src[:, :, c % 3] if channels == 3 else src.mean(axis=2), height, width).astype(np.float64)
        else:  # fluorescence: sparse blobs, different per channel, mostly dark background
            p = np.full((height, width), 6.0)
            for _ in range(max(3, height * width // 400)):
                cy, cx = rng.uniform(0, height), rng.uniform(0, width)
                r = rng.uniform(1.5, 6.0)
                p += rng.uniform(60, 240) * np.exp(-((y - cy) ** 2 + (x - cx) ** 2) / (2 * r * r))
        planes.append(np.clip(np.rint(p), 0, 255))
    return np.stack(planes, axis=-1).astype(np.uint8)


def make_chunk(shape: tuple[int, ...], dtype: str = "uint8", fill: str = "ramp", seed: int = 0) -> np.ndarray:
    """A chunk of any shape and dtype, filled deterministically (for chunk-shape cases)."""
    n = int(np.prod(shape, dtype=np.int64))
    if len(shape) in (2, 3) and n and fill in KINDS:
        channels = shape[2] if len(shape) == 3 else 1
        img = make_image(fill, shape[0], shape[1], channels, seed)
        data = img.reshape(shape)
    else:
        data = (np.arange(n, dtype=np.int64) * 7 % 256).reshape(shape)
    return data.astype(np.dtype(dtype))


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """PSNR in dB over all samples (combined MSE), 8-bit peak; inf for identical arrays."""
    mse = float(np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255.0**2 / mse)


def max_abs(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.max(np.abs(a.astype(np.int16) - b.astype(np.int16)))) if a.size else 0


#: Rows and columns of an array nearest its edge that edge_errors measures apart.
EDGE_BAND = 4


def edge_errors(expected: np.ndarray, actual: np.ndarray, chunk_hw: tuple[int, int]) -> dict[str, float]:
    """Mean per-pixel error (the largest over the channels) of an array whose edge lies inside its boundary chunks:
    ``edge_mean_error`` over the EDGE_BAND last rows and columns there, ``boundary_mean_error`` over the rest of the
    boundary chunks, ``interior_mean_error`` over the chunks the edge does not reach. Empty where the array's height
    and width are multiples of the chunk's (no chunk holds fill values), or a region is empty.

    Zarr pads a boundary chunk with the fill value, so the blocks across the array's edge mix real samples with
    it: these say how much that costs near the edge against the rest.
    """
    h, w = expected.shape[:2]
    ch, cw = chunk_hw
    if (h % ch == 0 and w % cw == 0) or expected.shape != actual.shape:
        return {}
    diff = np.abs(expected.astype(np.int16) - actual.astype(np.int16))
    err = diff.max(axis=2) if diff.ndim == 3 else diff
    boundary = np.zeros((h, w), dtype=bool)
    edge = np.zeros((h, w), dtype=bool)
    if h % ch:
        boundary[h - h % ch :, :] = True
        edge[h - EDGE_BAND :, :] = True
    if w % cw:
        boundary[:, w - w % cw :] = True
        edge[:, w - EDGE_BAND :] = True
    regions = {"edge_mean_error": edge, "boundary_mean_error": boundary & ~edge, "interior_mean_error": ~boundary}
    if not all(mask.any() for mask in regions.values()):
        return {}
    return {name: round(float(err[mask].mean()), 3) for name, mask in regions.items()}
