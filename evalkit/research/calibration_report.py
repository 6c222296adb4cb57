"""The calibration's outputs: ``calibration.json``, ``calibration-report.md``, two figures,
and each pair's evaluation (so two calibrations can be compared and A/B tested).

Numbers are rounded as :mod:`evalkit.research.report_format` says (2 decimals for
agreement, 1 for percentages, ``n/a`` when undefined); agent text and judge
rationales go through the one Markdown cell escaper. JSON keeps full precision.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..render.mdcell import md_cell
from .agreement import JUDGE
from .calibration_tables import (
    agreement_frame,
    agreement_rows,
    band_frame,
    band_rows,
    rows_frame,
    unit_note,
)
from .items import ALL_SUBSCORES, SUBSCORE_TARGETS, TARGETS
from .report_format import fmt, markdown_table

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .calibration_result import Calibration
    from .cases import Case

__all__ = [
    "AGREEMENT_PNG",
    "CONFUSION_PNG",
    "EVALUATIONS_DIR",
    "JSON_NAME",
    "REPORT_NAME",
    "agreement_chart",
    "agreement_frame",
    "agreement_rows",
    "band_frame",
    "confusion_grid",
    "report_markdown",
    "rows_frame",
    "unit_note",
    "write_evaluations",
    "write_outputs",
]

JSON_NAME = "calibration.json"
REPORT_NAME = "calibration-report.md"
CONFUSION_PNG = "confusion-grid.png"
AGREEMENT_PNG = "agreement.png"
EVALUATIONS_DIR = "evaluations"


# --------------------------------------------------------------------------- report


def report_markdown(result: Calibration) -> str:
    """``calibration-report.md``: every table of the result, then every disagreement."""
    judge = result.judge
    pooled = result.agreement.get("pooled", {})
    lines = [
        f"# Calibration of the {fmt(judge.get('name'))} judge "
        f"({fmt(judge.get('evaluator_model'))})",
        "",
        f"Pairs: {', '.join('/'.join(p) for p in result.pairs)}. Reference labeller per pair: "
        + ", ".join(f"{k}: {v}" for k, v in result.reference.items())
        + ".",
        f"Intervals: percentile bootstrap 95 %, {result.resamples} resamples, seed "
        f"{result.seed}, resampling whole checkpoints (a checkpoint's sub-scores move together), "
        f"and pairs, then checkpoints within them, where a table spans at least "
        f"{result.min_pairs} pairs. Sub-scores are compared before penalties and after "
        "grounding; penalties per rule and per checkpoint. `n/a`: undefined "
        "(see docs/calibration.md).",
        "",
        "## Pooled",
        "",
        markdown_table(agreement_rows(pooled)),
        "",
        unit_note(pooled, len(result.pairs)),
        "",
        "## Human band (kappa)",
        "",
        markdown_table(band_rows(result.band, "kappa")),
        "",
        "## Human band (accuracy)",
        "",
        markdown_table(band_rows(result.band, "accuracy")),
        "",
        "## Per (run, range): final scores and diagnostic mode",
        "",
        markdown_table(result.per_pair),
        "",
        "## Per (run, range): the other labellers against the reference (human band)",
        "",
        markdown_table(result.per_pair_band),
        "",
    ]
    for title, prefix in (("Per range", "range:"), ("Per run", "run:")):
        lines += [f"## {title}", ""]
        for scope in result.scopes(prefix):
            block = result.agreement[scope]
            value = scope.split(":", 1)[1]
            position = 1 if prefix == "range:" else 0  # a pair is (run, range)
            count = sum(1 for pair in result.pairs if pair[position] == value)
            lines += [
                f"### {value}",
                "",
                markdown_table(agreement_rows(block)),
                "",
                unit_note(block, count),
                "",
            ]
    if result.judge_errors:
        lines += ["## Checkpoints the judge errored on (left out)", ""]
        lines += [
            f"- {e['run']}/{e['range']} {e['chk_id']}: {md_text(e['error'])}"
            for e in result.judge_errors
        ]
        lines.append("")
    lines += ["## Every disagreement", ""]
    if not result.disagreements:
        lines.append("(none)")
    for row in result.disagreements:
        quotes = "; ".join(f"“{md_text(q)}”" for q in row["judge_quotes"]) or "(none)"
        lines += [
            f"### {row['run']}/{row['range']} {row['chk_id']} {row['target']}: "
            f"judge {row['judge']}, label {row['label']}",
            "",
            f"- judge: {md_text(row['judge_rationale']) or '(no rationale)'}",
            f"- judge quotes: {quotes}",
            f"- label note: {md_text(row['label_note']) or '(no note)'}",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def md_text(value: object) -> str:
    """Agent text or a rationale in a list item: the one cell escaper (it keeps to its line)."""
    return md_cell(value)


# --------------------------------------------------------------------------- figures


def confusion_grid(result: Calibration, scope: str = "pooled") -> Figure:
    """One 2x2 confusion matrix per sub-score and penalty rule (label rows, judge columns)."""
    import matplotlib.pyplot as plt

    targets = [t for t in TARGETS if t in result.agreement.get(scope, {})]
    columns = 5
    rows = max(1, -(-len(targets) // columns))
    figure, axes = plt.subplots(rows, columns, figsize=(2.6 * columns, 2.6 * rows), squeeze=False)
    for index, axis in enumerate(axes.flat):
        if index >= len(targets):
            axis.axis("off")
            continue
        target = targets[index]
        matrix = result.agreement[scope][target].confusion.matrix()
        axis.imshow(matrix, cmap="Blues", vmin=0)
        peak = max(max(row) for row in matrix) or 1
        for row, col in itertools.product((0, 1), (0, 1)):
            count = matrix[row][col]
            # Light text on dark cells, so every count stays readable.
            colour = "white" if count > peak / 2 else "black"
            axis.text(col, row, str(count), ha="center", va="center", color=colour)
        axis.set_xticks([0, 1], ["judge 0", "judge 1"])
        axis.set_yticks([0, 1], ["label 0", "label 1"])
        axis.set_title(target.replace("penalty:", "pen. "), fontsize=9)
    figure.suptitle(f"Confusion per sub-score and penalty rule ({scope})")
    figure.tight_layout()
    return figure


def agreement_chart(result: Calibration, metric: str = "kappa") -> Figure:
    """Per sub-score: the judge's ``metric`` vs the reference with its interval, and the
    human band (every labeller-vs-labeller comparison) beside it."""
    import matplotlib.pyplot as plt

    targets = [*SUBSCORE_TARGETS, ALL_SUBSCORES]
    comparisons = [("judge vs reference", result.agreement.get("pooled", {}))]
    comparisons += [
        (name, block) for name, block in result.band.items() if not name.startswith(JUDGE)
    ]
    figure, axis = plt.subplots(figsize=(9, 4))
    width = 0.8 / max(1, len(comparisons))
    for index, (name, block) in enumerate(comparisons):
        xs, ys, lows, highs = [], [], [], []
        for position, target in enumerate(targets):
            value = block.get(target)
            point = value.value(metric) if value else None
            if value is None or point is None:
                continue
            interval = value.intervals.get(metric) or (point, point)
            xs.append(position + (index - (len(comparisons) - 1) / 2) * width)
            ys.append(point)
            lows.append(point - interval[0])
            highs.append(interval[1] - point)
        axis.errorbar(xs, ys, yerr=[lows, highs], fmt="o", capsize=3, label=name)
    axis.set_xticks(range(len(targets)), targets, rotation=20)
    axis.set_ylabel(metric)
    axis.axhline(0, color="grey", linewidth=0.5)
    axis.set_ylim(-1.05, 1.05)
    axis.legend(fontsize=8)
    axis.set_title(f"{metric} per sub-score with 95 % interval; labeller vs labeller = human band")
    figure.tight_layout()
    return figure


# --------------------------------------------------------------------------- writing


def write_evaluations(cases: Sequence[Case], out_dir: str | Path) -> list[Path]:
    """Each pair's evaluation as ``evaluations/<run>/<range>/`` (scores.json and report),
    so ``evalkit compare`` can set two calibrations side by side."""
    from .. import render

    folders = []
    for case in cases:
        evaluation = case.evaluation
        folder = (
            Path(out_dir) / EVALUATIONS_DIR / evaluation.submission.run_id / evaluation.range.id
        )
        render.write_outputs(evaluation, folder)
        folders.append(folder)
    return folders


def write_outputs(result: Calibration, out_dir: str | Path) -> dict[str, Path]:
    """Write the four outputs into ``out_dir``; returns name -> path."""
    import matplotlib.pyplot as plt

    from ..fileio import write_text_atomic
    from ..render.plots import save_figure

    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": folder / JSON_NAME,
        "report": folder / REPORT_NAME,
        "confusion": folder / CONFUSION_PNG,
        "agreement": folder / AGREEMENT_PNG,
    }
    write_text_atomic(
        paths["json"], json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
    )
    write_text_atomic(paths["report"], report_markdown(result))
    for name, figure in (
        ("confusion", confusion_grid(result)),
        ("agreement", agreement_chart(result)),
    ):
        save_figure(figure, paths[name], dpi=110)
        plt.close(figure)
    return paths
