"""Builder of ``fixtures/stores``: real Zarr v3 arrays written with this project's ``jpeg`` codec.

Each store is ``fixtures/stores/<name>.zarr`` (``zarr.json`` and chunk files, as zarr lays
them out on disk), the source data it was written from as ``<name>.npy``, and a sidecar
``<name>.json`` saying what it is, which requirements it rests on and how far a correct
decode may be from the source. ``suites/test_stores.py`` reads them.

Two kinds of store:

* *written* stores: the metadata below is the case; the array is written by zarr-python
  through :class:`zarrcodecs.jpeg.JpegCodec` on imagecodecs, so the bytes are reproducible;
* *neuroglancer* stores: the chunk bytes are exactly what neuroglancer ``precomputed`` writers
  produce for a ``[x, y, z, channel]`` chunk (cloud-volume's encoding, reproduced with
  simplejpeg as cloud-volume's ``encode_jpeg`` calls it; TensorStore's
  ``neuroglancer_precomputed`` driver), stored unchanged under the chunk key of a
  ``[z, y, x, channel]`` zarr array with codecs ``[reshape, jpeg]`` (JPEG-INT-01, JPEG-INT-02).
  They are regenerated only where simplejpeg / tensorstore are installed; otherwise the
  committed files are kept as they are.

Tolerances are fixed here, with the values measured when they were set, not recomputed by
the build: a build that no longer meets them fails instead of silently moving them.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import numpy as np

from ..core.markers import inspect
from .images import make_image, max_abs, psnr

__all__ = ["NEUROGLANCER", "STORES", "StoreCase", "Tolerance", "all_cases", "build", "measure", "open_store", "store_entries"]

#: The library every written store is encoded with, so rebuilt bytes are identical
#: (build() needs it installed; reading the stores works with any backend).
BACKEND = "imagecodecs"
FOLDER = ("fixtures", "stores")

_420 = [[2, 2], [1, 1], [1, 1]]
_444 = [[1, 1], [1, 1], [1, 1]]


def _jpeg(quality: int, encoded: str, subsampling: list[list[int]] | None = None) -> dict[str, Any]:
    cfg: dict[str, Any] = {"quality": quality, "encoded_color_space": encoded}
    if subsampling is not None:
        cfg["subsampling"] = subsampling
    return {"name": "jpeg", "configuration": cfg}


#: zyx(c) -> (z*y, x, c): neuroglancer's JPEG image of a chunk (JPEG-INT-02).
RESHAPE_ZYXC = {"name": "reshape", "configuration": {"shape": [[0, 1], [2], [3]]}}


@dataclass(frozen=True)
class Tolerance:
    """How far a correct decode may be from the source, and why."""

    min_psnr: float
    max_abs: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"min_psnr": self.min_psnr, "max_abs": self.max_abs, "reason": self.reason}


@dataclass(frozen=True)
class StoreCase:
    """One store: array metadata (the case) and the deterministic source it is written from."""

    name: str
    description: str
    requirements: tuple[str, ...]
    level: str
    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    codecs: tuple[dict[str, Any], ...]
    source: Callable[[], np.ndarray]
    tolerance: Tolerance

    @property
    def id(self) -> str:
        return f"store.{self.name}"

    def metadata(self) -> dict[str, Any]:
        """The array's ``zarr.json``."""
        return {
            "zarr_format": 3,
            "node_type": "array",
            "shape": list(self.shape),
            "data_type": "uint8",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(self.chunks)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "fill_value": 0,
            "codecs": list(self.codecs),
            "attributes": {},
        }


def _gray(h: int, w: int) -> Callable[[], np.ndarray]:
    return lambda: make_image("natural", h, w, channels=1)[:, :, 0]


def _image(kind: str, h: int, w: int, channels: int = 3) -> Callable[[], np.ndarray]:
    return lambda: make_image(kind, h, w, channels=channels)


def _zyxc(z: int, y: int, x: int, c: int) -> Callable[[], np.ndarray]:
    # Consecutive row bands of one picture, so each chunk's (z*y, x) JPEG image is a natural
    # image and a wrong factorization or axis order scrambles it visibly.
    return lambda: make_image("natural", z * y, x, channels=c).reshape(z, y, x, c)


def _chw(h: int, w: int) -> Callable[[], np.ndarray]:
    return lambda: np.ascontiguousarray(make_image("natural", h, w).transpose(2, 0, 1))


