"""The adapter contract: load_adapter's resolution rules, the built-ins, and --impl errors."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from zarr_jpeg_conformance.adapters import BUILTINS, ROLES, Adapter, AdapterLoadError, available_builtins, load_adapter

pytest_plugins = ["pytester"]
TESTS = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _tests_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(TESTS))


@pytest.mark.parametrize("spec", ["example_adapter:ExampleAdapter", "example_adapter:INSTANCE", "example_adapter:make"])
def test_module_attr_forms(spec: str) -> None:
    """module:attr may name a class, an instance, or a callable returning an adapter."""
    adapter = load_adapter(spec)
    assert isinstance(adapter, Adapter) and adapter.name == "example"


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("no_such_module_xyz:Adapter", "cannot import"),
        ("example_adapter:Missing", "has no attribute"),
        ("example_adapter:NotAnAdapter", "does not implement the Adapter protocol"),
        ("nonsense", "unknown adapter"),
    ],
)
def test_load_errors_say_why(spec: str, reason: str) -> None:
    with pytest.raises(AdapterLoadError, match=reason):
        load_adapter(spec)


def test_entry_point_group(monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry point in group zarr_jpeg_conformance.adapters is found by its name."""
    from importlib.metadata import EntryPoint

    import zarr_jpeg_conformance.adapters as adapters

    ep = EntryPoint(name="viaentrypoint", value="example_adapter:ExampleAdapter", group=adapters.ENTRY_POINT_GROUP)
    monkeypatch.setattr(adapters, "entry_points", lambda group: [ep] if group == adapters.ENTRY_POINT_GROUP else [])
    assert load_adapter("viaentrypoint").name == "example"


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_builtins_implement_the_protocol(name: str) -> None:
    """Every built-in loads here (its backend is installed by the test setup) and round-trips."""
    adapter = load_adapter(name)
    assert adapter.name == name and {"encode", "decode"} <= adapter.roles <= ROLES
    versions = adapter.versions()
    assert versions and all(isinstance(k, str) and isinstance(v, str) for k, v in versions.items())
    parsed = adapter.parse({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}})
    chunk = np.arange(16 * 24, dtype=np.uint8).reshape(16, 24)
    data = adapter.encode(parsed, chunk)
    assert isinstance(data, bytes) and data[:2] == b"\xff\xd8"
    out = adapter.decode(parsed, data, chunk.shape)
    assert out.shape == chunk.shape and out.dtype == np.uint8


def test_available_builtins_reports_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    """A built-in whose backend is missing comes back as the reason, not an exception."""
    monkeypatch.setitem(sys.modules, "imagecodecs", None)  # import now fails
    monkeypatch.delitem(sys.modules, "zarr_jpeg_conformance.backends.imagecodecs", raising=False)
    result = available_builtins()
    assert isinstance(result["imagecodecs"], AdapterLoadError)
    assert "imagecodecs" in str(result["imagecodecs"])


def test_backend_refusal_is_a_rejection() -> None:
    """A library error on bad input is wrapped as a ValueError citing a requirement."""
    adapter = load_adapter("pillow")
    parsed = adapter.parse({"name": "jpeg", "configuration": {"quality": 90, "encoded_color_space": "grayscale"}})
    with pytest.raises(ValueError, match=r"\[JPEG-"):
        adapter.decode(parsed, b"\xff\xd8\xff\xd9", (8, 8))


def test_explicit_impl_that_cannot_load_is_a_usage_error(pytester: pytest.Pytester) -> None:
    """--impl naming something unloadable stops the run with the reason; nothing is skipped."""
    pytester.makepyfile(test_x="def test_x(impl):\n    pass\n")
    result = pytester.runpytest_subprocess("--impl=no_such_module_xyz:Adapter", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--impl=no_such_module_xyz:Adapter*cannot import*"])


def test_session_header_lists_implementations(pytester: pytest.Pytester) -> None:
    """The header names each implementation under test with its roles and versions."""
    pytester.makepyfile(test_x="def test_x(impl, judge):\n    assert impl.name == judge.implementation\n")
    result = pytester.runpytest_subprocess("--impl=pillow", "--impl=imagecodecs", "-p", "no:cacheprovider")
    result.stdout.fnmatch_lines(
        ["*implementations under test*", "*pillow [[]decode, encode]: pillow *", "*imagecodecs [[]decode, encode]: imagecodecs *"]
    )
    result.assert_outcomes(passed=2)


def test_markers_are_registered(pytester: pytest.Pytester) -> None:
    """must/should/may work under --strict-markers."""
    pytester.makepyfile(
        test_m="import pytest\n@pytest.mark.must\n@pytest.mark.should\n@pytest.mark.may\ndef test_m():\n    pass\n"
    )
    pytester.runpytest_subprocess("--strict-markers", "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_turbojpeg_rejects_a_stop_on_warning_per_thread() -> None:
    """PyTurboJPEG reports a stop on a warning with warnings.warn; the adapter catches it on the
    decoding thread only (no process-wide catch_warnings, no lock), and the rest of the process
    still sees its warnings."""
    import threading
    import warnings

    import turbojpeg

    from zarr_jpeg_conformance.core.errors import Rejection
    from zarr_jpeg_conformance.corpus.streams import stream_cases

    adapter = load_adapter("turbojpeg")
    case = next(c for c in stream_cases() if c.id == "stream.malformed.truncated-50-with-eoi")
    parsed = adapter.parse(dict(case.codec))
    errors: list[Rejection] = []

    def decode() -> None:
        try:
            adapter.decode(parsed, case.data(), case.chunk_shape)
        except Rejection as exc:  # anything else fails the count below
            errors.append(exc)

    threads = [threading.Thread(target=decode) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(errors) == 4 and all("JPEG-X-07" in str(e) for e in errors), errors
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        turbojpeg.warnings.warn("outside a decode")
    assert [str(w.message) for w in seen] == ["outside a decode"]
