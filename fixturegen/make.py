"""Making cases from recipes and writing them: stream, sidecar, expected decode; the write command.

The expected decode is :func:`corpus.streams.reference_decode` of the stream; a colour case is
refused when a decode with the wrong colour transform would pass its tolerance.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..core.config import parse_codec
from ..core.markers import inspect
from ..corpus.streams import CATEGORIES, reference_decode
from ..judging.decode_tolerances import family_for, judge_decode, outside
from .cases import all_recipes
from .encoders import imagecodecs_version
from .independent import second_decode
from .manifest import MANIFEST, corpus_files, versions, write_manifest
from .recipe import Builder, CorpusError, Recipe

KEY_ORDER = (
    "id", "description", "category", "requirements", "level", "codec", "chunk_shape", "expect", "decode_if_parsed",
    "tolerance", "source", "encoder", "reference_decoder", "second_decoder", "comment",
)  # fmt: skip


@dataclass(frozen=True)
class Made:
    """A built case: its stream, the encoder's record, and (unless it must be rejected) its expected decode."""

    recipe: Recipe
    data: bytes
    encoder: dict[str, Any]
    expected: np.ndarray | None
    tolerance: str | None
    reference_decoder: dict[str, Any] | None
    #: The independent decode (fixturegen.independent), if there is one.
    second: np.ndarray | None = None
    second_decoder: dict[str, Any] | None = None

    def sidecar(self) -> dict[str, Any]:
        r = self.recipe
        doc: dict[str, Any] = {
            "id": r.id,
            "description": r.description,
            "category": r.category,
            "requirements": list(r.requirements),
            "level": r.level,
            "codec": r.codec,
            "chunk_shape": list(r.chunk_shape),
            "expect": r.expect,
            "decode_if_parsed": r.decode_if_parsed,
            "tolerance": self.tolerance,
            "source": r.source,
            "encoder": self.encoder,
            "reference_decoder": self.reference_decoder,
            "second_decoder": self.second_decoder,
            "comment": r.comment,
        }
        return {k: doc[k] for k in KEY_ORDER if doc[k] is not None}


def wrong_transform(data: bytes, decoded_color_space: str, chunk_shape: tuple[int, ...]) -> np.ndarray | None:
    """The decode a decoder with the wrong colour rule returns: transform skipped, or applied to RGB."""
    import imagecodecs

    stored = inspect(data).stored_color_space
    if stored == "ycbcr" and decoded_color_space == "rgb":
        space, out = "YCbCr", "YCbCr"  # conversion skipped
    elif stored in ("rgb", "ycbcr"):
        space, out = "YCbCr", "RGB"  # an inverse YCbCr transform applied where none belongs
    else:
        return None
    return np.asarray(imagecodecs.jpeg8_decode(data, colorspace=space, outcolorspace=out)).reshape(chunk_shape)


def bites(made_id: str, data: bytes, decoded: str, shape: tuple[int, ...], references: Sequence[np.ndarray], family: str) -> None:
    """Raise CorpusError when a wrong-colour-transform decode would pass the case's tolerance."""
    wrong = wrong_transform(data, decoded, shape)
    if wrong is not None and judge_decode(wrong, references, family)[0]:
        raise CorpusError(
            f"{made_id}: a wrong-colour-transform decode passes the {family!r} tolerance "
            f"({outside(wrong, references)} outside the expected decodes); pick another image for it"
        )


def make(recipe: Recipe, builder: Builder) -> Made:
    data, encoder = recipe.build(builder)
    info = inspect(data)
    if recipe.structure is not None:
        complaint = recipe.structure(info)
        if complaint:
            raise CorpusError(f"{recipe.id}: the built stream's {complaint}")
    if recipe.expect == "reject":
        return Made(recipe, data, encoder, None, None, None)
    config = parse_codec(recipe.codec)
    expected = reference_decode(data, config, recipe.chunk_shape)
    family = family_for(info)
    second, record = second_decode(data, recipe.codec, config, recipe.chunk_shape, expected)
    references = (expected,) if second is None else (expected, second)
    bites(recipe.id, data, config.decoded_color_space, recipe.chunk_shape, references, family)
    decoder = {
        "name": "zarr_jpeg_conformance.corpus.streams.reference_decode",
        "version": f"imagecodecs {imagecodecs_version()}",
        "options": {"stored_color_space": info.stored_color_space, "decoded_color_space": config.decoded_color_space},
    }
    return Made(recipe, data, encoder, expected, family, decoder, second, record)


def _sidecar_text(doc: dict[str, Any]) -> str:
    """One member per line, each value on one line, as the configuration corpus is written."""
    members = (f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in doc.items())
    return "{\n" + ",\n".join(members) + "\n}\n"


def write(made: Made, root: Path) -> None:
    jpg, sidecar, *npy = made.recipe.paths(root)
    jpg.parent.mkdir(parents=True, exist_ok=True)
    jpg.write_bytes(made.data)
    sidecar.write_text(_sidecar_text(made.sidecar()), encoding="utf-8")
    if npy:
        assert made.expected is not None
        npy[0].write_bytes(npy_bytes(made.expected))
    alt = made.recipe.second_path(root)
    if made.second is not None:
        alt.write_bytes(npy_bytes(made.second))
    elif alt.exists():
        alt.unlink()


def npy_bytes(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def build_stores(root: Path) -> None:
    """``root``/fixtures/stores: real Zarr arrays, written by :mod:`corpus.stores` (needs zarr-python)."""
    try:
        from ..corpus import stores
    except ImportError as exc:  # zarr-python is an extra
        raise CorpusError(f"fixtures/stores cannot be built: {exc} (pip install 'zarr-jpeg-conformance[zarr]', or --skip-stores)") from exc
    stores.build(root)


def generate(root: Path, force: bool, stores: bool = True) -> int:
    """The write command: the stores, then every case under ``root`` (fixtures/), then the manifest.

    Stores come first: the neuroglancer stream cases are the chunks the stores hold.
    """
    recipes = all_recipes()
    targets = {p for r in recipes for p in (*r.paths(root), r.second_path(root))} | {root.joinpath(*MANIFEST)}
    existing = sorted(p for p in targets if p.exists())
    if existing and not force:
        shown = "\n  ".join(str(p.relative_to(root)) for p in existing[:5])
        print(f"refusing to overwrite {len(existing)} existing file(s) under {root} (use --force):\n  {shown}", file=sys.stderr)
        return 2
    if force:
        for category in CATEGORIES:
            for stale in (root / "streams" / category).glob("*") if (root / "streams" / category).is_dir() else []:
                if stale not in targets:
                    stale.unlink()
    if stores:
        build_stores(root.parent)
    builder = Builder(root, committed=False, categories={r.id: r.category for r in recipes})
    for recipe in recipes:
        made = make(recipe, builder)
        builder.built[recipe.id] = made.data
        write(made, root)
    write_manifest(root, versions())
    files = corpus_files(root)
    size = sum((root / p).stat().st_size for p in files)
    print(f"wrote {len(recipes)} stream cases; {len(files)} files, {size / 1e6:.2f} MB under {root}")
    return 0
