"""Codecs for zarr-python, one a file as in zarr's own ``codecs/``: ``jpeg`` (the spec's codec), ``reshape``,
and the codec pipeline ``pipeline.ThreadedCodecPipeline``.

zarr finds them through this package's ``zarr.codecs`` and ``zarr.codec_pipeline`` entry points.
"""
