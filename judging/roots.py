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
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..corpus.cases import chunk_case_for, config_case_for
from .verdict import Attempt, Cause, Diagnosis, Outcome, attempt

#: The defect of a codec that writes chunks transposed (``encoder_accuracy``) or refuses chunks or streams for their
#: sides (:func:`encode_diagnosis`, :func:`decode_diagnosis`): one misreading of the axes, so one cause for all.
SWAPPED_AXES_WORDS = ("takes the chunk's first axis for the width: it writes square chunks transposed, and refuses "
                      "other chunks and streams whose sides do not fit that reading")


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


def _parse_cause(key: str, requirement: str, words: str) -> Cause:
    return Cause("parse", key, requirement, words)


#: A valid configuration refused: (what to change, the rule about it, what the refusal then is, the defect).
#: The first change after which the implementation accepts the configuration names the rule.
PARSE_PROBES: tuple[tuple[Callable[[dict[str, Any]], bool], str, str, Cause], ...] = (
    (_default_subsampling, "JPEG-SUB-05",
     "it accepts the same configuration with subsampling written out: it refuses subsampling omitted, "
     "which defaults for grayscale and rgb",
     _parse_cause("refuses-omitted-subsampling", "JPEG-SUB-05", "refuses a grayscale or rgb configuration without "
                  "subsampling, which the spec defaults to [[1, 1]] and [[1, 1], [1, 1], [1, 1]]")),
    (_default_decoded, "JPEG-DCS-02",
     "it accepts the same configuration with decoded_color_space written out: it refuses the default",
     _parse_cause("refuses-omitted-decoded-color-space", "JPEG-DCS-02",
                  "refuses a configuration without decoded_color_space, which the spec defaults")),
    (_drop("decoded_color_space", lambda c: "grayscale" if c.get("encoded_color_space") == "grayscale" else "rgb"),
     "JPEG-DCS-01", "it accepts the same configuration without decoded_color_space: it refuses the optional member given",
     _parse_cause("refuses-decoded-color-space", "JPEG-DCS-01", "refuses decoded_color_space written out, an optional "
                  "member")),
    (_drop("subsampling", lambda c: [[1, 1]] if c.get("encoded_color_space") == "grayscale" else [[1, 1], [1, 1], [1, 1]]),
     "JPEG-SUB-07", "it accepts the same configuration without subsampling: it refuses subsampling given equal to its default",
     _parse_cause("refuses-default-subsampling", "JPEG-SUB-07", "refuses subsampling written out equal to its default")),
    (_quality_90, "JPEG-Q-01", "it accepts the same configuration at quality 90: it refuses this quality, which lies in 1-100",
     _parse_cause("refuses-quality", "JPEG-Q-01", "refuses qualities that lie in 1-100")),
)


def parse_probe(parse: Callable[[Any], object], codec: Any) -> tuple[Diagnosis, Callable[[dict[str, Any]], bool]] | None:
    """The first probe of :data:`PARSE_PROBES` under which the implementation accepts ``codec``: what it finds, and the
    change it made (to ask other configurations again with the same cause removed, :func:`latent`)."""
    for change, requirement, why, cause in PARSE_PROBES:
        probe = _with(codec, change)
        if probe is not None and attempt(parse, probe).ok:
            return Diagnosis(requirement, why, cause), change
    return None


def parse_diagnosis(parse: Callable[[Any], object], codec: Any) -> Diagnosis | None:
    """(requirement, why, cause) of a refused valid configuration, from the first probe that the implementation accepts.

    A probe changes only the member it names and keeps the JSON form of every value, so it never
    takes away what an optional form (an integral float, JPEG-X-02) is about."""
    found = parse_probe(parse, codec)
    return found[0] if found is not None else None


