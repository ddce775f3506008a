"""`placements -o svg`: the bindings × clusters matrix as a heat map, one self-contained SVG document.

Square cells of 28 px while the larger side of the matrix has at most 50 entries; beyond, the cells shrink to
keep that side near 1400 px, down to 10 px, after which the picture grows. Numbers are printed in the cells
while a cell is at least 14 px wide; smaller cells keep their count in a tooltip. The colour runs through one
hue (light to dark blue, readable with every common colour-vision deficiency and in greyscale) from 0 to the
largest count in one cell; a grey cell is a cluster the binding is not placed on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape, quoteattr

if TYPE_CHECKING:
    from .placements import Free, Matrix, Row

CELL = 28
MIN_CELL = 10
GRID_SIDE = 1400
NUMBERS_FROM = 14
FONT = 11
READABLE = 9
"""The smallest font a figure under the grid is set in across its column; below it the figure turns upright."""
FIGURE_SPACE = 6
"""Pixels of a column left free beside a figure under the grid, so that neighbours do not run together."""
CHAR = 0.6
"""Width of one character in ems: the labels are set in a monospace font, so widths can be computed."""
LABEL_CHARS = 48
MARGIN = 16
GAP = 8
TITLE_HEIGHT = 44
LEGEND_HEIGHT = 86
LIGHT = (198, 219, 239)
DARK = (8, 48, 107)
EMPTY = "#f2f2f2"
INK = "#1a1a1a"
MUTED = "#666666"
MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace"
SANS = "DejaVu Sans, Helvetica, Arial, sans-serif"
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    """Characters XML 1.0 cannot carry at all (control characters) become U+FFFD."""
    return _NOT_XML.sub("\ufffd", text)


def _text(text: str) -> str:
    return escape(_clean(text))


def _attr(text: str) -> str:
    return quoteattr(_clean(text))


def _n(value: float) -> str:
    return f"{round(value, 1):g}"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def colour(share: float) -> str:
    """The scale's colour at `share` (0: the fewest replicas, 1: the most), linear in RGB."""
    share = min(1.0, max(0.0, share))
    r, g, b = (round(lo + (hi - lo) * share) for lo, hi in zip(LIGHT, DARK, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def _width(chars: int, font: float) -> float:
    return chars * CHAR * font


@dataclass(frozen=True, slots=True)
class Layout:
    cell: int
    font: float
    """Labels' font size: smaller than FONT only when the rows are."""
    grid_x: float
    grid_y: float
    totals_x: float
    footer_y: float
    footer_height: float
    rotated_footer: bool
    legend_y: float
    width: float
    height: float

    @property
    def numbers(self) -> bool:
        return self.cell >= NUMBERS_FROM


def _row_label(row: Row) -> str:
    label = _short(row.label, LABEL_CHARS)
    return label + " (invalid)" if row.invalid is not None else label


def layout(matrix: Matrix) -> Layout:
    rows, columns = len(matrix.rows), len(matrix.columns)
    cell = max(MIN_CELL, min(CELL, GRID_SIDE // max(rows, columns, 1)))
    font = min(FONT, cell - 2)
    label_chars = max((len(_row_label(r)) for r in matrix.rows), default=0)
    label_width = max(_width(label_chars, font), _width(len("FREE PODS"), FONT)) + GAP
    name_chars = max([len(_short(c.name, LABEL_CHARS)) for c in matrix.columns] + [len("TOTAL")])
    header = _width(name_chars, font) * math.sqrt(0.5) + font + GAP
    grid_x = MARGIN + label_width
    grid_y = MARGIN + TITLE_HEIGHT + header
    totals = [str(r.replicas) for r in matrix.rows] + [str(matrix.replicas)]
    totals_x = grid_x + columns * cell + GAP
    totals_width = _width(max(len(t) for t in totals), FONT) + GAP
    footer = [str(c.replicas) for c in matrix.columns] + [_free_pods(c.free) for c in matrix.columns]
    longest = max((len(t) for t in footer), default=1)
    rotated = _width(longest, READABLE) > cell - FIGURE_SPACE
    line = _width(longest, min(FONT, cell - 1)) + GAP if rotated else FONT + GAP
    footer_y = grid_y + rows * cell + GAP
    legend_y = footer_y + 2 * line + GAP
    width = max(totals_x + totals_width + MARGIN, MARGIN + 600)
    return Layout(cell, font, grid_x, grid_y, totals_x, footer_y, line, rotated, legend_y, width,
                  legend_y + LEGEND_HEIGHT + MARGIN)


def _free_pods(free: Free | None) -> str:
    return "-" if free is None else str(free.pods)


def render_svg(matrix: Matrix) -> str:
    shape = layout(matrix)
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(shape.width)}" height="{_n(shape.height)}" '
        f'viewBox="0 0 {_n(shape.width)} {_n(shape.height)}" font-family="{SANS}" role="img">',
        f"<title>{_text(_title(matrix))}</title>",
        '<defs><linearGradient id="replica-scale">'
        f'<stop offset="0" stop-color="{colour(0)}"/><stop offset="1" stop-color="{colour(1)}"/>'
        "</linearGradient></defs>",
        '<rect class="background" width="100%" height="100%" fill="#ffffff"/>',
        f'<text class="title" x="{MARGIN}" y="{MARGIN + 16}" font-size="16" font-weight="bold" fill="{INK}">'
        "Where the replicas are</text>",
        f'<text class="subtitle" x="{MARGIN}" y="{MARGIN + 34}" font-size="{FONT}" fill="{MUTED}">'
        f"{_text(_title(matrix))}</text>",
    ]
    parts += _headers(matrix, shape)
    parts += _grid(matrix, shape)
    parts += _footers(matrix, shape)
    parts += _legend(matrix, shape)
    parts.append("</svg>")
    return "\n".join(parts)


def _title(matrix: Matrix) -> str:
    rows, columns = len(matrix.rows), len(matrix.columns)
    return (f"{rows} binding{'' if rows == 1 else 's'} × {columns} cluster{'' if columns == 1 else 's'}, "
            f"{matrix.replicas} replica{'' if matrix.replicas == 1 else 's'} placed")


def _rotated(x: float, y: float, angle: int, text: str, font: float, *, css: str, tip: str | None = None,
             fill: str = INK, extra: str = "") -> str:
    tooltip = f"<title>{_text(tip)}</title>" if tip is not None else ""
    return (f'<text class="{css}" transform="translate({_n(x)},{_n(y)}) rotate({angle})" font-size="{_n(font)}" '
            f'font-family="{MONO}" fill="{fill}"{extra}>{tooltip}{_text(text)}</text>')


def _headers(matrix: Matrix, shape: Layout) -> Iterator[str]:
    """Cluster names at -45°, from the top of their column; a cluster no Cluster object backs is in italics."""
    y = shape.grid_y - GAP / 2
    for i, column in enumerate(matrix.columns):
        x = shape.grid_x + (i + 0.5) * shape.cell
        shown = _short(column.name, LABEL_CHARS)
        tip = column.name if shown != column.name else None
        extra = ""
        if not column.found:
            tip, extra = f"{column.name}: not among the Clusters", ' font-style="italic"'
        yield _rotated(x, y, -45, shown, shape.font, css="cluster", tip=tip, extra=extra)
    yield _rotated(shape.totals_x + FONT / 2, y, -45, "TOTAL", FONT, css="heading", fill=MUTED)


def _grid(matrix: Matrix, shape: Layout) -> Iterator[str]:
    cell, rows, columns = shape.cell, len(matrix.rows), len(matrix.columns)
    left, top = shape.grid_x, shape.grid_y
    if columns and rows:
        yield (f'<rect class="grid" x="{_n(left)}" y="{_n(top)}" width="{columns * cell}" height="{rows * cell}" '
               f'fill="{EMPTY}"/>')
        rules = [f"M{_n(left)} {_n(top + r * cell)}h{columns * cell}" for r in range(1, rows)]
        rules += [f"M{_n(left + c * cell)} {_n(top)}v{rows * cell}" for c in range(1, columns)]
        if rules:
            yield f'<path class="rules" d="{"".join(rules)}" stroke="#ffffff" stroke-width="1"/>'
    largest = matrix.largest
    index = {column.name: i for i, column in enumerate(matrix.columns)}
    for r, row in enumerate(matrix.rows):
        y = top + r * cell
        middle = y + cell / 2
        label = _row_label(row)
        tip = f"{row.label}: invalid: {row.invalid}" if row.invalid is not None else (
            row.label if label != row.label else None)
        tooltip = f"<title>{_text(tip)}</title>" if tip is not None else ""
        fill = "#a33a00" if row.invalid is not None else INK
        yield (f'<text class="binding" x="{_n(left - GAP / 2)}" y="{_n(middle)}" text-anchor="end" '
               f'dominant-baseline="central" font-size="{_n(shape.font)}" font-family="{MONO}" fill="{fill}">'
               f"{tooltip}{_text(label)}</text>")
        if row.invalid is not None:
            if columns:
                yield (f'<rect class="unknown" x="{_n(left)}" y="{_n(y)}" width="{columns * cell}" height="{cell}" '
                       f'{UNKNOWN}/>')
            continue
        for name, replicas in row.clusters.items():
            x = left + index[name] * cell
            share = replicas / largest if largest else 0.0
            yield (f'<rect class="cell" x="{_n(x)}" y="{_n(y)}" width="{cell}" height="{cell}" '
                   f'fill="{colour(share)}" stroke="#ffffff" stroke-width="1">'
                   f"<title>{_text(f'{row.label} on {name}: {replicas} replicas')}</title></rect>")
            if shape.numbers:
                text = str(replicas)
                font = min(FONT, 0.9 * cell / (CHAR * len(text)))
                ink = "#ffffff" if share > 0.5 else DARK_TEXT
                yield (f'<text class="replicas" x="{_n(x + cell / 2)}" y="{_n(middle)}" text-anchor="middle" '
                       f'dominant-baseline="central" font-size="{_n(font)}" font-family="{MONO}" fill="{ink}">'
                       f"{text}</text>")
        yield (f'<text class="total" x="{_n(shape.totals_x + _width(1, FONT))}" y="{_n(middle)}" '
               f'dominant-baseline="central" font-size="{_n(shape.font)}" font-family="{MONO}" fill="{INK}">'
               f"{row.replicas}</text>")


DARK_TEXT = "#08306b"
UNKNOWN = 'fill="#ffffff" stroke="#999999" stroke-width="1" stroke-dasharray="3 2"'
"""A binding the model refuses: where its replicas are is not known."""


def _footers(matrix: Matrix, shape: Layout) -> Iterator[str]:
    """TOTAL (replicas per cluster, and of all) and FREE PODS under the grid; the figures turn upright when the
    columns are narrower than they are."""
    cell, height = shape.cell, shape.footer_height
    label_x = shape.grid_x - GAP / 2
    rows = (
        ("TOTAL", "total", [str(c.replicas) for c in matrix.columns], str(matrix.replicas)),
        ("FREE PODS", "free", [_free_pods(c.free) for c in matrix.columns], _free_pods(matrix.free)),
    )
    for number, (label, css, figures, whole) in enumerate(rows):
        top = shape.footer_y + number * height
        middle = top + height / 2
        yield (f'<text class="heading" x="{_n(label_x)}" y="{_n(middle)}" text-anchor="end" '
               f'dominant-baseline="central" font-size="{FONT}" fill="{MUTED}">{label}</text>')
        longest = max((len(f) for f in figures), default=1)
        for i, figure in enumerate(figures):
            x = shape.grid_x + (i + 0.5) * cell
            font: float
            if shape.rotated_footer:
                font = min(FONT, cell - 1)
                yield _rotated(x, top + height - GAP / 2, -90, figure, font, css=css,
                               extra=' dominant-baseline="central"')
            else:
                font = min(FONT, (cell - FIGURE_SPACE) / (CHAR * longest))
                yield (f'<text class="{css}" x="{_n(x)}" y="{_n(middle)}" text-anchor="middle" '
                       f'dominant-baseline="central" font-size="{_n(font)}" font-family="{MONO}" fill="{INK}">'
                       f"{_text(figure)}</text>")
        yield (f'<text class="{css}" x="{_n(shape.totals_x + _width(1, FONT))}" y="{_n(middle)}" '
               f'dominant-baseline="central" font-size="{FONT}" font-family="{MONO}" fill="{INK}">{whole}</text>')


def _legend(matrix: Matrix, shape: Layout) -> Iterator[str]:
    x, y = MARGIN, shape.legend_y
    yield (f'<text class="legend" x="{x}" y="{_n(y + 10)}" font-size="{FONT}" fill="{INK}">replicas of a '
           "binding on a cluster</text>")
    bar = y + 18
    yield f'<rect class="scale" x="{x}" y="{_n(bar)}" width="160" height="12" fill="url(#replica-scale)"/>'
    yield (f'<text class="legend" x="{x}" y="{_n(bar + 26)}" font-size="{FONT}" font-family="{MONO}" '
           f'fill="{INK}">0</text>')
    yield (f'<text class="legend" x="{x + 160}" y="{_n(bar + 26)}" text-anchor="end" font-size="{FONT}" '
           f'font-family="{MONO}" fill="{INK}">{matrix.largest}</text>')
    yield (f'<rect class="swatch" x="{x + 184}" y="{_n(bar)}" width="12" height="12" fill="{EMPTY}" '
           'stroke="#cccccc" stroke-width="1"/>')
    yield (f'<text class="legend" x="{x + 202}" y="{_n(bar + 10)}" font-size="{FONT}" fill="{INK}">'
           "not placed there</text>")
    if any(r.invalid is not None for r in matrix.rows):
        yield f'<rect class="swatch" x="{x + 330}" y="{_n(bar)}" width="24" height="12" {UNKNOWN}/>'
        yield (f'<text class="legend" x="{x + 360}" y="{_n(bar + 10)}" font-size="{FONT}" fill="{INK}">'
               "invalid binding: placement unknown</text>")
    notes = ["FREE PODS: allocatable − allocated − allocating pods in the Cluster's status.resourceSummary "
             "(-: none)."]
    if not shape.numbers:
        notes.append("Cells too small for their numbers: hover a cell for its count.")
    for i, note in enumerate(notes):
        yield (f'<text class="note" x="{x}" y="{_n(bar + 46 + i * 14)}" font-size="{FONT - 1}" fill="{MUTED}">'
               f"{_text(note)}</text>")
