"""Write and read the arrays of the store interop table (report/stores_table.py) with one Zarr stack.

Every stack that writes writes the same small arrays (:data:`ARRAYS`) to a directory store
each, the way its users would: zarr-python with a serializer codec (this project's ``jpeg``,
cft_zarr.jpeg, imagecodecs_jpeg), or zarrs with zarrs_jpeg (``write-store`` of its harness
binary: zarrs opens the array, writes its own zarr.json and the chunks). Every stack that
reads reads every store. A zarr-python reader reads only the codec name its package
registers; a store naming another codec is refused as such (``OtherCodec``).

    python -m zarr_jpeg_conformance.adapters.store_interop JOB.json   # the ops of JOB, results as JSON on stdout

runs a batch of ops in this process; the table uses it for imagecodecs_jpeg, whose Python
(>= 3.12) is another one (harnesses/python).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["ARRAYS", "PY_STACKS", "ArraySpec", "OtherCodec", "read", "run_op", "serializer_codec", "serializer_name", "source",
           "spec_codec", "write"]

_Q = 90


@dataclass(frozen=True)
class ArraySpec:
    """One array of the table: its shape and chunks, the spec's codec object, and its shard shape if sharded."""

    shape: tuple[int, ...]
    chunks: tuple[int, ...]
    codec: Mapping[str, Any]
    shards: tuple[int, ...] | None = None


def _jpeg(encoded: str, subsampling: list[list[int]] | None = None) -> dict[str, Any]:
    config: dict[str, Any] = {"quality": _Q, "encoded_color_space": encoded}
    if subsampling is not None:
        config["subsampling"] = subsampling
    return {"name": "jpeg", "configuration": config}


_420 = [[2, 2], [1, 1], [1, 1]]
_444 = [[1, 1], [1, 1], [1, 1]]
#: Chunk shapes not multiples of 8 (and arrays not multiples of the chunks: boundary chunks)
#: for the gray arrays; a sharded one; 4:2:0 and 4:4:4 YCbCr; rgb.
ARRAYS: dict[str, ArraySpec] = {
    "gray-2d": ArraySpec((44, 52), (20, 26), _jpeg("grayscale")),
    "gray-hw1": ArraySpec((32, 48, 1), (16, 24, 1), _jpeg("grayscale")),
    "ycbcr-420": ArraySpec((32, 48, 3), (16, 24, 3), _jpeg("ycbcr", _420)),
    "ycbcr-444": ArraySpec((32, 48, 3), (16, 24, 3), _jpeg("ycbcr", _444)),
    "rgb": ArraySpec((32, 48, 3), (16, 24, 3), _jpeg("rgb")),
    "sharded-420": ArraySpec((64, 64, 3), (16, 16, 3), _jpeg("ycbcr", _420), (32, 32, 3)),
}


class OtherCodec(ValueError):
    """The store names a codec that this stack's package does not register."""


def source(name: str) -> np.ndarray:
    """The array every writer writes for ``name``: smooth gradients and edges, deterministic."""
    shape = ARRAYS[name].shape
    y, x = np.mgrid[0:shape[0], 0:shape[1]].astype(np.float64)
    planes = [128 + 90 * np.sin(x / 7.0) * np.cos(y / 9.0), 40 + 3 * x + 2 * y, 255 - 4 * np.abs(x - y)]
    image = np.stack(planes[: shape[2] if len(shape) == 3 else 1], axis=-1)
    image = np.clip(np.round(image), 0, 255).astype(np.uint8)
    return image if len(shape) == 3 else image[..., 0]


def spec_codec(name: str, explicit_subsampling: bool = False) -> dict[str, Any]:
    """The spec's codec object of ``name``; with the default subsampling written out if asked (zarrs_jpeg wants it)."""
    codec = json.loads(json.dumps(ARRAYS[name].codec))
    config = codec["configuration"]
    if explicit_subsampling and "subsampling" not in config:
        config["subsampling"] = [[1, 1]] if config["encoded_color_space"] == "grayscale" else _444
    return codec


def serializer_name(meta: Mapping[str, Any]) -> str:
    """The name of the array-to-bytes codec a zarr.json uses (inside a shard if sharded)."""
    for codec in meta.get("codecs", []):
        if codec.get("name") == "sharding_indexed":
            return serializer_name(codec.get("configuration", {}))
        if codec.get("name") != "transpose":
            return str(codec.get("name"))
    return ""


