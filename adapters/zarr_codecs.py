"""What the adapters of other packages' Zarr codecs share (cft_zarr.jpeg, osml's jpeg, imagecodecs_jpeg).

Each of those codecs has its own name and configuration. Its adapter builds the codec the
way zarr-python does, from a codec object through zarr's registry (``get_codec_class(name)
.from_dict(...)``), and maps the spec's codec object to that codec's configuration only
where the codec offers an exact equivalent: anything else is refused with
:class:`NoEquivalent`, which names the member. Values go across verbatim (a quality of
``-1`` becomes a ``level`` of ``-1``), so the codec's own validation decides about them,
not this project's parser. A value goes across only where the codec's member means exactly
the same JSON value: never a boolean as an integer (``True == 1`` in Python), never a float
as an integer (:func:`exactly`). The exception types a codec documents for bad input (its
library's error class) are its rejections (:func:`codec_refusals`); anything else stays
an error. What the codec was given for each codec object, or that it had no equivalent, is
kept in a :class:`GivenLog`, from which every results line of the row carries it.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, entry_points, version
from typing import Any

import numpy as np

__all__ = ["IMAGECODECS_SUBSAMPLING", "SPEC_MEMBERS", "CodecRefusal", "GivenLog", "LogsGiven", "NoEquivalent", "Parsed", "SerializerAdapter",
           "codec_refusals", "color_spaces", "exactly", "json_value", "imagecodecs_subsampling", "installed", "registry_codec",
           "spec_configuration"]

#: The configuration members of the spec's codec object.
SPEC_MEMBERS = ("quality", "encoded_color_space", "decoded_color_space", "subsampling")
#: The spec's luma sampling factors (chroma [1, 1]) and the ``subsampling`` names imagecodecs knows.
IMAGECODECS_SUBSAMPLING = {(1, 1): "444", (2, 1): "422", (2, 2): "420", (1, 2): "440", (4, 1): "411"}


class NoEquivalent(ValueError):
    """The spec's codec object says something the codec's own configuration has no exact equivalent for."""


class GivenLog:
    """What a codec was given for each codec object an adapter mapped (or that it had none): the newest
    :data:`KEPT` entries, numbered, so that a test reads those made since it started (:meth:`since`)."""

    KEPT = 64

    def __init__(self) -> None:
        self.count = 0
        self._entries: deque[tuple[int, dict[str, Any]]] = deque(maxlen=self.KEPT)

    def add(self, codec: object, given: Mapping[str, Any] | None, no_equivalent: str = "") -> None:
        entry: dict[str, Any] = {"codec": json_value(codec), "given": dict(given) if given is not None else None}
        if no_equivalent:
            entry["no_equivalent"] = no_equivalent[:2000]
        self._entries.append((self.count, entry))
        self.count += 1

    def since(self, start: int) -> list[dict[str, Any]]:
        """The entries made since the log's count was ``start``, each distinct one once."""
        out: dict[str, dict[str, Any]] = {}
        for number, entry in self._entries:
            if number >= start:
                out.setdefault(json.dumps(entry, sort_keys=True, default=repr), entry)
        return list(out.values())


class LogsGiven:
    """An adapter that gives its codec a configuration of its own keeps what it gave (:class:`GivenLog`)."""

    @property
    def given_log(self) -> GivenLog:
        log = self.__dict__.get("_given_log")
        if log is None:
            log = self.__dict__["_given_log"] = GivenLog()
        return log


