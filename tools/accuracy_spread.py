"""The numbers behind the accuracy bounds: how far legal and wrong encoders and decoders lie from the exact DCT.

    python -m zarr_jpeg_conformance.tools.accuracy_spread                  # encoders and decoders in this process
    python -m zarr_jpeg_conformance.tools.accuracy_spread --results DIR    # every row of a matrix run

Encoders (``tools.legal_encoders`` and this project's backends) write the corpus images in
every required mode at qualities 5-100; each stream's coefficients are judged
(``judging.encoder_accuracy``) and the largest excess past each tier's bound is printed, with the
largest arithmetic error in coefficient units. Decoders (``fixturegen.decoder_faults``, legal and
wrong) decode the stream corpus; each decode's accuracy (``judging.decoder_accuracy``) is printed
as the largest value of each invariant. ``--results`` reads the ``acc_*`` and ``coefficient_*``
metrics a ``report`` run records, over the cases each row passes, so the bounds can be checked
against every shipped harness.
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from ..core.config import JpegConfig, parse_codec
from ..corpus.images import make_image
from ..corpus.modes import MODES
from ..judging import decoder_accuracy, encoder_accuracy
from ..judging.t81 import dct
from ..judging.t81.reading import reading

KINDS = ("natural", "gradient", "noise", "edges", "gamut")
QUALITIES = (5, 20, 50, 75, 90, 95, 100)


def _encoders() -> dict[str, Callable[[JpegConfig, np.ndarray], bytes]]:
    from ..backends import load_backend
    from .legal_encoders import ENCODERS

    out = dict(ENCODERS)
    for name in ("turbojpeg", "pillow"):
        try:
            backend = load_backend(name)
        except (ImportError, OSError, RuntimeError):
            continue
        out[name] = (lambda b: lambda config, image: b.encode(config, image if config.components == 3 else image[:, :, :1]))(
            backend)
    return out


def encoder_rows() -> Iterator[str]:
    """One line per encoder and mode: blocks judged, blocks missing each tier, the largest excess, the largest AC
    arithmetic error beyond rounding (coefficient units)."""
    stats: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0.0])
    for (name, encode), mode, quality, kind in itertools.product(_encoders().items(), MODES[:8], QUALITIES, KINDS):
        config = parse_codec(mode.codec(quality))
        image = make_image(kind, 64, 96, channels=mode.channels)
        try:
            data = encode(config, image)
        except (LookupError, ValueError, OSError):
            continue
        found = reading(data)
        if found.coefficients is None:
            continue
        chunk = image if mode.channels == 3 else image[:, :, 0]
        samples = encoder_accuracy.samples_of(config, chunk)
        row = stats[(name, mode.id)]
        for result in encoder_accuracy.judge_coefficients(found.coefficients, samples):
            row[0] += result.blocks
            row[1] += result.misses
            row[2] = max(row[2], result.worst.excess if result.worst else 0)
            row[3] += result.inaccurate
            row[4] = max(row[4], result.worst_inaccurate.excess if result.worst_inaccurate else 0)
        row[5] = max(row[5], _arithmetic(found.coefficients, samples))
    for (name, mode_id), (blocks, misses, excess, inaccurate, steps, units) in sorted(stats.items()):
        yield (f"{name:36s} {mode_id:16s} blocks {int(blocks):6d}  MUST misses {int(misses):4d} (max {int(excess)} steps)  "
               f"T.83 misses {int(inaccurate):4d} (max {int(steps)} steps)  AC arithmetic {units:5.1f} units")


def _arithmetic(coefficients: object, samples: encoder_accuracy.Samples) -> float:
    """The largest |dequantized - exact| beyond rounding of an AC coefficient of a full-resolution component's whole
    blocks, in coefficient units."""
    worst = 0.0
    frame = coefficients.frame  # type: ignore[attr-defined]
    for index, c in enumerate(frame.components[:samples.planes.shape[2]]):
        if (c.h, c.v) != (frame.h_max, frame.v_max):
            continue
        rows, cols = samples.planes.shape[0] // 8, samples.planes.shape[1] // 8
        exact = dct.forward(dct.to_blocks(samples.planes[:, :, index] - dct.LEVEL_SHIFT, rows, cols))
        got = coefficients.dequantized(index)[:rows, :cols]  # type: ignore[attr-defined]
        table = coefficients.tables[index]  # type: ignore[attr-defined]
        beyond = np.abs(got - exact) - table / 2 - samples.rounding * dct.BASIS_L1
        beyond[..., 0, 0] = 0
        worst = max(worst, float(beyond.max(initial=0.0)))
    return worst


def decoder_rows() -> Iterator[str]:
    """One line per decoder of ``fixturegen.decoder_faults`` and tolerance family: the largest value of each invariant."""
    from ..corpus.streams import cases_of
    from ..fixturegen import decoder_faults

    decoders = {"libjpeg-turbo": None, **decoder_faults.LEGAL, **decoder_faults.WRONG}
    stats: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, -9.0, 9.0, 0])
    for case in cases_of("reference") + cases_of("foreign"):
        if not case.has_expected:
            continue
        data, config = case.data(), parse_codec(case.codec)
        for name, decode in decoders.items():
            try:
                out = case.expected() if decode is None else decode(data, config, case.chunk_shape)
            except (LookupError, ValueError, OSError):
                continue
            accuracy = decoder_accuracy.accuracy_of(out, data, config)
            if accuracy is None:
                continue
            row = stats[(name, str(case.tolerance))]
            row[0] = max(row[0], accuracy.component)
            row[1] = max(row[1], abs(accuracy.bias))
            row[2] = max(row[2], accuracy.envelope)
            row[3] = max(row[3], accuracy.footprint if accuracy.footprint is not None else -9.0)
            row[4] = min(row[4], accuracy.siting if accuracy.siting is not None else 9.0)
            row[5] += 1
    for (name, family), (component, bias, envelope, footprint, siting, n) in sorted(stats.items()):
        yield (f"{name:16s} {family:10s} decodes {int(n):3d}  component {component:6.2f}  |bias| {bias:5.2f}  "
               f"envelope {envelope:6.2f}  footprint {footprint:6.2f}  siting {siting:5.2f}")


def results_rows(folder: Path) -> Iterator[str]:
    """Per implementation of a report run: the largest of each accuracy metric over the cases it does not fail."""
    worst: dict[str, dict[str, tuple[float, str]]] = defaultdict(dict)
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("outcome") in ("fail", "error"):
                continue
            metrics = record.get("metrics", {})
            for key in ("acc_component", "acc_bias", "acc_envelope", "acc_footprint", "coefficient_misses", "coefficient_t83"):
                value = metrics.get(key)
                if isinstance(value, int | float):
                    value = abs(value)
                    if value > worst[record["implementation"]].get(key, (-1e9, ""))[0]:
                        worst[record["implementation"]][key] = (float(value), record["case"])
            siting = metrics.get("acc_siting")
            if isinstance(siting, int | float) and -siting > worst[record["implementation"]].get("-acc_siting", (-1e9, ""))[0]:
                worst[record["implementation"]]["-acc_siting"] = (-float(siting), record["case"])
    for implementation, values in sorted(worst.items()):
        shown = ", ".join(f"{key} {value:.2f} ({case})" for key, (value, case) in sorted(values.items()))
        yield f"{implementation}: {shown}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.tools.accuracy_spread",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, help="a report run's results folder (its results/ holds one .jsonl a row)")
    parser.add_argument("--encoders", action="store_true", help="only the encoders")
    parser.add_argument("--decoders", action="store_true", help="only the decoders")
    args = parser.parse_args(argv)
    if args.results is not None:
        folder = args.results / "results" if (args.results / "results").is_dir() else args.results
        for line in results_rows(folder):
            print(line, flush=True)
        return 0
    if not args.decoders:
        print("encoders: coefficients against the exact DCT (judging.encoder_accuracy)", flush=True)
        for line in encoder_rows():
            print(line, flush=True)
    if not args.encoders:
        print("decoders: reconstruction against the exact decode (judging.decoder_accuracy)", flush=True)
        for line in decoder_rows():
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
