"""The fidelity floors in judging/tolerances.py are what their rule gives from the measurement beside each.

Each PSNR_FLOORS line carries, as its comment, the lowest PSNR measured over the legal encoder
x decoder pairs (tools/floors prints them); the floor is that value minus MARGIN_DB
(MARGIN_Q100_DB at quality 100), rounded down to 0.5 dB. A floor edited by hand, or a margin
changed without reprinting the table, fails here.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from zarr_jpeg_conformance.judging import tolerances
from zarr_jpeg_conformance.tools.floors import floor_of

SOURCE = Path(__file__).resolve().parents[1] / "judging" / "tolerances.py"
LINE = re.compile(r'^\s+\("([^"]+)", "([^"]+)", (\d+)\): ([0-9.]+),  # ([0-9.]+):', re.M)


def test_every_floor_follows_from_its_measurement() -> None:
    # Reloaded here so that the module's own lines count as run by this test (tools/mutate's map).
    PSNR_FLOORS = importlib.reload(tolerances).PSNR_FLOORS
    lines = {(m[0], m[1], int(m[2])): (float(m[3]), float(m[4])) for m in LINE.findall(SOURCE.read_text())}
    assert lines.keys() == PSNR_FLOORS.keys()
    # The comment prints the measurement to 0.01 dB: the floor may come from anywhere within that rounding.
    wrong = {key: (floor, lowest) for key, (floor, lowest) in lines.items()
             if floor != PSNR_FLOORS[key] or floor not in {floor_of(lowest - 0.005, key[2]), floor_of(lowest + 0.005, key[2])}}
    assert not wrong, wrong
