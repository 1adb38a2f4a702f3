"""The harness kits that travel with the suite: where each is, and a copy of one for a codec's build.

A codec repository builds its harness on the kit of its language. Until a kit is published on
its registry, the installed suite is where it comes from: ``python -m
zarr_jpeg_conformance.harnesses kit rust`` prints the kit's folder, and ``--copy DIR`` puts a
copy where the codec's build looks for it (a Cargo path dependency, a Go ``replace``, an npm
``file:`` dependency, a Maven project to ``install``). A copy, not the installed folder itself:
the path then belongs to the codec's repository (the same on every machine, in a lock file
too), and no build writes into the installed package.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from . import HERE


class KitError(RuntimeError):
    """A kit cannot be found or copied; the message says why."""


@dataclass(frozen=True)
class Kit:
    """One harness kit: its folder in this package, and what names it in its manifest."""

    language: str
    folder: str
    #: The manifest file of the kit's build tool, relative to its folder.
    manifest: str
    #: Text the manifest holds: the kit's name on its registry.
    name: str

    @property
    def path(self) -> Path:
        return HERE / self.folder

    def is_copy(self, folder: Path) -> bool:
        """Whether ``folder`` holds a copy of this kit (its manifest names the kit)."""
        try:
            return self.name in (folder / self.manifest).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False


KITS: dict[str, Kit] = {
    k.language: k
    for k in (
        Kit("rust", "rust/kit", "Cargo.toml", 'name = "zarr-jpeg-conformance-harness"'),
        Kit("go", "go/kit", "go.mod", "module github.com/zarr-developers/zarr-jpeg-conformance/harnesses/go/kit"),
        Kit("node", "node/kit", "package.json", '"name": "zarr-jpeg-conformance-harness"'),
        Kit("java", "java/kit", "pom.xml", "<artifactId>zarr-jpeg-conformance-harness</artifactId>"),
    )
}

#: What a copy leaves out: build output and the kits' own tests' caches, never part of a kit.
_LEFT_OUT = shutil.ignore_patterns("target", "node_modules", "__pycache__", ".*")


def kit(language: str) -> Kit:
    """The kit of ``language``, present in this installation; KitError otherwise."""
    found = KITS.get(language)
    if found is None:
        raise KitError(f"no harness kit for {language!r}: the kits are {', '.join(KITS)}")
    if not found.is_copy(found.path):
        raise KitError(f"the {language} kit is missing from this installation ({found.path / found.manifest} not found): "
                       "reinstall zarr-jpeg-conformance")
    return found


def copy_kit(language: str, destination: Path) -> Path:
    """Copy the kit of ``language`` to ``destination`` whole, replacing an earlier copy of it.

    ``destination`` must not exist, be empty, or hold a copy of the same kit: anything else there
    is someone's work, and nothing is overwritten. The copy is made beside it and moved into place,
    so that an interrupted copy leaves the earlier one (or nothing), never half a kit.
    """
    source = kit(language)
    destination = destination.absolute()
    if destination.exists():
        if not destination.is_dir():
            raise KitError(f"{destination} is a file, not a folder: give a folder for the {language} kit")
        if any(destination.iterdir()) and not source.is_copy(destination):
            raise KitError(f"{destination} is not empty and holds no copy of the {language} kit "
                           f"(no {source.manifest} naming it): give an empty or new folder")
    destination.parent.mkdir(parents=True, exist_ok=True)
    partial = destination.with_name(f".{destination.name}.partial-{os.getpid()}")
    old = destination.with_name(f".{destination.name}.old-{os.getpid()}")
    try:
        shutil.copytree(source.path, partial, ignore=_LEFT_OUT)
        if destination.exists():
            destination.rename(old)
        partial.rename(destination)
    except OSError as exc:
        raise KitError(f"cannot copy the {language} kit to {destination}: {exc}") from exc
    finally:
        shutil.rmtree(partial, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    return destination


__all__ = ["KITS", "Kit", "KitError", "copy_kit", "kit"]