#: Below the worst PSNR measured, in dB, and over the worst max |error|, as a factor. The three
#: backends decode every store identically (one libjpeg-turbo lineage, accurate DCT, fancy
#: upsampling); other libjpeg builds may round, upsample or map quality to tables differently
#: (backends.md 4.2, JPEG-Q-03), which moves results by well under a dB and a few levels. A
#: swapped axis, channel or color transform costs 10 dB or more and a max error near 255.
MARGIN_DB = 1.0
MAX_ABS_FACTOR = 1.25


def _measured(psnr_db: float, worst: int, what: str) -> Tolerance:
    """A tolerance from the worst case measured over imagecodecs, Pillow and PyTurboJPEG.

    ``psnr_db`` and ``worst`` are the lowest PSNR and highest max |error| against the source,
    over reading the committed store and over writing then reading it afresh, as printed by
    ``python -m zarr_jpeg_conformance.corpus.stores --measure`` (2026-11-30: imagecodecs 2026.3.6 /
    libjpeg-turbo 3.1.3, Pillow 13.0.0 / 3.2.0, PyTurboJPEG 1.8.3 / 2.1.5).
    """
    return Tolerance(
        math.floor((psnr_db - MARGIN_DB) * 2) / 2,
        math.ceil(worst * MAX_ABS_FACTOR),
        f"{what}; measured {psnr_db} dB / max {worst} (all backends); "
        f"floor {MARGIN_DB} dB lower and max_abs x{MAX_ABS_FACTOR} for other libjpeg builds",
    )


STORES: tuple[StoreCase, ...] = (
    StoreCase(
        "gray-2d", "2D grayscale (H, W) array, 2x2 chunks of 32x48",
        ("JPEG-SHP-02", "JPEG-ECS-03", "JPEG-DEC-03"), "MUST",
        (64, 96), (32, 48), (_jpeg(90, "grayscale"),), _gray(64, 96),
        _measured(37.81, 14, "q90 natural image"),
    ),
    StoreCase(
        "gray-hw1", "grayscale (H, W, 1) array: a size-1 channel axis",
        ("JPEG-SHP-03", "JPEG-ECS-03", "JPEG-DEC-03"), "MUST",
        (64, 96, 1), (32, 48, 1), (_jpeg(90, "grayscale"),), _image("natural", 64, 96, 1),
        _measured(37.81, 14, "q90 natural image"),
    ),
    StoreCase(
        "ycbcr-420", "(H, W, 3) RGB stored as YCbCr 4:2:0",
        ("JPEG-SHP-04", "JPEG-ECS-04", "JPEG-SUB-08"), "MUST",
        (64, 96, 3), (32, 48, 3), (_jpeg(90, "ycbcr", _420),), _image("natural", 64, 96),
        _measured(35.56, 27, "q90 natural image, 4:2:0"),
    ),
    StoreCase(
        "ycbcr-444", "(H, W, 3) RGB stored as YCbCr 4:4:4",
        ("JPEG-SHP-04", "JPEG-ECS-04", "JPEG-SUB-08"), "MUST",
        (64, 96, 3), (32, 48, 3), (_jpeg(90, "ycbcr", _444),), _image("natural", 64, 96),
        _measured(36.19, 19, "q90 natural image, 4:4:4"),
    ),
    StoreCase(
        "rgb", "(H, W, 3) independent channels stored as rgb (no color transform)",
        ("JPEG-ECS-05", "JPEG-ECS-06", "JPEG-ECS-09"), "MAY",
        (64, 96, 3), (32, 48, 3), (_jpeg(90, "rgb"),), _image("fluorescence", 64, 96),
        _measured(49.52, 9, "q90 sparse fluorescence blobs"),
    ),
    StoreCase(
        "transpose-chw", "(3, H, W) channel-first array with codecs [transpose [1, 2, 0], jpeg]",
        ("JPEG-SHP-07", "JPEG-ECS-04"), "MUST",
        (3, 64, 96), (3, 32, 48), ({"name": "transpose", "configuration": {"order": [1, 2, 0]}}, _jpeg(90, "ycbcr", _420)),
        _chw(64, 96),
        _measured(35.56, 27, "q90 natural image, 4:2:0"),
    ),
    StoreCase(
        "reshape-zyxc", "[z, y, x, c] array, codecs [reshape to (z*y, x, c), jpeg]: neuroglancer layout",
        ("JPEG-SHP-07", "JPEG-INT-02"), "MUST",
        (4, 32, 48, 3), (2, 32, 48, 3), (RESHAPE_ZYXC, _jpeg(90, "ycbcr", _420)), _zyxc(4, 32, 48, 3),
        _measured(36.41, 27, "q90 natural image, 4:2:0"),
    ),
    StoreCase(
        "sharded", "sharding_indexed shard of 64x96x3 holding 2x2 inner jpeg chunks",
        ("JPEG-SHP-04", "JPEG-DEC-03"), "MUST",
        (64, 96, 3), (64, 96, 3),
        ({
            "name": "sharding_indexed",
            "configuration": {
                "chunk_shape": [32, 48, 3],
                "codecs": [_jpeg(90, "ycbcr", _420)],
                "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                "index_location": "end",
            },
        },),
        _image("natural", 64, 96),
        _measured(35.56, 27, "q90 natural image, 4:2:0"),
    ),
    StoreCase(
        "boundary", "50x70x3 array in 32x48x3 chunks: boundary chunks padded with the fill value",
        ("JPEG-DEC-03", "JPEG-MCU-01"), "MUST",
        (50, 70, 3), (32, 48, 3), (_jpeg(90, "ycbcr", _420),), _image("natural", 50, 70),
        _measured(35.43, 24, "q90 natural image, 4:2:0, boundary chunks padded with zeros"),
    ),
)

