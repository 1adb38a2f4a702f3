"""A Zarr ``jpeg`` codec in Python: here, the JPEG decoder of Pillow. Its conformance adapter is ``my_codec.testing``."""
