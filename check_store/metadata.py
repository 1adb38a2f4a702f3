"""The arrays under a URL, and what their ``zarr.json`` says each stored JPEG must be.

:func:`discover` walks a node (an array, or a group and everything under it) and returns
the ``zarr.json`` of every array; :func:`analyse` checks one array's metadata (the ``jpeg``
codec object against the schema and the parse rules, its place in the codec chain, the data
type and chunk shape it sees) and returns an :class:`ArrayPlan`: the small, picklable
description of the array that chunk tasks receive.

The shape the ``jpeg`` codec sees is worked out by zarr's own codecs (``resolve_metadata``
of every array -> array codec before it, and of ``sharding_indexed``), so ``transpose``,
``reshape`` and any other installed codec count as zarr would apply them. The ``jpeg`` codec
object itself is parsed by this project's parser, never by a codec class: a store whose
configuration is invalid still opens, and is reported.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

import numpy as np

from ..core.chunk import check_dimensions, image_shape
from ..core.config import DEFAULT_SUBSAMPLING, JpegConfig, parse_codec
from ..core.errors import ConfigError, Rejection
from ..corpus.registry import load_json
from .keys import leaves_store
from .limits import DEFAULT, Limits
from .records import Finding, cap, capped, error, finding
from .stores import StoreError, list_children, read_key
from .unwrap import BOUNDED, unboundable

__all__ = ["ArrayPlan", "Node", "ShardLayout", "analyse", "discover"]

JPEG = "jpeg"
SHARDING = "sharding_indexed"
MAX_UINT_64 = 2**64 - 1
#: Deepest nesting of a zarr.json read: real metadata nests a few levels; thousands exhaust
#: the recursion of every JSON walker after the parser (dask's tokenize, json.dumps).
MAX_DEPTH = 100


@dataclass(frozen=True)
class Node:
    """One array found under the URL: its path from the URL's node ('' for the node itself) and metadata."""

    path: str
    metadata: Mapping[str, Any]

    @property
    def zarr_json(self) -> str:
        return f"{self.path}/zarr.json" if self.path else "zarr.json"


@dataclass(frozen=True)
class ShardLayout:
    """How inner chunks sit in a shard (the Zarr v3 ``sharding_indexed`` codec)."""

    inner: tuple[int, ...]
    per_shard: tuple[int, ...]
    index_at_end: bool
    little_endian: bool
    crc32c: bool

    @property
    def count(self) -> int:
        return math.prod(self.per_shard)

    @property
    def index_bytes(self) -> int:
        return 16 * self.count + (4 if self.crc32c else 0)


