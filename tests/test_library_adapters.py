"""The library adapters (adapters.LIBRARIES): how they are registered, and what each does that is not obvious.

They are loadable by name and part of the report's matrix, but a plain ``pytest`` without
``--impl`` runs only this project's codecs: a library is expected to miss some MUSTs.
Each adapter is written on its library's own API and shares only the configuration
parser with this project's core.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.metadata
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from zarr_jpeg_conformance.adapters import (
    BUILTINS,
    LIBRARIES,
    AdapterLoadError,
    available_libraries,
    kind_of,
    language_of,
    load_adapter,
)
from zarr_jpeg_conformance.core.markers import inspect

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[1]
#: The package each library adapter is built on, as pip knows it.
DISTRIBUTIONS = {"simplejpeg": "simplejpeg", "opencv": "opencv-python-headless", "pyvips": "pyvips"}
#: The adapters written on an image library's API (every library adapter). Other projects' Zarr
#: codecs (adapters.ZARR_CODECS) have their tests in tests/test_zarr_codecs.py and tests/test_imagecodecs_zarr.py.
IMAGE_LIBRARIES = sorted(DISTRIBUTIONS)
GRAY = {"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}}


def ycbcr(luma: list[int], quality: int = 90) -> dict:
    return {"name": "jpeg", "configuration": {"quality": quality, "encoded_color_space": "ycbcr",
                                              "subsampling": [luma, [1, 1], [1, 1]]}}


def image(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """A smooth image with some detail: lossy round trips stay close to it."""
    h, w = shape[:2]
    y, x = np.mgrid[0:h, 0:w]
    base = (x * 255 // max(w - 1, 1) + y * 3) % 256
    planes = [(base + 40 * c) % 256 for c in range(shape[2] if len(shape) == 3 else 1)]
    out = np.stack(planes, axis=-1).astype(np.uint8)
    return out.reshape(shape)


def factors(data: bytes) -> list[tuple[int, int]]:
    return [(c.h, c.v) for c in inspect(data).components]


# ------------------------------------------------------------------ registration


def test_library_names_are_not_builtin_names() -> None:
    assert set(LIBRARIES) == set(IMAGE_LIBRARIES) and not set(LIBRARIES) & set(BUILTINS)


@pytest.mark.parametrize("name", IMAGE_LIBRARIES)
def test_loadable_by_name_as_a_python_library(name: str) -> None:
    """Each loads by its name (its package is installed by the test setup) and round-trips a chunk."""
    adapter = load_adapter(name)
    assert adapter.name == name and adapter.roles == {"encode", "decode"}
    assert kind_of(adapter) == "library" and language_of(adapter) == "Python"
    versions = adapter.versions()
    # Versions come from the packages, not typed strings: the first one is the library's own, which
    # the installed distribution's version starts with (opencv-python-headless 5.0.0.93 is OpenCV 5.0.0).
    assert importlib.metadata.version(DISTRIBUTIONS[name]).startswith(next(iter(versions.values())))
    parsed = adapter.parse(GRAY)
    chunk = image((16, 24))
    out = adapter.decode(parsed, adapter.encode(parsed, chunk), chunk.shape)
    assert out.shape == chunk.shape and out.dtype == np.uint8
    assert np.abs(out.astype(int) - chunk).max() <= 16


@pytest.mark.parametrize("name", IMAGE_LIBRARIES)
def test_unavailable_with_the_reason_when_the_package_is_missing(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    module = DISTRIBUTIONS[name].replace("opencv-python-headless", "cv2")
    monkeypatch.setitem(sys.modules, module, None)  # import now fails
    monkeypatch.delitem(sys.modules, LIBRARIES[name].partition(":")[0], raising=False)
    result = available_libraries()[name]
    assert isinstance(result, AdapterLoadError)
    assert module in str(result) and name in str(result)


class _NoNativeLibrary(importlib.abc.MetaPathFinder):
    """Imports ``pyvips`` the way it fails where libvips is not installed: with an OSError."""

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname == "pyvips":
            raise OSError("cannot load library 'libvips.so.42': libvips.so.42: cannot open shared object file")
        return None


def test_a_missing_native_library_is_a_reason_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyvips raises OSError, not ImportError, on import when libvips is missing."""
    for loaded in [m for m in sys.modules if m == "pyvips" or m.startswith("pyvips.")]:
        monkeypatch.delitem(sys.modules, loaded)
    monkeypatch.delitem(sys.modules, LIBRARIES["pyvips"].partition(":")[0], raising=False)
    monkeypatch.setattr(sys, "meta_path", [_NoNativeLibrary(), *sys.meta_path])
    with pytest.raises(AdapterLoadError, match=r"cannot import .*pyvips.*libvips\.so\.42"):
        load_adapter("pyvips")


