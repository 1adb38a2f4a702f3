"""The JPEG stream inside a chunk whose codec chain has bytes -> bytes codecs after ``jpeg``, undone within a cap.

zarr's codecs inflate a chunk whole, as far as it goes: a 1 MiB chunk behind ``gzip`` made
2 GiB. Here each codec is undone by what bounds its output: the compressors (gzip, zlib, bz2,
lzma) are inflated a piece at a time and stopped one byte past the cap; zstd, blosc and lz4
declare the size they make in their header, which is looked at before they run; checksums and
shuffles make no more bytes than they are given, so zarr's own codec undoes them. A codec
that is none of these cannot be bounded, and an array with one is not read
(:func:`unboundable`, at the metadata). A chunk that cannot be undone (a checksum that does not
match, a truncated or oversized stream) is a :class:`ChunkError` of that chunk alone.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

__all__ = ["BOUNDED", "ChunkError", "unboundable", "unwrap"]

#: Codecs that make no more bytes than they are given: zarr's own codec undoes them.
_SHRINKING = ("crc32c", "numcodecs.crc32", "numcodecs.crc32c", "numcodecs.adler32", "numcodecs.fletcher32",
              "numcodecs.jenkins_lookup3", "numcodecs.shuffle")
_INFLATED = {"gzip": 31, "numcodecs.gzip": 31, "numcodecs.zlib": 15}
_STREAMS: dict[str, Callable[[], Any]] = {"numcodecs.bz2": bz2.BZ2Decompressor,
                                          "numcodecs.lzma": lambda: lzma.LZMADecompressor(lzma.FORMAT_AUTO)}
_ZSTD_MAGIC = 0xFD2FB528


def _zstd_size(data: bytes) -> int | None:
    """The content size a zstd frame declares, None when it declares none (or is no frame)."""
    if len(data) < 6 or int.from_bytes(data[:4], "little") != _ZSTD_MAGIC:
        return None
    descriptor = data[4]
    single = (descriptor >> 5) & 1
    size_bytes = (0 if not single else 1, 2, 4, 8)[descriptor >> 6]
    at = 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3]
    if not size_bytes or len(data) < at + size_bytes:
        return None
    size = int.from_bytes(data[at:at + size_bytes], "little")
    return size + 256 if size_bytes == 2 else size


def _blosc_size(data: bytes) -> int | None:
    return int.from_bytes(data[4:8], "little") if len(data) >= 16 else None


def _lz4_size(data: bytes) -> int | None:
    return int.from_bytes(data[:4], "little") if len(data) >= 4 else None


#: Codecs whose header declares the size they make: that size is held to the cap before zarr's codec runs.
_DECLARED: dict[str, Callable[[bytes], int | None]] = {"zstd": _zstd_size, "numcodecs.zstd": _zstd_size,
                                                      "blosc": _blosc_size, "numcodecs.blosc": _blosc_size,
                                                      "numcodecs.lz4": _lz4_size}
#: Every bytes -> bytes codec check-store undoes after jpeg, within a cap.
BOUNDED = frozenset((*_SHRINKING, *_INFLATED, *_STREAMS, *_DECLARED))


class ChunkError(Exception):
    """A chunk whose codecs after jpeg cannot be undone: a corrupt chunk, or one past the cap. Names the codec."""


def unboundable(after: Sequence[Mapping[str, Any]]) -> str | None:
    """The first codec of ``after`` whose output check-store cannot bound, None when there is none."""
    return next((c["name"] for c in after if c["name"] not in BOUNDED), None)


def unwrap(after: Sequence[Mapping[str, Any]], data: bytes, limit: int) -> bytes:
    """What the codecs ``after`` jpeg made of a JPEG stream, undone, last codec first; ChunkError when a codec
    cannot undo it, or would make more than ``limit`` bytes."""
    for codec in reversed(after):
        name = codec["name"]
        if name in _INFLATED:
            data = _inflate(data, _INFLATED[name], limit, name)
        elif name in _STREAMS:
            data = _stream(_STREAMS[name], data, limit, name)
        else:
            if name in _DECLARED:
                size = _DECLARED[name](data)
                if size is None:
                    raise ChunkError(f"the {name} codec after jpeg: this chunk's header declares no size it inflates to, "
                                     "so it cannot be inflated within a cap: not inflated")
                if size > limit:
                    raise ChunkError(f"the {name} codec after jpeg: this chunk's header says it inflates to {size:,} bytes, "
                                     f"more than {limit:,} (--max-chunk-bytes): not inflated")
            data = _zarr_decode(codec, data)
    return data


@cache
def _spec() -> Any:
    """What zarr's bytes -> bytes codecs are given beside the bytes: they look at its buffer prototype alone."""
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype
    from zarr.core.dtype import get_data_type_from_json

    uint8 = get_data_type_from_json("uint8", zarr_format=3)
    return ArraySpec(shape=(1,), dtype=uint8, fill_value=uint8.cast_scalar(0), config=ArrayConfig.from_dict({}),
                     prototype=default_buffer_prototype())