# --------------------------------------------------------------------- neuroglancer


def _cloudvolume_jpeg(volume_xyzc: np.ndarray, quality: int) -> bytes:
    """A precomputed chunk as cloud-volume's ``encode_jpeg`` writes it (its simplejpeg calls).

    cloud-volume flattens an (x, y, z, c) chunk to a (y*z, x, c) image through its ``as2d``
    (``arr.T``, channels moved last, reshape) and encodes 1 channel as simplejpeg GRAY and 3 as
    simplejpeg RGB with its default 4:4:4; its quality default is 85.
    """
    import simplejpeg

    channels = volume_xyzc.shape[3]
    zyxc = np.moveaxis(volume_xyzc.T, 0, -1)  # (c, z, y, x) -> (z, y, x, c)
    image = np.ascontiguousarray(zyxc.reshape(zyxc.shape[0] * zyxc.shape[1], zyxc.shape[2], channels))
    if channels == 1:
        return bytes(simplejpeg.encode_jpeg(image, quality=quality, colorspace="GRAY", colorsubsampling="GRAY"))
    return bytes(simplejpeg.encode_jpeg(image, quality=quality, colorspace="RGB"))


def _tensorstore_jpeg(volume_xyzc: np.ndarray, quality: int) -> bytes:
    """The chunk TensorStore's ``neuroglancer_precomputed`` driver writes for the whole volume."""
    import tensorstore as ts

    x, y, z, c = volume_xyzc.shape
    store = ts.open(
        {
            "driver": "neuroglancer_precomputed",
            "kvstore": {"driver": "memory"},
            "multiscale_metadata": {"type": "image", "data_type": "uint8", "num_channels": c},
            "scale_metadata": {
                "size": [x, y, z], "chunk_size": [x, y, z], "resolution": [1, 1, 1],
                "encoding": "jpeg", "jpeg_quality": quality,
            },
            "create": True,
        }
    ).result()
    store[...] = volume_xyzc
    keys = [k for k in store.kvstore.list().result() if k != b"info"]
    if len(keys) != 1:
        raise RuntimeError(f"tensorstore wrote {keys}, expected one chunk")
    return bytes(store.kvstore.read(keys[0]).result().value)


@dataclass(frozen=True)
class NeuroglancerCase:
    """A neuroglancer precomputed chunk (written by another tool) read as a zarr array."""

    store: StoreCase
    tool: str
    package: str
    encode: Callable[[np.ndarray, int], bytes]
    quality: int


def _ng(name: str, tool: str, package: str, encode: Callable[[np.ndarray, int], bytes], quality: int,
        channels: int, subsampling: list[list[int]] | None, tolerance: Tolerance, what: str) -> NeuroglancerCase:
    encoded = "grayscale" if channels == 1 else "ycbcr"
    z, y, x = 4, 32, 48
    case = StoreCase(
        name, f"{tool} {what} chunk of a [x=48, y=32, z=4] volume, read through [reshape, jpeg]",
        ("JPEG-INT-01", "JPEG-INT-02"), "MUST",
        (z, y, x, channels), (z, y, x, channels), (RESHAPE_ZYXC, _jpeg(quality, encoded, subsampling)),
        _zyxc(z, y, x, channels), tolerance,
    )
    return NeuroglancerCase(case, tool, package, encode, quality)


