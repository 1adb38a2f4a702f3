"""Limits of judging/ that the other tests leave open: what an error is charged to, what a message adds, who pressed Ctrl-C.

An exception a decoder raises that is not a rejection is the case's error, its finding the
stage and the exception's type, and not the shape check that would otherwise meet the missing
array; a decode that returns is no error. A wrong decode note says "constant" only where the
decode is constant and the image it should be is not. A Ctrl-C that reached the plugin's own
SIGINT watch is the user's, though the watch is still in place.
"""

from __future__ import annotations

import contextlib
import signal
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.judging import plugin
from zarr_jpeg_conformance.judging.checks import Calls, constant_note
from zarr_jpeg_conformance.judging.verdict import Judge, Outcome

GRAY: dict[str, Any] = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}
SHAPE = (8, 8)


def _judged(call: Any, case: str = "case") -> Judge:
    """The judge a call left (a failed check ends its test; the verdict is what it left)."""
    judge = Judge("impl", case, [], "MUST", roots={})
    with contextlib.suppress(pytest.fail.Exception, pytest.skip.Exception):
        call(judge)
    return judge


class _Decoder:
    """An implementation that parses as the spec does and decodes with ``decode``."""

    name = "stand-in"

    def __init__(self, decode: Any) -> None:
        self.decode = decode

    def parse(self, codec: dict[str, Any]) -> object:
        return parse_codec(codec)


def _raises(parsed: object, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
    raise RuntimeError("the decoder's own bug")


def _returns(parsed: object, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
    return np.full(shape, 128, dtype=np.uint8)


# ------------------------------------------------------------------ checks: errors and notes


def test_an_exception_a_decoder_raises_is_the_cases_error_named_by_stage_and_type() -> None:
    # Charged to the shape check instead, one bug that raises in every decode would be a fail of
    # JPEG-DEC-03 in each case rather than one finding "decode: RuntimeError".
    judge = _judged(lambda j: Calls(j, _Decoder(_raises), GRAY).decode(b"\xff\xd8", SHAPE))
    assert (judge.outcome, judge.finding) == (Outcome.ERROR, "decode: RuntimeError"), judge.messages
    assert "RuntimeError: the decoder's own bug" in judge.messages[-1]


def test_a_decode_that_returns_is_no_error() -> None:
    out: list[np.ndarray] = []
    judge = _judged(lambda j: out.append(Calls(j, _Decoder(_returns), GRAY).decode(b"\xff\xd8", SHAPE)))
    assert (judge.outcome, judge.finding, judge.messages) == (Outcome.PASS, None, [])
    assert len(out) == 1 and out[0].shape == SHAPE


def test_a_decode_note_says_constant_only_for_a_constant_decode_of_an_image_that_is_not() -> None:
    image = np.arange(64, dtype=np.uint8).reshape(SHAPE)
    flat = np.full(SHAPE, 7, dtype=np.uint8)
    assert "every sample is 7" in constant_note(flat, image)
    assert constant_note(image[::-1], image) == ""  # wrong, but not constant
    assert constant_note(flat, np.full(SHAPE, 9, dtype=np.uint8)) == ""  # the image is constant too: no telling


# ------------------------------------------------------------------ plugin: who pressed Ctrl-C


def test_a_ctrl_c_that_reached_the_watch_is_the_users_while_the_watch_stays() -> None:
    """A KeyboardInterrupt after a real SIGINT stops the run; before one, under the watch, it is the code's."""
    previous = signal.getsignal(signal.SIGINT)
    seen: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))  # a harmless handler for the watch to wrap
    try:
        interrupts = plugin._Interrupts()
        interrupts.install()
        assert not interrupts.users()
        signal.raise_signal(signal.SIGINT)
        assert seen == [signal.SIGINT]  # the wrapped handler still ran
        assert signal.getsignal(signal.SIGINT) == interrupts._handler
        assert interrupts.users()
        interrupts.uninstall()
    finally:
        signal.signal(signal.SIGINT, previous)

