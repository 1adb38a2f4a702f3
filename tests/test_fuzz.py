"""Short fuzzing campaign in CI: mutated streams into every built-in decoder and the inspector."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zarr_jpeg_conformance.adapters import BUILTINS, load_adapter
from zarr_jpeg_conformance.core.markers import StreamInfo, inspect
from zarr_jpeg_conformance.tools.fuzz import SEEDS as SEED_CODECS
from zarr_jpeg_conformance.tools.fuzz import judge_decode, mutate, seed_streams

ENCODER = load_adapter("imagecodecs")
SEEDS = seed_streams(ENCODER)


@pytest.fixture(scope="module", params=sorted(BUILTINS))
def decoder(request: pytest.FixtureRequest):
    return load_adapter(request.param)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, len(SEEDS) - 1), rng_seed=st.integers(0, 2**32 - 1))
def test_mutated_streams_are_rejected_or_decoded_to_shape(decoder, which: int, rng_seed: int) -> None:
    """Only a clean rejection or a correct-shape uint8 array may come out."""
    name, _, stream, shape = SEEDS[which]
    data = mutate(stream, random.Random(rng_seed))
    assert isinstance(inspect(data), StreamInfo)
    try:
        parsed = decoder.parse(next(c for n, c, _ in SEED_CODECS if n == name))
    except ValueError:
        return  # the decoder does not support this mode at all
    judge_decode(lambda d: decoder.decode(parsed, d, shape), data, shape)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.binary(max_size=2048))
def test_inspector_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    info = inspect(data)
    assert isinstance(info, StreamInfo) and info.length == len(data)
