"""The calibration's tables: agreement per target, the human band, rows for display.

Numbers are rounded as :mod:`evalkit.research.report_format` says (2 decimals, ``n/a`` when
undefined); the frames are what the calibration notebook shows and the report prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .items import TARGETS
from .report_format import NA, Formatted, display_frame, fmt, fmt_interval
from .resample import UNIT_PAIRS
from .stats import METRICS, Agreement

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CONFUSION_COLUMN",
    "agreement_frame",
    "agreement_rows",
    "band_frame",
    "band_rows",
    "rows_frame",
    "unit_note",
    "with_interval",
]


CONFUSION_COLUMN = Formatted("confusion [[tn, fp], [fn, tp]]")


def with_interval(value: Agreement, metric: str) -> Formatted:
    """``0.74 [0.67, 0.79]``; ``n/a`` when the metric is undefined."""
    point = value.value(metric)
    if point is None:
        return Formatted(NA)
    interval = value.intervals.get(metric)
    return Formatted(fmt(point) + (f" {fmt_interval(interval)}" if interval else ""))


def agreement_rows(targets: Mapping[str, Agreement]) -> list[dict[str, Any]]:
    """One row per target: n, every metric with its interval (as text), the confusion."""
    rows = []
    for target, value in targets.items():
        row: dict[str, Any] = {"target": target, "n": value.n}
        for metric in METRICS:
            row[metric] = with_interval(value, metric)
        row[CONFUSION_COLUMN] = Formatted(str(value.confusion.matrix()))
        rows.append(row)
    return rows


def agreement_frame(targets: Mapping[str, Agreement]) -> pd.DataFrame:
    import pandas as pd

    rows = agreement_rows(targets)
    return pd.DataFrame(rows).set_index("target") if rows else pd.DataFrame()


def band_rows(band: Mapping[str, Mapping[str, Agreement]], metric: str) -> list[dict[str, Any]]:
    present = [t for t in TARGETS if any(t in targets for targets in band.values())]
    return [
        {
            "target": target,
            **{
                comparison: with_interval(targets[target], metric)
                if target in targets
                else Formatted(NA)
                for comparison, targets in band.items()
            },
        }
        for target in present
    ]


def band_frame(band: Mapping[str, Mapping[str, Agreement]], metric: str = "kappa") -> pd.DataFrame:
    """Target x comparison: ``metric`` with its interval, HealthBench style."""
    import pandas as pd

    rows = band_rows(band, metric)
    return pd.DataFrame(rows).set_index("target") if rows else pd.DataFrame()


def rows_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Rows as a frame for the notebook, numbers rounded and undefined shown as n/a."""
    return display_frame(rows)


def unit_note(targets: Mapping[str, Agreement], pairs: int | None = None) -> str:
    """What the intervals of a table resampled, in words."""
    units = sorted({value.unit for value in targets.values() if value.unit})
    if not units:
        return "No intervals (no bootstrap)."
    text = " / ".join(units)
    if UNIT_PAIRS not in units and pairs is not None:
        return f"Intervals resample whole {text} ({pairs} pair(s): too few to resample pairs)."
    return f"Intervals resample {text}."
