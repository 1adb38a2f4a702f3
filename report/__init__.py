"""The compatibility matrix: run every implementation, then write matrix.json, matrix.md and matrix.html.

Run it with ``python -m zarr_jpeg_conformance.report --out DIR`` (see ``__main__``).
"""
