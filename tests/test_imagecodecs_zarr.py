"""imagecodecs_jpeg (imagecodecs-zarr): the adapter, the metadata mapping, and interop both ways with ``jpeg``."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")

from zarr.storage import MemoryStore  # noqa: E402

from zarr_jpeg_conformance.adapters import BUILTINS, LIBRARIES, ZARR_CODECS, AdapterLoadError, kind_of, load_adapter  # noqa: E402
from zarr_jpeg_conformance.adapters.imagecodecs_zarr import from_imagecodecs_jpeg, to_imagecodecs_jpeg  # noqa: E402
from zarr_jpeg_conformance.core.config import parse_codec  # noqa: E402
from zarr_jpeg_conformance.corpus.cases import config_cases  # noqa: E402
from zarr_jpeg_conformance.corpus.images import make_image, psnr  # noqa: E402
from zarr_jpeg_conformance.report.run import default_specs  # noqa: E402
from zarr_jpeg_conformance.zarrcodecs.jpeg import REGISTRY_KEY, JpegCodec, register  # noqa: E402

YCBCR_420 = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}}
GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}
RGB = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "rgb"}}


def _loaded() -> Any:
    try:
        return load_adapter("imagecodecs_jpeg")
    except AdapterLoadError as exc:
        pytest.skip(str(exc))


# ----------------------------------------------------------------- where it is listed


def test_listed_for_the_matrix_not_for_a_plain_pytest_run() -> None:
    assert "imagecodecs_jpeg" in ZARR_CODECS and "imagecodecs_jpeg" not in BUILTINS and "imagecodecs_jpeg" not in LIBRARIES
    # One row: the shipped harness, which runs the adapter in a venv of a Python >= 3.12.
    specs = default_specs()
    assert "imagecodecs_jpeg" not in specs
    assert [s for s in specs if s.endswith("-m zarr_jpeg_conformance.harnesses imagecodecs_jpeg")]


def test_loads_by_name_or_says_why_not() -> None:
    try:
        adapter = load_adapter("imagecodecs_jpeg")
    except AdapterLoadError as exc:
        assert "imagecodecs-zarr" in str(exc) and "Python >= 3.12" in str(exc)
        return
    assert adapter.name == "imagecodecs_jpeg" and kind_of(adapter) == "codec"
    assert {"imagecodecs-zarr", "imagecodecs", "zarr"} <= set(adapter.versions())
    assert adapter.versions()["writes"] == "imagecodecs_jpeg"


# ----------------------------------------------------------------- the mapping (any Python)


@pytest.mark.parametrize("case", [c for c in config_cases() if c.valid], ids=lambda c: c.id)
def test_mapping_round_trips_every_configuration_imagecodecs_can_say(case: Any) -> None:
    config = parse_codec(case.codec)
    try:
        theirs = to_imagecodecs_jpeg(config)
    except ValueError as exc:  # sampling factors beyond imagecodecs' five names
        assert config.encoded_color_space == "ycbcr" and "subsampling" in str(exc)
        return
    assert theirs["name"] == "imagecodecs_jpeg" and theirs["configuration"]["level"] == config.quality
    assert parse_codec(from_imagecodecs_jpeg(theirs)) == config


@pytest.mark.parametrize(
    ("configuration", "written"),
    [
        ({}, {"quality": 95, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}),
        ({"level": 0}, {"quality": 1, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}),
        ({"level": 120}, {"quality": 100, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}),
        ({"level": 80, "colorspace_data": "RGB", "colorspace_jpeg": "YCbCr", "subsampling": "422"},
         {"quality": 80, "encoded_color_space": "ycbcr", "subsampling": [[2, 1], [1, 1], [1, 1]]}),
        ({"level": 80, "colorspace_data": "YCbCr", "colorspace_jpeg": "YCbCr", "subsampling": "444", "optimize": True},
         {"quality": 80, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}),
        ({"level": 70, "colorspace_data": "rgb", "colorspace_jpeg": "rgb"}, {"quality": 70, "encoded_color_space": "rgb"}),
        ({"colorspace_data": "GRAYSCALE", "colorspace_jpeg": "GRAYSCALE"}, {"quality": 95, "encoded_color_space": "grayscale"}),
    ],
)
def test_migration_writes_the_jpeg_codec_object(configuration: dict[str, Any], written: dict[str, Any]) -> None:
    migrated = from_imagecodecs_jpeg({"name": "imagecodecs_jpeg", "configuration": configuration})
    assert migrated == {"name": "jpeg", "configuration": written}
    parse_codec(migrated)  # valid for the spec


@pytest.mark.parametrize(
    "configuration",
    [{"tables": "/9j/2wBDAA=="}, {"header": "/9j/"}, {"lossless": True}, {"bitspersample": 12},
     {"colorspace_jpeg": "CMYK", "colorspace_data": "CMYK"}, {"colorspace_jpeg": "CMYK"},
     {"colorspace_jpeg": "YCbCr", "colorspace_data": "CMYK"}, {"subsampling": "410"}],
    ids=["tables", "header", "lossless", "12-bit", "cmyk", "cmyk-stored", "cmyk-data", "subsampling-410"],
)
def test_migration_refuses_what_jpeg_cannot_describe(configuration: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="imagecodecs_jpeg"):
        from_imagecodecs_jpeg({"name": "imagecodecs_jpeg", "configuration": configuration})


# ----------------------------------------------------------------- interop through real stores (Python >= 3.12)


def _rewrite(entries: dict[str, Any], codec: dict[str, Any]) -> None:
    """Swap the serializer's codec object in zarr.json, as a migration does; the chunks stay as they are."""
    meta = json.loads(entries["zarr.json"].to_bytes())
    (serializer,) = [i for i, c in enumerate(meta["codecs"]) if c["name"] in ("jpeg", "imagecodecs_jpeg")]
    meta["codecs"][serializer] = codec
    entries["zarr.json"] = type(entries["zarr.json"]).from_bytes(json.dumps(meta).encode())


