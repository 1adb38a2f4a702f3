"""One deviation, one finding: what a case stands on, and which case holds the finding when that fails.

A case stands on preconditions: the parse of the valid configuration it uses, the encode of a
valid chunk, the decode of its own stream. When one is refused or errors, the case cannot
judge what it is about. If a case of the corpus judges that precondition itself (the
configuration's parse case, the chunk's chunk case), the case is ``blocked`` by it: that case
holds the finding. Otherwise the first case of the session that meets the failure becomes its
root, and every later one that meets the same failure is blocked by it.

A refusal of something valid is diagnosed before it is charged: the implementation is asked
again with one thing changed (the omitted ``subsampling`` written out, a small chunk instead
of a large one, ...), and where that is accepted, the refusal is charged to the rule about the
thing changed rather than to the case's own rule (:data:`PARSE_PROBES`, :func:`encode_diagnosis`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..corpus.cases import chunk_case_for, config_case_for
from .verdict import Attempt, Outcome, attempt


def key(stage: str, implementation: str, codec: Any) -> tuple[str, ...]:
    """The identity of a precondition: a stage of one implementation under one codec object."""
    return (stage, implementation, json.dumps(codec, sort_keys=True))


def block_or_root(judge: Any, precondition: tuple[str, ...], own: str | None, what: str, got: Attempt[Any]) -> None:
    """Block the case by the case that judges this precondition, or make it the precondition's root.

    ``own``: the id of the corpus case that judges the precondition itself, if any. Returns
    only when this case is the root: the caller then judges the failure.
    """
    exc = got.rejection or got.error
    said = f"{type(exc).__name__}: {exc}" if exc is not None else "nothing"
    verb = "refused" if got.rejection is not None else "raised an error"
    if own is not None and own != judge.case:
        judge.block(own, f"{what} {verb} ({said}); case {own} judges that")
    root = _registry(judge).setdefault(precondition, judge.case)
    if root != judge.case:
        judge.block(root, f"{what} {verb} ({said}), as in case {root}")


def _registry(judge: Any) -> dict[tuple[str, ...], str]:
    """The session's roots (``Judge.roots``); a judge without one (a test's stand-in) gets a fresh one."""
    found = getattr(judge, "roots", None)
    return found if isinstance(found, dict) else {}


def own_parse_case(codec: Any) -> str | None:
    case = config_case_for(codec)
    return case.id if case is not None else None


def own_chunk_case(codec: Any, chunk: np.ndarray) -> str | None:
    case = chunk_case_for(codec, chunk.shape, chunk.dtype.name)
    return case.id if case is not None else None


def _configuration(codec: Any) -> dict[str, Any] | None:
    cfg = codec.get("configuration") if isinstance(codec, Mapping) else None
    return cfg if isinstance(cfg, dict) else None


def _with(codec: Any, change: Callable[[dict[str, Any]], bool]) -> Any:
    """A copy of the codec object with ``change`` applied to its configuration; None if it does not apply."""
    out = copy.deepcopy(codec)
    cfg = _configuration(out)
    return out if cfg is not None and change(cfg) else None


def _default_subsampling(cfg: dict[str, Any]) -> bool:
    space = cfg.get("encoded_color_space")
    if "subsampling" in cfg or space not in ("grayscale", "rgb"):
        return False
    cfg["subsampling"] = [[1, 1]] if space == "grayscale" else [[1, 1], [1, 1], [1, 1]]
    return True


def _default_decoded(cfg: dict[str, Any]) -> bool:
    space = cfg.get("encoded_color_space")
    if "decoded_color_space" in cfg or space not in ("grayscale", "rgb", "ycbcr"):
        return False
    cfg["decoded_color_space"] = "grayscale" if space == "grayscale" else "rgb"
    return True


def _drop(member: str, default: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], bool]:
    def change(cfg: dict[str, Any]) -> bool:
        # The default as JSON writes it: [[1.0, 1.0]] is the default's value but not its form (JPEG-X-02 lets a
        # parser refuse the form), so dropping it would take away what the refusal may be about.
        if member not in cfg or json.dumps(cfg[member]) != json.dumps(default(cfg)):
            return False
        del cfg[member]
        return True
    return change


def _quality_90(cfg: dict[str, Any]) -> bool:
    quality = cfg.get("quality")
    if isinstance(quality, bool) or not isinstance(quality, int | float) or quality == 90:
        return False
    cfg["quality"] = 90.0 if isinstance(quality, float) else 90  # the value changes, its JSON form does not
    return True


#: A valid configuration refused: (what to change, the rule about it, what the refusal then is).
#: The first change after which the implementation accepts the configuration names the rule.
PARSE_PROBES: tuple[tuple[Callable[[dict[str, Any]], bool], str, str], ...] = (
    (_default_subsampling, "JPEG-SUB-05",
     "it accepts the same configuration with subsampling written out: it refuses subsampling omitted, "
     "which defaults for grayscale and rgb"),
    (_default_decoded, "JPEG-DCS-02",
     "it accepts the same configuration with decoded_color_space written out: it refuses the default"),
    (_drop("decoded_color_space", lambda c: "grayscale" if c.get("encoded_color_space") == "grayscale" else "rgb"),
     "JPEG-DCS-01", "it accepts the same configuration without decoded_color_space: it refuses the optional member given"),
    (_drop("subsampling", lambda c: [[1, 1]] if c.get("encoded_color_space") == "grayscale" else [[1, 1], [1, 1], [1, 1]]),
     "JPEG-SUB-07", "it accepts the same configuration without subsampling: it refuses subsampling given equal to its default"),
    (_quality_90, "JPEG-Q-01", "it accepts the same configuration at quality 90: it refuses this quality, which lies in 1-100"),
)


def parse_diagnosis(parse: Callable[[Any], object], codec: Any) -> tuple[str, str] | None:
    """(requirement, why) of a refused valid configuration, from the first probe that the implementation accepts.

    A probe changes only the member it names and keeps the JSON form of every value, so it never
    takes away what an optional form (an integral float, JPEG-X-02) is about."""
    for change, requirement, why in PARSE_PROBES:
        probe = _with(codec, change)
        if probe is not None and attempt(parse, probe).ok:
            return requirement, why
    return None


#: A chunk side above which a refusal that a 16x16 chunk does not get is about the size limit.
LARGE_SIDE = 4096


def encode_diagnosis(encode: Callable[[object, np.ndarray], object], parsed: object, chunk: np.ndarray,
                     mcu: tuple[int, int]) -> tuple[str, str] | None:
    """(requirement, why) of a refused valid chunk, by asking for it again with one thing changed: its sides swapped,
    its channel axis, a 16x16 chunk for one beyond :data:`LARGE_SIDE` (then the refusal is of the size limit,
    JPEG-DIM-02), the same samples padded to whole MCUs for one that is not (then it is of the padding, JPEG-MCU-01;
    ``mcu``: height, width in samples).
    """
    if chunk.ndim < 2:
        return None
    height, width = chunk.shape[:2]
    if height != width and attempt(encode, parsed, np.ascontiguousarray(chunk.swapaxes(0, 1))).ok:
        return "JPEG-DIM-01", (f"it encodes the same chunk with height and width swapped ({width}x{height}) but refuses "
                               f"this {height}x{width} one: the spatial axes are (H, W)")
    if chunk.ndim == 3 and chunk.shape[2] == 1 and attempt(encode, parsed, np.ascontiguousarray(chunk[..., 0])).ok:
        return "JPEG-SHP-03", "it encodes the same samples as an (H, W) chunk but refuses them as (H, W, 1), which is grayscale too"
    if chunk.ndim == 2 and attempt(encode, parsed, np.ascontiguousarray(chunk[..., None])).ok:
        return "JPEG-SHP-02", "it encodes the same samples as an (H, W, 1) chunk but refuses them as (H, W), which is grayscale too"
    if max(height, width) > LARGE_SIDE:
        small = np.full((16, 16, *chunk.shape[2:]), 128, dtype=chunk.dtype)
        if attempt(encode, parsed, small).ok:
            return "JPEG-DIM-02", f"it encodes a 16x16 chunk but refuses this {height}x{width} one, within the 65535 limit"
        return None
    if height % mcu[0] or width % mcu[1]:
        # The same samples padded to whole MCUs by the encoder's own rule of thumb (edge samples repeated): accepted, the
        # refusal is of the padding the encoder must do, not of the chunk's size or content.
        rows, cols = -(-height // mcu[0]) * mcu[0], -(-width // mcu[1]) * mcu[1]
        extra = [(0, rows - height), (0, cols - width)] + [(0, 0)] * (chunk.ndim - 2)
        padded = np.pad(chunk, extra, mode="edge")
        if attempt(encode, parsed, padded).ok:
            return "JPEG-MCU-01", (f"it encodes the same samples padded to {rows}x{cols}, a whole number of "
                                   f"{mcu[0]}x{mcu[1]} MCUs, but refuses this {height}x{width} chunk: the encoder pads "
                                   "to the next MCU")
    return None


def decode_diagnosis(decode: Callable[[object, bytes, tuple[int, ...]], object], parsed: object, data: bytes,
                     shape: Sequence[int]) -> tuple[str, str] | None:
    """(requirement, why) of a refused decode of a valid stream, by asking for it with height and width swapped.

    A decoder that takes the first axis for the width refuses every stream whose sides differ
    (the frame does not fit the chunk it thinks it was given) and decodes them into the
    swapped shape: that is JPEG-DIM-01, whatever rule the refused case is about.
    """
    shape = tuple(int(n) for n in shape)
    if len(shape) < 2 or shape[0] == shape[1]:
        return None
    swapped = (shape[1], shape[0], *shape[2:])
    if attempt(decode, parsed, bytes(data), swapped).ok:
        return "JPEG-DIM-01", (f"it decodes the same stream into {list(swapped)}, the chunk shape {list(shape)} with height "
                               "and width swapped: the spatial axes are (H, W)")
    return None


def defaults_written(codec: Mapping[str, Any]) -> dict[str, Any] | None:
    """``codec`` with an omitted ``decoded_color_space`` written out as its default (JPEG-DCS-02); None if it names one."""
    configuration = codec.get("configuration")
    if not isinstance(configuration, Mapping) or "decoded_color_space" in configuration:
        return None
    default = "grayscale" if configuration.get("encoded_color_space") == "grayscale" else "rgb"
    return {**codec, "configuration": {**configuration, "decoded_color_space": default}}


def written_with_defaults(impl: Any, codec: Mapping[str, Any], chunk: np.ndarray) -> bytes | None:
    """The stream ``impl`` writes for ``chunk`` with the default decoded_color_space written out; None if none."""
    explicit = defaults_written(codec)
    parsed = attempt(impl.parse, explicit) if explicit is not None else None
    if parsed is None or not parsed.ok:
        return None
    got = attempt(impl.encode, parsed.value, np.array(chunk, copy=True))
    return bytes(got.value) if got.ok and isinstance(got.value, bytes | bytearray | memoryview) else None


def decoded_with_defaults(impl: Any, codec: Mapping[str, Any], data: bytes, shape: Sequence[int]) -> np.ndarray | None:
    """``impl``'s decode of ``data`` with the default decoded_color_space written out; None if none."""
    explicit = defaults_written(codec)
    parsed = attempt(impl.parse, explicit) if explicit is not None else None
    if parsed is None or not parsed.ok:
        return None
    got = attempt(impl.decode, parsed.value, bytes(data), tuple(int(n) for n in shape))
    return np.array(got.value, copy=True) if got.ok and isinstance(got.value, np.ndarray) else None


