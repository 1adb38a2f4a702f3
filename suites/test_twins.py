"""Every invalid configuration, chunk and build case has a valid twin that differs from it in one place.

No adapter is needed. The suites count a rejection of an invalid case only where the same
implementation accepts its twin (otherwise the case is ``blocked`` by the twin), so the twin
must be valid by the spec's rules (core's parser and chunk checks agree) and differ in exactly
one place: then the rejection can only be about that place.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.core.chunk import check_chunk
from zarr_jpeg_conformance.core.config import parse_codec
from zarr_jpeg_conformance.corpus.cases import (
    BuildCase,
    ChunkCase,
    ConfigCase,
    build_cases,
    chunk_cases,
    chunk_places,
    config_cases,
    differing_places,
    twin_of,
)

INVALID: list[ConfigCase | ChunkCase | BuildCase] = [
    *(c for c in config_cases() if not c.valid), *(c for c in chunk_cases() if not c.valid),
    *(c for c in build_cases() if c.expect == "refused")]


def _twin(case: ConfigCase | ChunkCase | BuildCase) -> Any:
    try:
        return twin_of(case)
    except KeyError as exc:
        pytest.fail(str(exc))


@pytest.mark.parametrize("case", INVALID, ids=[c.id for c in INVALID])
def test_invalid_case_has_a_valid_twin_one_place_away(case: ConfigCase | ChunkCase | BuildCase) -> None:
    twin = _twin(case)
    if isinstance(case, ConfigCase):
        assert twin.valid, f"{case.id}: its twin {twin.id} is not a valid case"
        parse_codec(twin.codec)  # core's parser agrees that it is valid
        places = differing_places(case.codec, twin.codec)
    elif isinstance(case, ChunkCase):
        assert twin.valid, f"{case.id}: its twin {twin.id} is not a valid case"
        config = parse_codec(twin.codec)
        check_chunk(config, np.zeros(twin.chunk.shape, dtype=twin.chunk.dtype))
        places = chunk_places(case, twin)
    else:
        assert twin.expect == "built", f"{case.id}: its twin {twin.id} expects {twin.expect!r}, not 'built'"
        places = differing_places(case.options, twin.options)
    assert len(places) == 1, f"{case.id} and its twin {twin.id} differ in {len(places)} places ({', '.join(places)}), not one"
