"""A pandas DataFrame as a GitHub Markdown table (pandas' own needs ``tabulate``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: pd.DataFrame, *, index: bool = True) -> str:
    """The frame as a Markdown table; ``(nothing to compare)`` when it is empty."""
    if frame.empty:
        return "(nothing to compare)"
    header = ([_cell(frame.index.name or "")] if index else []) + [_cell(c) for c in frame.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for label, row in zip(frame.index, frame.itertuples(index=False), strict=True):
        cells = ([_cell(label)] if index else []) + [_cell(value) for value in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