def test_not_run_by_a_plain_pytest(pytester: pytest.Pytester) -> None:
    """Without --impl only this project's codecs run; every library stays out of the session."""
    pytester.makepyfile(test_x="def test_x(impl):\n    print('IMPL', impl.name)\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s")
    names = set(re.findall(r"IMPL (\S+)", "\n".join(result.outlines)))
    assert names and names <= set(BUILTINS), names


def test_explicit_impl_runs_a_library(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x(impl):\n    assert impl.name == 'simplejpeg'\n")
    pytester.runpytest_subprocess("--impl=simplejpeg", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_in_the_reports_default_matrix() -> None:
    from zarr_jpeg_conformance.report.run import default_specs

    specs = default_specs()
    assert [s for s in specs if s in BUILTINS or s in LIBRARIES] == [*BUILTINS, *LIBRARIES]


@pytest.mark.parametrize("module", ["library", "imagecodecs_zarr", *IMAGE_LIBRARIES])
def test_only_the_configuration_parser_comes_from_core(module: str) -> None:
    """A library adapter is judged on its library's code: of core it may use the parser and nothing else."""
    tree = ast.parse((ROOT / "adapters" / f"{module}.py").read_text(encoding="utf-8"))
    from_core = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
                 and node.module.lstrip(".").startswith("core")}
    assert from_core <= {"core.config"}, from_core


# ------------------------------------------------------------------ shared chunk rules


@pytest.mark.parametrize(
    ("chunk", "requirement", "words"),
    [
        (np.zeros((8, 8), np.float32), "JPEG-DT-01", "float32"),
        (np.zeros(64, np.uint8), "JPEG-SHP-01", "(64,)"),
        (np.zeros((8, 8, 2), np.uint8), "JPEG-SHP-05", "2 channels"),
        (np.zeros((2, 8, 8, 1), np.uint8), "JPEG-SHP-06", "4 axes"),
        (np.zeros((8, 8, 3), np.uint8), "JPEG-CFG-02", "3 component(s)"),
    ],
)
@pytest.mark.parametrize("name", IMAGE_LIBRARIES)
def test_chunk_refusals_name_what_and_where(name: str, chunk: np.ndarray, requirement: str, words: str) -> None:
    adapter = load_adapter(name)
    with pytest.raises(ValueError, match=rf"^{name}: .*{words}.*\[{requirement}\]$".replace("(", r"\(").replace(")", r"\)")):
        adapter.encode(adapter.parse(GRAY), chunk)


@pytest.mark.parametrize("name", IMAGE_LIBRARIES)
def test_a_transposed_stream_is_refused(name: str) -> None:
    """Same sample count, other dimensions: reshaping would scramble the chunk (JPEG-X-08)."""
    adapter = load_adapter(name)
    parsed = adapter.parse(GRAY)
    data = adapter.encode(parsed, image((16, 24)))
    with pytest.raises(ValueError, match=r"16x24 image of 1 component\(s\), the chunk \(24, 16\) needs 24x16.*\[JPEG-DIM-03\]"):
        adapter.decode(parsed, data, (24, 16))
    assert adapter.decode(parsed, data, (16, 24, 1)).shape == (16, 24, 1)


@pytest.mark.parametrize("name", IMAGE_LIBRARIES)
def test_what_none_can_write_or_read(name: str) -> None:
    """rgb: decodable (libjpeg honours APP14), not writable, so refused at encode, not when parsing.
    YCbCr passthrough: none returns stored YCbCr samples, so refused when parsing."""
    adapter = load_adapter(name)
    rgb = adapter.parse({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "rgb"}})
    with pytest.raises(ValueError, match=r"cannot write rgb.*\[JPEG-ECS-09\]"):
        adapter.encode(rgb, image((8, 8, 3)))
    passthrough = ycbcr([1, 1])
    passthrough["configuration"]["decoded_color_space"] = "ycbcr"
    with pytest.raises(ValueError, match=r"cannot return YCbCr samples.*\[JPEG-DCS-05\]"):
        adapter.parse(passthrough)


