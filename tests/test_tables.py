"""pandas views: shapes, nullable dtypes, NA for N/A and errored items, styling."""

from __future__ import annotations

import pandas as pd
from pandas.io.formats.style import Styler

from evalkit.render import (
    capabilities_frame,
    items_frame,
    losses_frame,
    style_items,
    summary_frame,
    usage_frame,
)
from evalkit.render.tables import COLOR_ERROR, COLOR_LOST, COLOR_NA, COLOR_POINT, ITEM_COLUMNS


def test_items_frame_has_one_row_per_checkpoint(render_evaluation):
    frame = items_frame(render_evaluation)
    assert frame.shape == (4, len(ITEM_COLUMNS))
    assert list(frame.columns) == list(ITEM_COLUMNS)
    assert list(frame["chk_id"]) == ["CHK-01", "CHK-02", "CHK-03", "CHK-04"]
    for column in ("discovery", "detection", "detection_max", "plan", "plan_max"):
        assert frame[column].dtype == "Int64"
    for column in ("name", "detection_rationale", "quotes", "error"):
        assert isinstance(frame[column].dtype, pd.StringDtype)


def test_items_frame_values_and_na(render_evaluation):
    frame = items_frame(render_evaluation).set_index("chk_id")
    one = frame.loc["CHK-01"]
    assert (one["discovery"], one["evidence"], one["attribution"]) == (1, 0, 1)
    assert (one["detection"], one["detection_max"], one["plan"], one["plan_max"]) == (2, 3, 2, 2)
    assert one["error"] is pd.NA
    assert one["quotes"].count("\n") == 3  # four quotes, one a line
    # detection-only: plan columns are NA
    assert frame.loc["CHK-02", ["correctness", "completeness", "plan", "plan_max"]].isna().all()
    assert frame.loc["CHK-02", "plan_rationale"] is pd.NA
    assert frame.loc["CHK-02", "penalties"] == "fabrication"
    # plan-only: detection columns are NA
    assert frame.loc["CHK-03", ["discovery", "evidence", "attribution", "detection"]].isna().all()
    # errored: every score is NA, the error is kept
    errored = frame.loc["CHK-04"]
    assert errored["status"] == "error"
    assert errored["error"] == "judge timed out | after 3 attempts"
    assert errored[["discovery", "correctness", "detection", "plan"]].isna().all()
    # Totals ignore NA, as the summary does.
    assert frame["detection"].sum() == 2 and frame["plan"].sum() == 3


def test_style_items_colours_points_na_and_errored_rows(render_evaluation):
    styler = style_items(render_evaluation)
    assert isinstance(styler, Styler)
    html = styler.to_html()
    for colour in (COLOR_POINT, COLOR_LOST, COLOR_NA, COLOR_ERROR):
        assert colour.split(";")[0].split(": ")[1] in html
    assert "N/A" in html
    assert "pre-wrap" in html


def test_summary_frame_has_two_dimensions_and_no_total(render_evaluation):
    frame = summary_frame(render_evaluation)
    assert list(frame.index) == ["detection", "plan"]
    assert list(frame.columns) == ["score", "max", "pct", "level"]
    assert frame.loc["detection", "pct"] == 33.3 and frame.loc["plan", "level"] == "strong"
    assert frame.attrs["diagnosis"] == "Blind fix"
    assert frame.attrs["complete"] is False and frame.attrs["errored"] == ["CHK-04"]


def test_summary_frame_na_when_max_is_0(render_evaluation):
    import dataclasses

    from evalkit.model import Tally

    summary = dataclasses.replace(render_evaluation.summary, plan=Tally(0, 0, None, None))
    frame = summary_frame(dataclasses.replace(render_evaluation, summary=summary))
    assert frame.loc["plan", "pct"] is pd.NA and frame.loc["plan", "level"] is pd.NA


def test_capabilities_frame(render_evaluation):
    frame = capabilities_frame(render_evaluation)
    assert list(frame.index) == ["CAP-01", "CAP-02"]
    assert frame.shape == (2, 12)
    assert frame.loc["CAP-01", "n_items"] == 3
    assert frame.loc["CAP-01", "diagnosis"] == "Blind fix"
    assert frame.loc["CAP-02", "detection_pct"] == 0.0
    assert frame.loc["CAP-02", "plan_level"] == "weak"


