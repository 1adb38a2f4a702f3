"""Print the fidelity floors of the round-trip suite, measured over legal encoders.

    python -m zarr_jpeg_conformance.tools.floors

For every (mode, image, quality) of ``judging.tolerances.PSNR_FLOORS``: the PSNR of each
encoder of ``tools.legal_encoders`` that can write the mode, decoded by each legal decoder
there (libjpeg-turbo under the spec's colour rule; chroma repeated instead of
interpolated), the smallest of them, the floor that smallest gives (minus
``MARGIN_DB``, or ``MARGIN_Q100_DB`` at quality 100, rounded down to 0.5 dB), and the floor in the code. A floor above the
measured smallest fails a legal encoder; one far below it lets wrong encoders pass.
"""

from __future__ import annotations

import argparse
import math

from ..core.config import parse_codec
from ..corpus.images import make_image, psnr
from ..corpus.modes import MODE
from ..judging.tolerances import MARGIN_DB, MARGIN_Q100_DB, PSNR_FLOORS
from .legal_encoders import DECODERS, ENCODERS


def measure(keys: list[tuple[str, str, int]]) -> dict[tuple[str, str, int], dict[str, float]]:
    """PSNR of every encoder that can write each (mode, kind, quality), decoded by every legal decoder."""
    out: dict[tuple[str, str, int], dict[str, float]] = {}
    for key in keys:
        mode_id, kind, quality = key
        mode = MODE[mode_id]
        config = parse_codec(mode.codec(quality))
        image = make_image(kind, 64, 96, channels=mode.channels)
        row: dict[str, float] = {}
        for name, encode in ENCODERS.items():
            try:
                data = encode(config, image)
            except (LookupError, ImportError):
                continue
            for decoder, decode in DECODERS.items():
                try:
                    decoded = decode(data, config, image.shape if mode.channels == 3 else (64, 96, 1))
                except LookupError:
                    continue
                row[name if decoder == "libjpeg-turbo" else f"{name} + {decoder}"] = psnr(image, decoded)
        out[key] = row
    return out


def floor_of(smallest: float, quality: int) -> float:
    margin = MARGIN_Q100_DB if quality == 100 else MARGIN_DB
    return math.floor((smallest - margin) * 2) / 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.tools.floors", description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default="", help="only keys whose 'mode-kind-qN' contains this text")
    parser.add_argument("--python", action="store_true", help="print the floors as the lines of PSNR_FLOORS")
    args = parser.parse_args(argv)
    keys = [k for k in PSNR_FLOORS if args.k in f"{k[0]}-{k[1]}-q{k[2]}"]
    print(f"# margin {MARGIN_DB} dB ({MARGIN_Q100_DB} dB at quality 100); encoders: {', '.join(ENCODERS)}")
    for key, row in measure(keys).items():
        if args.python:
            smallest = min(row.values())
            print(f"    {key!r}: {floor_of(smallest, key[2])},  # {smallest:.2f}: {min(row, key=row.__getitem__)} "
                  f"(lowest of {len(row)}; libjpeg-turbo {row['libjpeg-turbo']:.2f})")
            continue
        smallest = min(row.values())
        worst = min(row, key=row.__getitem__)
        flag = "  ABOVE A LEGAL ENCODER" if PSNR_FLOORS[key] > smallest else ""
        print(f"{key[0]}-{key[1]}-q{key[2]}: min {smallest:.2f} ({worst}, {len(row)} encoders) -> floor {floor_of(smallest, key[2])}; "
              f"code {PSNR_FLOORS[key]}{flag}  [{', '.join(f'{n} {v:.2f}' for n, v in row.items())}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
