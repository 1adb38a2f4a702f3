"""Print how much legal encoders lose beyond what their own tables allow: the measurement behind OWN_TABLES_MARGIN_DB.

    python -m zarr_jpeg_conformance.tools.own_tables_spread
    python -m zarr_jpeg_conformance.tools.own_tables_spread --results matrix/results/*.jsonl

For every (mode, image, quality) of the fidelity cases and every encoder of
``tools.legal_encoders`` that can write it: the PSNR of its stream (decoded by libjpeg-turbo,
and with chroma repeated; the better counts) minus the PSNR of the same image written by the
reference encoder with the stream's own tables and factors (``judging.own_tables``; subsampled
chroma written both ways, the looser counts, as the read-back does). With
``--results``, the same difference as the suites recorded it (``own_tables_db``) for every
implementation of a matrix run: the lowest per implementation. A legal encoder far under 0
needs a wider margin; wrong ones land 10 dB or more under it.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterable
from pathlib import Path

from ..core.config import parse_codec
from ..corpus.images import make_image, psnr
from ..corpus.modes import MODE
from ..judging.legal_decoders import expected_decodes, libjpeg_turbo_decode
from ..judging.own_tables import rewritten, subsampled
from ..judging.tolerances import FIDELITY_CASES, OWN_TABLES_MARGIN_DB
from .legal_encoders import ENCODERS


def measure(keys: Iterable[tuple[str, str, int]]) -> dict[str, tuple[float, str]]:
    """Encoder -> (its lowest difference in dB, the case that gave it)."""
    lowest: dict[str, tuple[float, str]] = {}
    for mode_id, kind, quality in keys:
        mode = MODE[mode_id]
        config = parse_codec(mode.codec(quality))
        image = make_image(kind, 64, 96, channels=mode.channels)
        shape = image.shape if mode.channels == 3 else (64, 96, 1)
        for name, encode in ENCODERS.items():
            try:
                data = encode(config, image)
                own = min(psnr(image, libjpeg_turbo_decode(rewritten(config, image, data, point=point), config, shape))
                          for point in ((False, True) if subsampled(data) else (False,)))
            except (LookupError, ImportError):
                continue
            got = max(psnr(image, d) for d in expected_decodes(data, config, shape))
            delta = got - own if math.isfinite(got) and math.isfinite(own) else 0.0
            if name not in lowest or delta < lowest[name][0]:
                lowest[name] = (delta, f"{mode_id}-{kind}-q{quality}")
    return lowest


def from_results(paths: list[Path]) -> dict[str, tuple[float, str]]:
    """Implementation -> (its lowest recorded ``own_tables_db``, the case) over results files."""
    lowest: dict[str, tuple[float, str]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            record = json.loads(line)
            value = (record.get("metrics") or {}).get("own_tables_db")
            if not isinstance(value, int | float):
                continue
            name = record.get("implementation", "-")
            if name not in lowest or value < lowest[name][0]:
                lowest[name] = (float(value), str(record.get("case")))
    return lowest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.tools.own_tables_spread",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", nargs="*", type=Path, help="results files of a suite or matrix run")
    parser.add_argument("-k", default="", help="only fidelity cases whose 'mode-kind-qN' contains this text")
    args = parser.parse_args(argv)
    rows = (from_results(args.results) if args.results
            else measure(k for k in FIDELITY_CASES if args.k in f"{k[0]}-{k[1]}-q{k[2]}"))
    print(f"# margin {OWN_TABLES_MARGIN_DB} dB: lowest PSNR difference against the stream's own tables, per encoder")
    for name, (delta, case) in sorted(rows.items(), key=lambda item: item[1][0]):
        flag = "  UNDER THE MARGIN" if delta < -OWN_TABLES_MARGIN_DB else ""
        print(f"{name}: {delta:+.2f} dB ({case}){flag}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