NEUROGLANCER: tuple[NeuroglancerCase, ...] = (
    _ng("ng-cloudvolume-gray", "cloud-volume", "simplejpeg", _cloudvolume_jpeg, 85, 1, None,
        _measured(37.01, 24, "q85 natural image, simplejpeg GRAY"), "grayscale"),
    _ng("ng-cloudvolume-rgb", "cloud-volume", "simplejpeg", _cloudvolume_jpeg, 85, 3, _444,
        _measured(35.68, 25, "q85 natural image, simplejpeg RGB (YCbCr 4:4:4)"), "3-channel"),
    _ng("ng-tensorstore-gray", "TensorStore neuroglancer_precomputed", "tensorstore", _tensorstore_jpeg, 75, 1, None,
        _measured(34.97, 33, "q75 natural image, TensorStore grayscale"), "grayscale"),
    _ng("ng-tensorstore-rgb", "TensorStore neuroglancer_precomputed", "tensorstore", _tensorstore_jpeg, 75, 3, _420,
        _measured(33.42, 36, "q75 natural image, TensorStore YCbCr 4:2:0"), "3-channel"),
)

# --------------------------------------------------------------------- reading


def store_entries(files: Iterator[tuple[str, bytes]]) -> dict[str, Any]:
    """A MemoryStore's dict from (key, bytes) pairs."""
    from zarr.core.buffer import default_buffer_prototype

    prototype = default_buffer_prototype()
    return {key: prototype.buffer.from_bytes(data) for key, data in files}


def _walk(node: Any, prefix: str = "") -> Iterator[tuple[str, bytes]]:
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        key = f"{prefix}{child.name}"
        if child.is_dir():
            yield from _walk(child, key + "/")
        else:
            yield key, child.read_bytes()


def open_store(node: Any) -> dict[str, Any]:
    """Load a store folder (a Path or an importlib.resources Traversable) into a MemoryStore dict.

    Reading through Traversable works from a source tree, an editable install or a wheel alike.
    """
    return store_entries(_walk(node))


# --------------------------------------------------------------------- building


def _measure(entries: Mapping[str, Any], source: np.ndarray) -> tuple[float, int]:
    import zarr
    from zarr.storage import MemoryStore

    decoded = np.asarray(zarr.open_array(MemoryStore(dict(entries)), mode="r", zarr_format=3)[...])
    return psnr(source, decoded), max_abs(source, decoded)


def _written(case: StoreCase) -> dict[str, Any]:
    import zarr
    from zarr.storage import MemoryStore

    entries = store_entries(iter([("zarr.json", json.dumps(case.metadata(), indent=2).encode())]))
    array = zarr.open_array(MemoryStore(entries), mode="r+", zarr_format=3)
    array[...] = case.source()
    return entries


def _neuroglancer(ng: NeuroglancerCase) -> dict[str, Any]:
    source = ng.store.source()
    chunk = ng.encode(np.ascontiguousarray(source.transpose(2, 1, 0, 3)), ng.quality)  # (z,y,x,c) -> (x,y,z,c)
    key = "c/" + "/".join("0" for _ in ng.store.shape)
    return store_entries(iter([("zarr.json", json.dumps(ng.store.metadata(), indent=2).encode()), (key, chunk)]))


def _sidecar(case: StoreCase, measured: tuple[float, int], producer: Mapping[str, str]) -> dict[str, Any]:
    return {
        "id": case.id,
        "description": case.description,
        "requirements": list(case.requirements),
        "level": case.level,
        "store": f"{case.name}.zarr",
        "expected": f"{case.name}.npy",
        "tolerance": case.tolerance.to_json(),
        "measured": {"psnr": round(measured[0], 2), "max_abs": measured[1]},
        "producer": dict(producer),
    }


