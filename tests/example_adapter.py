"""A minimal outside adapter, as another repository would write one (used by the meta-tests)."""

from __future__ import annotations

from zarr_jpeg_conformance.backends.pillow import PillowAdapter


class ExampleAdapter(PillowAdapter):
    name = "example"


INSTANCE = ExampleAdapter()


def make() -> ExampleAdapter:
    return ExampleAdapter()


class NotAnAdapter:
    name = "nope"
