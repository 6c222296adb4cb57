"""pandas views of an Evaluation, for the notebook: one frame per question.

Missing values are ``pd.NA`` throughout (nullable ``Int64``/``Float64``/``string``
columns): an N/A dimension, an errored item, a percentage with max 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd
from pandas.io.formats.style import Styler

from ..model import (
    DETECTION_SUBSCORES,
    PLAN_SUBSCORES,
    DimensionScore,
    Evaluation,
    ItemScore,
    Tally,
    Usage,
)

SUBSCORE_COLUMNS: tuple[str, ...] = (*DETECTION_SUBSCORES, *PLAN_SUBSCORES)
ITEM_COLUMNS: tuple[str, ...] = (
    "chk_id",
    "name",
    "cap",
    "scope",
    "status",
    "error",
    *DETECTION_SUBSCORES,
    "detection",
    "detection_max",
    *PLAN_SUBSCORES,
    "plan",
    "plan_max",
    "penalties",
    "detection_rationale",
    "plan_rationale",
    "quotes",
    "extra",
)
_INT_COLUMNS = (*SUBSCORE_COLUMNS, "detection", "detection_max", "plan", "plan_max")
USAGE_COLUMNS: tuple[str, ...] = (
    "requests",
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "cost_usd",
    "latency_s",
    "cached_responses",
)

# Cell colours of style_items.
COLOR_POINT = "background-color: #c8e6c9"  # 1: earned
COLOR_LOST = "background-color: #ffcdd2"  # 0: lost
COLOR_NA = "background-color: #eeeeee; color: #9e9e9e"  # N/A
COLOR_ERROR = "background-color: #ffe0b2"  # an errored row


def _na(value: object) -> object:
    return pd.NA if value is None else value


def _typed(
    frame: pd.DataFrame, ints: Iterable[str] = (), floats: Iterable[str] = ()
) -> pd.DataFrame:
    """Nullable dtypes: Int64/Float64 for the given columns, ``string`` for other text."""
    dtypes = {column: "Int64" for column in ints} | {column: "Float64" for column in floats}
    for column in frame.columns:
        if column not in dtypes and not pd.api.types.is_numeric_dtype(frame[column]):
            dtypes[column] = "string"
    return frame.astype(dtypes)


# --------------------------------------------------------------------------- per item


def _dimension_cells(dim: DimensionScore | None, prefix: str, names: Iterable[str]) -> dict:
    names = tuple(names)
    if dim is None:
        return {**dict.fromkeys(names, pd.NA), prefix: pd.NA, f"{prefix}_max": pd.NA}
    return {
        **{name: _na(dim.subscores.get(name)) for name in names},
        prefix: dim.total,
        f"{prefix}_max": dim.max,
    }


def _item_row(item: ItemScore, extra: Mapping[str, str]) -> dict:
    dims = (item.detection, item.plan)
    quotes = [quote for dim in dims if dim is not None for quote in dim.quotes]
    return {
        "chk_id": item.chk_id,
        "name": item.name,
        "cap": ", ".join(item.caps),
        "scope": item.scope,
        "status": item.status,
        "error": _na(item.error),
        **_dimension_cells(item.detection, "detection", DETECTION_SUBSCORES),
        **_dimension_cells(item.plan, "plan", PLAN_SUBSCORES),
        "penalties": ", ".join(penalty.rule for penalty in item.penalties),
        "detection_rationale": item.detection.rationale if item.detection else pd.NA,
        "plan_rationale": item.plan.rationale if item.plan else pd.NA,
        "quotes": "\n".join(f"“{quote}”" for quote in quotes) if quotes else pd.NA,
        # Checklist fields the format does not define: shown, never dropped.
        "extra": "\n".join(f"{k}: {v}" for k, v in extra.items()) if extra else pd.NA,
    }


def items_frame(ev: Evaluation) -> pd.DataFrame:
    """One row per checkpoint, in checklist order; N/A dimensions and errored items are NA."""
    rows = [_item_row(item, ev.range.checkpoint(item.chk_id).extra) for item in ev.items]
    frame = pd.DataFrame(rows, columns=list(ITEM_COLUMNS))
    return _typed(frame, ints=_INT_COLUMNS)


def _subscore_color(value: object) -> str:
    if value is pd.NA or pd.isna(value):
        return COLOR_NA
    return COLOR_POINT if value == 1 else COLOR_LOST


def style_items(ev: Evaluation) -> Styler:
    """:func:`items_frame`, coloured: 1 green, 0 red, N/A grey, errored rows orange."""
    frame = items_frame(ev)
    errored = frame["status"].eq("error").fillna(False).to_numpy()

    def error_rows(row: pd.Series) -> list[str]:
        return [COLOR_ERROR if errored[row.name] else ""] * len(row)

    wrap = ["detection_rationale", "plan_rationale", "quotes", "error", "extra"]
    return (
        frame.style.apply(error_rows, axis=1)
        .map(_subscore_color, subset=list(SUBSCORE_COLUMNS))
        .set_properties(
            subset=wrap, **{"white-space": "pre-wrap", "min-width": "16em", "text-align": "left"}
        )
        # Rationale and quotes are agent text: escaped, a <script> in a report stays text.
        .format(na_rep="N/A", escape="html")
        .hide(axis="index")
    )


# --------------------------------------------------------------------------- summaries


def _tally_row(tally: Tally) -> dict:
    return {
        "score": tally.score,
        "max": tally.max,
        "pct": _na(tally.pct),
        "level": _na(tally.level),
    }


def summary_frame(ev: Evaluation) -> pd.DataFrame:
    """Detection and plan side by side as two rows (index ``dimension``); never a total."""
    summary = ev.summary
    frame = pd.DataFrame(
        [
            {"dimension": "detection", **_tally_row(summary.detection)},
            {"dimension": "plan", **_tally_row(summary.plan)},
        ]
    )
    frame = _typed(frame, ints=("score", "max"), floats=("pct",)).set_index("dimension")
    frame.attrs.update(
        diagnosis=summary.diagnosis,
        complete=summary.complete,
        errored=list(summary.errored),
    )
    return frame


def capabilities_frame(ev: Evaluation) -> pd.DataFrame:
    """One row per capability (index ``cap``): items, both tallies and the CAP's mode."""
    rows = []
    for cap in ev.summary.capabilities:
        row: dict = {
            "cap": cap.cap,
            "name": cap.name,
            "items": ", ".join(cap.items),
            "n_items": len(cap.items),
        }
        for prefix, tally in (("detection", cap.detection), ("plan", cap.plan)):
            row.update({f"{prefix}_{key}": value for key, value in _tally_row(tally).items()})
        row["diagnosis"] = _na(cap.diagnosis)
        rows.append(row)
    columns = ["cap", "name", "items", "n_items"]
    columns += [f"{p}_{k}" for p in ("detection", "plan") for k in ("score", "max", "pct", "level")]
    columns.append("diagnosis")
    frame = pd.DataFrame(rows, columns=columns)
    ints = ["n_items", "detection_score", "detection_max", "plan_score", "plan_max"]
    frame = _typed(frame, ints=ints, floats=("detection_pct", "plan_pct"))
    return frame.set_index("cap")


