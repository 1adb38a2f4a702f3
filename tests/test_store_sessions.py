"""One store read is one session: zarr's decodes of a store are charged to that store and its implementation.

When one chunk's decode fails, zarr stops the read but the decodes it had already scheduled for the
store's other chunks still run. They used to look up the session current when they ran: a next store
read opened at once was judged on the first store's chunks ("stream stores rgb; cannot return grayscale").
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.core.config import JpegConfig, parse_codec
from zarr_jpeg_conformance.corpus.streams import reference_decode
from zarr_jpeg_conformance.judging.verdict import Judge, Outcome

stores = pytest.importorskip("zarr_jpeg_conformance.suites.test_stores")


def _decoder(name: str, decode: Callable[[JpegConfig, bytes, tuple[int, ...]], object]) -> Any:
    return SimpleNamespace(name=name, roles=frozenset({"decode"}), parse=parse_codec, decode=decode)


def _read(impl: Any, store: str) -> Judge:
    case = next(s for s in stores.STORES if s.name == store)
    judge = Judge(impl.name, case.id, list(case.requirements), case.level, roots={})
    with contextlib.suppress(pytest.fail.Exception, pytest.skip.Exception):
        stores._read(impl, case, judge)
    return judge


def test_a_store_read_cut_short_by_a_refusal_leaves_no_decode_to_the_next_read() -> None:
    seen: list[tuple[str, tuple[int, ...]]] = []

    def refuses(parsed: JpegConfig, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
        seen.append(("refuses", shape))
        raise ValueError("refused")

    def right(parsed: JpegConfig, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
        seen.append(("right", shape))
        return reference_decode(data, parsed, shape)

    for _ in range(3):  # the next read opened at once, as the suite does
        _read(_decoder("refuses", refuses), "rgb")
        judge = _read(_decoder("right", right), "gray-2d")
        assert judge.outcome is Outcome.PASS, judge.messages
    # the right decoder saw only the gray store's 2-d chunks, and the refusing one each of the rgb store's it was given
    assert {len(shape) for who, shape in seen if who == "right"} == {2}, seen
