"""Stores made for proving and measuring check-store: clean, large, and with every fault injected.

* :func:`fault_store`: a small hierarchy whose chunks carry one fault each (wrong sampling
  factors, wrong colour markers, a size off by one MCU and by less, a truncated stream,
  trailing data, progressive, 12-bit, a 16-bit quantization table, CMYK, a chunk from
  another array, a cropped boundary chunk, bytes that are no JPEG, a shard with a bad inner
  chunk), with the key and the requirement each must be reported under; :func:`clean_store`
  is the same hierarchy with no fault.
* :func:`big_store`: a hierarchy of two arrays of 256x256 chunks, one grayscale and one YCbCr
  4:2:0, at least ``chunks`` chunks in all, for benchmarks and the report's screenshot. Its
  chunks are a pool of distinct tiles encoded once and written under every key, so that a
  20 000-chunk store is written in seconds.

Chunk files are written directly (a ``zarr.json`` and one file per key, as zarr lays them
out), encoded by this project's codec, so every clean chunk is what a conforming writer stores.
"""

from __future__ import annotations

import io
import json
import shutil
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..backends import load_backend
from ..core.config import JpegConfig, parse_codec
from ..corpus.images import make_image

__all__ = ["Fault", "big_store", "clean_store", "fault_store", "short_shard_store", "write_array"]

_420 = [[2, 2], [1, 1], [1, 1]]
#: Chunk height and width of the fault store.
S = 64
_444 = [[1, 1], [1, 1], [1, 1]]


def _codec(encoded: str, subsampling: list[list[int]] | None = None, quality: int = 90) -> dict[str, Any]:
    cfg: dict[str, Any] = {"quality": quality, "encoded_color_space": encoded}
    if subsampling is not None:
        cfg["subsampling"] = subsampling
    return {"name": "jpeg", "configuration": cfg}


def _metadata(shape: tuple[int, ...], chunks: tuple[int, ...], codecs: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": codecs, "attributes": {},
    }


def _group(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "zarr.json").write_text(json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {}}, indent=2))