def test_losses_frame_lists_misses_then_defects(render_evaluation):
    frame = losses_frame(render_evaluation)
    assert frame.shape == (4, 4)
    assert list(frame["dimension"]) == ["detection"] * 3 + ["plan"]
    assert frame.iloc[0].to_dict() == {
        "dimension": "detection",
        "subscore": "evidence",
        "count": 2,
        "items": "CHK-01, CHK-02",
    }


def test_usage_frame_per_item_and_total(render_evaluation):
    frame = usage_frame(render_evaluation)
    assert list(frame.index) == ["CHK-01", "CHK-02", "CHK-03", "CHK-04", "total"]
    assert frame.loc["total", "requests"] == 4
    assert frame.loc["total", "cost_usd"] == 0.05
    assert frame.drop(index="total")["input_tokens"].sum() == frame.loc["total", "input_tokens"]


def test_usage_frame_of_an_offline_judge_is_a_zero_total(render_complete_evaluation):
    frame = usage_frame(render_complete_evaluation)
    assert list(frame.index) == ["total"]
    assert frame.loc["total"].sum() == 0


def test_empty_frames_keep_their_columns(render_complete_evaluation):
    import dataclasses

    summary = dataclasses.replace(
        render_complete_evaluation.summary, top_detection_misses=(), top_plan_defects=()
    )
    ev = dataclasses.replace(render_complete_evaluation, summary=summary, items=())
    assert items_frame(ev).shape == (0, len(ITEM_COLUMNS))
    assert list(losses_frame(ev).columns) == ["dimension", "subscore", "count", "items"]


def test_unknown_checklist_fields_have_a_column(render_evaluation):
    from dataclasses import replace

    first, *rest = render_evaluation.range.checkpoints
    tagged = replace(first, extra={"Severity": "high"})
    ev = replace(
        render_evaluation, range=replace(render_evaluation.range, checkpoints=(tagged, *rest))
    )
    frame = items_frame(ev)
    assert frame.loc[0, "extra"] == "Severity: high"
    assert frame.loc[1, "extra"] is pd.NA


# --------------------------------------------------------------------------- display


def test_for_display_uses_human_column_names(render_evaluation):
    from evalkit.render.tables import for_display

    html = for_display(capabilities_frame(render_evaluation)).to_html()
    assert "Detection %" in html and "Mode" in html and "Capability" in html
    assert "detection_pct" not in html
    usage = for_display(usage_frame(render_evaluation)).to_html()
    assert "Cache read" in usage and "cache_read_input_tokens" not in usage


def test_checkpoint_cards_show_marks_quotes_with_their_line_and_penalties(render_evaluation):
    from evalkit.render.tables import checkpoint_cards

    page = checkpoint_cards(render_evaluation)._repr_html_()
    for item in render_evaluation.items:
        assert f'id="card-{item.chk_id}"' in page
    assert "evalkit-withheld" in page  # CHK-01 evidence: claimed, no verbatim quote
    assert "evalkit-penalized" in page  # CHK-02: zeroed by the fabrication penalty
    assert "Penalty: fabrication" in page
    assert "intrusion-report.md, line " in page and "remediation-plan.md, line " in page
    assert "Not scored (error)" in page  # CHK-04


def test_checkpoint_cards_escape_agent_text_and_render_markdown(render_evaluation):
    import dataclasses

    from evalkit.render.tables import checkpoint_cards

    item = render_evaluation.items[0]
    detection = dataclasses.replace(
        item.detection,
        rationale="<script>alert(1)</script>",
        quotes=("**bold** and `code` <img src=x onerror=alert(1)>",),
    )
    ev = dataclasses.replace(
        render_evaluation, items=(dataclasses.replace(item, detection=detection),)
    )
    page = checkpoint_cards(ev)._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<img" not in page
    assert "<strong>bold</strong>" in page and "<code>code</code>" in page
    assert "**" not in page


def test_usage_display_is_a_table_for_a_model_judge_and_a_sentence_otherwise(
    render_evaluation, render_complete_evaluation
):
    from evalkit.render.tables import NoModelCalls, usage_display

    assert isinstance(usage_display(render_evaluation), Styler)
    offline = usage_display(render_complete_evaluation)
    assert isinstance(offline, NoModelCalls)
    judge = render_complete_evaluation.judge.name
    assert offline._repr_markdown_() == (
        f"The {judge} judge called no model: no requests, tokens or cost to show."
    )