def json_value(value: object) -> Any:
    """``value`` as JSON can hold it (a codec object of the corpus is JSON already; anything else by its repr)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return repr(value)


def exactly(value: object, *wanted: object) -> bool:
    """Whether ``value`` is one of ``wanted`` as a JSON value: the same types too, so that ``true`` is not ``1`` and
    ``2.0`` is not ``2`` (Python's == says they are)."""
    return any(json.dumps(value) == json.dumps(w) for w in wanted)


class CodecRefusal(ValueError):
    """The codec refused with an exception type it documents for bad input; ``exception`` names that type."""

    def __init__(self, message: str, exception: str) -> None:
        super().__init__(message)
        self.exception = exception


def installed(distribution: str, codec_name: str, why: str = "") -> str:
    """The distribution's version; ImportError saying why the codec cannot run here."""
    try:
        found = version(distribution)
    except PackageNotFoundError:
        extra = f"; {why}" if why else ""
        raise ImportError(f"{distribution} is not installed (pip install 'zarr-jpeg-conformance[zarr-codecs]'{extra})") from None
    if not any(ep.name == codec_name for ep in entry_points(group="zarr.codecs")):
        raise ImportError(f"{distribution} {found} registers no zarr codec named {codec_name!r}")
    return found


def registry_codec(codec_object: Mapping[str, Any]) -> Any:
    """The codec zarr-python builds from ``codec_object``: its registry's class for the name, ``from_dict``."""
    from zarr.registry import get_codec_class

    return get_codec_class(str(codec_object["name"])).from_dict(dict(codec_object))


def spec_configuration(codec: object, who: str, members: tuple[str, ...] = SPEC_MEMBERS) -> dict[str, Any]:
    """The configuration of the spec's ``jpeg`` codec object, with only members ``who`` can express.

    NoEquivalent for an object that is not ``{"name": "jpeg", "configuration": {...}}`` or a
    member outside ``members``: the codec's configuration has nothing that says it.
    """
    if not isinstance(codec, Mapping) or codec.get("name") != "jpeg" or not isinstance(codec.get("configuration"), Mapping):
        raise NoEquivalent(f"{who}: the adapter maps only the spec's codec object "
                           f"{{'name': 'jpeg', 'configuration': {{...}}}}, got {codec!r}")
    if set(codec) - {"name", "configuration"}:
        extra = sorted(set(codec) - {"name", "configuration"})
        raise NoEquivalent(f"{who}: the codec object member(s) {extra} have no equivalent in its codec object")
    config = dict(codec["configuration"])
    unknown = sorted(set(config) - set(members))
    if unknown:
        raise NoEquivalent(f"{who}: its configuration has no equivalent of {', '.join(f'{k}={config[k]!r}' for k in unknown)}")
    return config


def color_spaces(config: Mapping[str, Any], who: str) -> tuple[str, str]:
    """(encoded, decoded) color spaces, the decoded one defaulted as the spec says.

    NoEquivalent for values that are not the spec's names: nothing in another codec's
    configuration means them.
    """
    names = ("grayscale", "rgb", "ycbcr")
    encoded = config.get("encoded_color_space")
    if encoded not in names:
        raise NoEquivalent(f"{who}: encoded_color_space {encoded!r} has no equivalent (the spec's names: {', '.join(names)})")
    decoded = config.get("decoded_color_space", "grayscale" if encoded == "grayscale" else "rgb")
    if decoded not in names:
        raise NoEquivalent(f"{who}: decoded_color_space {decoded!r} has no equivalent (the spec's names: {', '.join(names)})")
    return str(encoded), str(decoded)


def imagecodecs_subsampling(subsampling: object, who: str) -> str:
    """The imagecodecs ``subsampling`` name of the spec's sampling factors (chroma [1, 1]), where they are exactly its
    factors as JSON integers: ``[[2, 2], [true, true], [true, true]]`` and ``[[2.0, 2.0], ...]`` have no name."""
    for luma, name in IMAGECODECS_SUBSAMPLING.items():
        if exactly(subsampling, [list(luma), [1, 1], [1, 1]]):
            return name
    raise NoEquivalent(f"{who}: its subsampling has no value for {json.dumps(subsampling)} "
                       f"(it knows {', '.join(IMAGECODECS_SUBSAMPLING.values())}, i.e. luma factors "
                       f"{', '.join(str(list(f)) for f in IMAGECODECS_SUBSAMPLING)} with chroma [1, 1], as JSON integers)")


@contextmanager
def codec_refusals(*types: type[BaseException]) -> Iterator[None]:
    """Re-raise the codec's documented bad-input exceptions as rejections (CodecRefusal), naming their type."""
    try:
        yield
    except (ValueError, TypeError):
        raise
    except types as exc:
        raise CodecRefusal(f"{type(exc).__name__}: {exc}", type(exc).__name__) from exc


@dataclass(frozen=True)
class Parsed:
    """The codec zarr's registry built, and the codec object it was built from."""

    codec: Any
    codec_object: dict[str, Any]


class SerializerAdapter(LogsGiven):
    """A serializer (array-to-bytes) codec of another package, every chunk through a one-chunk zarr array.

    A subclass sets ``name``, ``codec_name`` and ``_versions``, ``_errors`` (the exception types the
    codec documents for bad input) and maps the spec's codec object in :meth:`codec_object`.
    """

    name: str
    codec_name: str
    kind = "codec"
    roles = frozenset({"encode", "decode"})
    _versions: dict[str, str]
    _errors: tuple[type[BaseException], ...] = ()

    def versions(self) -> dict[str, str]:
        return dict(self._versions)

    def codec_object(self, codec: object) -> dict[str, Any]:
        """The codec's own codec object for the spec's; NoEquivalent where it has none."""
        raise NotImplementedError

    def parse(self, codec: Mapping[str, Any]) -> Parsed:
        try:
            codec_object = self.codec_object(codec)
        except NoEquivalent as exc:
            self.given_log.add(codec, None, str(exc))
            raise
        self.given_log.add(codec, codec_object)
        with codec_refusals(*self._errors):
            return Parsed(registry_codec(codec_object), codec_object)

    def _codec(self, parsed: object) -> Any:
        if not isinstance(parsed, Parsed):
            raise TypeError(f"{self.codec_name}: expected a parsed codec from {type(self).__name__}.parse, "
                            f"got {type(parsed).__name__}")
        return parsed.codec

    def encode(self, parsed: object, chunk: np.ndarray) -> bytes:
        from .zarr_arrays import encode_through_zarr

        with codec_refusals(*self._errors):
            return encode_through_zarr(self._codec(parsed), chunk, {}, self.codec_name)

    def decode(self, parsed: object, data: bytes, chunk_shape: tuple[int, ...]) -> np.ndarray:
        from .zarr_arrays import decode_through_zarr

        with codec_refusals(*self._errors):
            return decode_through_zarr(self._codec(parsed), data, chunk_shape, {}, self.codec_name)
