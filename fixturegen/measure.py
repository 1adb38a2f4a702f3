"""The --measure command: the numbers behind judging.decode_tolerances, from a corpus.

For each case that may decode, how far outside the span of its expected decodes each
decoder lands: the legal ones (every implementation given, and the legal decoders of
``fixturegen.decoder_faults``) and the wrong ones. Cases where the implementation's colour rule
disagrees with the spec's (JFIF together with APP14: ``libjpeg_color_space`` differs from
``stored_color_space``) say nothing about arithmetic and are left out of the summary. The
summary gives, per family, the largest distance of each legal decoder and, for each wrong
one, on how many cases the family's slack catches it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.config import parse_codec
from ..core.markers import inspect
from ..judging.decode_tolerances import FAMILIES, Difference, outside
from . import decoder_faults


def _decoders(specs: Sequence[str]) -> dict[str, Any]:
    from ..adapters import AdapterLoadError, available_builtins, load_adapter
    from ..adapters.process import DEFAULT_MEMORY_LIMIT
    from ..harnesses import spec_memory_limit

    loaded: dict[str, Any] = {n: a for n, a in available_builtins().items() if not isinstance(a, AdapterLoadError)}
    for spec in specs:
        try:
            adapter = load_adapter(spec, memory_limit=spec_memory_limit(spec, DEFAULT_MEMORY_LIMIT))
        except AdapterLoadError as exc:
            print(f"note: {spec} not measured: {exc}")
            continue
        if "decode" in adapter.roles:
            loaded[adapter.name] = adapter
    return loaded


def measure(specs: Sequence[str] = ()) -> int:
    """Print, for the package's corpus, how far each decoder lies outside the expected decodes."""
    from ..corpus.streams import stream_cases

    adapters = _decoders(specs)
    legal = {**{n: a for n, a in adapters.items()}, **{f"sim:{n}": f for n, f in decoder_faults.LEGAL.items()}}
    wrong = {f"sim:{n}": f for n, f in decoder_faults.WRONG.items()}
    worst: dict[tuple[str, str], Difference] = {}
    caught: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for case in stream_cases():
        if not case.has_expected:
            continue
        data, config, shape = case.data(), parse_codec(case.codec), tuple(case.chunk_shape)
        info, refs, family = inspect(data), case.references(), str(case.tolerance)
        bounds = FAMILIES[family].bounds(len(refs))
        colour_rule = info.libjpeg_color_space != info.stored_color_space
        cells = []
        for name, decoder in {**legal, **wrong}.items():
            got = _decode(decoder, case, data, config, shape)
            if got is None:
                cells.append(f"{name} -")
                continue
            d = outside(got, refs)
            cells.append(f"{name} {d.max_abs}/{d.mean_abs:.2f}")
            if colour_rule:
                continue
            if name in wrong:
                tally = caught[(family, name)]
                tally[1] += 1
                tally[0] += not d.within(bounds)
            else:
                old = worst.get((family, name), Difference(0, 0.0))
                worst[(family, name)] = Difference(max(old.max_abs, d.max_abs), max(old.mean_abs, d.mean_abs))
        print(f"{case.id} [{family}, {len(refs)} references{', colour rule differs' if colour_rule else ''}]: " + "; ".join(cells))
    print("\nlegal decoders: largest distance outside the expected decodes (max/mean), per family")
    for (family, name), d in sorted(worst.items()):
        t = FAMILIES[family]
        print(f"  {family:10s} {name:24s} {d.max_abs:3d} / {d.mean_abs:.3f}   "
              f"slack {t.slack_max} / {t.slack_mean} (alone {t.alone_max} / {t.alone_mean})")
    print("\nwrong decoders: cases caught by the family's bounds / cases decoded")
    for (family, name), (n_caught, n) in sorted(caught.items()):
        print(f"  {family:10s} {name:24s} {n_caught:3d} / {n}")
    return 0


def _decode(decoder: Any, case: Any, data: bytes, config: Any, shape: tuple[int, ...]) -> np.ndarray | None:
    try:
        if callable(decoder) and not hasattr(decoder, "decode"):
            return np.asarray(decoder(data, config, shape))
        out = np.asarray(decoder.decode(decoder.parse(case.codec), data, shape))
        return out if out.shape == shape and out.dtype == np.uint8 else None
    except (LookupError, ValueError, TypeError, RuntimeError):
        return None


__all__ = ["measure"]
