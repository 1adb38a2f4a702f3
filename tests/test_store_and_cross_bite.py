"""Proof that the store and cross suites bite: wrong decoders are caught there too, legal ones pass.

The store suite hands the implementation every chunk of every fixture store (through zarr:
transpose, reshape, sharding, boundary chunks, neuroglancer layouts); the cross suite hands it
what every encoder under test wrote. Each judges a decode by the span of the stream's
expected decodes, like the stream suite; these tests run the same wrong and legal decoders
(tests/wrong_decoders.py) through them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("zarr", reason="the store suite needs zarr-python")
pytest_plugins = ["pytester"]

SUITES = Path(__file__).resolve().parents[1] / "suites"
TESTS = Path(__file__).resolve().parent


def _run(pytester: pytest.Pytester, suite: str, *impls: str, select: str = "") -> list[dict[str, Any]]:
    results = pytester.path / "results.jsonl"
    pytester.syspathinsert(TESTS)
    args = [str(SUITES / suite), *(f"--impl={i}" for i in impls), "--results", str(results),
            "--import-mode=importlib", "-p", "no:cacheprovider", "-q", "-W", "ignore::UserWarning"]
    pytester.runpytest_inprocess(*args, *(["-k", select] if select else []))
    return [json.loads(line) for line in results.read_text().splitlines()]


@pytest.mark.parametrize(("decoder", "store", "requirement"), [
    ("Transposes", "gray-2d", "JPEG-DIM-01"),
    ("IgnoresApp14", "rgb", "JPEG-ECS-12"),
    ("ShiftedChroma", "ycbcr-420", "chroma is not where the stream stores it"),
    ("LimitedRange", "sharded", "studio range"),
    ("ShiftedChroma", "ng-tensorstore-rgb", "JPEG-INT-01"),
])
def test_store_suite_catches_a_wrong_decoder(pytester: pytest.Pytester, decoder: str, store: str, requirement: str) -> None:
    records = _run(pytester, "test_stores.py", f"wrong_decoders:{decoder}", select=store)
    hits = [r for r in records if r["case"].endswith(store) or f"[{store}]" in r["case"]]
    caught = [r for r in hits if r["outcome"] == "fail" and requirement in r["message"]]
    assert caught, [(r["case"], r["outcome"], r["message"][:300]) for r in hits]


@pytest.mark.parametrize("decoder", ["RepeatsChroma", "AtTheBounds", "imagecodecs"])
def test_store_suite_passes_a_legal_decoder(pytester: pytest.Pytester, decoder: str) -> None:
    impl = decoder if decoder == "imagecodecs" else f"wrong_decoders:{decoder}"
    records = _run(pytester, "test_stores.py", impl)
    bad = [(r["case"], r["outcome"], r["message"][:300]) for r in records if r["outcome"] in ("fail", "warn", "error")]
    assert len(records) > 10 and not bad, bad


def test_cross_suite_catches_a_wrong_decoder_and_passes_legal_ones(pytester: pytest.Pytester) -> None:
    records = _run(pytester, "test_cross.py", "imagecodecs", "wrong_decoders:ShiftedChroma", "wrong_decoders:RepeatsChroma",
                   "wrong_decoders:LimitedRange", select="ycbcr-420 or ycbcr-444 or gray")
    by = {(r["implementation"], r["case"]): r for r in records}
    wrong = [r for (impl, _), r in by.items() if impl == "wrong-shifted-chroma" and "ycbcr" in r["case"]]
    # Judged by the exact reconstruction: a shifted chroma plane misses its samples over their footprints (4:2:0), or
    # lies far from the exact samples (4:4:4).
    assert wrong and all(r["outcome"] == "fail" and ("exact reconstruction" in r["message"] or "not where the stream stores it"
                                                      in r["message"]) for r in wrong), wrong
    assert not any("it looks like" in r["message"] for r in wrong)  # no classic bug explains a shift
    limited = [r for (impl, case), r in by.items() if impl == "wrong-limited-range" and "ycbcr" in case]
    assert limited and all(r["outcome"] == "fail" and "it looks like YCbCr read as studio range" in r["message"] for r in limited), limited
    legal = [r for (impl, _), r in by.items() if impl in ("imagecodecs", "legal-repeats-chroma")]
    assert legal and all(r["outcome"] == "pass" for r in legal), [(r["case"], r["outcome"], r["message"][:200]) for r in legal]


def test_a_decoder_refusing_another_writers_stream_fails_where_decoding_is_required_and_only_there(
        pytester: pytest.Pytester) -> None:
    """A decoder that accepted the configuration and then refuses the stream: a fail of the case's rule for the modes
    every decoder must read (grayscale, 4:2:0), unsupported for the factor sets it MAY refuse (4:1:1, JPEG-X-04)."""
    records = _run(pytester, "test_cross.py", "imagecodecs", "wrong_decoders:RefusesEveryStream", select="gray or ycbcr-411")
    refused = {r["case"]: r for r in records if r["implementation"] == "wrong-refuses-every-stream"}
    must = [r for case, r in refused.items() if "gray" in case]
    may = [r for case, r in refused.items() if "ycbcr-411" in case]
    assert must and all(r["outcome"] == "fail" and "refused" in r["message"] for r in must), must
    assert may and all(r["outcome"] == "unsupported" and "JPEG-X-04 allows" in r["message"] for r in may), may


def test_a_chunk_that_is_also_a_stream_case_has_the_same_expected_decodes() -> None:
    """The neuroglancer chunks are stream cases too: both suites judge them against the same decodes."""
    from zarr_jpeg_conformance.corpus.streams import corpus_references, stream_cases

    shared = [c for c in stream_cases() if "neuroglancer" in c.id]
    assert len(shared) >= 4
    for case in shared:
        found = corpus_references(case.data(), case.chunk_shape)
        assert found is not None and len(found) == len(case.references()), case.id
        assert all(np.array_equal(a, b) for a, b in zip(found, case.references(), strict=True)), case.id
    assert corpus_references(shared[0].data(), (1, 1, 3)) is None, "another chunk shape is another question"


def test_the_zarr_adapter_reads_stores_with_a_pool_of_one_thread(pytester: pytest.Pytester) -> None:
    """zarr sizes its thread pool once per process; with one worker, the store suite's read
    through the zarr adapter (zarr inside zarr) once waited on itself forever: CI hung here."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "ZARR_THREADING__MAX_WORKERS": "1"}  # donfig reads zarr's config from ZARR_* variables
    cmd = [sys.executable, "-m", "pytest", str(SUITES / "test_stores.py"), "--impl=zarr", "-k", "test_read_store",
           "-q", "-p", "no:cacheprovider", "--rootdir", str(pytester.path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=pytester.path, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout, done.stdout[-2000:]


def test_a_decode_of_the_wrong_shape_is_judged_and_the_read_goes_on() -> None:
    """zarr would stop the read at the first wrong-shaped chunk, in its own words: every chunk is decoded and judged."""
    import zarr
    from zarr.storage import MemoryStore

    from zarr_jpeg_conformance.judging.zarr_under_test import reading
    from zarr_jpeg_conformance.zarrcodecs.jpeg import JpegCodec, default_backend, register

    codec = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}
    register()
    entries: dict[str, Any] = {}
    array = zarr.create_array(MemoryStore(entries), shape=(32, 48), chunks=(16, 16), dtype="uint8", fill_value=0,
                              serializer=JpegCodec.with_backend(codec, default_backend()), compressors=None)
    array[...] = np.arange(32 * 48, dtype=np.uint8).reshape(32, 48)

    class Transposed:
        def decode(self, parsed: object, data: bytes, shape: tuple[int, ...]) -> np.ndarray:
            return np.zeros(shape[::-1] + (2,), np.uint8)

    with reading(Transposed(), codec, None) as calls:
        read = zarr.open_array(MemoryStore(dict(entries)), mode="r", zarr_format=3)[...]
    assert len(calls) == 6 and all(np.shape(c.result) == (16, 16, 2) for c in calls)
    assert read.shape == (32, 48) and not read.any()  # each refused result stands in as zeros


def test_the_codec_under_test_says_where_it_belongs_when_used_outside_a_read() -> None:
    from zarr_jpeg_conformance.judging.zarr_under_test import CodecUnderTest

    with pytest.raises(RuntimeError, match=r"outside zarr_under_test\.reading\(\)"):
        CodecUnderTest().to_dict()