# ------------------------------------------------------------------ what each library writes


@pytest.mark.parametrize(
    ("name", "luma"),
    [(n, f) for n in ("simplejpeg", "opencv") for f in ([1, 1], [2, 1], [1, 2], [2, 2], [4, 1])]
    + [("pyvips", [1, 1]), ("pyvips", [2, 2])],
)
@pytest.mark.parametrize("quality", [50, 95])
def test_writes_exactly_the_configured_factors(name: str, luma: list[int], quality: int) -> None:
    """Each option the adapter maps a scheme to writes those factors, at low and high quality
    (pyvips' default subsample_mode 'auto' switches to 4:4:4 at Q >= 90)."""
    adapter = load_adapter(name)
    data = adapter.encode(adapter.parse(ycbcr(luma, quality)), image((32, 48, 3)))
    assert factors(data) == [tuple(luma), (1, 1), (1, 1)]


@pytest.mark.parametrize(("name", "luma"), [("opencv", [1, 4]), ("opencv", [4, 2]), ("simplejpeg", [3, 1]), ("pyvips", [4, 1])])
def test_other_factors_are_refused_when_parsing(name: str, luma: list[int]) -> None:
    """OpenCV would write 4:2:0 for any other IMWRITE_JPEG_SAMPLING_FACTOR with only a logged warning."""
    with pytest.raises(ValueError, match=rf"cannot write sampling factors \[\[{luma[0]}, {luma[1]}\].*\[JPEG-X-04\]"):
        load_adapter(name).parse(ycbcr(luma))


@pytest.mark.parametrize(("luma", "scheme"), [([2, 1], "4:2:2"), ([1, 2], "4:4:0")])
def test_pyvips_refuses_required_schemes_at_encode(luma: list[int], scheme: str) -> None:
    """jpegsave cannot write them (a MUST it misses), but jpegload reads them: parse accepts."""
    adapter = load_adapter("pyvips")
    parsed = adapter.parse(ycbcr(luma))
    with pytest.raises(ValueError, match=rf"cannot write {scheme}, which the spec requires.*\[JPEG-SUB-08\]"):
        adapter.encode(parsed, image((16, 16, 3)))
    written = load_adapter("opencv").encode(load_adapter("opencv").parse(ycbcr(luma)), image((16, 16, 3)))
    assert adapter.decode(parsed, written, (16, 16, 3)).shape == (16, 16, 3)


@pytest.mark.parametrize("name", IMAGE_LIBRARIES)
def test_channels_stay_in_rgb_order(name: str) -> None:
    """OpenCV works in BGR: a red chunk must come back red, and a stream of a red image decode red."""
    adapter = load_adapter(name)
    parsed = adapter.parse(ycbcr([1, 1], 95))
    red = np.zeros((16, 16, 3), np.uint8)
    red[..., 0] = 255
    out = adapter.decode(parsed, adapter.encode(parsed, red), red.shape)
    assert out[..., 0].min() > 240 and out[..., 2].max() < 16
    pillow = load_adapter("pillow")
    out = adapter.decode(parsed, pillow.encode(pillow.parse(ycbcr([1, 1], 95)), red), red.shape)
    assert out[..., 0].min() > 240 and out[..., 2].max() < 16


