"""The adapter contract: how any implementation of the ``jpeg`` codec is put under test.

An adapter wraps one implementation. The suites only ever call the four methods of
:class:`Adapter`; everything else (which backend, which process, which language) is the
adapter's business. This module is public API: other repositories code against it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .labels import KINDS, kind_of, language_of

ENTRY_POINT_GROUP = "zarr_jpeg_conformance.adapters"
ROLES = frozenset({"encode", "decode"})

#: Built-in adapters: name -> "module:attribute" (imported only when asked for).
BUILTINS: dict[str, str] = {
    "turbojpeg": "zarr_jpeg_conformance.backends.turbojpeg:TurboJpegAdapter",
    "imagecodecs": "zarr_jpeg_conformance.backends.imagecodecs:ImagecodecsAdapter",
    "pillow": "zarr_jpeg_conformance.backends.pillow:PillowAdapter",
    "zarr": "zarr_jpeg_conformance.adapters.zarr:ZarrAdapter",
}

#: Other packages' Zarr codecs for JPEG chunks, configured from the spec's codec object as a
#: user migrating data would (kind "library"): loaded by name and in the report's matrix, but
#: not run by a plain ``pytest``, which tests this project's own implementations.
OTHER_ZARR_CODECS: dict[str, str] = {
    "imagecodecs_jpeg": "zarr_jpeg_conformance.adapters.imagecodecs_zarr:ImagecodecsZarrAdapter",
}


@runtime_checkable
class Adapter(Protocol):
    """One implementation of the Zarr v3 ``jpeg`` codec, as the suites see it.

    A rejection is a raised ``ValueError`` or ``TypeError`` (subclasses included). Any
    other exception is an error of the implementation and is reported as one.
    """

    name: str
    #: A subset of {"encode", "decode"}.
    roles: frozenset[str]
    # Optional, for reports (read with kind_of / language_of): ``kind``, a key of KINDS
    # (default "codec"), and ``language``, what the implementation is written in or called
    # from (default "Python").

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


class AdapterLoadError(RuntimeError):
    """An adapter was asked for and cannot be loaded; the message says why."""


def _resolve_target(target: str) -> object:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AdapterLoadError(f"cannot import {module_name!r}: {exc}") from exc
    obj: object = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as exc:
            raise AdapterLoadError(f"{module_name!r} has no attribute {attr!r}") from exc
    return obj


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
    roles = frozenset(obj.roles)  # type: ignore[attr-defined]
    if not roles or not roles <= ROLES:
        raise AdapterLoadError(f"{spec!r} has roles {sorted(roles)}; they must be a non-empty subset of {sorted(ROLES)}")
    return obj  # type: ignore[return-value]


def load_adapter(spec: str) -> Adapter:
    """Resolve ``exec:COMMAND``, a built-in name, an entry-point name, or ``module:attr`` to an adapter.

    ``module:attr`` may name an Adapter instance, or a class / callable returning one.
    Raises :class:`AdapterLoadError` with the reason when it cannot.
    """
    if spec in OTHER_ZARR_CODECS:
        return _instantiate(_resolve_target(OTHER_ZARR_CODECS[spec]), spec)
    if spec.startswith("exec:"):
        # An out-of-process harness speaking the JSON-lines protocol (schema/protocol).
        from .remote import ExecAdapter

        return _instantiate(lambda: ExecAdapter(spec.removeprefix("exec:")), spec)
    if spec in BUILTINS:
        return _instantiate(_resolve_target(BUILTINS[spec]), spec)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == spec:
            try:
                loaded = ep.load()
            except ImportError as exc:
                raise AdapterLoadError(f"entry point {spec!r} ({ep.value}) cannot be imported: {exc}") from exc
            return _instantiate(loaded, spec)
    if ":" in spec:
        return _instantiate(_resolve_target(spec), spec)
    known = sorted(set(BUILTINS) | set(OTHER_ZARR_CODECS) | {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)})
    raise AdapterLoadError(f"unknown adapter {spec!r}: use one of {', '.join(known)}, or 'module:attr'")


def available_builtins() -> dict[str, Adapter | AdapterLoadError]:
    """Every built-in adapter, loaded, or the reason it cannot load."""
    result: dict[str, Adapter | AdapterLoadError] = {}
    for name in BUILTINS:
        try:
            result[name] = load_adapter(name)
        except AdapterLoadError as exc:
            result[name] = exc
    return result


__all__ = ["BUILTINS", "ENTRY_POINT_GROUP", "KINDS", "OTHER_ZARR_CODECS", "ROLES", "Adapter", "AdapterLoadError", "available_builtins", "kind_of",
           "language_of", "load_adapter"]