def write_array(folder: Path, shape: tuple[int, ...], chunks: tuple[int, ...], codecs: list[dict[str, Any]],
                files: Mapping[str, bytes]) -> None:
    """An array folder: its ``zarr.json`` and a file per chunk key."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "zarr.json").write_text(json.dumps(_metadata(shape, chunks, codecs), indent=2))
    for key, data in files.items():
        path = folder.joinpath(*key.split("/"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _backend() -> Any:
    # imagecodecs first: the same encoder the fixture stores are written with.
    from ..backends import BackendUnavailable

    for name in ("imagecodecs", "turbojpeg", "pillow"):
        try:
            return load_backend(name)
        except BackendUnavailable:
            continue
    raise RuntimeError("no JPEG backend loads")


def _encode(codec: Mapping[str, Any], image: np.ndarray) -> bytes:
    config: JpegConfig = parse_codec(codec)
    return _backend().encode(config, image)


def _tile(h: int, w: int, c: int, seed: int) -> np.ndarray:
    # The "natural" image is one photograph whatever the seed: the seed picks where the tile starts in it,
    # so that tiles of different seeds differ (and a benchmark's chunks are not one chunk many times).
    image = make_image("natural", h, w, channels=c)
    return np.roll(image, (seed * 37 % h, seed * 53 % w), axis=(0, 1))


# ------------------------------------------------------------------ faults


@dataclass(frozen=True)
class Fault:
    """One injected fault: where it is and the requirement it must be reported under."""

    name: str
    array: str
    key: str
    requirement: str
    inner: tuple[int, ...] | None = None
    #: The other requirements the same chunk necessarily breaks (a 12-bit frame is both no baseline
    #: frame and no 8-bit one): with them, the exact set its record must cite.
    also: tuple[str, ...] = ()


def _with_app14(stream: bytes, transform: int) -> bytes:
    """The stream with an APP14 Adobe segment of ``transform`` inserted after SOI."""
    payload = b"Adobe" + struct.pack(">HHHB", 100, 0, 0, transform)
    return stream[:2] + b"\xff\xee" + struct.pack(">H", len(payload) + 2) + payload + stream[2:]


def _pillow(image: np.ndarray, **save: Any) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    mode = "L" if image.shape[-1] == 1 else "RGB"
    picture = Image.fromarray(image[..., 0] if mode == "L" else image, mode)
    if save.pop("cmyk", False):
        picture = picture.convert("CMYK")
    picture.save(out, format="JPEG", **save)
    return out.getvalue()


def _sixteen_bit_tables(stream: bytes, table: int = 1) -> bytes:
    """The stream with quantization table ``table`` stored with 16-bit entries (Pq=1), same values, 8-bit samples."""
    out, i = bytearray(stream[:2]), 2
    while stream[i + 1] != 0xDA:  # up to the first SOS
        length = int.from_bytes(stream[i + 2 : i + 4], "big")
        segment = stream[i : i + 2 + length]
        if stream[i + 1] == 0xDB:
            payload, j, body = segment[4:], 0, bytearray()
            while j < len(payload):
                size = 1 + 64 * ((payload[j] >> 4) + 1)
                entry = payload[j : j + size]
                if entry[0] == table:  # an 8-bit table: widened
                    entry = bytes([0x10 | table]) + b"".join(v.to_bytes(2, "big") for v in entry[1:])
                body += entry
                j += size
            segment = segment[:2] + (len(body) + 2).to_bytes(2, "big") + body
        out += segment
        i += 2 + length
    return bytes(out + stream[i:])


def _twelve_bit(image: np.ndarray) -> bytes:
    import imagecodecs

    samples = image.astype(np.uint16) * 16
    return bytes(imagecodecs.jpeg8_encode(samples[..., 0] if image.shape[-1] == 1 else samples, level=90, bitspersample=12))


def _arrays(faulty: bool) -> tuple[dict[str, tuple[tuple[int, ...], tuple[int, ...], list[dict[str, Any]], dict[str, bytes]]], list[Fault]]:
    color_codec, gray_codec, rgb_codec = _codec("ycbcr", _420), _codec("grayscale"), _codec("rgb")
    arrays: dict[str, tuple[tuple[int, ...], tuple[int, ...], list[dict[str, Any]], dict[str, bytes]]] = {}

    # color: 256x352x3 in 64x64x3 chunks, a 4x6 grid whose last column is a boundary chunk (32 wide).
    # Chunks of 64x64 are larger than HEAD, so the header-only path reads them as it reads real data.
    color = {f"c/{r}/{c}/0": _encode(color_codec, _tile(S, S, 3, 10 * r + c)) for r in range(4) for c in range(6)}
    gray = {f"c/{r}/{c}": _encode(gray_codec, _tile(S, S, 1, 50 + 10 * r + c)) for r in range(2) for c in range(2)}
    rgb = {f"c/{r}/{c}/0": _encode(rgb_codec, _tile(S, S, 3, 90 + 10 * r + c)) for r in range(2) for c in range(2)}
    other = {"c/0/0": _encode(gray_codec, _tile(16, 16, 1, 7))}
    faults: list[Fault] = []
    if faulty:
        image = _tile(S, S, 3, 3)
        whole = color["c/1/0/0"]
        cases: list[tuple[str, str, str, bytes | None]] = [
            ("factors 4:4:4 in a 4:2:0 array", "c/0/0/0", "JPEG-SUB-02", _encode(_codec("ycbcr", _444), image)),
            ("APP14 transform 0 (rgb) in a ycbcr stream", "c/0/1/0", "JPEG-ECS-04", _with_app14(color["c/0/1/0"], 0)),
            ("16 rows short: one 16-row MCU", "c/0/2/0", "JPEG-DIM-01", _encode(color_codec, image[:S - 16])),
            ("1 row short: less than one MCU", "c/0/3/0", "JPEG-DIM-01", _encode(color_codec, image[:S - 1])),
            ("truncated in the entropy-coded data", "c/1/0/0", "JPEG-FMT-01", whole[: len(whole) * 3 // 4]),
            ("trailing data after EOI", "c/1/1/0", "JPEG-FMT-01", color["c/1/1/0"] + b"\x00junk\x00"),
            ("progressive", "c/1/2/0", "JPEG-GEN-01", _pillow(image, quality=90, subsampling=2, progressive=True)),
            ("12-bit samples", "c/1/3/0", "JPEG-ENC-04", _twelve_bit(image)),
            # Only the chroma table: a check that asks for every table to be 16-bit, or only the first, misses it.
            ("16-bit chroma quantization table, 8-bit samples", "c/2/2/0", "JPEG-ENC-04", _sixteen_bit_tables(color["c/2/2/0"])),
            ("CMYK", "c/1/4/0", "JPEG-ECS-02", _pillow(image, quality=90, cmyk=True)),
            ("boundary chunk cropped to the array's edge", "c/1/5/0", "JPEG-DIM-01", _encode(color_codec, image[:, : S // 2])),
            ("a chunk from another array", "c/2/0/0", "JPEG-ECS-02", other["c/0/0"]),
            ("not a JPEG stream", "c/2/1/0", "JPEG-FMT-01", b"\x89PNG\r\n\x1a\n" + bytes(100)),
            ("missing: fill value", "c/3/5/0", "", None),
        ]
        also = {"12-bit samples": ("JPEG-GEN-01",), "a chunk from another array": ("JPEG-DIM-01",)}
        for name, key, requirement, data in cases:
            if data is None:
                del color[key]
            else:
                color[key] = data
                faults.append(Fault(name, "/color", key, requirement, also=also.get(name, ())))
        faults.append(Fault("a chunk from another array: size", "/color", "c/2/0/0", "JPEG-DIM-01", also=("JPEG-ECS-02",)))
        rgb["c/0/0/0"] = _encode(_codec("ycbcr", _444), _tile(S, S, 3, 5))
        # written as ycbcr streams are, with a JFIF marker, which rgb streams should not carry
        faults.append(Fault("an rgb array chunk without APP14 transform 0", "/rgb", "c/0/0/0", "JPEG-ECS-06", also=("JPEG-X-05",)))
        gray["c/0/1"] = _twelve_bit(_tile(S, S, 1, 6))
        faults.append(Fault("12-bit grayscale (SOF1)", "/gray", "c/0/1", "JPEG-GEN-01", also=("JPEG-ENC-04",)))
        del gray["c/1/1"]
    arrays["color"] = ((4 * S, 5 * S + S // 2, 3), (S, S, 3), [color_codec], color)
    arrays["gray"] = ((2 * S, 2 * S), (S, S), [gray_codec], gray)
    arrays["rgb"] = ((2 * S, 2 * S, 3), (S, S, 3), [rgb_codec], rgb)
    arrays["other"] = ((16, 16), (16, 16), [gray_codec], other)
    inner = [_encode(color_codec, _tile(S, S, 3, 200 + i)) for i in range(4)]
    if faulty:
        inner[3] += b"\xff\xd8trailing"
        faults.append(Fault("trailing data in a shard's inner chunk", "/sharded", "c/0/0/0", "JPEG-FMT-01", (1, 1, 0)))
        inner[1] = b""  # absent: marked missing in the index below
    arrays["sharded"] = ((2 * S, 2 * S, 3), (2 * S, 2 * S, 3), [_sharding(color_codec)], {"c/0/0/0": _shard(inner)})
    return arrays, faults


def _sharding(codec: dict[str, Any]) -> dict[str, Any]:
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": [S, S, 3], "codecs": [codec],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}


def _shard(chunks: list[bytes]) -> bytes:
    """A shard of 2x2x1 inner chunks in C order; an empty one is absent from the index."""
    import google_crc32c

    body, index, offset = b"", [], 0
    for data in chunks:
        if data:
            index += [offset, len(data)]
            body += data
            offset += len(data)
        else:
            index += [2**64 - 1, 2**64 - 1]
    raw = np.array(index, dtype="<u8").tobytes()
    return body + raw + google_crc32c.value(raw).to_bytes(4, "little")


def _write(root: Path, faulty: bool) -> list[Fault]:
    if root.exists():
        shutil.rmtree(root)
    _group(root)
    arrays, faults = _arrays(faulty)
    for name, (shape, chunks, codecs, files) in arrays.items():
        write_array(root / name, shape, chunks, codecs, files)
    return faults


def fault_store(root: Path) -> list[Fault]:
    """Write the hierarchy with every fault under ``root``; return the faults it holds."""
    return _write(root, True)


def clean_store(root: Path) -> None:
    """Write the same hierarchy with no fault: every chunk conforms."""
    _write(root, False)


def short_shard_store(root: Path, beyond: int) -> Fault:
    """An array of one shard whose index puts its last inner chunk ``beyond`` bytes past the end of
    the shard (a shard cut short, or a wrong index): a chunk the checker cannot read whole."""
    import google_crc32c

    if root.exists():
        shutil.rmtree(root)
    codec = _codec("ycbcr", _420)
    shard = _shard([_encode(codec, _tile(S, S, 3, 300 + i)) for i in range(4)])
    body, raw = shard[: -4 * 16 - 4], np.frombuffer(shard[-4 * 16 - 4 : -4], dtype="<u8").copy()
    raw[-1] += len(shard) - len(body) + beyond  # the last chunk's length, reaching over the index and beyond
    index = raw.tobytes()
    write_array(root, (2 * S, 2 * S, 3), (2 * S, 2 * S, 3), [_sharding(codec)],
                {"c/0/0/0": body + index + google_crc32c.value(index).to_bytes(4, "little")})
    return Fault("inner chunk past the end of its shard", "", "c/0/0/0", "", (1, 1, 0))


# ------------------------------------------------------------------ big


def big_store(root: Path, chunks: int = 20_000, pool: int = 24, quality: int = 85) -> dict[str, Any]:
    """A group of a grayscale and a YCbCr 4:2:0 array of 256x256 chunks, ``chunks`` or more in all."""
    if root.exists():
        shutil.rmtree(root)
    _group(root)
    per_array = -(-chunks // 2)
    rows = int(per_array**0.5)
    cols = -(-per_array // rows)
    made: dict[str, Any] = {}
    for name, channels, codec in (("gray", 1, _codec("grayscale", quality=quality)),
                                  ("color", 3, _codec("ycbcr", _420, quality=quality))):
        tiles = [_encode(codec, _tile(256, 256, channels, 1000 + i)) for i in range(pool)]
        shape: tuple[int, ...] = (rows * 256, cols * 256) + ((3,) if channels == 3 else ())
        chunk: tuple[int, ...] = (256, 256) + ((3,) if channels == 3 else ())
        suffix = "/0" if channels == 3 else ""
        folder = root / name
        write_array(folder, shape, chunk, [codec], {})
        for r in range(rows):
            for c in range(cols):
                (folder / "c" / str(r) / (f"{c}/0" if suffix else str(c))).parent.mkdir(parents=True, exist_ok=True)
                (folder / "c" / str(r) / (f"{c}/0" if suffix else str(c))).write_bytes(tiles[(r * 7 + c * 3) % pool])
        made[name] = {"shape": shape, "chunks": chunk, "count": rows * cols,
                      "bytes": sum(len(tiles[(r * 7 + c * 3) % pool]) for r in range(rows) for c in range(cols))}
    return made