def _write(folder: Path, case: StoreCase, entries: Mapping[str, Any], producer: Mapping[str, str]) -> None:
    source = case.source()
    measured = _measure(entries, source)
    tol = case.tolerance
    if not (measured[0] >= tol.min_psnr and measured[1] <= tol.max_abs):
        raise RuntimeError(f"{case.id}: decodes at {measured[0]:.2f} dB / max {measured[1]}, outside its tolerance {tol}")
    target = folder / f"{case.name}.zarr"
    if target.exists():
        shutil.rmtree(target)
    for key, buf in sorted(entries.items()):
        path = target.joinpath(*key.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(buf.to_bytes())
    with (folder / f"{case.name}.npy").open("wb") as f:
        np.save(f, source, allow_pickle=False)
    text = json.dumps(_sidecar(case, measured, producer), indent=2) + "\n"
    (folder / f"{case.name}.json").write_text(text, encoding="utf-8")


def _package_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def build(root: Path, *, log: Callable[[str], None] = print) -> None:
    """Write every store under ``root/fixtures/stores`` (deterministically, for one backend)."""
    import zarr

    from ..zarrcodecs.jpeg import BACKEND_CONFIG_KEY, REGISTRY_KEY, backend_adapter, register

    register()
    folder = root.joinpath(*FOLDER)
    folder.mkdir(parents=True, exist_ok=True)
    names = {case.name for case in all_cases()}
    for entry in sorted(folder.iterdir()):
        # Files of stores no longer defined here would otherwise linger in the corpus.
        if entry.name.split(".")[0] not in names:
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
            log(f"stores: removed {entry.name}")
    libs = ", ".join(f"{k} {v}" for k, v in backend_adapter(BACKEND).versions().items())
    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY, BACKEND_CONFIG_KEY: BACKEND}):
        for case in STORES:
            producer = {"writer": f"zarr {zarr.__version__} + zarr_jpeg_conformance.zarrcodecs.jpeg.JpegCodec", "backend": libs}
            _write(folder, case, _written(case), producer)
            log(f"stores: wrote {case.name}")
        for ng in NEUROGLANCER:
            installed = _package_version(ng.package)
            if installed is None:
                log(f"stores: kept {ng.store.name} as committed ({ng.package} is not installed)")
                continue
            how = "cloud-volume's encode_jpeg, reproduced" if ng.tool == "cloud-volume" else "driver output"
            entries = _neuroglancer(ng)
            (chunk,) = [buf.to_bytes() for key, buf in entries.items() if key.startswith("c/")]
            info = inspect(chunk)
            producer = {
                "writer": f"{ng.tool} ({how})",
                "library": f"{ng.package} {installed}",
                "quality": str(ng.quality),
                # The image the tool chose for the [x, y, z] chunk: JPEG-INT-02 needs (y*z) x x.
                "stream": f"{info.height}x{info.width} (HxW), sampling "
                          f"{[[c.h, c.v] for c in info.components]}, JFIF {info.jfif}, APP14 {info.adobe_transform}",
            }
            _write(folder, ng.store, entries, producer)
            log(f"stores: wrote {ng.store.name}")
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    log(f"stores: {total / 1024:.0f} KiB in {folder}")


def all_cases() -> tuple[StoreCase, ...]:
    """Every store case, written and neuroglancer."""
    return STORES + tuple(ng.store for ng in NEUROGLANCER)


def measure(backends: tuple[str, ...] = ("imagecodecs", "pillow", "turbojpeg")) -> list[str]:
    """PSNR / max |error| of every store against its source, per backend: the numbers behind
    the tolerances. Reads the stores as this build makes them (neuroglancer ones need their
    extras), and writes then reads each afresh with every backend."""
    import zarr

    from ..zarrcodecs.jpeg import BACKEND_CONFIG_KEY, REGISTRY_KEY, register

    register()
    lines = []
    cases: list[tuple[StoreCase, Callable[[], dict[str, Any]]]] = [(c, partial(_written, c)) for c in STORES]
    cases += [(ng.store, partial(_neuroglancer, ng)) for ng in NEUROGLANCER if _package_version(ng.package)]
    for case, make in cases:
        with zarr.config.set({"codecs.jpeg": REGISTRY_KEY, BACKEND_CONFIG_KEY: BACKEND}):
            entries = make()
        source = case.source()
        cells = []
        for name in backends:
            with zarr.config.set({"codecs.jpeg": REGISTRY_KEY, BACKEND_CONFIG_KEY: name}):
                read = _measure(entries, source)
                fresh = _written(case)
                again = _measure(fresh, source)
            cells.append(f"{name} read {read[0]:.2f}/{read[1]} write-read {again[0]:.2f}/{again[1]}")
        lines.append(f"{case.name}: " + " | ".join(cells))
    return lines


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m zarr_jpeg_conformance.corpus.stores", description=__doc__.split("\n")[0])
    parser.add_argument("--measure", action="store_true", help="print PSNR / max |error| per store and backend")
    parser.add_argument("root", nargs="?", type=Path, help="build the stores under ROOT/fixtures/stores")
    args = parser.parse_args(argv)
    if args.measure:
        print("\n".join(measure()))
    if args.root is not None:
        build(args.root)
    if not args.measure and args.root is None:
        parser.error("give --measure and/or ROOT")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
