"""The judge's own reading of ITU-T T.81: stream syntax, entropy-coded data, the DCT.

Verdicts rest on what T.81 defines, checked on the bytes, never on whether some decoder
accepts a stream (libjpeg-turbo accepts zero pad bits, a restart marker after the last MCU,
a third Huffman table in a baseline frame, Se = 64). Kept apart from ``core/``, the
project's own codec: a misreading shared by the codec and its judge would cancel out in the
codec's own rows.

- :mod:`.syntax`: markers, segments, frame and scan headers, tables, restart markers, each
  offence with its byte offset and T.81 clause.
- :mod:`.entropy`: the Huffman-coded data of sequential scans decoded to quantized
  coefficients, with the MCU count, pad bits and restart intervals checked.
- :mod:`.dct`: the exact 8x8 DCT of A.3.3, forward and inverse, in float64.
"""
