"""The --check command: verify the committed corpus with pip packages alone.

Checks the manifest, each sidecar against its recipe and the schema, each stream's
structure and expected decode, and rebuilds every recipe whose tools are here: identical
bytes, or decoded pixels within tolerance where an encoder's bytes legitimately differ.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from ..core.config import parse_codec
from ..core.markers import inspect
from ..corpus.streams import CATEGORIES, reference_decode
from ..judging.decode_tolerances import difference, family_for, judge_decode
from .cases import all_recipes
from .make import bites
from .manifest import MANIFEST, corpus_files
from .recipe import Builder, CorpusError, Recipe

SCHEMA = Path(__file__).resolve().parents[1] / "schema" / "stream-case.schema.json"


def _schema_errors(doc: Any) -> list[str]:
    import jsonschema
    from referencing import Registry, Resource

    schemas = [json.loads(p.read_text(encoding="utf-8")) for p in (SCHEMA, SCHEMA.with_name("jpeg.schema.json"))]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
    validator = jsonschema.Draft202012Validator(schemas[0], registry=registry)
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in validator.iter_errors(doc)]


def _check_manifest(root: Path) -> list[str]:
    path = root.joinpath(*MANIFEST)
    if not path.is_file():
        return [f"no manifest at {path.relative_to(root)}"]
    listed = json.loads(path.read_text(encoding="utf-8"))["files"]
    present = corpus_files(root)
    problems = []
    for name in sorted(set(listed) | set(present)):
        if name not in present:
            problems.append(f"manifest lists {name}, which is missing")
        elif name not in listed:
            problems.append(f"{name} is not in the manifest (run --update-manifest if it belongs there)")
        elif listed[name] != present[name]:
            problems.append(f"{name}: sha256 differs from the manifest")
    return problems


def _committed(recipe: Recipe, root: Path) -> tuple[bytes, dict[str, Any], np.ndarray | None]:
    jpg, sidecar, *npy = recipe.paths(root)
    expected = np.load(io.BytesIO(npy[0].read_bytes()), allow_pickle=False) if npy else None
    return jpg.read_bytes(), json.loads(sidecar.read_text(encoding="utf-8")), expected


def _check_sidecar(recipe: Recipe, doc: dict[str, Any]) -> list[str]:
    from ..corpus.registry import requirements

    problems = [f"sidecar {e}" for e in _schema_errors(doc)]
    for key in ("description", "requirements", "level", "codec", "chunk_shape", "expect", "source", "comment", "decode_if_parsed"):
        want = getattr(recipe, key)
        want = list(want) if isinstance(want, tuple) else want
        if doc.get(key) != want:
            problems.append(f"sidecar {key} {doc.get(key)!r} differs from the recipe's {want!r}")
    registry = requirements()
    unknown = [r for r in recipe.requirements if r not in registry]
    if unknown:
        problems.append(f"cites requirements missing from the registry: {unknown}")
    elif recipe.level not in {registry[r].severity for r in recipe.requirements}:
        problems.append(f"level {recipe.level} is the level of none of its requirements")
    return problems


def _references(recipe: Recipe, root: Path, expected: np.ndarray) -> tuple[np.ndarray, ...]:
    alt = recipe.second_path(root)
    return (expected, np.load(io.BytesIO(alt.read_bytes()), allow_pickle=False)) if alt.is_file() else (expected,)


def _check_stream(recipe: Recipe, root: Path, data: bytes, doc: dict[str, Any], expected: np.ndarray | None) -> list[str]:
    info = inspect(data)
    problems = []
    if recipe.structure is not None and (complaint := recipe.structure(info)):
        problems.append(f"committed stream's {complaint}")
    if expected is None:
        return problems
    if expected.dtype != np.uint8 or expected.shape != recipe.chunk_shape:
        return [*problems, f"expected decode is {expected.dtype} {expected.shape}"]
    config = parse_codec(recipe.codec)
    again = reference_decode(data, config, recipe.chunk_shape)
    if not np.array_equal(again, expected):
        problems.append(f"installed libjpeg-turbo decodes the committed stream differently: {difference(again, expected)}")
    if doc.get("tolerance") != family_for(info):
        problems.append(f"tolerance {doc.get('tolerance')!r}, but the stream's structure says {family_for(info)!r}")
    try:
        bites(recipe.id, data, config.decoded_color_space, recipe.chunk_shape, _references(recipe, root, expected), family_for(info))
    except CorpusError as exc:
        problems.append(str(exc))
    return problems


def _check_second(recipe: Recipe, root: Path, doc: dict[str, Any], expected: np.ndarray | None) -> list[str]:
    """The independent decode is there exactly when the sidecar names its decoder, and has the recorded spread.

    It cannot be made again without its decoder (Go), so its bytes are held by the manifest;
    what can be checked here is that it is the array the sidecar describes.
    """
    path, record = recipe.second_path(root), doc.get("second_decoder")
    if expected is None:
        return [f"a reject case has {path.name}"] if path.exists() else []
    if record is None:
        return ["sidecar has no second_decoder (who decoded the stream independently, or why nobody did)"]
    if "absent" in record:
        return [f"{path.name} exists but the sidecar says there is none"] if path.exists() else []
    if not path.is_file():
        return [f"sidecar names {record.get('name')!r} but {path.name} is missing"]
    second = np.load(io.BytesIO(path.read_bytes()), allow_pickle=False)
    if second.dtype != np.uint8 or second.shape != expected.shape:
        return [f"{path.name} is {second.dtype} {second.shape}, not uint8 {expected.shape}"]
    spread = difference(second, expected)
    recorded = record.get("spread", {})
    if (spread.max_abs, round(spread.mean_abs, 4)) != (recorded.get("max_abs"), recorded.get("mean_abs")):
        return [f"{path.name} lies {spread} from the expected decode; the sidecar records {recorded}"]
    return []


def _check_rebuild(recipe: Recipe, builder: Builder, data: bytes, expected: np.ndarray | None,
                   root: Path) -> tuple[str, list[str]]:
    """(what happened, problems) when the recipe is built again with the installed libraries."""
    if recipe.tool is not None and shutil.which(recipe.tool) is None:
        return f"not rebuilt (needs {recipe.tool})", []
    rebuilt, _ = recipe.build(builder)
    if rebuilt == data:
        return "rebuilt: identical bytes", []
    if expected is not None:
        family = family_for(inspect(data))
        again = reference_decode(rebuilt, parse_codec(recipe.codec), recipe.chunk_shape)
        ok, diff, _ = judge_decode(again, _references(recipe, root, expected), family)
        if not ok:
            return "rebuilt: other bytes", [f"rebuilt stream decodes outside the {family!r} tolerance: {diff}"]
        print(f"  {recipe.id}: encoder bytes differ, decoded pixels agree ({diff})")
        return "rebuilt: other bytes, decoded pixels within tolerance", []
    complaint = recipe.structure(inspect(rebuilt)) if recipe.structure else None
    return "rebuilt: other bytes, same structure (reject case)", [f"rebuilt stream's {complaint}"] if complaint else []


def check(root: Path) -> int:
    """The check command on ``root`` (fixtures/): 0 when the corpus checks out, 1 with its problems."""
    problems = _check_manifest(root)
    recipes = all_recipes()
    known = {p for r in recipes for p in (*r.paths(root), r.second_path(root))}
    for category in CATEGORIES:
        folder = root / "streams" / category
        for path in sorted(folder.glob("*")) if folder.is_dir() else []:
            if path not in known:
                problems.append(f"{path.relative_to(root).as_posix()} belongs to no recipe")
    builder = Builder(root, committed=True, categories={r.id: r.category for r in recipes})
    tally: Counter[str] = Counter()
    for recipe in recipes:
        missing = [p.relative_to(root).as_posix() for p in recipe.paths(root) if not p.is_file()]
        if missing:
            problems.append(f"{recipe.id}: missing {', '.join(missing)}")
            continue
        data, doc, expected = _committed(recipe, root)
        what, rebuild = _check_rebuild(recipe, builder, data, expected, root)
        tally[what] += 1
        found = (_check_sidecar(recipe, doc) + _check_stream(recipe, root, data, doc, expected) + rebuild
                 + _check_second(recipe, root, doc, expected))
        problems += [f"{recipe.id}: {p}" for p in found]
    size = sum(f.stat().st_size for f in (root / "streams").rglob("*") if f.is_file())
    print(f"checked {len(recipes)} stream cases ({size / 1e6:.2f} MB under streams/)")
    for what, n in sorted(tally.items()):
        print(f"  {n:4d} {what}")
    for p in problems:
        print(f"PROBLEM {p}", file=sys.stderr)
    print("corpus OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0