@dataclass(frozen=True)
class ArrayPlan:
    """What every stored JPEG of one array must be, and how to find them."""

    path: str
    shape: tuple[int, ...]
    #: The chunk shape of the grid: the shard shape when the array is sharded.
    grid_chunk: tuple[int, ...]
    separator: str
    v2_keys: bool
    codec: Mapping[str, Any]
    #: The parsed configuration, None when it does not parse (chunks are then checked without it).
    config: JpegConfig | None
    #: (H, W, components) of each stored JPEG; None when the chunk shape fits no JPEG.
    image: tuple[int, int, int] | None
    shard: ShardLayout | None = None
    #: bytes -> bytes codecs after jpeg: chunks must then be read whole and unwrapped first.
    after: tuple[Mapping[str, Any], ...] = ()
    #: Metadata, as written, for the report.
    about: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def grid(self) -> tuple[int, ...]:
        return tuple(-(-s // c) for s, c in zip(self.shape, self.grid_chunk, strict=True))

    @property
    def grid_count(self) -> int:
        return math.prod(self.grid)

    @property
    def per_grid(self) -> int:
        """JPEG chunks per grid position: 1, or the inner chunks of a shard."""
        return self.shard.count if self.shard else 1

    @property
    def checkable(self) -> bool:
        return self.image is not None

    def coords(self, index: int) -> tuple[int, ...]:
        """Grid coordinates of the ``index``-th grid position in C order."""
        out = []
        for n in reversed(self.grid):
            index, r = divmod(index, n)
            out.append(r)
        return tuple(reversed(out))

    def key(self, coords: Sequence[int]) -> str:
        if self.v2_keys:
            return self.separator.join(map(str, coords)) if coords else "0"
        return self.separator.join(["c", *map(str, coords)])

    def stored_key(self, coords: Sequence[int]) -> str:
        """The key from the store's root: the array path, then the chunk key."""
        return f"{self.path}/{self.key(coords)}" if self.path else self.key(coords)

    def inner_inside(self, coords: Sequence[int]) -> int:
        """How many inner chunks of the shard at ``coords`` start inside the array (worked out, not counted)."""
        assert self.shard is not None
        count = 1
        for c, p, s, n in zip(coords, self.shard.per_shard, self.shard.inner, self.shape, strict=True):
            count *= max(0, min(p, -(-n // s) - c * p))
        return count

    def inner_place(self, coords: Sequence[int], flat: int) -> tuple[tuple[int, ...], bool, bool]:
        """(inner coords, inside the array, at the array's edge) of the ``flat``-th inner chunk (index order) of a shard."""
        assert self.shard is not None
        inner = []
        for p in reversed(self.shard.per_shard):
            flat, r = divmod(flat, p)
            inner.append(r)
        inner.reverse()
        origin = [(c * p + i) * s for c, p, i, s in zip(coords, self.shard.per_shard, inner, self.shard.inner, strict=True)]
        inside = all(o < n for o, n in zip(origin, self.shape, strict=True))
        edge = any(o + s > n for o, s, n in zip(origin, self.shard.inner, self.shape, strict=True))
        return tuple(inner), inside, edge

    def index_of(self, key: str) -> int | None:
        """The grid position (C order) of a chunk key relative to the array, None for a key that is no chunk of the grid."""
        parts = key.split(self.separator)
        if not self.v2_keys:
            if parts[0] != "c":
                return None
            parts = parts[1:]
        elif not self.grid:
            return 0 if key == "0" else None
        if len(parts) != len(self.grid) or not all(p.isascii() and p.isdigit() for p in parts):
            return None
        index = 0
        for part, n in zip(parts, self.grid, strict=True):
            c = int(part)
            if c >= n:
                return None
            index = index * n + c
        return index

    def at_edge(self, coords: Sequence[int]) -> bool:
        """Whether the chunk at ``coords`` is a boundary chunk (padded by Zarr to the full chunk shape)."""
        return any((c + 1) * s > n for c, s, n in zip(coords, self.grid_chunk, self.shape, strict=True))

    def stored_keys(self, indices: Sequence[int]) -> tuple[list[str], list[bool]]:
        """``stored_key`` and ``at_edge`` of the grid positions ``indices`` (sorted), all at once.

        What a batch of chunk tasks costs per chunk beyond its read: the coordinates of
        every position are worked out together (numpy), not one divmod loop per position.
        """
        grid = self.grid
        if not indices or not grid or self.grid_count >= 1 << 62:
            coords = [self.coords(i) for i in indices]
            return [self.stored_key(c) for c in coords], [self.at_edge(c) for c in coords]
        flat = np.arange(indices.start, indices.stop) if isinstance(indices, range) and indices.step == 1 else np.asarray(indices, np.int64)
        where = np.unravel_index(flat, grid)
        edge = np.zeros(len(indices), dtype=bool)
        for axis, (n, s, size) in enumerate(zip(grid, self.grid_chunk, self.shape, strict=True)):
            if n * s > size:  # the last chunk along this axis runs past the array
                edge |= where[axis] == n - 1
        prefix = (f"{self.path}/" if self.path else "") + ("" if self.v2_keys else "c" + self.separator)
        sep = self.separator
        keys = [prefix + sep.join(c) for c in zip(*(map(str, axis.tolist()) for axis in where), strict=True)]
        return keys, edge.tolist()


# ------------------------------------------------------------------ discovery


def _load(store: Any, key: str, where: str, limits: Limits) -> Mapping[str, Any] | None:
    try:
        raw = read_key(store, key, limits.metadata)
    except StoreError as exc:
        raise StoreError(f"{where}: cannot read {cap(key, 200)}: {exc}") from exc
    if raw is None:
        return None
    if len(raw) > limits.metadata:
        raise StoreError(f"{where}: {cap(key, 200)} is longer than {limits.metadata:,} bytes (--max-metadata-bytes): not read "
                         "further, and not checked")
    try:
        meta = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StoreError(f"{where}: {key} is not valid JSON ({cap(str(exc), 300)}): the store's metadata is corrupt") from exc
    except RecursionError as exc:
        raise StoreError(f"{where}: {key} nests its JSON deeper than it can be read: the store's metadata is corrupt") from exc
    if _depth(meta) > MAX_DEPTH:
        raise StoreError(f"{where}: {key} nests its JSON more than {MAX_DEPTH} levels deep: the store's metadata is corrupt")
    if not isinstance(meta, dict):
        raise StoreError(f"{where}: {key} holds a JSON {type(meta).__name__}, not an object: the store's metadata is corrupt")
    if meta.get("zarr_format") != 3:
        raise StoreError(f"{where}: {key} has zarr_format {cap(repr(meta.get('zarr_format')), 100)}: the jpeg codec is a Zarr v3 codec, "
                         "and check-store reads Zarr v3 metadata only")
    if meta.get("node_type") not in ("array", "group"):
        raise StoreError(f"{where}: {key} has node_type {cap(repr(meta.get('node_type')), 100)} (neither 'array' nor 'group'): corrupt metadata")
    return meta


def _depth(value: Any) -> int:
    """How deep a JSON value nests (without recursion: the value may nest deeper than the stack)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                return deepest
            todo += [(v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)]
    return deepest


def discover(store: Any, where: str, limits: Limits = DEFAULT) -> list[Node]:
    """Every array at or under the URL's node; StoreError when there is no Zarr v3 node there."""
    root = _load(store, "zarr.json", where, limits)
    if root is None:
        v2 = [k for k in (".zarray", ".zgroup") if read_key(store, k, limits.metadata) is not None]
        if v2:
            raise StoreError(f"{where}: a Zarr v2 node ({v2[0]}): the jpeg codec is a Zarr v3 codec")
        raise StoreError(f"{where}: no zarr.json here: not a Zarr v3 array or group (or the URL is wrong)")
    if root["node_type"] == "array":
        return [Node("", root)]
    consolidated = root.get("consolidated_metadata")
    if isinstance(consolidated, Mapping) and isinstance(consolidated.get("metadata"), Mapping):
        found = consolidated["metadata"]
        return [Node(path, meta) for path, meta in sorted(found.items())
                if isinstance(meta, Mapping) and meta.get("node_type") == "array"]
    return _walk(store, where, limits)


def _walk(store: Any, where: str, limits: Limits) -> list[Node]:
    """Every array under the root, by listing (a loop, not recursion: a hierarchy may nest deeper than the stack)."""
    arrays: list[Node] = []
    todo = [""]
    while todo:
        prefix = todo.pop()
        names = list_children(store, prefix, limits.metadata)
        if names is None:
            raise StoreError(f"{where}: a group without consolidated metadata, in a store that cannot list its children: "
                             "give the URL of an array, or consolidate the metadata")
        groups = []
        for name in names:
            if name == "zarr.json":
                continue
            path = f"{prefix}/{name}" if prefix else name
            meta = _load(store, f"{path}/zarr.json", where, limits)
            if meta is None:
                continue
            if meta["node_type"] == "array":
                arrays.append(Node(path, meta))
            else:
                groups.append(path)
        todo += groups
    return sorted(arrays, key=lambda n: n.path.split("/"))  # name by name, each group's arrays under its name


def uses_jpeg(metadata: Mapping[str, Any]) -> bool:
    """Whether a codec chain holds ``jpeg``, at its top level or inside a sharding codec."""
    codecs = metadata.get("codecs")
    if not isinstance(codecs, list):
        return False
    for codec in codecs:
        if isinstance(codec, Mapping) and codec.get("name") == JPEG:
            return True
        if isinstance(codec, Mapping) and codec.get("name") == SHARDING:
            inner = (codec.get("configuration") or {}).get("codecs")
            if isinstance(inner, list) and uses_jpeg({"codecs": inner}):
                return True
    return False


# ------------------------------------------------------------------ analysis


@cache
def _schema() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(load_json("schema", "jpeg.schema.json"))


def _kind(name: str) -> str | None:
    """'aa', 'ab' or 'bb' for a codec zarr knows; None for one it does not."""
    if name == JPEG:
        return "ab"
    from zarr.abc.codec import ArrayArrayCodec, ArrayBytesCodec, BytesBytesCodec
    from zarr.registry import get_codec_class

    try:
        cls = get_codec_class(name)
    except (KeyError, ValueError):  # zarr 3.1 raises KeyError; 3.4 UnknownCodecError, a ValueError
        return None
    for base, kind in ((ArrayArrayCodec, "aa"), (ArrayBytesCodec, "ab"), (BytesBytesCodec, "bb")):
        if issubclass(cls, base):
            return kind
    return None


class _Unsure(Exception):
    """The metadata cannot be followed far enough to know what the chunks must be."""


def _chain(codecs: object, where: str) -> tuple[list[Mapping[str, Any]], Mapping[str, Any], list[Mapping[str, Any]], list[Finding]]:
    """(array -> array codecs, the array -> bytes codec, bytes -> bytes codecs) of a chain, with findings about its order."""
    if not isinstance(codecs, list) or not all(isinstance(c, Mapping) and isinstance(c.get("name"), str) for c in codecs):
        raise _Unsure(f"{where}: 'codecs' is not a list of codec objects with a name")
    kinds = []
    for codec in codecs:
        kind = _kind(codec["name"])
        if kind is None:
            raise _Unsure(f"{where}: codec {codec['name']!r} is not known to zarr here (install the package that provides it), "
                          "so the chunk shape the jpeg codec sees cannot be worked out")
        kinds.append(kind)
    findings = []
    ab = [i for i, k in enumerate(kinds) if k == "ab"]
    if len(ab) != 1:
        raise _Unsure(f"{where}: the chain has {len(ab)} array -> bytes codecs ({[codecs[i]['name'] for i in ab]}); Zarr v3 needs exactly one")
    i = ab[0]
    misplaced = [codecs[j]["name"] for j, k in enumerate(kinds) if (k == "bb") != (j > i)]
    if misplaced:
        findings.append(finding("JPEG-GEN-01", f"{where}: the codec chain {[c['name'] for c in codecs]} puts {misplaced} on the wrong side "
                                f"of the array -> bytes codec {codecs[i]['name']!r}: array -> array codecs come before it, "
                                "bytes -> bytes codecs after it"))
    before = [c for j, c in enumerate(codecs) if j < i and kinds[j] == "aa"]
    after = [c for j, c in enumerate(codecs) if j > i and kinds[j] == "bb"]
    return before, codecs[i], after, findings


def chunk_spec(shape: Sequence[int], dtype: Any, fill: Any) -> Any:
    from zarr.core.array_spec import ArrayConfig, ArraySpec
    from zarr.core.buffer import default_buffer_prototype

    return ArraySpec(shape=tuple(shape), dtype=dtype, fill_value=fill, config=ArrayConfig.from_dict({}),
                     prototype=default_buffer_prototype())


def _resolve(spec: Any, codecs: Sequence[Mapping[str, Any]], where: str) -> Any:
    from zarr.registry import get_codec_class

    for codec in codecs:
        try:
            spec = get_codec_class(codec["name"]).from_dict(dict(codec)).resolve_metadata(spec)
        except Exception as exc:
            raise _Unsure(f"{where}: codec {codec['name']!r} refuses its configuration or the chunk: {type(exc).__name__}: {exc}") from exc
    return spec


def _shard_layout(codec: Mapping[str, Any], shard_shape: Sequence[int], where: str) -> ShardLayout:
    cfg = codec.get("configuration") or {}
    inner = cfg.get("chunk_shape")
    if not (isinstance(inner, list) and len(inner) == len(shard_shape) and all(isinstance(n, int) and n > 0 for n in inner)):
        raise _Unsure(f"{where}: sharding_indexed chunk_shape {inner!r} does not fit the shard shape {list(shard_shape)}")
    if any(s % n for s, n in zip(shard_shape, inner, strict=True)):
        raise _Unsure(f"{where}: the shard shape {list(shard_shape)} is not a multiple of the inner chunk shape {inner}")
    index = cfg.get("index_codecs", [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}])
    names = [c.get("name") for c in index] if isinstance(index, list) else None
    if names not in (["bytes"], ["bytes", "crc32c"]):
        raise _Unsure(f"{where}: shard index codecs {names} are not [bytes] or [bytes, crc32c], which check-store reads")
    endian = (index[0].get("configuration") or {}).get("endian", "little")
    location = cfg.get("index_location", "end")
    if location not in ("start", "end") or endian not in ("little", "big"):
        raise _Unsure(f"{where}: shard index_location {location!r} / endian {endian!r} not understood")
    return ShardLayout(tuple(inner), tuple(s // n for s, n in zip(shard_shape, inner, strict=True)), location == "end",
                       endian == "little", names[-1] == "crc32c")


def _object(value: Any) -> Mapping[str, Any]:
    """A member that must be a JSON object: itself, or no members (whatever else a store wrote there)."""
    return value if isinstance(value, Mapping) else {}


def _grid(meta: Mapping[str, Any], where: str) -> tuple[tuple[int, ...], tuple[int, ...], str, bool]:
    shape = meta.get("shape")
    grid = _object(meta.get("chunk_grid"))
    chunks = _object(grid.get("configuration")).get("chunk_shape")
    if grid.get("name") != "regular":
        raise _Unsure(f"{where}: chunk grid {cap(repr(grid.get('name')), 100)}: check-store reads the regular chunk grid of Zarr v3")
    if not (isinstance(shape, list) and isinstance(chunks, list) and len(shape) == len(chunks)
            and all(type(n) is int and n >= 0 for n in shape) and all(type(n) is int and n > 0 for n in chunks)):
        # Zarr v3: shape is integers >= 0, chunk_shape integers >= 1 (true is no integer here).
        raise StoreError(f"{where}: shape {cap(repr(shape), 200)} and chunk_shape {cap(repr(chunks), 200)} do not describe "
                         "a regular grid (integers, shape >= 0, chunk_shape >= 1, as many of each): the store's metadata is corrupt")
    encoding = _object(meta.get("chunk_key_encoding") or {"name": "default"})
    name = encoding.get("name")
    separator = _object(encoding.get("configuration")).get("separator", "/" if name == "default" else ".")
    if name not in ("default", "v2") or separator not in ("/", "."):
        raise _Unsure(f"{where}: chunk_key_encoding {cap(repr(encoding), 200)} is not one check-store reads")
    return tuple(shape), tuple(chunks), separator, name == "v2"


def _config_findings(codec: Mapping[str, Any], where: str) -> tuple[JpegConfig | None, list[Finding]]:
    """The parsed configuration and what is wrong with the codec object, with requirement IDs."""
    findings: list[Finding] = []
    schema_errors = sorted(_schema().iter_errors(codec), key=lambda e: list(e.absolute_path))
    schema_note = ""
    if schema_errors:
        first = schema_errors[0]
        schema_note = f"; schema/jpeg.schema.json: {first.message} at /{'/'.join(map(str, first.absolute_path))}"
    try:
        config = parse_codec(codec)
    except ConfigError as exc:
        findings.append(finding(exc.requirement, f"{where}: the jpeg codec object {cap(json.dumps(codec), 400)} is invalid: "
                                f"{cap(exc.reason, 400)}{cap(schema_note, 400)}"))
        if exc.requirement != "JPEG-X-01":
            return None, findings
        # Unknown members: a reader SHOULD reject them, so the store is not portable, but what
        # the known members say can still be checked.
        cfg = {k: v for k, v in (codec.get("configuration") or {}).items() if k in
               ("quality", "encoded_color_space", "decoded_color_space", "subsampling")}
        try:
            config = parse_codec({"name": JPEG, "configuration": cfg})
        except ConfigError as again:
            findings.append(finding(again.requirement, f"{where}: {again.reason}"))
            return None, findings
    cfg = codec.get("configuration") or {}
    floats = [k for k in ("quality",) if isinstance(cfg.get(k), float)]
    if isinstance(cfg.get("subsampling"), list) and any(isinstance(f, float) for e in cfg["subsampling"] if isinstance(e, list) for f in e):
        floats.append("subsampling")
    if floats:
        findings.append(finding("JPEG-X-02", f"{where}: {', '.join(floats)} written as JSON numbers with a fraction part "
                                f"({json.dumps({k: cfg[k] for k in floats})}): readers MAY reject them; write integers"))
    if "subsampling" in cfg and config.encoded_color_space in DEFAULT_SUBSAMPLING:
        findings.append(finding("JPEG-SUB-06", f"{where}: 'subsampling' is written for encoded_color_space "
                                f"{config.encoded_color_space!r}, where it SHOULD be omitted"))
    return config, findings


def analyse(node: Node) -> tuple[ArrayPlan | None, list[Finding]]:
    """The plan of one array that uses ``jpeg``, and the findings of its metadata.

    The plan is None when the chunks cannot be located at all (an unknown codec, an
    irregular grid); then one finding says why.
    """
    where = node.zarr_json
    meta = node.metadata
    outside = leaves_store(node.path) if node.path else None
    if outside is not None:
        return None, [error(f"the hierarchy's metadata names an array at {outside}: that is outside the store (or no place "
                            "in it), and was not read")]
    try:
        return _analyse(node, meta, where)
    except _Unsure as exc:
        return None, [error(str(exc))]


def _analyse(node: Node, meta: Mapping[str, Any], where: str) -> tuple[ArrayPlan | None, list[Finding]]:
    from zarr.core.dtype import get_data_type_from_json

    shape, chunks, separator, v2_keys = _grid(meta, where)
    before, ab, after, findings = _chain(meta.get("codecs"), where)
    shard: ShardLayout | None = None
    try:
        dtype = get_data_type_from_json(meta.get("data_type"), zarr_format=3)
        fill = dtype.from_json_scalar(meta.get("fill_value"), zarr_format=3)
    except Exception as exc:
        raise _Unsure(f"{where}: data_type {meta.get('data_type')!r} / fill_value {meta.get('fill_value')!r}: {exc}") from exc
    spec = _resolve(chunk_spec(chunks, dtype, fill), before, where)
    if ab["name"] == SHARDING:
        shard = _shard_layout(ab, spec.shape, where)
        before, ab, after, inner_findings = _chain((ab.get("configuration") or {}).get("codecs"), f"{where} (inside sharding_indexed)")
        findings += inner_findings
        if ab["name"] == SHARDING:
            raise _Unsure(f"{where}: nested sharding: check-store reads one level of sharding_indexed")
        spec = _resolve(chunk_spec(shard.inner, spec.dtype, spec.fill_value), before, where)
    if ab["name"] != JPEG:
        raise _Unsure(f"{where}: the array -> bytes codec is {ab['name']!r}, not jpeg")
    blocked = unboundable(after)
    if blocked is not None:
        raise _Unsure(f"{where}: codec {blocked!r} after jpeg: check-store cannot bound what it makes of a chunk (it undoes "
                      f"{', '.join(sorted(BOUNDED))}), so the chunks are not read")
    config, config_findings = _config_findings(ab, where)
    findings += config_findings
    native = spec.dtype.to_native_dtype()
    if native != "uint8":
        findings.append(finding("JPEG-DT-01", f"{where}: the jpeg codec receives {native} chunks (data_type "
                                f"{meta.get('data_type')!r}); only uint8 is supported"))
    image = _image(spec.shape, config, where, findings)
    about = {
        "shape": list(shape), "chunk_shape": list(chunks), "data_type": capped(meta.get("data_type")),
        "codecs": capped(meta.get("codecs")), "jpeg": capped(dict(ab)), "jpeg_chunk_shape": list(spec.shape),
        "dimension_names": capped(meta.get("dimension_names")),
        "optional_features": _optional(config),
    }
    plan = ArrayPlan(node.path, shape, chunks, separator, v2_keys, dict(ab), config, image, shard, tuple(after), about)
    return plan, findings


def _image(shape: Sequence[int], config: JpegConfig | None, where: str, findings: list[Finding]) -> tuple[int, int, int] | None:
    try:
        height, width, components = image_shape(shape)
        check_dimensions(height, width)
    except Rejection as exc:
        findings.append(finding(exc.requirement, f"{where}: the jpeg codec receives chunks of shape {tuple(shape)}: {exc.reason}"))
        return None
    if config is None:
        return height, width, components
    if components != config.components:
        findings.append(finding("JPEG-ECS-02", f"{where}: the jpeg codec receives chunks of shape {tuple(shape)} "
                                f"({components} component(s)); encoded_color_space {config.encoded_color_space!r} has "
                                f"{config.components}"))
    mcu_h, mcu_w = config.mcu
    if height % mcu_h or width % mcu_w:
        findings.append(finding("JPEG-MCU-02", f"{where}: each JPEG image is {height}x{width} (HxW), not a multiple of the "
                                f"{mcu_h}x{mcu_w} MCU: the right and bottom blocks are padded"))
    return height, width, components


def _optional(config: JpegConfig | None) -> list[str]:
    """The optional features a reader needs (not every implementation supports them)."""
    if config is None:
        return []
    out = []
    if config.encoded_color_space == "rgb":
        out.append("JPEG-ECS-09: encoded_color_space rgb")
    if config.decoded_color_space == "ycbcr":
        out.append("JPEG-DCS-05: decoded_color_space ycbcr")
    if not config.is_required_scheme:
        out.append(f"JPEG-X-04: sampling factors {[list(f) for f in config.subsampling]}")
    return out


def shard_index(raw: bytes, layout: ShardLayout) -> tuple[np.ndarray | None, str | None]:
    """Rows of (place in index order, offset, length) of the inner chunks the index holds (absent ones left
    out), or an error message. Work and memory follow the entries present, not the shard's declared count."""
    if len(raw) != layout.index_bytes:
        return None, f"shard index is {len(raw)} bytes, expected {layout.index_bytes}"
    body = raw[: 16 * layout.count]
    if layout.crc32c:
        import google_crc32c

        stored = int.from_bytes(raw[-4:], "little")
        actual = google_crc32c.value(body)
        if stored != actual:
            return None, f"shard index checksum is {stored:#010x}, the index hashes to {actual:#010x}: a corrupt index"
    pairs = np.frombuffer(body, dtype="<u8" if layout.little_endian else ">u8").reshape(-1, 2)
    present = np.flatnonzero((pairs[:, 0] != MAX_UINT_64) | (pairs[:, 1] != MAX_UINT_64))
    return np.column_stack([present.astype(np.uint64), pairs[present]]), None