#: What a fault cured by writing the default decoded_color_space out cites.
DEFAULT_TAKEN_WRONG = ("JPEG-DCS-02", "with decoded_color_space written out as its default, the same call is right: "
                       "the default was taken wrong")


def default_cure(impl: Any, codec: Mapping[str, Any], data: bytes, shape: Sequence[int],
                 right: Callable[[np.ndarray], bool]) -> tuple[str, str] | None:
    """:data:`DEFAULT_TAKEN_WRONG` where the decode with the default decoded_color_space written out is ``right``
    and the same decode under ``codec``, asked again now, is not (a fault that a fresh call does not repeat,
    such as a reused output buffer, is no fault of the default)."""
    cured = decoded_with_defaults(impl, codec, data, shape)
    if cured is None or cured.shape != tuple(shape) or not right(cured):
        return None
    parsed = attempt(impl.parse, codec)
    control = attempt(impl.decode, parsed.value, bytes(data), tuple(int(n) for n in shape)) if parsed.ok else parsed
    if control.ok and isinstance(control.value, np.ndarray) and control.value.shape == tuple(shape) and right(
            np.array(control.value, copy=True)):
        return None
    return DEFAULT_TAKEN_WRONG


def chunk_form(chunk: np.ndarray, mcu: tuple[int, int]) -> str:
    """What an encoder may refuse a chunk for, beyond its configuration: its axes, its size class."""
    size = ("large" if max(chunk.shape[:2]) > LARGE_SIDE else "partial-mcu" if chunk.shape[0] % mcu[0] or chunk.shape[1] % mcu[1]
            else "whole-mcus") if chunk.ndim >= 2 else "flat"
    return f"{chunk.ndim}d-{chunk.shape[2] if chunk.ndim > 2 else 1}c-{size}"


