"""The --measure command: the numbers behind decode_tolerances, from the package's corpus.

For each case that may decode: how far each built-in adapter, libjpeg-turbo's non-default
decodes (box upsampling, fast or float IDCT) and a wrong colour transform land from the
expected decode. Then what the raw libraries do with the cases a decoder must or may reject.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from collections.abc import Callable

import numpy as np

from ..core.config import parse_codec
from ..core.markers import inspect
from ..judging.decode_tolerances import FAMILIES, Difference, difference
from .make import wrong_transform

Worst = dict[tuple[str, str], tuple[int, float]]


def _netpbm(data: bytes) -> np.ndarray:
    """Pixels of a binary PGM/PPM as djpeg writes it (no comments)."""
    header = re.match(rb"(P[56])\s+(\d+)\s+(\d+)\s+\d+\s", data)
    if header is None:
        raise ValueError("not a binary PGM/PPM")
    channels = 1 if header[1] == b"P5" else 3
    return np.frombuffer(data[header.end() :], np.uint8).reshape(int(header[3]), int(header[2]), channels)


def _simulated(data: bytes, stored: str, output: str, shape: tuple[int, ...]) -> dict[str, np.ndarray | None]:
    """Decodes by libjpeg-turbo with its non-default, non-libjpeg-like options.

    fast-upsample (PyTurboJPEG TJFLAG_FASTUPSAMPLE: box chroma upsampling instead of the
    triangle filter, as the JavaScript decoders do), with fast-dct (TJFLAG_FASTDCT: a less
    accurate IDCT), and djpeg -nosmooth -dct float (box upsampling, float IDCT) for the
    factor sets the legacy TurboJPEG API cannot read.
    """
    out: dict[str, np.ndarray | None] = {"fast-upsample": None, "fast-upsample+fast-dct": None}
    try:
        import turbojpeg as tj

        t = tj.TurboJPEG()
    except (ImportError, OSError, RuntimeError):
        tj = None
    for name in list(out) if tj else []:
        flags = tj.TJFLAG_FASTUPSAMPLE | (tj.TJFLAG_FASTDCT if name.endswith("fast-dct") else 0)
        try:
            if output == "ycbcr":
                # Planes as stored (chroma not upsampled); replicating each chroma sample
                # over its luma block is box upsampling.
                luma, *chroma = t.decode_to_yuv_planes(data, flags=flags)
                planes = [luma] + [
                    np.repeat(np.repeat(c, luma.shape[0] // c.shape[0], 0), luma.shape[1] // c.shape[1], 1) for c in chroma
                ]
                out[name] = np.stack([pl[: shape[0], : shape[1]] for pl in planes], axis=-1).reshape(shape)
            else:
                fmt = tj.TJPF_GRAY if stored == "grayscale" else tj.TJPF_RGB
                out[name] = np.asarray(t.decode(data, pixel_format=fmt, flags=flags)).reshape(shape)
        except (OSError, ValueError):
            out[name] = None
    exe = shutil.which("djpeg")
    out["djpeg-nosmooth-float"] = None
    if exe and output != "ycbcr":
        done = subprocess.run([exe, "-nosmooth", "-dct", "float", "-pnm"], input=data, capture_output=True, check=False)
        if done.returncode == 0:
            out["djpeg-nosmooth-float"] = _netpbm(done.stdout).reshape(shape)
    return out


def _raw_library(name: str, data: bytes) -> str:
    """What the library behind a built-in adapter does with a stream, called as the adapter calls it."""
    try:
        if name == "imagecodecs":
            import imagecodecs

            shape = np.asarray(imagecodecs.jpeg8_decode(data)).shape
        elif name == "pillow":
            from PIL import Image

            with Image.open(io.BytesIO(data), formats=["JPEG"]) as im:
                im.load()
                shape = np.asarray(im).shape
        else:
            import turbojpeg as tj

            flags = tj.TJFLAG_ACCURATEDCT | tj.TJFLAG_STOPONWARNING
            shape = np.asarray(tj.TurboJPEG().decode(data, pixel_format=tj.TJPF_RGB, flags=flags)).shape
    except Exception as exc:  # noqa: BLE001 - any refusal counts; its type is reported
        return f"raises {type(exc).__name__}"
    return f"RETURNS {tuple(shape)}"


def _cell(d: Difference, worst: Worst, key: tuple[str, str], pick: Callable[..., float], start: tuple[int, float]) -> str:
    """The table cell of one difference, folding it into the family's extreme with ``pick``."""
    old = worst.get(key, start)
    worst[key] = (int(pick(old[0], d.max_abs)), pick(old[1], d.mean_abs))
    return f"{d.max_abs} ({d.mean_abs:.2f})"


def measure() -> int:
    """Print, for the package's corpus, how far other decodes lie from each expected decode."""
    from ..adapters import available_builtins
    from ..corpus.streams import stream_cases

    adapters = {n: a for n, a in available_builtins().items() if not isinstance(a, Exception)}
    worst: Worst = {}
    print("case | family | " + " | ".join(adapters) + " | fast-upsample | +fast-dct | djpeg -nosmooth -dct float | wrong transform")
    for case in stream_cases():
        if not case.has_expected:
            continue
        data, expected, config = case.data(), case.expected(), parse_codec(case.codec)
        info = inspect(data)
        cells = []
        for adapter in adapters.values():
            try:
                got = adapter.decode(adapter.parse(case.codec), data, case.chunk_shape)
                cells.append(str(difference(np.asarray(got), expected).max_abs))
            except (ValueError, TypeError):
                cells.append("rejects")
        sims = _simulated(data, str(info.stored_color_space), config.decoded_color_space, case.chunk_shape)
        if info.libjpeg_color_space != info.stored_color_space:
            sims = dict.fromkeys(sims)  # libjpeg would convert: these decodes say nothing about tolerance
        family = str(case.tolerance)
        for name, sim in sims.items():
            cells.append("n/a" if sim is None else _cell(difference(sim, expected), worst, (family, name), max, (0, 0.0)))
        wrong = wrong_transform(data, config.decoded_color_space, case.chunk_shape)
        key = (family, "wrong transform, least")
        cells.append("-" if wrong is None else _cell(difference(wrong, expected), worst, key, min, (999, 999.0)))
        print(f"{case.id} | {case.tolerance} | " + " | ".join(cells))
    print("\nper family: largest max (largest mean) of each simulated decoder; least of the wrong transforms")
    for (family, name), (mx, mean) in sorted(worst.items()):
        print(f"  {family:10s} {name:28s} {mx:4d} ({mean:.2f})   tolerance: {FAMILIES[family].max_abs} ({FAMILIES[family].mean_abs})")
    print("\nraw libraries on the cases a decoder must or may reject (RETURNS = no error without core's checks)")
    for case in stream_cases():
        if case.expect != "decode" and case.category != "reference":
            if case.id.endswith("forged-65535x65535"):
                print(f"{case.id}: imagecodecs not called (decodes 65535x65535 into 4.3 GB, backends.md 11.15)")
                names = [n for n in adapters if n != "imagecodecs"]
            else:
                names = list(adapters)
            print(f"{case.id} [{case.expect}]: " + "; ".join(f"{n} {_raw_library(n, case.data())}" for n in names))
    return 0
