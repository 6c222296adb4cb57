"""pandas views of an Evaluation, for the notebook: one frame per question.

Missing values are ``pd.NA`` throughout (nullable ``Int64``/``Float64``/``string``
columns): an N/A dimension, an errored item, a percentage with max 0.
"""

from __future__ import annotations

import html
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import pandas as pd
from pandas.io.formats.style import Styler

from ..model import (
    DETECTION_SUBSCORES,
    PLAN_SUBSCORES,
    DimensionScore,
    Evaluation,
    GroundedVerdict,
    ItemScore,
    QuoteCheck,
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


def _dimension_cells(
    dim: DimensionScore | None, prefix: str, names: Iterable[str]
) -> dict[str, Any]:
    names = tuple(names)
    if dim is None:
        return {**dict.fromkeys(names, pd.NA), prefix: pd.NA, f"{prefix}_max": pd.NA}
    return {
        **{name: _na(dim.subscores.get(name)) for name in names},
        prefix: dim.total,
        f"{prefix}_max": dim.max,
    }


def _item_row(item: ItemScore, extra: Mapping[str, str]) -> dict[str, Any]:
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
    if value is pd.NA or value is None or (isinstance(value, float) and value != value):
        return COLOR_NA
    return COLOR_POINT if value == 1 else COLOR_LOST


def style_items(ev: Evaluation) -> Styler:
    """:func:`items_frame`, coloured: 1 green, 0 red, N/A grey, errored rows orange."""
    frame = items_frame(ev)
    errored = frame["status"].eq("error").fillna(False).to_numpy()

    def error_rows(row: pd.Series) -> list[str]:
        return [COLOR_ERROR if errored[int(str(row.name))] else ""] * len(row)

    wrap: list[Hashable] = ["detection_rationale", "plan_rationale", "quotes", "error", "extra"]
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


def _tally_row(tally: Tally) -> dict[str, Any]:
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
        row: dict[str, Any] = {
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


def _usage_row(usage: Usage) -> dict[str, Any]:
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


# --------------------------------------------------------------------------- display

# What a reader sees as column headers; the frames above keep their machine names.
HUMAN_COLUMNS: dict[str, str] = {
    "dimension": "Dimension",
    "score": "Score",
    "max": "Max",
    "pct": "%",
    "level": "Level",
    "cap": "Capability",
    "name": "Name",
    "items": "Checkpoints",
    "n_items": "Count",
    "detection_score": "Detection",
    "detection_max": "Detection max",
    "detection_pct": "Detection %",
    "detection_level": "Detection level",
    "plan_score": "Plan",
    "plan_max": "Plan max",
    "plan_pct": "Plan %",
    "plan_level": "Plan level",
    "diagnosis": "Mode",
    "subscore": "Sub-score",
    "count": "Times lost",
    "chk_id": "Checkpoint",
    "requests": "Requests",
    "input_tokens": "Input tokens",
    "output_tokens": "Output tokens",
    "cache_creation_input_tokens": "Cache write",
    "cache_read_input_tokens": "Cache read",
    "cost_usd": "Cost (USD)",
    "latency_s": "Latency (s)",
    "cached_responses": "Cached answers",
}


def for_display(frame: pd.DataFrame) -> Styler:
    """``frame`` with human column names, N/A for missing values, agent text escaped."""
    shown = frame.rename(columns=HUMAN_COLUMNS)
    names: list[Any] = [HUMAN_COLUMNS.get(str(n), str(n)) if n else None for n in shown.index.names]
    shown = shown.rename_axis(index=names)
    styler = shown.style.format(na_rep="N/A", precision=1, escape="html")
    if not any(shown.index.names):
        styler = styler.hide(axis="index")
    return styler


MARK_POINT = "✓"
MARK_LOST = "✗"
_MARK_STYLE = {
    "point": ("#1b5e20", "#c8e6c9"),
    "lost": ("#b71c1c", "#ffcdd2"),
    "withheld": ("#b71c1c", "#ffcdd2"),
    "penalized": ("#4a148c", "#e1bee7"),
}


def _inline_markdown(text: str) -> str:
    """A quote as rendered text: Markdown emphasis and code shown, raw HTML escaped."""
    from markdown_it import MarkdownIt

    rendered: str = MarkdownIt("commonmark", {"html": False}).renderInline(text)
    return rendered


def _mark(name: str, dim: DimensionScore) -> str:
    value = dim.subscores.get(name)
    if name in dim.penalized:
        kind, mark, note = "penalized", "⊘", "zeroed by a penalty"
    elif name in dim.withheld:
        kind, mark, note = "withheld", MARK_LOST, "claimed, no verbatim quote"
    elif value == 1:
        kind, mark, note = "point", MARK_POINT, "earned"
    else:
        kind, mark, note = "lost", MARK_LOST, "missed"
    color, background = _MARK_STYLE[kind]
    return (
        f'<span class="evalkit-mark evalkit-{kind}" title="{html.escape(note)}" style="display:'
        f"inline-block;margin:0 6px 4px 0;padding:1px 8px;border-radius:10px;color:{color};"
        f'background:{background}">{mark} {html.escape(name)}'
        f"{'' if kind in ('point', 'lost') else f' <small>({html.escape(note)})</small>'}</span>"
    )


def _where(check: QuoteCheck | None, documents: Mapping[str, str]) -> str:
    if check is None or check.source is None:
        return "not found in the documents"
    line = f", line {check.line}" if check.line is not None else ""
    return f"{documents.get(check.source, check.source)}{line}"


def _quote_block(quote: str, where: str) -> str:
    return (
        '<blockquote style="margin:4px 0 4px 0;padding:2px 10px;border-left:3px solid #90a4ae;'
        f'color:#263238">{_inline_markdown(quote)}'
        f' <span style="color:#607d8b;font-size:85%">({html.escape(where)})</span></blockquote>'
    )


def _card(item: ItemScore, verdict: GroundedVerdict | None, documents: Mapping[str, str]) -> str:
    checks: dict[str, QuoteCheck] = {}
    if verdict is not None:
        for subs in (verdict.detection or (), verdict.plan or ()):
            for sub in subs:
                for check in sub.quotes:
                    checks.setdefault(check.quote, check)
    parts = [
        f'<div class="evalkit-card" id="card-{html.escape(item.chk_id)}" style="border:1px solid '
        f"{'#ffb74d' if item.status == 'error' else '#cfd8dc'};border-radius:6px;"
        "padding:8px 14px;margin:10px 0;max-width:100%;box-sizing:border-box;"
        'overflow-wrap:anywhere;text-align:left;white-space:normal">',
        f'<div style="font-weight:bold;font-size:110%">{html.escape(item.chk_id)}: '
        f"{html.escape(item.name)}</div>",
        f'<div style="color:#546e7a;font-size:90%">{html.escape(", ".join(item.caps))}'
        f" · scope {html.escape(item.scope)}</div>",
    ]
    if item.blind_fix:
        parts.append(
            '<div class="evalkit-blind-fix" style="display:inline-block;margin-top:4px;'
            "padding:1px 8px;border-radius:10px;background:#fff3e0;color:#bf360c;"
            'font-size:90%"><b>Blind fix</b>: plan points without a finding'
            " (discovery 0)</div>"
        )
    if item.status == "error":
        parts.append(
            f'<p style="color:#e65100"><b>Not scored (error):</b> '
            f"{html.escape(item.error or 'unknown')}</p>"
        )
    for label, dim, names in (
        ("Detection", item.detection, DETECTION_SUBSCORES),
        ("Plan", item.plan, PLAN_SUBSCORES),
    ):
        if item.status == "error":
            break
        if dim is None:
            parts.append(f'<p style="color:#9e9e9e">{label}: N/A for this checkpoint</p>')
            continue
        marks = "".join(_mark(name, dim) for name in names)
        parts.append(
            f'<div style="margin-top:6px"><b>{label} {dim.total}/{dim.max}</b> {marks}</div>'
        )
        if dim.rationale:
            rationale = html.escape(dim.rationale)
            parts.append(f'<p style="margin:2px 0 4px 0;white-space:pre-wrap">{rationale}</p>')
        for quote in dim.quotes:
            parts.append(_quote_block(quote, _where(checks.get(quote), documents)))
    for penalty in item.penalties:
        where = _where(QuoteCheck(penalty.quote, True, penalty.source, penalty.line), documents)
        parts.append(
            f'<div style="margin-top:6px;color:#4a148c"><b>Penalty: {html.escape(penalty.rule)}'
            f"</b>: {html.escape(penalty.detail)}</div>"
        )
        parts.append(_quote_block(penalty.quote, where))
    for dismissed in item.dismissed_penalties:
        parts.append(
            f'<div style="margin-top:6px;color:#757575">Penalty raised, not applied: '
            f"{html.escape(dismissed.flag.rule)} ({html.escape(dismissed.reason)})</div>"
        )
    parts.append("</div>")
    return "".join(parts)


class CheckpointCards:
    """Every checkpoint as a card (id and name, marks, rationale, quotes, penalties).

    Rendered as HTML in a notebook (``_repr_html_``): it wraps at any width, so the
    record reads at 1280 px without a horizontal scrollbar. All agent and judge text
    is escaped; quotes show their Markdown rendered, never raw markers.
    """

    def __init__(self, ev: Evaluation) -> None:
        self.ev = ev

    def _repr_html_(self) -> str:
        ev = self.ev
        documents = {
            "report": ev.submission.report.filename,
            "plan": ev.submission.plan.filename,
        }
        verdicts = {verdict.chk_id: verdict for verdict in ev.verdicts}
        cards = "".join(_card(item, verdicts.get(item.chk_id), documents) for item in ev.items)
        return f'<div class="evalkit-cards" style="max-width:100%">{cards}</div>'

    def __repr__(self) -> str:
        return f"<{len(self.ev.items)} checkpoint cards of {self.ev.range.id}>"


def checkpoint_cards(ev: Evaluation) -> CheckpointCards:
    return CheckpointCards(ev)


class NoModelCalls:
    """A judge that called no model: one sentence, not a table of zeros."""

    def __init__(self, ev: Evaluation) -> None:
        self.text = (
            f"The {ev.judge.name} judge called no model: no requests, tokens or cost to show."
        )

    def _repr_markdown_(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text


def usage_display(ev: Evaluation) -> Styler | NoModelCalls:
    """The usage table for a notebook, or a sentence when the judge made no request."""
    records = (ev.usage, *ev.usage_by_item.values())
    if all(usage.requests == 0 and usage.cached_responses == 0 for usage in records):
        return NoModelCalls(ev)
    return for_display(usage_frame(ev))