def judge_twin(judge: Any, twin: Any, accepted: Callable[[], Attempt[Any]], implementation: str,
               diagnosed: Callable[[], bool] = lambda: False) -> None:
    """Return when the implementation accepts the valid twin of the invalid case it rejected; else block the case by it.

    A rejection shows that the case is rejected for its own fault only where its valid twin,
    one place away, is accepted. A twin that is an optional feature (MAY) and is refused makes
    the case ``unsupported`` instead: the implementation does not do that feature at all;
    unless ``diagnosed()`` says the twin's refusal is about something else (its own case fails).
    """
    precondition, registry = ("twin", implementation, twin.id), _registry(judge)
    if precondition not in registry:
        got = accepted()
        registry[precondition] = "" if got.ok else (
            f"{'refused' if got.rejection is not None else 'raised an error'}: {type(got.rejection or got.error).__name__}: "
            f"{got.rejection or got.error}")
    said = registry[precondition]
    judge.metrics["twin"] = twin.id
    if not said:
        return
    why = f"it rejects the valid twin {twin.id} as well ({said}): whether it rejects this case for its own fault cannot be told"
    if twin.level == "MAY" and said.startswith("refused") and not diagnosed():
        judge.cite(twin.requirements[-1])
        judge.finish(Outcome.UNSUPPORTED, f"{why}; the twin is an optional feature")
    judge.block(twin.id, why)


__all__ = ["LARGE_SIDE", "PARSE_PROBES", "DEFAULT_TAKEN_WRONG", "block_or_root", "chunk_form",
           "decode_diagnosis", "decoded_with_defaults", "default_cure", "defaults_written", "encode_diagnosis", "judge_twin",
           "key", "own_chunk_case", "own_parse_case", "parse_diagnosis", "written_with_defaults"]
