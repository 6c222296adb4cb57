"""How the research reports show numbers, and their Markdown tables."""

from __future__ import annotations

import math

from evalkit.research.report_format import (
    column_digits,
    display,
    display_frame,
    fmt,
    fmt_interval,
    fmt_p,
    fmt_signed,
    markdown_table,
)


def test_numbers_are_rounded_and_undefined_is_n_a():
    assert fmt(0.8165137614678899) == "0.82"
    assert fmt(None) == "n/a" and fmt(math.nan) == "n/a"
    assert fmt(True) == "yes" and fmt(3) == "3" and fmt("x") == "x"
    assert fmt_signed(0.123) == "+0.12" and fmt_signed(None) == "n/a"
    assert fmt_interval((0.123456789, 0.98765)) == "[0.12, 0.99]"
    assert fmt_interval(None) == "n/a" and fmt_interval([math.nan, 1.0]) == "n/a"
    assert fmt_p(0.0214) == "0.021" and fmt_p(0.00001) == "< 0.001" and fmt_p(None) == "n/a"


def test_columns_choose_their_decimals():
    assert column_digits("detection_delta") == 1 and column_digits("judge_plan_pct") == 1
    assert column_digits("mcnemar_p_value") == 3 and column_digits("kappa") == 2
    assert display("kappa_ci95", [0.1, 0.2]) == "[0.10, 0.20]"
    assert display("detection_delta_ci95", None) == "n/a"
    assert display("plan_after", 66.66666) == "66.7"


def test_tables_escape_and_format_every_cell():
    rows = [
        {"target": "a|b", "kappa": 0.8165137614678899, "kappa_ci95": [0.5, 0.9], "x": None},
        {"target": "<b>", "kappa": None, "kappa_ci95": None, "x": 1},
    ]
    table = markdown_table(rows)
    assert table.splitlines() == [
        "| target | kappa | kappa_ci95 | x |",
        "|---|---|---|---|",
        "| a\\|b | 0.82 | [0.50, 0.90] | n/a |",
        "| &lt;b&gt; | n/a | n/a | 1 |",
    ]
    assert markdown_table([]) == "(nothing to compare)"
    assert markdown_table(rows, ["x"]).splitlines()[2] == "| n/a |"
    frame = display_frame(rows)
    assert list(frame["kappa"]) == ["0.82", "n/a"]
