"""Numbers as the research reports show them, and rows as GitHub Markdown tables.

One rule for every Markdown report and console line of ``calibrate``, ``compare``,
``ab`` and ``agents`` (JSON keeps full precision and ``null``):

* undefined (``None``, or a NaN that pandas made of one) is ``n/a``;
* agreement metrics, rates and their intervals: 2 decimals (``0.82 [0.71, 0.90]``);
* p-values: 3 decimals (``0.004``), and ``< 0.001`` below that;
* percentages and percentage points: 1 decimal, as the scoring core rounds them;
* booleans are ``yes``/``no``; text goes through the one cell escaper
  (:func:`evalkit.render.mdcell.md_cell`), except what evalkit formatted itself
  (:class:`Formatted`: numbers, intervals, fixed headers).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..render.mdcell import md_cell

if TYPE_CHECKING:
    import pandas as pd
    from pandas.io.formats.style import Styler
    from pandas.io.formats.style_render import CSSDict

__all__ = [
    "NA",
    "styled",
    "Formatted",
    "column_digits",
    "display",
    "display_frame",
    "fmt",
    "fmt_interval",
    "fmt_p",
    "fmt_signed",
    "markdown_table",
    "write_json_and_report",
]

NA = "n/a"
# Columns holding percentages or percentage points (1 decimal) and p-values (3).
_PCT_SUFFIXES = ("_pct", "_before", "_after", "_delta", "_abs_error", "_pp")
_PCT_NAMES = frozenset({"detection", "plan", "delta_pp"})


class Formatted(str):
    """Text evalkit formatted itself (a number, an interval, a fixed header): shown as is,
    where any other text goes through the cell escaper."""

    __slots__ = ()


def _undefined(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def fmt(value: object, digits: int = 2) -> str:
    """A number rounded to ``digits``, ``n/a`` when undefined; anything else as text."""
    if _undefined(value):
        return NA
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def fmt_signed(value: float | None, digits: int = 2) -> str:
    """``+0.12`` / ``-0.03``; ``n/a`` when undefined."""
    return NA if _undefined(value) else f"{value:+.{digits}f}"


def fmt_interval(interval: Sequence[float] | None, digits: int = 2) -> str:
    """``[low, high]``; ``n/a`` when there is none."""
    if interval is None or len(interval) != 2 or any(_undefined(v) for v in interval):
        return NA
    return f"[{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def fmt_p(value: float | None) -> str:
    """A p-value with 3 decimals, ``< 0.001`` below that; ``n/a`` when undefined."""
    if value is None or _undefined(value):
        return NA
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def column_digits(column: str) -> int:
    """Decimals for a column by its name: 1 for percentages, 3 for p-values, else 2."""
    if column in _PCT_NAMES or column.endswith(_PCT_SUFFIXES):
        return 1
    if column.endswith("p_value"):
        return 3
    return 2


def display(column: str, value: Any) -> str:
    """``value`` of ``column`` as the reports show it (see the module docstring): text as
    it is, anything else :class:`Formatted`."""
    if isinstance(value, str):
        return value
    if column.endswith("ci95") and (value is None or isinstance(value, (list, tuple))):
        return Formatted(fmt_interval(value, column_digits(column[: -len("_ci95")])))
    if column.endswith("p_value"):
        return Formatted(fmt_p(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt(v, column_digits(column)) for v in value)
    return Formatted(fmt(value, column_digits(column)))


def _escaped(text: str) -> str:
    return text if isinstance(text, Formatted) else md_cell(text)


def display_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The rows as a pandas frame of display text, for a notebook to show."""
    import pandas as pd

    return pd.DataFrame([{k: display(k, v) for k, v in row.items()} for row in rows])


# Headers and cells wrap, so a wide table fits the page (1280 px) instead of running off it.
_WRAPPING: list[CSSDict] = [
    {"selector": "", "props": "max-width: 100%; table-layout: auto; font-size: 90%"},
    {"selector": "th, td", "props": "white-space: normal; overflow-wrap: break-word"},
    {"selector": "th.col_heading", "props": "min-width: 4em; max-width: 9em"},
    {"selector": "th.row_heading", "props": "white-space: nowrap"},  # a run, a range: whole
]
# A column of prose or quotes (a value this long) reads left-aligned, and may break a long
# word (a path, a command line) anywhere: only that lets such a column narrow, so a table
# of quotes fits the page. Short columns keep their words whole.
_LONG_TEXT = 40
_PROSE = "text-align: left; overflow-wrap: anywhere; min-width: 12em"


def styled(frame: pd.DataFrame) -> Styler:
    """``frame`` for a record: ``run`` and ``range`` (when there) as its index and no row
    numbers, column names in words, every header and cell wrapping, text escaped."""
    keys = [name for name in ("run", "range") if name in frame.columns]
    shown = frame.set_index(keys) if keys else frame
    shown = shown.rename(columns=lambda name: str(name).replace("_", " "))
    styler = shown.style.format(escape="html", na_rep="n/a").set_table_styles(_WRAPPING)
    prose = [
        column
        for column in shown.columns
        if shown[column].map(lambda value: isinstance(value, str) and len(value) > _LONG_TEXT).any()
    ]
    if prose:  # by column (the index may repeat a run or range: no per-cell styles)
        cells: list[CSSDict] = [
            {"selector": "td", "props": _PROSE},
            {"selector": "th", "props": "text-align: left"},  # its heading above it
        ]
        per_column: dict[Any, list[CSSDict]] = {column: cells for column in prose}
        styler = styler.set_table_styles(per_column, overwrite=False)
    if not any(shown.index.names):
        styler = styler.hide(axis="index")
    return styler


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """The rows as a Markdown table (columns: the first row's keys unless given);
    ``(nothing to compare)`` when there is no row. Every cell is formatted by
    :func:`fmt` with :func:`column_digits` and escaped by the one cell escaper."""
    if not rows:
        return "(nothing to compare)"
    names = list(columns) if columns is not None else list(rows[0])
    lines = [
        "| " + " | ".join(_escaped(name) for name in names) + " |",
        "|" + "---|" * len(names),
    ]
    for row in rows:
        cells = (_escaped(display(name, row.get(name))) for name in names)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_json_and_report(
    out_dir: str | Path, data: Mapping[str, Any], report: str, *, json_name: str, report_name: str
) -> dict[str, Path]:
    """A result's JSON (strict: a NaN is refused, not written) and its Markdown report,
    each written atomically into ``out_dir``."""
    from ..fileio import write_text_atomic

    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return {
        "json": write_text_atomic(folder / json_name, text),
        "report": write_text_atomic(folder / report_name, report),
    }