def losses_frame(ev: Evaluation) -> pd.DataFrame:
    """Top detection misses then top plan defects: dimension, subscore, count, items."""
    rows = [
        {
            "dimension": dimension,
            "subscore": loss.subscore,
            "count": loss.count,
            "items": ", ".join(loss.items),
        }
        for dimension, losses in (
            ("detection", ev.summary.top_detection_misses),
            ("plan", ev.summary.top_plan_defects),
        )
        for loss in losses
    ]
    frame = pd.DataFrame(rows, columns=["dimension", "subscore", "count", "items"])
    return _typed(frame, ints=("count",))


def _usage_row(usage: Usage) -> dict:
    return {column: getattr(usage, column) for column in USAGE_COLUMNS}


def usage_frame(ev: Evaluation) -> pd.DataFrame:
    """Judge usage per checkpoint (index ``chk_id``) and a final ``total`` row (ev.usage).

    Checkpoints without a usage record (e.g. an offline judge) are absent; the
    total is the evaluation's own, which may include calls not tied to one item.
    """
    order = [item.chk_id for item in ev.items]
    keys = [k for k in order if k in ev.usage_by_item]
    keys += [k for k in ev.usage_by_item if k not in order and k != "total"]
    rows = [{"chk_id": key, **_usage_row(ev.usage_by_item[key])} for key in keys]
    rows.append({"chk_id": "total", **_usage_row(ev.usage)})
    frame = pd.DataFrame(rows, columns=["chk_id", *USAGE_COLUMNS])
    ints = [c for c in USAGE_COLUMNS if c not in ("cost_usd", "latency_s")]
    return _typed(frame, ints=ints, floats=("cost_usd", "latency_s")).set_index("chk_id")