def _read(entries: dict[str, Any]) -> np.ndarray:
    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY}):
        return np.asarray(zarr.open_array(MemoryStore(dict(entries)), mode="r")[...])


def _image(codec: dict[str, Any]) -> tuple[np.ndarray, tuple[int, ...]]:
    if codec["configuration"]["encoded_color_space"] == "grayscale":
        return make_image("natural", 64, 96, channels=1)[:, :, 0], (32, 48)
    return make_image("natural", 64, 96), (32, 48, 3)


@pytest.mark.parametrize("codec", [YCBCR_420, GRAY, RGB], ids=["ycbcr-420", "gray", "rgb"])
def test_a_jpeg_store_reads_through_imagecodecs_jpeg_once_its_metadata_is_rewritten(codec: dict[str, Any]) -> None:
    _loaded()
    register()
    image, chunks = _image(codec)
    entries: dict[str, Any] = {}
    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY}):
        array = zarr.create_array(MemoryStore(entries), shape=image.shape, chunks=chunks, dtype="uint8",
                                  serializer=JpegCodec.from_dict(codec), compressors=None)
        array[...] = image
    ours = _read(entries)
    _rewrite(entries, to_imagecodecs_jpeg(parse_codec(codec)))
    theirs = _read(entries)
    assert theirs.shape == image.shape and theirs.dtype == np.uint8
    # Both decode with libjpeg-turbo's defaults (fancy upsampling, ISLOW IDCT): the same pixels,
    # whichever backend the jpeg codec runs on (measured with imagecodecs, Pillow and PyTurboJPEG).
    np.testing.assert_array_equal(theirs, ours, err_msg="imagecodecs_jpeg reads the jpeg store differently")
    assert psnr(image, theirs) >= 30


@pytest.mark.parametrize(
    "configuration",
    [{"level": 90, "colorspace_data": "RGB", "colorspace_jpeg": "YCbCr", "subsampling": "420"}, {"level": 85},
     {"level": 90, "colorspace_data": "GRAYSCALE", "colorspace_jpeg": "GRAYSCALE"},
     {"level": 90, "colorspace_data": "RGB", "colorspace_jpeg": "RGB"}],
    ids=["ycbcr-420", "defaults", "gray", "rgb"],
)
def test_an_imagecodecs_jpeg_store_reads_through_jpeg_once_its_metadata_is_migrated(configuration: dict[str, Any]) -> None:
    _loaded()
    register()
    from zarr.registry import get_codec_class

    codec = {"name": "imagecodecs_jpeg", "configuration": configuration}
    gray = configuration.get("colorspace_jpeg") == "GRAYSCALE"
    image = make_image("natural", 64, 96, channels=1) if gray else make_image("natural", 64, 96)
    entries: dict[str, Any] = {}
    array = zarr.create_array(MemoryStore(entries), shape=image.shape, chunks=(32, 48, image.shape[2]), dtype="uint8",
                              serializer=get_codec_class("imagecodecs_jpeg").from_dict(codec), compressors=None)
    array[...] = image
    theirs = _read(entries)
    migrated = from_imagecodecs_jpeg(codec)
    _rewrite(entries, migrated)
    ours = _read(entries)
    np.testing.assert_array_equal(ours, theirs, err_msg="jpeg reads the migrated store differently")
    # And it writes on as the original did: the stored streams have the same sampling factors.
    from zarr_jpeg_conformance.core.markers import inspect

    with zarr.config.set({"codecs.jpeg": REGISTRY_KEY}):
        reopened = zarr.open_array(MemoryStore(entries), mode="r+")
        before = inspect(entries["c/0/0/0"].to_bytes())
        reopened[...] = image
    after = inspect(entries["c/0/0/0"].to_bytes())
    assert [(c.h, c.v) for c in after.components] == [(c.h, c.v) for c in before.components]
