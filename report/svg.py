"""Small inline SVG charts (line chart with markers, grouped horizontal bars), no plotting library.

The output is a standalone ``<svg>`` element to paste into HTML: no scripts, no external
fonts or stylesheets, every label escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

#: Distinguishable on screen and in grayscale print (Okabe-Ito palette).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("circle", "square", "triangle", "diamond")
_FONT = "font-family=\"system-ui, -apple-system, 'Segoe UI', sans-serif\""


@dataclass(frozen=True)
class Series:
    label: str
    points: Sequence[tuple[float, float]]
    color: str
    marker: str = "circle"


def style_for(index: int) -> tuple[str, str]:
    """Color and marker of the index-th implementation, the same in every chart."""
    # The marker changes once the colors are used up: 32 distinct pairs (index % 4 would repeat after 8).
    return PALETTE[index % len(PALETTE)], MARKERS[(index // len(PALETTE)) % len(MARKERS)]


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5 or 5 times a power of ten) covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0, 1.0]
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
    first = math.floor(lo / step) * step
    ticks = []
    v = first
    while v < hi + step * 0.999:
        ticks.append(round(v, 10))
        v += step
    return ticks


def _fmt(v: float) -> str:
    return f"{v:g}" if abs(v) >= 1e-9 else "0"


def _marker(kind: str, x: float, y: float, color: str) -> str:
    if kind == "square":
        return f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7" fill="{color}"/>'
    if kind == "triangle":
        return f'<path d="M{x:.1f},{y - 4.5:.1f} L{x + 4.5:.1f},{y + 3.5:.1f} L{x - 4.5:.1f},{y + 3.5:.1f} Z" fill="{color}"/>'
    if kind == "diamond":
        return f'<path d="M{x:.1f},{y - 5:.1f} L{x + 5:.1f},{y:.1f} L{x:.1f},{y + 5:.1f} L{x - 5:.1f},{y:.1f} Z" fill="{color}"/>'
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}"/>'


def line_chart(
    series: Sequence[Series],
    *,
    title: str,
    x_label: str,
    y_label: str,
    width: int = 400,
    height: int = 290,
) -> str:
    """Lines with markers, axes with round ticks, a legend below the plot."""
    pts = [p for s in series for p in s.points]
    legend_rows = math.ceil(len(series) / 2)
    left, right, top, bottom = 52, 14, 28, 44 + 18 * legend_rows
    pw, ph = width - left - right, height - top - bottom
    out = [
        f'<svg role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" {_FONT} font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="{left}" y="17" font-size="13" font-weight="600">{escape(title)}</text>',
    ]
    if not pts:
        out.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" fill="#666">no data</text></svg>')
        return "".join(out)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    xt, yt = nice_ticks(min(xs), max(xs)), nice_ticks(min(ys), max(ys))
    x0, x1, y0, y1 = xt[0], xt[-1], yt[0], yt[-1]

    def sx(v: float) -> float:
        return left + (v - x0) / (x1 - x0) * pw

    def sy(v: float) -> float:
        return top + ph - (v - y0) / (y1 - y0) * ph

    for v in xt:
        out.append(f'<line x1="{sx(v):.1f}" y1="{top}" x2="{sx(v):.1f}" y2="{top + ph}" stroke="#e6e6e6"/>')
        out.append(f'<text x="{sx(v):.1f}" y="{top + ph + 14}" text-anchor="middle" fill="#333">{_fmt(v)}</text>')
    for v in yt:
        out.append(f'<line x1="{left}" y1="{sy(v):.1f}" x2="{left + pw}" y2="{sy(v):.1f}" stroke="#e6e6e6"/>')
        out.append(f'<text x="{left - 5}" y="{sy(v) + 4:.1f}" text-anchor="end" fill="#333">{_fmt(v)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
    out.append(f'<text x="{left + pw / 2}" y="{top + ph + 30}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(
        f'<text x="13" y="{top + ph / 2}" text-anchor="middle" transform="rotate(-90 13 {top + ph / 2})">{escape(y_label)}</text>'
    )
    for s in series:
        if not s.points:
            continue
        path = " ".join(f"{'M' if i == 0 else 'L'}{sx(x):.1f},{sy(y):.1f}" for i, (x, y) in enumerate(s.points))
        out.append(f'<path d="{path}" fill="none" stroke="{s.color}" stroke-width="1.6" opacity="0.85"/>')
        out.extend(_marker(s.marker, sx(x), sy(y), s.color) for x, y in s.points)
    for i, s in enumerate(series):
        lx = left + (i % 2) * (pw / 2)
        ly = top + ph + 46 + 18 * (i // 2)
        out.append(f'<line x1="{lx:.1f}" y1="{ly - 4}" x2="{lx + 18:.1f}" y2="{ly - 4}" stroke="{s.color}" stroke-width="1.6"/>')
        out.append(_marker(s.marker, lx + 9, ly - 4, s.color))
        out.append(f'<text x="{lx + 24:.1f}" y="{ly}">{escape(s.label)}</text>')
    out.append("</svg>")
    return "".join(out)


def bar_chart(
    groups: Sequence[tuple[str, Sequence[tuple[str, float | None, str]]]],
    *,
    title: str,
    unit: str,
    width: int = 560,
) -> str:
    """Grouped horizontal bars: groups of (label, value or None, color); None draws 'n/a'."""
    bar_h, gap, label_w = 14, 10, 92
    rows = sum(len(bars) for _, bars in groups)
    top, bottom = 30, 30
    height = top + bottom + rows * (bar_h + 3) + gap * len(groups)
    values = [v for _, bars in groups for _, v, _ in bars if v is not None]
    ticks = nice_ticks(0.0, max(values) if values else 1.0, 5)
    pw = width - label_w - 150
    scale = pw / ticks[-1] if ticks[-1] > 0 else 1.0
    out = [
        f'<svg role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" {_FONT} font-size="11">',
        f"<title>{escape(title)}</title>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
        f'<text x="{label_w}" y="17" font-size="13" font-weight="600">{escape(title)}</text>',
    ]
    for v in ticks:
        x = label_w + v * scale
        out.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{height - bottom + 4}" stroke="#e6e6e6"/>')
        out.append(f'<text x="{x:.1f}" y="{height - bottom + 17}" text-anchor="middle" fill="#333">{_fmt(v)}</text>')
    out.append(f'<text x="{label_w + pw / 2}" y="{height - 3}" text-anchor="middle">{escape(unit)}</text>')
    y = top
    for name, bars in groups:
        gy = y
        for label, value, color in bars:
            if value is None:
                out.append(f'<text x="{label_w + 4}" y="{y + bar_h - 3}" fill="#777">{escape(label)}: n/a</text>')
            else:
                w = max(value * scale, 1.0)
                out.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}"/>')
                out.append(f'<text x="{label_w + w + 4:.1f}" y="{y + bar_h - 3}" fill="#222">{escape(label)} {value:.0f}</text>')
            y += bar_h + 3
        out.append(
            f'<text x="{label_w - 8}" y="{(gy + y - 3) / 2 + 4:.1f}" text-anchor="end" font-weight="600">{escape(name)}</text>'
        )
        y += gap
    out.append(f'<line x1="{label_w}" y1="{top - 4}" x2="{label_w}" y2="{height - bottom + 4}" stroke="#888"/>')
    out.append("</svg>")
    return "".join(out)


__all__ = ["MARKERS", "PALETTE", "Series", "bar_chart", "line_chart", "nice_ticks", "style_for"]
