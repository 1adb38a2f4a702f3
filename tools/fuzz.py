"""Mutation fuzzing of decoders: whatever bytes come in, only a clean rejection or a
correct-shape uint8 array may come out (no other exception, no crash, no hang).

Seeds are valid streams written by the shared core's reference paths; mutations are
the ones that break real files: bit flips, truncation, marker and length edits, inserted
and deleted runs. ``tests/test_fuzz.py`` runs a short hypothesis campaign in CI; the long
run is ``python -m zarr_jpeg_conformance.tools.fuzz --impl NAME --examples N``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..adapters import Adapter, load_adapter
from ..core.markers import inspect
from ..corpus.images import make_image
from ..corpus.modes import codec

#: (name, codec object, chunk shape) of the seed streams.
SEEDS: tuple[tuple[str, dict, tuple[int, ...]], ...] = (
    ("gray", codec(75, "grayscale"), (24, 40)),
    ("ycbcr-420", codec(75, "ycbcr", None, [(2, 2), (1, 1), (1, 1)]), (24, 40, 3)),
    ("ycbcr-444", codec(90, "ycbcr", None, [(1, 1), (1, 1), (1, 1)]), (17, 9, 3)),
    ("rgb", codec(90, "rgb"), (16, 16, 3)),
)
#: Marker bytes worth planting: SOI, EOI, SOS, SOF0/1/2/3, DHT, DQT, DRI, RST0, APP0, APP14, COM.
MARKERS = (0xD8, 0xD9, 0xDA, 0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xDB, 0xDD, 0xD0, 0xE0, 0xEE, 0xFE)


class Encoder(Protocol):
    """What writing seeds takes: an adapter's parse and encode (an Adapter, or a backend)."""

    def parse(self, codec: Mapping[str, Any]) -> object: ...

    def encode(self, parsed: Any, chunk: np.ndarray) -> bytes: ...


def seed_streams(
    encoder: Encoder, modes: Sequence[tuple[str, dict, tuple[int, ...]]] = SEEDS
) -> list[tuple[str, object, bytes, tuple[int, ...]]]:
    """(name, parsed codec, stream, chunk shape) for every seed (of ``modes``) the encoder supports."""
    seeds = []
    for name, codec_obj, shape in modes:
        try:
            parsed = encoder.parse(codec_obj)
        except ValueError:
            continue
        chunk = make_image("natural", shape[0], shape[1], shape[2] if len(shape) == 3 else 1).reshape(shape)
        seeds.append((name, parsed, encoder.encode(parsed, chunk), shape))
    return seeds


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One to four random edits of the kinds that break real files."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not buf:
            break
        kind = rng.randrange(7)
        i = rng.randrange(len(buf))
        if kind == 0:  # bit flip
            buf[i] ^= 1 << rng.randrange(8)
        elif kind == 1:  # truncation
            del buf[i:]
        elif kind == 2:  # plant a marker
            buf[i : i + 2] = bytes((0xFF, rng.choice(MARKERS)))
        elif kind == 3:  # length field edit: the two bytes after a marker
            j = bytes(buf).find(b"\xff", i)
            if 0 <= j < len(buf) - 3:
                buf[j + 2 : j + 4] = rng.randrange(65536).to_bytes(2, "big")
        elif kind == 4:  # delete a run
            del buf[i : i + rng.randint(1, 64)]
        elif kind == 5:  # insert random bytes
            buf[i:i] = rng.randbytes(rng.randint(1, 32))
        else:  # overwrite with 0xFF or 0x00 runs, which confuse entropy decoding
            n = rng.randint(1, 16)
            buf[i : i + n] = bytes([rng.choice((0x00, 0xFF))]) * n
    return bytes(buf)


@dataclass
class Tally:
    """What came out of a decoder for how many mutated streams."""

    outcomes: Counter[str]

    def add(self, outcome: str) -> None:
        self.outcomes[outcome] += 1


def judge_decode(decode: Callable[[bytes], object], data: bytes, shape: tuple[int, ...]) -> str:
    """'rejected', 'decoded', or raise AssertionError describing a forbidden result."""
    try:
        out = decode(data)
    except (ValueError, TypeError):
        return "rejected"
    except Exception as exc:  # the point is to catch any other exception
        raise AssertionError(f"decoder raised {type(exc).__name__}: {exc} (not a rejection)") from exc
    if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != np.uint8:
        raise AssertionError(f"decoder returned {type(out).__name__} {getattr(out, 'dtype', '')} {getattr(out, 'shape', '')}, expected uint8 {shape}")
    return "decoded"


def campaign(decoder: Adapter, encoder: Adapter, examples: int, seed: int = 0) -> Tally:
    """Run ``examples`` mutated streams per seed through ``decoder`` and the marker inspector."""
    rng = random.Random(seed)
    tally = Tally(Counter())
    seeds = seed_streams(encoder)
    for _ in range(examples):
        name, _parsed, stream, shape = rng.choice(seeds)
        data = mutate(stream, rng)
        inspect(data)  # must never raise
        try:
            dparsed = decoder.parse(_codec_of(name))
        except ValueError:
            tally.add("unsupported")
            continue
        tally.add(judge_decode(lambda d: decoder.decode(dparsed, d, shape), data, shape))  # noqa: B023 - called at once
    return tally


def _codec_of(name: str) -> dict:
    return next(c for n, c, _ in SEEDS if n == name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Mutation fuzzing of JPEG decoders (long run).")
    parser.add_argument("--impl", action="append", default=None, help="adapter to fuzz (default: the built-ins that load)")
    parser.add_argument("--encoder", default="imagecodecs", help="adapter that writes the seed streams")
    parser.add_argument("--examples", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    encoder = load_adapter(args.encoder)
    for name in args.impl or ["turbojpeg", "imagecodecs", "pillow"]:
        t0 = time.perf_counter()
        tally = campaign(load_adapter(name), encoder, args.examples, args.seed)
        counts = ", ".join(f"{k} {v}" for k, v in sorted(tally.outcomes.items()))
        print(f"{name}: {args.examples} streams in {time.perf_counter() - t0:.1f} s: {counts}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