def serializer_codec(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The array-to-bytes codec object of a zarr.json (inside a shard if sharded)."""
    for codec in meta.get("codecs", []):
        if codec.get("name") == "sharding_indexed":
            return serializer_codec(codec.get("configuration", {}))
        if codec.get("name") != "transpose":
            return dict(codec)
    return {}


# ----------------------------------------------------------------- the zarr-python stacks


@dataclass(frozen=True)
class PyStack:
    """zarr-python with one package's serializer: the names it reads, and how it writes the spec's codec object."""

    reads: tuple[str, ...]
    #: "module:function" mapping the spec's codec object to the codec object it writes (None: decode only).
    mapping: str | None


PY_STACKS: dict[str, PyStack] = {
    "zarr-python + jpeg": PyStack(("jpeg",), "zarr_jpeg_conformance.adapters.store_interop:_same"),
    "zarr-python + imagecodecs_jpeg": PyStack(("imagecodecs_jpeg",),
                                              "zarr_jpeg_conformance.adapters.imagecodecs_zarr:imagecodecs_jpeg_object"),
    "cft-zarr": PyStack(("cft_zarr.jpeg",), "zarr_jpeg_conformance.adapters.cft_zarr:to_cft_zarr"),
    "osml-imagery-io": PyStack(("https://awslabs.github.io/osml-imagery-io/codecs/jpeg",), None),
}


def _same(codec: Mapping[str, Any]) -> dict[str, Any]:
    return dict(codec)


def _mapping(stack: str) -> Any:
    import importlib

    target = PY_STACKS[stack].mapping
    if target is None:
        raise ValueError(f"{stack} decodes only: it writes no store")
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def _zarr_config() -> Any:
    import zarr

    from ..zarrcodecs.jpeg import REGISTRY_KEY

    return zarr.config.set({"codecs.jpeg": REGISTRY_KEY, "array.write_empty_chunks": True})


def write(stack: str, name: str, folder: Path) -> dict[str, Any]:
    """Write array ``name`` with zarr-python stack ``stack`` into ``folder``: the codec object it wrote."""
    import zarr
    from zarr.registry import get_codec_class

    codec = _mapping(stack)(spec_codec(name))
    spec = ARRAYS[name]
    with _zarr_config():
        serializer: Any = get_codec_class(codec["name"]).from_dict(codec)
        array = zarr.create_array(str(folder), shape=spec.shape, chunks=spec.chunks, shards=spec.shards, dtype="uint8",
                                  serializer=serializer, compressors=None, fill_value=0, zarr_format=3)
        array[...] = source(name)
    return codec


def read(stack: str, folder: Path) -> np.ndarray:
    """The whole array of the store in ``folder`` as zarr-python with ``stack``'s codec reads it."""
    import zarr

    meta = json.loads((folder / "zarr.json").read_text(encoding="utf-8"))
    name = serializer_name(meta)
    if name not in PY_STACKS[stack].reads:
        raise OtherCodec(f"the store names codec {name!r}; {stack} registers {', '.join(PY_STACKS[stack].reads)}")
    if stack == "osml-imagery-io":
        raise OtherCodec("osml-imagery-io reads its own codec objects only")  # no writer writes its name
    with _zarr_config():
        return np.asarray(zarr.open_array(str(folder), mode="r")[...])


def run_op(op: Mapping[str, Any]) -> dict[str, Any]:
    """One op of a batch: ``{"op": "write", "stack", "array", "folder"}`` or ``{"op": "read", "stack", "folder", "out"}``."""
    try:
        if op["op"] == "write":
            write(op["stack"], op["array"], Path(op["folder"]))
            meta = json.loads((Path(op["folder"]) / "zarr.json").read_text(encoding="utf-8"))
            return {"ok": True, "codec": serializer_codec(meta)}
        np.save(op["out"], read(op["stack"], Path(op["folder"])))
        return {"ok": True}
    except Exception as exc:  # noqa: BLE001 - every failure is a cell of the table, with its type and words
        return {"ok": False, "exception": type(exc).__name__, "message": str(exc)[:500],
                "refused": isinstance(exc, ValueError | TypeError) or type(exc).__name__ == "Jpeg8Error"}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    ops = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    print(json.dumps([run_op(op) for op in ops]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