@pytest.mark.parametrize("name", IMAGE_LIBRARIES)
def test_quality_reaches_the_library(name: str) -> None:
    """pyvips replaces an out-of-range Q by 75 silently; in range, each quality gives its own tables."""
    adapter = load_adapter(name)
    sizes = [len(adapter.encode(adapter.parse(ycbcr([2, 2], q)), image((32, 32, 3)))) for q in (1, 75, 100)]
    assert sizes[0] < sizes[1] < sizes[2], sizes


@pytest.mark.parametrize("shape", [(1, 1), (1, 1, 1), (1, 7), (7, 1)])
def test_pyvips_one_pixel_and_one_line_chunks(shape: tuple[int, ...]) -> None:
    """pyvips' Image.numpy() squeezes a 1x1 one-band image to a 0-d array; the adapter does not use it."""
    adapter = load_adapter("pyvips")
    parsed = adapter.parse(GRAY)
    chunk = np.full(shape, 77, np.uint8)
    out = adapter.decode(parsed, adapter.encode(parsed, chunk), shape)
    assert out.shape == shape and np.abs(out.astype(int) - 77).max() <= 2


def test_pyvips_refuses_a_truncated_stream() -> None:
    """libvips returns a truncated stream padded with grey unless fail_on asks it to refuse."""
    adapter = load_adapter("pyvips")
    parsed = adapter.parse(ycbcr([2, 2]))
    data = adapter.encode(parsed, np.random.default_rng(1).integers(0, 256, (48, 64, 3), dtype=np.uint8))
    cut = data[: len(data) // 2] + b"\xff\xd9"
    with pytest.raises(ValueError, match=r"pyvips jpegload could not decode the stream .*\[JPEG-DEC-01\]"):
        adapter.decode(parsed, cut, (48, 64, 3))


def test_pyvips_writes_no_exif() -> None:
    """libvips adds an EXIF block by default; a chunk carries no metadata."""
    adapter = load_adapter("pyvips")
    data = adapter.encode(adapter.parse(GRAY), image((16, 16)))
    assert 0xE1 not in inspect(data).app_segments


def test_a_chunk_is_refused_outside_1_to_65535_samples_a_side_and_taken_at_both_ends() -> None:
    """JPEG-DIM-02 bounds each side to 1-65535: the first and last legal widths pass, the next ones do not."""
    from zarr_jpeg_conformance.adapters.library import MAX_DIMENSION, LibraryRefusal, chunk_image
    from zarr_jpeg_conformance.core.config import parse_codec

    config = parse_codec(GRAY)
    for width in (1, MAX_DIMENSION):
        assert chunk_image(config, np.zeros((2, width), np.uint8), "x").shape == (2, width, 1)
    for shape in ((2, 0), (0, 2), (2, MAX_DIMENSION + 1), (MAX_DIMENSION + 1, 2)):
        with pytest.raises(LibraryRefusal) as refused:
            chunk_image(config, np.zeros(shape, np.uint8), "x")
        assert refused.value.requirement == "JPEG-DIM-02", shape


@pytest.mark.parametrize("library", IMAGE_LIBRARIES)
def test_a_stream_the_library_cannot_read_is_a_clean_refusal_citing_jpeg_dec_01(library: str) -> None:
    """Not a crash of the adapter: the refusal its library's error amounts to, with the requirement it rests on."""
    from zarr_jpeg_conformance.adapters.library import LibraryRefusal

    pytest.importorskip(library if library != "opencv" else "cv2")
    adapter = load_adapter(library)
    with pytest.raises(LibraryRefusal) as refused:
        adapter.decode(adapter.parse(GRAY), b"\xff\xd8\xff\xdbgarbage", (8, 8))
    assert refused.value.requirement == "JPEG-DEC-01" and "could not decode the stream (11 bytes)" in str(refused.value)