def latent(parse: Callable[[Any], object], twin: Any, codec: Any) -> tuple[dict[str, Any], str] | None:
    """What an invalid configuration shows once the refusal of its valid ``twin`` is fixed: the twin's refusal's cause
    removed from ``codec`` (the probe that made the twin acceptable, applied to ``codec``) and, where the
    implementation then accepts it, (that configuration, what that says). None where no probe explains the twin's
    refusal, the change does not apply, or the changed configuration is refused too.

    The probe never changes the case's outcome or level: it stays blocked; this is what it would show."""
    found = parse_probe(parse, twin)
    if found is None:
        return None
    diagnosis, change = found
    probe = _with(codec, change)
    if probe is None or not attempt(parse, probe).ok:
        return None
    return probe, (f"accepts it once the cause of the twin's refusal is removed ({diagnosis.cause.words if diagnosis.cause else diagnosis.why}): "
                   f"{probe.get('configuration')!r} is accepted")


#: A chunk side above which a refusal that a 16x16 chunk does not get is about the size limit.
LARGE_SIDE = 4096

#: Encoders and decoders that drop every length-1 axis of a chunk (imagecodecs' ``_squeeze_shape``), found by
#: :func:`squeezes`: the rule it breaks first is that the spatial axes are H and W.
#: An encoder that takes the chunk's first axis for the width (:data:`SWAPPED_AXES_WORDS`).
SWAPPED_AXES = Cause("encode", "swapped-axes", "JPEG-DIM-01", SWAPPED_AXES_WORDS)
SQUEEZE = Cause("encode", "squeezes-length-1-axes", "JPEG-DIM-01",
                "drops every length-1 axis of the chunk before encoding (and makes what is left at least 2-D): a 1xW or "
                "Hx1 image loses an axis, and (1, H, W) or (H, 1, W, 3) chunks, which the spec rejects, pass as images")


def squeezes(encode: Callable[[object, np.ndarray], object], parsed: object, channels: tuple[int, ...]) -> bool:
    """Whether the encoder writes an (8, 1, 16, *channels) chunk, which the spec rejects (an axis too many, or 16
    channels), as an 8x16 image: it drops the length-1 axis."""
    from ..core.markers import inspect

    probe = np.arange(8 * 16 * int(np.prod(channels, dtype=np.int64)), dtype=np.int64).astype(np.uint8)
    got = attempt(encode, parsed, probe.reshape(8, 1, 16, *channels))
    if not got.ok or not isinstance(got.value, bytes | bytearray | memoryview):
        return False
    info = inspect(bytes(got.value))
    return info.ok and (info.height, info.width) == (8, 16)


def _size_cap(accepts: Callable[[int], bool], low: int, high: int) -> int:
    """The largest n in [low, high) that ``accepts``, given that it accepts ``low`` and refuses ``high`` (bisection)."""
    while high - low > 1:
        middle = (low + high) // 2
        if accepts(middle):
            low = middle
        else:
            high = middle
    return low


def _capped(stage: str, axis: str, limit: int) -> Cause:
    return Cause(stage, f"size-cap-{axis}-{limit}", "JPEG-DIM-02",
                 f"refuses {'heights' if axis == 'height' else 'widths'} above {limit} (the spec's limit is 65535)")


def _cap_probe(accepts: Callable[[int, int], bool], height: int, width: int, stage: str) -> Diagnosis | None:
    """Where a chunk beyond :data:`LARGE_SIDE` is refused: the largest height (width 16) or width (height 8) accepted,
    found by bisection, as a :class:`Diagnosis` of a size cap (JPEG-DIM-02); None where even 16 is refused."""
    for axis, side in (("width", width), ("height", height)):
        if side <= LARGE_SIDE:
            continue
        ok = (lambda n: accepts(8, n)) if axis == "width" else (lambda n: accepts(n, 16))
        if not ok(16) or ok(side):
            continue
        limit = _size_cap(ok, 16, side)
        return Diagnosis("JPEG-DIM-02", f"it {stage}s {axis}s up to {limit} and refuses {limit + 1} (bisected over "
                                        f"8-row or 16-column chunks), within the 65535 limit",
                         _capped(stage, axis, limit))
    return None