def _zarr_decode(codec: Mapping[str, Any], data: bytes) -> bytes:
    from zarr.core.buffer import default_buffer_prototype
    from zarr.registry import get_codec_class

    bytes_codec: Any = get_codec_class(codec["name"]).from_dict(dict(codec))  # a BytesBytesCodec, by analyse()
    try:
        given = default_buffer_prototype().buffer.from_bytes(data)
        if hasattr(bytes_codec, "_decode_sync"):
            buf = bytes_codec._decode_sync(given, _spec())
        else:  # zarr's numcodecs.* wrappers decode only asynchronously: on zarr's own loop, as zarr runs them
            from zarr.core.sync import sync

            buf = sync(bytes_codec._decode_single(given, _spec()))
    except Exception as exc:  # noqa: BLE001 - whatever the codec raises is this chunk's, and named
        raise ChunkError(f"the {codec['name']} codec after jpeg cannot undo this chunk: {type(exc).__name__}: "
                         f"{str(exc)[:300]}") from None
    return bytes(buf.to_bytes())


def _past(name: str, limit: int) -> ChunkError:
    return ChunkError(f"the {name} codec after jpeg inflates this chunk past {limit:,} bytes (--max-chunk-bytes): "
                      "not inflated further")


def _inflate(data: bytes, wbits: int, limit: int, name: str) -> bytes:
    """zlib or gzip (every member of it, as ``gzip.decompress`` reads them), one byte past the cap at most."""
    out = bytearray()
    rest = data
    while True:
        inflater = zlib.decompressobj(wbits)
        try:
            out += inflater.decompress(rest, limit + 1 - len(out))
        except zlib.error as exc:
            raise ChunkError(f"the {name} codec after jpeg cannot inflate this chunk: {exc}") from None
        if len(out) > limit:
            raise _past(name, limit)
        if not inflater.eof:
            raise ChunkError(f"the {name} codec after jpeg: this chunk's stream ends before its end: a truncated chunk")
        rest = inflater.unused_data
        if not rest or wbits != 31:
            return bytes(out)


def _stream(make: Callable[[], Any], data: bytes, limit: int, name: str) -> bytes:
    """bz2 or lzma (every stream of it), one byte past the cap at most."""
    out = bytearray()
    inflater, rest = make(), data
    while True:
        try:
            out += inflater.decompress(rest, limit + 1 - len(out))
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise ChunkError(f"the {name} codec after jpeg cannot inflate this chunk: {exc}") from None
        rest = b""
        if len(out) > limit:
            raise _past(name, limit)
        if inflater.eof:
            rest = inflater.unused_data
            if not rest:
                return bytes(out)
            inflater = make()
        elif inflater.needs_input:
            raise ChunkError(f"the {name} codec after jpeg: this chunk's stream ends before its end: a truncated chunk")
