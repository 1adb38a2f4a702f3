"""Campaign: chunks with corrupt entropy-coded data, decoded by each backend and judged against libjpeg-turbo's strict decode.

A backend writes a chunk, as the zarr codec stores it; bits are flipped inside its scans,
leaving every marker where it was (no byte becomes or stops being 0xFF), which is what a
damaged disk or transfer does to a stored chunk. libjpeg reports such data only as
warnings, so a decoder that ignores them returns wrong pixels without an error. Each
corrupted chunk is sorted into

* ``rejected``: the backend raised a clean rejection (ValueError, TypeError);
* ``exact``: it returned exactly what libjpeg-turbo's strict decode (TurboJPEG with
  TJFLAG_STOPONWARNING, called directly) returns; the corruption left a valid stream;
* ``garbage``: it returned pixels where the strict decode refuses, or other pixels.

``--mutation any`` corrupts with tools.fuzz's edits instead (markers, lengths, truncation),
where the pre-decode checks reject much of what libjpeg would warn about.

A strict backend (``BackendAdapter.strict``) must have no garbage; the exit status is 1 if
one has. Run: ``python -m zarr_jpeg_conformance.tools.corrupt_chunks --chunks 1000 [--mutation any]``.
"""

from __future__ import annotations

import argparse
import random
import re
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..backends import BACKENDS, BackendUnavailable, load_backend
from ..backends.base import BackendAdapter
from ..corpus.modes import codec
from .fuzz import mutate, seed_streams

#: (name, codec object, chunk shape) of the chunks that get corrupted: every mode the codec
#: must support, plus rgb, at sizes with partial MCUs.
MODES: tuple[tuple[str, dict, tuple[int, ...]], ...] = (
    ("gray", codec(90, "grayscale"), (48, 72)),
    ("ycbcr-420", codec(90, "ycbcr", None, [(2, 2), (1, 1), (1, 1)]), (40, 56, 3)),
    ("ycbcr-422", codec(75, "ycbcr", None, [(2, 1), (1, 1), (1, 1)]), (33, 47, 3)),
    ("ycbcr-444", codec(95, "ycbcr", None, [(1, 1), (1, 1), (1, 1)]), (32, 40, 3)),
    ("rgb", codec(90, "rgb"), (24, 32, 3)),
)
_ENDS_ENTROPY = re.compile(rb"\xff[^\x00\xd0-\xd7]")


def entropy_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of the entropy-coded data of every scan of a stream as encoders write it."""
    spans, pos = [], 2
    while pos + 4 <= len(data) and data[pos] == 0xFF and data[pos + 1] != 0xD9:
        end = pos + 2 + int.from_bytes(data[pos + 2 : pos + 4], "big")
        if data[pos + 1] == 0xDA:
            found = _ENDS_ENTROPY.search(data, end)
            pos = found.start() if found else len(data)
            spans.append((end, pos))
        else:
            pos = end
    return spans


def corrupt(data: bytes, rng: random.Random) -> bytes:
    """One to four bit flips inside the scans; no 0xFF byte is made, removed or followed by another value."""
    buf = bytearray(data)
    offsets = [i for start, end in entropy_spans(data) for i in range(start, end)]
    flips, wanted = 0, rng.randint(1, 4)
    while flips < wanted:
        i = rng.choice(offsets)
        flipped = buf[i] ^ (1 << rng.randrange(8))
        if buf[i] == 0xFF or buf[i - 1] == 0xFF or flipped == 0xFF:
            continue  # would move a marker or a stuffed byte: the structure stays as it was
        buf[i] = flipped
        flips += 1
    return bytes(buf)


#: How chunks are corrupted, by --mutation name.
MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {"scan-bits": corrupt, "any": mutate}


class StrictReference:
    """libjpeg-turbo's strict decode: TurboJPEG with TJFLAG_STOPONWARNING, warnings made errors."""

    def __init__(self) -> None:
        import turbojpeg as tj

        self._tj, self._turbo = tj, tj.TurboJPEG()

    def decode(self, data: bytes, channels: int) -> np.ndarray | None:
        """The pixels, or None where libjpeg-turbo stops on a warning or an error."""
        tj = self._tj
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # PyTurboJPEG reports a stop on a warning with warnings.warn
            try:
                out = self._turbo.decode(
                    data, pixel_format=tj.TJPF_GRAY if channels == 1 else tj.TJPF_RGB,
                    flags=tj.TJFLAG_ACCURATEDCT | tj.TJFLAG_STOPONWARNING,
                )  # fmt: skip
            except (OSError, UserWarning, ValueError):
                return None
        return np.asarray(out)


@dataclass
class Result:
    """Outcomes of one backend's campaign, and how many corrupted chunks the strict decode refused."""

    backend: str
    strict: bool
    outcomes: Counter[str]
    reference_rejects: int = 0


def judge(decode: Callable[[bytes], np.ndarray], reference: np.ndarray | None, data: bytes) -> str:
    try:
        out = decode(data)
    except (ValueError, TypeError):
        return "rejected"
    if reference is not None and out.size == reference.size and np.array_equal(out.reshape(reference.shape), reference):
        return "exact"
    return "garbage"


def campaign(
    backend: BackendAdapter, reference: StrictReference, chunks: int, seed: int = 0,
    mutation: Callable[[bytes, random.Random], bytes] = corrupt,
) -> Result:
    """``chunks`` chunks corrupted by ``mutation``, spread over the modes the backend supports, through ``backend``."""
    rng = random.Random(seed)
    seeds = seed_streams(backend, MODES)
    result = Result(backend.name, backend.strict, Counter())
    for _ in range(chunks):
        _name, parsed, stream, shape = rng.choice(seeds)
        data = mutation(stream, rng)
        expected = reference.decode(data, shape[2] if len(shape) == 3 else 1)
        result.reference_rejects += expected is None
        result.outcomes[judge(lambda d: backend.decode(parsed, d, shape), expected, data)] += 1  # noqa: B023 - called at once
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=1000, help="corrupted chunks per backend (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--impl", action="append", default=None, help="backend (default: every one that loads)")
    parser.add_argument("--mutation", choices=sorted(MUTATIONS), default="scan-bits",
                        help="scan-bits (default): bit flips inside the scans, markers untouched; "
                        "any: tools.fuzz's edits, markers and lengths included")  # fmt: skip
    args = parser.parse_args(argv)
    reference = StrictReference()
    failed = False
    for name in args.impl or list(BACKENDS):
        try:
            backend = load_backend(name)
        except BackendUnavailable as exc:
            print(f"{name}: not available: {exc}")
            continue
        t0 = time.perf_counter()
        r = campaign(backend, reference, args.chunks, args.seed, MUTATIONS[args.mutation])
        counts = ", ".join(f"{k} {r.outcomes[k]}" for k in ("rejected", "exact", "garbage"))
        kind = "strict" if r.strict else "lenient"
        print(f"{name} ({kind}): {args.chunks} chunks ({args.mutation}) in {time.perf_counter() - t0:.1f} s, "
              f"strict reference refuses {r.reference_rejects}: {counts}")  # fmt: skip
        failed |= r.strict and r.outcomes["garbage"] > 0
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