def encode_diagnosis(encode: Callable[[object, np.ndarray], object], parsed: object, chunk: np.ndarray,
                     mcu: tuple[int, int]) -> Diagnosis | None:
    """(requirement, why, cause) of a refused valid chunk, by asking for it again with one thing changed: its sides
    swapped, its channel axis, smaller chunks for one beyond :data:`LARGE_SIDE` (then the refusal is of a size cap,
    JPEG-DIM-02, found by bisection), a chunk with a length-1 axis the encoder drops (:func:`squeezes`), the same
    samples padded to whole MCUs for one that is not (then it is of the padding, JPEG-MCU-01; ``mcu``: height, width
    in samples).
    """
    if chunk.ndim < 2:
        return None
    height, width = chunk.shape[:2]
    if max(height, width) > LARGE_SIDE:
        # First: an encoder with a cap on one side also takes the chunk with its sides swapped.
        def accepts(h: int, w: int) -> bool:
            return attempt(encode, parsed, np.full((h, w, *chunk.shape[2:]), 128, dtype=chunk.dtype)).ok
        capped = _cap_probe(accepts, height, width, "encode")
        if capped is not None:
            return capped
    if height != width and attempt(encode, parsed, np.ascontiguousarray(chunk.swapaxes(0, 1))).ok:
        return Diagnosis("JPEG-DIM-01", f"it encodes the same chunk with height and width swapped ({width}x{height}) but "
                                        f"refuses this {height}x{width} one: the spatial axes are (H, W)",
                         SWAPPED_AXES)
    if chunk.ndim == 3 and chunk.shape[2] == 1 and attempt(encode, parsed, np.ascontiguousarray(chunk[..., 0])).ok:
        return Diagnosis("JPEG-SHP-03", "it encodes the same samples as an (H, W) chunk but refuses them as (H, W, 1), "
                                        "which is grayscale too",
                         Cause("encode", "refuses-hw1", "JPEG-SHP-03", "refuses (H, W, 1) chunks, which are grayscale"))
    if chunk.ndim == 2 and attempt(encode, parsed, np.ascontiguousarray(chunk[..., None])).ok:
        return Diagnosis("JPEG-SHP-02", "it encodes the same samples as an (H, W, 1) chunk but refuses them as (H, W), "
                                        "which is grayscale too",
                         Cause("encode", "refuses-hw", "JPEG-SHP-02", "refuses (H, W) chunks, which are grayscale"))
    if max(height, width) > LARGE_SIDE:
        return None
    if 1 in (height, width) and squeezes(encode, parsed, tuple(chunk.shape[2:])):
        return Diagnosis(SQUEEZE.requirement, f"it encodes an (8, 1, 16{''.join(f', {n}' for n in chunk.shape[2:])}) chunk "
                                              f"as an 8x16 image, so it refuses this {height}x{width} chunk for what is "
                                              "left once its length-1 axis is dropped", SQUEEZE)
    if height % mcu[0] or width % mcu[1]:
        # The same samples padded to whole MCUs by the encoder's own rule of thumb (edge samples repeated): accepted, the
        # refusal is of the padding the encoder must do, not of the chunk's size or content.
        rows, cols = -(-height // mcu[0]) * mcu[0], -(-width // mcu[1]) * mcu[1]
        extra = [(0, rows - height), (0, cols - width)] + [(0, 0)] * (chunk.ndim - 2)
        padded = np.pad(chunk, extra, mode="edge")
        if attempt(encode, parsed, padded).ok:
            return Diagnosis("JPEG-MCU-01", f"it encodes the same samples padded to {rows}x{cols}, a whole number of "
                                            f"{mcu[0]}x{mcu[1]} MCUs, but refuses this {height}x{width} chunk: the encoder "
                                            "pads to the next MCU",
                             Cause("encode", "refuses-partial-mcu", "JPEG-MCU-01", "refuses chunks whose sides are not "
                                   "whole MCUs: it does not pad to the next MCU"))
    return None


def _planar_refusal(data: bytes, refusal: BaseException | None) -> Diagnosis | None:
    """A decode refused for its sample count where that count is the stream's planar YUV buffer (libjpeg-turbo's layout,
    ``diagnoses.planar_sizes``): the decoder hands over its planes, which do not fill an interleaved chunk."""
    from .diagnoses import fault_cause, planar_sizes
    from .t81.reading import reading

    frame = reading(data).stream.frame
    if refusal is None or frame is None or len(frame.components) != 3:
        return None
    said = {int(n) for n in re.findall(r"\d+", str(refusal))}
    for count, layout in planar_sizes(frame).items():
        if count in said and count != frame.height * frame.width * 3:
            cause = fault_cause("planar", "decode")
            return Diagnosis(cause.requirement, f"the refusal names {count} samples, the size of the stream's planar YUV "
                                                f"buffer ({layout}), not the chunk's {frame.height * frame.width * 3}: "
                                                f"{cause.words}", cause)
    return None


def decode_diagnosis(decode: Callable[[object, bytes, tuple[int, ...]], object], parsed: object, data: bytes,
                     shape: Sequence[int], refusal: BaseException | None = None,
                     codec: Mapping[str, Any] | None = None) -> Diagnosis | None:
    """(requirement, why, cause) of a refused decode of a valid stream: asked with height and width swapped; the
    refusal's own words against the stream's planar buffer size (``refusal``); for a stream beyond
    :data:`LARGE_SIDE`, streams of the same configuration (``codec``) and smaller sides, to find a size cap.

    A decoder that takes the first axis for the width refuses every stream whose sides differ
    (the frame does not fit the chunk it thinks it was given) and decodes them into the
    swapped shape: that is JPEG-DIM-01, whatever rule the refused case is about.
    """
    shape = tuple(int(n) for n in shape)
    if len(shape) < 2:
        return None
    capped = _decode_cap(decode, parsed, shape, codec) if codec is not None and max(shape[:2]) > LARGE_SIDE else None
    if capped is not None:  # first: a decoder with a cap on one side may decode the stream into the swapped shape
        return capped
    swapped = (shape[1], shape[0], *shape[2:])
    if shape[0] != shape[1] and attempt(decode, parsed, bytes(data), swapped).ok:
        return Diagnosis("JPEG-DIM-01", f"it decodes the same stream into {list(swapped)}, the chunk shape {list(shape)} "
                                        "with height and width swapped: the spatial axes are (H, W)",
                         Cause("decode", "swapped-axes", "JPEG-DIM-01", SWAPPED_AXES_WORDS))
    return _planar_refusal(data, refusal)


def _decode_cap(decode: Callable[[object, bytes, tuple[int, ...]], object], parsed: object, shape: tuple[int, ...],
                codec: Mapping[str, Any]) -> Diagnosis | None:
    """A size cap of a decoder (:func:`_cap_probe`), asked with streams of ``codec`` this project writes."""
    from ..backends import BackendUnavailable, load_backend

    for name in ("turbojpeg", "imagecodecs"):  # the strict backend first; imagecodecs writes YCbCr passthrough too
        try:
            writer = load_backend(name)
            config = writer.parse(codec)
            break
        except (BackendUnavailable, ValueError, TypeError):
            continue
    else:
        return None

    def accepts(h: int, w: int) -> bool:
        chunk = np.full((h, w, *shape[2:]), 128, dtype=np.uint8)
        chunk[:, : min(w, 8)] = 0  # not flat: an image every decoder has to decode
        try:
            stream = writer.encode(config, chunk)
        except (ValueError, TypeError) as exc:  # a side this project's writer cannot write: nothing to ask with
            raise _NoProbe from exc
        return attempt(decode, parsed, stream, (h, w, *shape[2:])).ok

    try:
        return _cap_probe(accepts, shape[0], shape[1], "decode")
    except _NoProbe:
        return None


class _NoProbe(Exception):
    """A probe that cannot be made here (a stream this project cannot write): no diagnosis."""


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


#: A decoder whose colour transform the configuration chooses: the same stream decodes right under a configuration
#: that names the stream's colour space (decoding ignores encoded_color_space, JPEG-DEC-01).
FOLLOWS_CONFIGURATION = Cause("decode", "follows-configuration", "JPEG-DEC-01",
                              "the configuration's encoded_color_space, not the stream's markers, chooses the colour "
                              "transform when decoding")

#: What a fault cured by writing the default decoded_color_space out cites.
DEFAULT_TAKEN_WRONG = ("JPEG-DCS-02", "with decoded_color_space written out as its default, the same call is right: "
                       "the default was taken wrong")


def default_taken_wrong(stage: str) -> Diagnosis:
    """:data:`DEFAULT_TAKEN_WRONG` at ``stage`` (encode or decode), with its cause."""
    return Diagnosis(*DEFAULT_TAKEN_WRONG, Cause(stage, "default-decoded-color-space", DEFAULT_TAKEN_WRONG[0],
                                                 "takes an omitted decoded_color_space for something other than its "
                                                 "default (grayscale for grayscale, rgb otherwise)"))


def default_cure(impl: Any, codec: Mapping[str, Any], data: bytes, shape: Sequence[int],
                 right: Callable[[np.ndarray], bool]) -> Diagnosis | None:
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
    return default_taken_wrong("decode")


def chunk_form(chunk: np.ndarray, mcu: tuple[int, int]) -> str:
    """What an encoder may refuse a chunk for, beyond its configuration: its axes, its size class."""
    size = ("large" if max(chunk.shape[:2]) > LARGE_SIDE else "partial-mcu" if chunk.shape[0] % mcu[0] or chunk.shape[1] % mcu[1]
            else "whole-mcus") if chunk.ndim >= 2 else "flat"
    return f"{chunk.ndim}d-{chunk.shape[2] if chunk.ndim > 2 else 1}c-{size}"


def judge_twin(judge: Any, twin: Any, accepted: Callable[[], Attempt[Any]], implementation: str,
               diagnosed: Callable[[], bool] = lambda: False,
               hidden: Callable[[], tuple[Any, str] | None] | None = None) -> None:
    """Return when the implementation accepts the valid twin of the invalid case it rejected; else block the case by it.

    A rejection shows that the case is rejected for its own fault only where its valid twin,
    one place away, is accepted. A twin that is an optional feature (MAY) and is refused makes
    the case ``unsupported`` instead: the implementation does not do that feature at all;
    unless ``diagnosed()`` says the twin's refusal is about something else (its own case fails).
    ``hidden()``, asked of a case blocked so: what the case shows once the twin's refusal is fixed
    (:func:`latent`); recorded as the blocked case's ``latent``, which changes neither its outcome nor its level.
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
    shown = hidden() if hidden is not None and said.startswith("refused") else None
    if shown is not None and judge.requirements:
        probe, words = shown
        judge.latent = {"requirement": judge.requirements[0], "words": words, "codec": probe}
        why = f"{why}; latent: {words}"
    judge.block(twin.id, why)


__all__ = ["LARGE_SIDE", "PARSE_PROBES", "DEFAULT_TAKEN_WRONG", "FOLLOWS_CONFIGURATION", "SQUEEZE", "block_or_root",
           "chunk_form", "SWAPPED_AXES", "SWAPPED_AXES_WORDS", "decode_diagnosis", "decoded_with_defaults",
           "default_cure", "default_taken_wrong", "defaults_written", "encode_diagnosis", "judge_twin", "key",
           "latent", "own_chunk_case", "own_parse_case", "parse_diagnosis", "parse_probe", "squeezes",
           "written_with_defaults"]
