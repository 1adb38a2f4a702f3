"""The harness protocol's wire format, shared by both sides (``docs/protocol.md``).

The client that speaks it to a harness is :mod:`zarr_jpeg_conformance.adapters.remote`;
the server that puts any Python adapter behind it is :mod:`zarr_jpeg_conformance.harnesses.server`.
"""
