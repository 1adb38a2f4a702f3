"""The adapter contract: how any implementation of the ``jpeg`` codec is put under test.

An adapter wraps one implementation. The suites only ever call the four methods of
:class:`Adapter`, and ``build`` of :class:`Builder` where the adapter has that role;
everything else (which backend, which process, which language) is the
adapter's business. This module is public API: other repositories code against it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .labels import KINDS, ROLES, kind_of, language_of

ENTRY_POINT_GROUP = "zarr_jpeg_conformance.adapters"

#: Built-in adapters: name -> "module:attribute" (imported only when asked for).
BUILTINS: dict[str, str] = {
    "turbojpeg": "zarr_jpeg_conformance.backends.turbojpeg:TurboJpegAdapter",
    "imagecodecs": "zarr_jpeg_conformance.backends.imagecodecs:ImagecodecsAdapter",
    "pillow": "zarr_jpeg_conformance.backends.pillow:PillowAdapter",
    "zarr": "zarr_jpeg_conformance.adapters.zarr:ZarrAdapter",
}

#: JPEG libraries called the way a codec author would (kind "library"): name -> "module:attribute".
#: Loadable by name and part of the report's matrix, but not run by a plain ``pytest``
#: without ``--impl``: the built-ins are this project's codecs and must pass, while a
#: library is expected to miss some MUSTs, which the matrix shows.
LIBRARIES: dict[str, str] = {
    "simplejpeg": "zarr_jpeg_conformance.adapters.simplejpeg:SimplejpegAdapter",
    "opencv": "zarr_jpeg_conformance.adapters.opencv:OpenCVAdapter",
    "pyvips": "zarr_jpeg_conformance.adapters.pyvips:PyvipsAdapter",
}

#: Other packages' Zarr codecs for JPEG chunks (kind "codec"), each built by zarr's registry
#: from the spec's codec object mapped to its own configuration (adapters.zarr_codecs): name ->
#: "module:attribute". Part of the report's matrix like LIBRARIES; imagecodecs_jpeg runs there
#: as the shipped harness of the same name (a venv of its own with Python >= 3.12).
ZARR_CODECS: dict[str, str] = {
    "imagecodecs_jpeg": "zarr_jpeg_conformance.adapters.imagecodecs_zarr:ImagecodecsZarrAdapter",
    "cft-zarr": "zarr_jpeg_conformance.adapters.cft_zarr:CftZarrAdapter",
    "osml-imagery-io": "zarr_jpeg_conformance.adapters.osml_zarr:OsmlAdapter",
}


@runtime_checkable
class Adapter(Protocol):
    """One implementation of the Zarr v3 ``jpeg`` codec, as the suites see it.

    A rejection is a raised ``ValueError`` or ``TypeError`` (subclasses included). Any
    other exception is an error of the implementation and is reported as one.
    """

    name: str
    #: A non-empty subset of ROLES: "encode", "decode", and "build" for an adapter that is also a :class:`Builder`.
    roles: frozenset[str]
    # Optional, for reports (read with kind_of / language_of): ``kind``, a key of KINDS
    # (default "codec"), and ``language``, what the implementation is written in or called
    # from (default "Python"). Optional, for speed: ``decode_into(parsed, data, chunk_shape, out)``,
    # decode writing the samples into ``out`` (a writable C-order uint8 array of chunk_shape) and
    # returning None, which harnesses.server calls in shared framing to decode into a reply's room
    # (backends.base.BackendAdapter has it); rejections as decode's.

    def versions(self) -> dict[str, str]:
        """Backend and library versions, shown in reports."""
        ...

    def parse(self, codec: Mapping[str, Any]) -> object:
        """Parse the whole codec object as found in ``zarr.json``; return an opaque parsed codec."""
        ...

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        """Encode one chunk to a JPEG stream."""
        ...

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        """Decode one JPEG stream to a chunk of ``chunk_shape``."""
        ...


@runtime_checkable
class Builder(Protocol):
    """The optional role ``build``: an implementation that writes codec objects (a codec's constructor and ``to_dict``).

    The spec has rules for whoever writes the metadata: the name is ``jpeg``, a default
    quality is 95 (JPEG-Q-06), ``subsampling`` is omitted where it is the default
    (JPEG-SUB-06), and what is written is valid. ``suites/test_build.py`` checks them.
    """

    def build(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The codec object (``{"name": ..., "configuration": {...}}``) the implementation writes for ``options``.

        ``options`` are the keyword arguments a user gives the implementation's builder,
        named as the configuration's members: ``encoded_color_space`` and, when the user
        sets them, ``quality``, ``decoded_color_space``, ``subsampling``. Options that make
        no valid configuration are refused with ``ValueError`` or ``TypeError``.
        """
        ...


class AdapterLoadError(RuntimeError):
    """An adapter was asked for and cannot be loaded; the message says why."""


def _resolve_target(target: str) -> object:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except (ImportError, OSError) as exc:
        # OSError: a binding that loads its native library on import (pyvips without libvips).
        raise AdapterLoadError(f"cannot import {module_name!r}: {exc}") from exc
    obj: object = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise AdapterLoadError(f"{module_name!r} has no attribute {attr!r}") from exc
    return obj


#: Longest implementation name: it is a test ID, a file name and a column heading.
_MAX_NAME = 100


def _instantiate(obj: object, spec: str) -> Adapter:
    if isinstance(obj, type) or (callable(obj) and not isinstance(obj, Adapter)):
        try:
            obj = obj()
        except (ImportError, OSError, RuntimeError) as exc:
            # Backends fail here when their native library is missing.
            raise AdapterLoadError(f"{spec!r} could not start its backend: {type(exc).__name__}: {exc}") from exc
    missing = [m for m in ("name", "roles", "versions", "parse", "encode", "decode") if not hasattr(obj, m)]
    if missing:
        raise AdapterLoadError(f"{spec!r} does not implement the Adapter protocol: missing {', '.join(missing)}")
    not_methods = [m for m in ("versions", "parse", "encode", "decode") if not callable(getattr(obj, m))]
    if not_methods:
        raise AdapterLoadError(f"{spec!r}: {', '.join(not_methods)} must be methods")
    name = obj.name  # type: ignore[attr-defined]
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME or not name.isprintable():
        raise AdapterLoadError(f"{spec!r} has name {_short(name)}: it must be a non-empty printable string "
                               f"of at most {_MAX_NAME} characters (it names the implementation's tests and results)")
    # A set, not any iterable: a generator would be consumed here and read as empty later,
    # and every test would silently not apply to the implementation.
    roles = obj.roles  # type: ignore[attr-defined]
    if not isinstance(roles, AbstractSet) or not all(isinstance(r, str) for r in roles):
        raise AdapterLoadError(f"{spec!r} has roles {_short(roles)}: they must be a set of strings, "
                               f"e.g. frozenset({{'encode', 'decode'}})")
    if not roles or not roles <= ROLES:
        raise AdapterLoadError(f"{spec!r} has roles {sorted(roles)}; they must be a non-empty subset of {sorted(ROLES)}")
    if "build" in roles and not callable(getattr(obj, "build", None)):
        raise AdapterLoadError(f"{spec!r} has the role 'build' but no build method (see Builder)")
    return obj  # type: ignore[return-value]


def _short(value: object) -> str:
    """``repr`` of an adapter's attribute for an error message: its type, and at most 80 characters."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 80 else text[:77] + '...'}"


def load_adapter(spec: str, *, memory_limit: int | str | None = "default", framings: Sequence[str] | None = None) -> Adapter:
    """Resolve ``exec:COMMAND``, a built-in or library name, an entry-point name, or ``module:attr`` to an adapter.

    ``module:attr`` may name an Adapter instance, or a class / callable returning one.
    ``memory_limit`` is the address-space limit of an ``exec:`` harness in bytes (None: none;
    by default the client's default); ``framings``, those its ``start`` offers (by default the client's).
    Raises :class:`AdapterLoadError` with the reason when it cannot.
    """
    if spec.startswith("exec:"):
        # An out-of-process harness speaking the JSON-lines protocol (schema/protocol).
        from .remote import ExecAdapter

        command = spec.removeprefix("exec:")
        options: dict[str, Any] = {} if memory_limit == "default" else {"memory_limit": memory_limit}
        if framings is not None:
            options["framings"] = framings
        return _instantiate(lambda: ExecAdapter(command, **options), spec)
    named = BUILTINS.get(spec) or LIBRARIES.get(spec) or ZARR_CODECS.get(spec)
    if named:
        return _instantiate(_resolve_target(named), spec)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == spec:
            try:
                loaded = ep.load()
            except ImportError as exc:
                raise AdapterLoadError(f"entry point {spec!r} ({ep.value}) cannot be imported: {exc}") from exc
            return _instantiate(loaded, spec)
    if ":" in spec:
        return _instantiate(_resolve_target(spec), spec)
    known = sorted(set(BUILTINS) | set(LIBRARIES) | set(ZARR_CODECS) | {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})
    raise AdapterLoadError(f"unknown adapter {spec!r}: use one of {', '.join(known)}, or 'module:attr'")


def _available(names: list[str]) -> dict[str, Adapter | AdapterLoadError]:
    result: dict[str, Adapter | AdapterLoadError] = {}
    for name in names:
        try:
            result[name] = load_adapter(name)
        except AdapterLoadError as exc:
            result[name] = exc
    return result


def available_builtins() -> dict[str, Adapter | AdapterLoadError]:
    """Every built-in adapter, loaded, or the reason it cannot load."""
    return _available(list(BUILTINS))


def available_libraries() -> dict[str, Adapter | AdapterLoadError]:
    """Every library adapter, loaded, or the reason it cannot load (its package is missing)."""
    return _available(list(LIBRARIES))


__all__ = ["BUILTINS", "ENTRY_POINT_GROUP", "KINDS", "LIBRARIES", "ROLES", "ZARR_CODECS", "Adapter", "AdapterLoadError", "Builder",
           "available_builtins", "available_libraries", "kind_of", "language_of", "load_adapter"]
