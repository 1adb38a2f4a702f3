"""The 8x8 DCT of T.81 A.3.3, exactly (float64), and the level shift of A.3.1.

F(v, u) = 1/4 C(u) C(v) sum_x sum_y f(y, x) cos((2x+1)u pi/16) cos((2y+1)v pi/16), with
C(0) = 1/sqrt(2) and C(k) = 1 otherwise: as a matrix product F = T f T' with the orthonormal
basis T. Blocks are arrays (..., 8, 8) indexed [row, column], coefficients [v, u].
"""

from __future__ import annotations

import numpy as np

_K = np.arange(8)
#: T[u, x] = C(u)/2 cos((2x+1) u pi / 16).
BASIS = np.where(_K[:, None] == 0, 1 / np.sqrt(2), 1.0) / 2 * np.cos((2 * _K[None, :] + 1) * _K[:, None] * np.pi / 16)
#: The sum of |basis function| over the 64 samples of each coefficient [v, u]: the most one
#: level of error in every sample can move that coefficient.
BASIS_L1 = np.outer(np.abs(BASIS).sum(axis=1), np.abs(BASIS).sum(axis=1))
#: The level shift of 8-bit samples (A.3.1).
LEVEL_SHIFT = 128.0


def forward(blocks: np.ndarray) -> np.ndarray:
    """The exact forward DCT of level-shifted sample blocks (..., 8, 8)."""
    return BASIS @ np.asarray(blocks, np.float64) @ BASIS.T


def inverse(coefficients: np.ndarray) -> np.ndarray:
    """The exact inverse DCT of dequantized coefficient blocks (..., 8, 8); still level-shifted."""
    return BASIS.T @ np.asarray(coefficients, np.float64) @ BASIS


def to_blocks(plane: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """``plane`` (at least rows*8 x cols*8) cut into blocks (rows, cols, 8, 8)."""
    return np.ascontiguousarray(plane[:rows * 8, :cols * 8].reshape(rows, 8, cols, 8).swapaxes(1, 2))


def from_blocks(blocks: np.ndarray) -> np.ndarray:
    """Blocks (rows, cols, 8, 8) put back into a plane (rows*8, cols*8)."""
    rows, cols = blocks.shape[:2]
    return np.ascontiguousarray(blocks.swapaxes(1, 2).reshape(rows * 8, cols * 8))


__all__ = ["BASIS", "BASIS_L1", "LEVEL_SHIFT", "forward", "from_blocks", "inverse", "to_blocks"]
