"""Edges of zarrcodecs/ and report/ that the other tests leave open.

The threaded codec pipeline decodes through a chain of two array-to-array codecs, each with its own
spec; a results file may hold a line of exactly 16 MiB and no longer; the matrix keys a case that
one implementation has several lines of by the decoder a line names, and numbers the lines that
name neither from #2 on, to the first number not taken.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zarr_jpeg_conformance.report import model, saved

# ---------------------------------------------------------------- zarrcodecs: the threaded pipeline


def test_the_threaded_pipeline_reads_through_two_array_to_array_codecs_as_zarrs_default_does() -> None:
    """Each codec of the chain decodes with the spec it encoded with (non-square chunks make the two transposes'
    specs differ): what is read is what zarr's own pipeline reads."""
    zarr = pytest.importorskip("zarr")
    from zarr.codecs import TransposeCodec
    from zarr.storage import MemoryStore

    from zarr_jpeg_conformance.zarrcodecs.jpeg import REGISTRY_KEY, JpegCodec, register
    from zarr_jpeg_conformance.zarrcodecs.pipeline import PIPELINE_PATH, ThreadedCodecPipeline

    register()
    entries: dict[str, Any] = {}
    data = np.random.default_rng(3).integers(0, 256, (40, 70), dtype=np.uint8)
    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY}):
        array = zarr.create_array(MemoryStore(entries), shape=data.shape, chunks=(16, 24), dtype="uint8", fill_value=0,
                                  filters=[TransposeCodec(order=(1, 0)), TransposeCodec(order=(1, 0))],
                                  serializer=JpegCodec(quality=90, encoded_color_space="grayscale"), compressors=None)
        array[...] = data
        read: dict[str, np.ndarray] = {}
        for path in ("zarr.core.codec_pipeline.BatchedCodecPipeline", PIPELINE_PATH):
            with zarr.config.set({"codec_pipeline.path": path}):
                opened = zarr.open_array(MemoryStore(dict(entries)), mode="r", zarr_format=3)
                read[path] = np.asarray(opened[...])
    pipeline = opened.async_array.codec_pipeline
    assert type(pipeline) is ThreadedCodecPipeline and len(pipeline.array_array_codecs) == 2
    np.testing.assert_array_equal(read[PIPELINE_PATH], read["zarr.core.codec_pipeline.BatchedCodecPipeline"])
    assert np.abs(read[PIPELINE_PATH].astype(int) - data).max() < 64  # lossy, but the image, not a transposed one


# ---------------------------------------------------------------- report: results files


def _results_line(padding: int) -> bytes:
    """A valid results line followed by ``padding`` spaces (JSON allows them) and its newline."""
    record = {"format_version": 1, "implementation": "pillow", "case": "config.quality.zero", "outcome": "pass",
              "requirements": ["JPEG-Q-01"], "level": "MUST", "message": "", "metrics": {},
              "test": "test_parse.py::test_parse[pillow-config.quality.zero]"}
    return json.dumps(record).encode() + b" " * padding + b"\n"


def test_a_results_line_of_16_mib_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    """16 MiB, newline included, is the longest line the reader holds whole; the bound is a fixed size, not whatever
    the constant says, since a report folder written by one version is read by another."""
    limit = 16 << 20
    path = tmp_path / "pillow.jsonl"
    line = _results_line(0)
    path.write_bytes(_results_line(limit - len(line)))
    assert path.stat().st_size == limit
    (record,) = saved.read_results(path)
    assert record["case"] == "config.quality.zero"
    path.write_bytes(_results_line(limit - len(line) + 1))
    with pytest.raises(saved.ReportFileError, match="line 1: longer than 16,777,216 bytes"):
        saved.read_results(path)


# ---------------------------------------------------------------- report: keys of a case's several lines


def _line(case: str, **metrics: Any) -> model.CaseResult:
    return model.CaseResult("a", case, "pass", "MUST", ("JPEG-DEC-01",), "", metrics, test="test_cross.py::test_x[x]")


def _keys(results: list[model.CaseResult]) -> list[str]:
    return list(model.build(results, implementations=[]).cases["a"])


def test_a_second_line_of_one_case_that_names_no_codec_is_its_2() -> None:
    """The first line keeps the plain case ID, so the second is the case's #2 (not a key of codecs it does not name)."""
    assert _keys([_line("stream.x"), _line("stream.x")]) == ["stream.x", "stream.x #2"]


class _Taken(set[str]):
    """Keys already taken, that refuse to be looked up without end: a search for a free key that does not move on
    fails here instead of hanging."""

    lookups = 0

    def __contains__(self, key: object) -> bool:
        self.lookups += 1
        assert self.lookups <= 50, f"still looking for a free key after 50 tries, the last {key!r}"
        return super().__contains__(key)


def test_a_line_of_a_case_whose_first_numbers_are_taken_gets_the_next_free_one() -> None:
    taken = _Taken({"stream.x", "stream.x #2", "stream.x #3"})
    assert model._case_key(_line("stream.x"), taken) == "stream.x #4"


def test_a_repeated_line_that_names_only_its_decoder_is_keyed_by_it() -> None:
    """A decode of a stream no row encoded names a decoder and no encoder: that still tells the lines apart."""
    keys = _keys([_line("stream.x"), _line("stream.x", decoder="pillow"), _line("stream.x", encoder="zarrs", decoder="pillow")])
    assert keys == ["stream.x", "stream.x [None->pillow]", "stream.x [zarrs->pillow]"]
