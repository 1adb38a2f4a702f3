"""The encoders that write the corpus's streams, and the provenance each records in a sidecar.

Every encoder returns ``(stream bytes, encoder record)``; the record names the library, its
version and the options, so a sidecar says how to make its stream again.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..core import scans

Built = tuple[bytes, dict[str, Any]]

#: The name byte edits record; the committed sidecars carry it, so it outlives the module move.
EDITOR = "zarr_jpeg_conformance.generate_fixtures"


def imagecodecs_version() -> str:
    import imagecodecs

    return f"{imagecodecs.__version__} ({imagecodecs.jpeg8_version()})"


def pillow_version() -> str:
    import PIL
    from PIL import features

    return f"{PIL.__version__} (libjpeg-turbo {features.version_feature('libjpeg_turbo')})"


def cjpeg_version() -> str:
    found = shutil.which("cjpeg")
    if not found:
        return "not installed"
    done = subprocess.run([found, "-version"], capture_output=True, text=True, check=False)
    return (done.stderr or done.stdout).strip()


def _jsonable(options: Mapping[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}


def ic(image: np.ndarray, **options: Any) -> Built:
    """imagecodecs' jpeg8_encode (libjpeg-turbo, accurate DCT, standard Huffman tables)."""
    import imagecodecs

    data = imagecodecs.jpeg8_encode(np.ascontiguousarray(image), **options)
    return bytes(data), {"name": "imagecodecs.jpeg8_encode", "version": imagecodecs_version(), "options": _jsonable(options)}


def pil(image: np.ndarray, mode: str, convert: str | None = None, **options: Any) -> Built:
    """Pillow's JPEG plugin (its bundled libjpeg-turbo)."""
    from PIL import Image

    im = Image.fromarray(np.ascontiguousarray(image), mode)
    if convert:
        im = im.convert(convert)
    buf = io.BytesIO()
    im.save(buf, "JPEG", **options)
    recorded = {"mode": mode, **({"convert": convert} if convert else {}), **options}
    return buf.getvalue(), {"name": "PIL.Image.save", "version": pillow_version(), "options": recorded}


def cjpeg(image: np.ndarray, *args: str, scans_script: str | None = None) -> Built:
    """Debian's cjpeg (libjpeg-turbo-progs) on a binary PPM/PGM of ``image``."""
    exe = shutil.which("cjpeg")
    if exe is None:
        raise RuntimeError("cjpeg is not installed (Debian: apt-get install libjpeg-turbo-progs)")
    h, w = image.shape[:2]
    gray = image.ndim == 2
    header = f"{'P5' if gray else 'P6'}\n{w} {h}\n255\n".encode()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / ("in.pgm" if gray else "in.ppm")
        src.write_bytes(header + np.ascontiguousarray(image).tobytes())
        argv = list(args)
        if scans_script is not None:
            (Path(tmp) / "scans.txt").write_text(scans_script)
            argv += ["-scans", str(Path(tmp) / "scans.txt")]
        data = subprocess.run([exe, *argv, str(src)], capture_output=True, check=True).stdout
    options: dict[str, Any] = {"args": list(args)}
    if scans_script is not None:
        options["scans"] = scans_script
    return data, {"name": "cjpeg", "version": cjpeg_version(), "options": options}


def planar(ycc: np.ndarray, factors: tuple[tuple[int, int], ...], quality: int) -> Built:
    """core.scans: one non-interleaved scan per component, from imagecodecs grayscale streams."""
    luma, chroma = scans.quant_tables(quality)
    gray = {"level": quality, "colorspace": "GRAY", "outcolorspace": "GRAY"}
    data = scans.encode_planar(
        ycc,
        factors=factors,
        component_ids=(1, 2, 3),
        adobe_transform=None,
        jfif=True,
        tables=[luma, chroma, chroma],
        encode_gray=lambda plane, _table: ic(plane, **gray)[0],
    )
    options = {"factors": [list(f) for f in factors], "component_ids": [1, 2, 3], "jfif": True,
               "gray_encoder": {"name": "imagecodecs.jpeg8_encode", "options": gray}}
    version = f"zarr-jpeg-conformance {__version__}, imagecodecs {imagecodecs_version()}"
    return data, {"name": "zarr_jpeg_conformance.core.scans.encode_planar", "version": version, "options": options}


def edited(base: bytes, how: str) -> dict[str, Any]:
    """The record of a byte edit: which edit, applied to which stream (by its sha256)."""
    return {"name": EDITOR, "version": __version__,
            "options": {"edit": how, "base_sha256": hashlib.sha256(base).hexdigest()}}
