"""Renderers: the Evaluation as scores.json, evaluation-report.md, DataFrames and figures.

They read only the :class:`~evalkit.model.Evaluation`; they never score.
``tables`` (pandas) and ``plots`` (matplotlib) are imported on first use, so
writing the two files does not pay for either.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..fileio import write_text_atomic
from ..model import Evaluation
from .report_markdown import render_report, summary_markdown, write_report
from .scores_json import dumps_scores, load_schema, to_scores_dict, validate_scores, write_scores
from .verdicts_json import VERDICTS_FILENAME, dumps_verdicts

if TYPE_CHECKING:
    from .plots import capability_bars, checkpoint_heatmap, diagnosis_plane, save_figure
    from .tables import (
        capabilities_frame,
        items_frame,
        losses_frame,
        style_items,
        summary_frame,
        usage_frame,
    )

SCORES_FILENAME = "scores.json"
REPORT_FILENAME = "evaluation-report.md"
JUDGMENTS_FILENAME = "judgments.jsonl"

_LAZY = {
    "items_frame": "tables",
    "style_items": "tables",
    "summary_frame": "tables",
    "capabilities_frame": "tables",
    "losses_frame": "tables",
    "usage_frame": "tables",
    "checkpoint_heatmap": "plots",
    "capability_bars": "plots",
    "diagnosis_plane": "plots",
    "save_figure": "plots",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def write_outputs(ev: Evaluation, out_dir: str | Path) -> dict[str, Path]:
    """Write ``scores.json`` and ``evaluation-report.md`` into ``out_dir``.

    Both are rendered, and the JSON validated, before either file is touched:
    an evaluation that fails the schema or the template overwrites nothing.
    A judge that made calls also gets ``judgments.jsonl``: one raw
    request/response record per call, for audit and later re-derivation.
    ``verdicts.json`` records the judge's claims, so the record can be re-derived
    (``evalkit record``, ``evalkit verify``) without judging again.
    Returns ``{"scores": path, "report": path, "verdicts": path[, "judgments": path]}``.
    """
    folder = Path(out_dir)
    data = to_scores_dict(ev)
    validate_scores(data, path=folder / SCORES_FILENAME)
    scores_text = dumps_scores(data)
    report_text = render_report(ev)
    written: dict[str, Path] = {}
    if ev.records:
        written["judgments"] = write_text_atomic(folder / JUDGMENTS_FILENAME, judgments_jsonl(ev))
    written["verdicts"] = write_text_atomic(folder / VERDICTS_FILENAME, dumps_verdicts(ev))
    written["scores"] = write_text_atomic(folder / SCORES_FILENAME, scores_text)
    written["report"] = write_text_atomic(folder / REPORT_FILENAME, report_text)
    return written


def warm_up() -> None:
    """Build what the first evaluation's outputs would otherwise build: the scores.json
    validator and the report template. A warm kernel template (:mod:`evalkit.kernels`) calls
    it once, before it forks any record's kernel."""
    from .report_markdown import _template
    from .scores_json import _validator

    _validator()
    _template()


def judgments_jsonl(ev: Evaluation) -> str:
    """The judge's call records, one compact JSON object per line."""
    return "".join(
        json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
        for record in ev.records
    )


__all__ = [
    "JUDGMENTS_FILENAME",
    "VERDICTS_FILENAME",
    "judgments_jsonl",
    "REPORT_FILENAME",
    "SCORES_FILENAME",
    "capabilities_frame",
    "capability_bars",
    "checkpoint_heatmap",
    "diagnosis_plane",
    "dumps_scores",
    "items_frame",
    "load_schema",
    "losses_frame",
    "render_report",
    "save_figure",
    "style_items",
    "summary_frame",
    "summary_markdown",
    "to_scores_dict",
    "usage_frame",
    "validate_scores",
    "warm_up",
    "write_outputs",
    "write_report",
    "write_scores",
    "write_text_atomic",
]
