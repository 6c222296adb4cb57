"""Calibration: a judge's evaluations measured against the gold labels.

The flow, each step in its own module:

1. :func:`~evalkit.research.pairs.select_pairs`: which labelled (run, range)
   pairs to use (``all``, the ``tune``/``holdout``/``fresh`` parts of
   ``runs/gold-split.json``, or globs);
2. :func:`~evalkit.research.cases.evaluate_pairs`: check every label file, then
   evaluate each pair with the judge through the public pipeline;
3. :func:`calibrate` (here): pure; turns labels and evaluations into per-target
   items (:mod:`evalkit.research.items`), measures their agreement with
   cluster-aware intervals (:mod:`evalkit.research.agreement`) and returns a
   :class:`Calibration`;
4. :func:`~evalkit.research.calibration_report.write_outputs`:
   ``calibration.json``, ``calibration-report.md`` and two figures.

``calibration.json`` also keeps every compared item (the judge's value, the
reference label's, the reference labeller's name and, with repeats, the judge's
flip rate), so two calibrations can be set against each other item by item
(``evalkit ab``, :mod:`evalkit.research.ab`).

The names of the steps are importable from here too, as they always were.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from ..model import Evaluation, Summary
from .agreement import JUDGE, by_scope, human_band
from .calibration_report import (
    AGREEMENT_PNG,
    CONFUSION_PNG,
    EVALUATIONS_DIR,
    JSON_NAME,
    REPORT_NAME,
    agreement_chart,
    confusion_grid,
    report_markdown,
    write_evaluations,
    write_outputs,
)
from .calibration_result import Calibration
from .cases import Case, evaluate_pairs, load_pairs
from .items import (
    AFTER_PENALTY_TARGETS,
    ALL_AFTER_PENALTIES,
    ALL_PENALTIES,
    ALL_SUBSCORES,
    PENALTY_TARGETS,
    SUBSCORE_TARGETS,
    TARGETS,
    Item,
    Reading,
    judge_readings,
    label_items,
    label_readings,
    match,
    reference_label,
)
from .pairs import SELECTIONS, SPLIT_FILENAME, SPLIT_PARTS, select_pairs
from .report_format import styled
from .resample import MIN_PAIRS
from .stats import DEFAULT_RESAMPLES, DEFAULT_SEED

if TYPE_CHECKING:
    pass

__all__ = [
    "AFTER_PENALTY_TARGETS",
    "ALL_AFTER_PENALTIES",
    "AGREEMENT_PNG",
    "ALL_PENALTIES",
    "ALL_SUBSCORES",
    "CONFUSION_PNG",
    "EVALUATIONS_DIR",
    "JSON_NAME",
    "JUDGE",
    "PENALTY_TARGETS",
    "REPORT_NAME",
    "SELECTIONS",
    "SPLIT_FILENAME",
    "SPLIT_PARTS",
    "SUBSCORE_TARGETS",
    "TARGETS",
    "Calibration",
    "Case",
    "agreement_chart",
    "calibrate",
    "styled",
    "confusion_grid",
    "evaluate_pairs",
    "label_items",
    "load_pairs",
    "report_markdown",
    "select_pairs",
    "write_evaluations",
    "write_outputs",
]


# --------------------------------------------------------------------------- calibrate


def _abs_error(first: float | None, second: float | None) -> float | None:
    if first is None or second is None:
        return None
    return round(abs(first - second), 1)


def _band_row(
    evaluation: Evaluation, labeller: str, label: Summary, reference: str, truth: Summary
) -> dict[str, Any]:
    """One labeller's final scores against the reference labeller's, for one pair."""
    return {
        "run": evaluation.submission.run_id,
        "range": evaluation.range.id,
        "labeller": labeller,
        "reference": reference,
        "labeller_detection_pct": label.detection.pct,
        "reference_detection_pct": truth.detection.pct,
        "detection_abs_error": _abs_error(label.detection.pct, truth.detection.pct),
        "labeller_plan_pct": label.plan.pct,
        "reference_plan_pct": truth.plan.pct,
        "plan_abs_error": _abs_error(label.plan.pct, truth.plan.pct),
        "labeller_mode": label.diagnosis,
        "reference_mode": truth.diagnosis,
        "mode_match": label.diagnosis == truth.diagnosis,
    }


def _pair_row(evaluation: Evaluation, labeller: str, label: Summary) -> dict[str, Any]:
    judged = evaluation.summary
    return {
        "run": evaluation.submission.run_id,
        "range": evaluation.range.id,
        "labeller": labeller,
        "judge_detection_pct": judged.detection.pct,
        "label_detection_pct": label.detection.pct,
        "detection_abs_error": _abs_error(judged.detection.pct, label.detection.pct),
        "judge_plan_pct": judged.plan.pct,
        "label_plan_pct": label.plan.pct,
        "plan_abs_error": _abs_error(judged.plan.pct, label.plan.pct),
        "judge_mode": judged.diagnosis,
        "label_mode": label.diagnosis,
        "mode_match": judged.diagnosis == label.diagnosis,
        "judge_complete": judged.complete,
    }


def _disagreement(item: Item) -> dict[str, Any]:
    return {
        "run": item.run,
        "range": item.range,
        "chk_id": item.chk_id,
        "target": item.target,
        "judge": item.predicted,
        "label": item.reference,
        "judge_rationale": item.predicted_text,
        "judge_quotes": list(item.predicted_quotes),
        "label_note": item.reference_text,
    }


def _flip_rates(evaluation: Evaluation) -> dict[tuple[str, str], float]:
    """(chk_id, sub-score) -> the flip rate of the judge's repeated samples (repeats > 1)."""
    stability = evaluation.stability
    if stability is None:
        return {}
    return {
        (item.chk_id, sub.subscore): float(sub.flip)
        for item in stability.items
        for sub in item.subscores
    }


def _saved_item(
    item: Item, labeller: str, flips: Mapping[tuple[str, str], float]
) -> dict[str, Any]:
    return {
        "run": item.run,
        "range": item.range,
        "chk_id": item.chk_id,
        "target": item.target,
        "judge": item.predicted,
        "label": item.reference,
        "labeller": labeller,
        "flip_rate": flips.get((item.chk_id, item.target)),
    }


def calibrate(
    cases: Sequence[Case],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    min_pairs: int = MIN_PAIRS,
    reference_labeller: str | None = None,
) -> Calibration:
    """Compare the judge with the labels of every case; pure (no I/O, no judge call).

    ``reference_labeller`` names the reference labeller of every pair (an EvalkitError for a
    pair without that label); None keeps the first non-blind labeller by name.
    """
    judge_all: list[Reading] = []
    judge_errors: list[dict[str, Any]] = []
    by_labeller: dict[str, list[Reading]] = {}
    items: list[Item] = []
    saved: list[dict[str, Any]] = []
    per_pair: list[dict[str, Any]] = []
    per_pair_band: list[dict[str, Any]] = []
    reference_of: dict[str, str] = {}
    for case in cases:
        evaluation = case.evaluation
        readings, errors = judge_readings(evaluation)
        judge_all.extend(readings)
        judge_errors.extend(asdict(error) for error in errors)
        reference = reference_label(case.labels, reference_labeller)
        pair_name = f"{evaluation.submission.run_id}/{evaluation.range.id}"
        # Only checkpoints the judge scored are compared.
        scored = {i.chk_id for i in evaluation.items if i.status == "scored"}
        summaries: dict[str, Summary] = {}
        for labels in case.labels:
            label_scores, summary = label_items(labels, evaluation.range, evaluation.submission)
            summaries[labels.labeller] = summary
            mine = label_readings(labels, [i for i in label_scores if i.chk_id in scored])
            by_labeller.setdefault(labels.labeller, []).extend(mine)
            if labels is reference:
                reference_of[pair_name] = labels.labeller
                matched = match(mine, readings)
                items.extend(matched)
                flips = _flip_rates(evaluation)
                saved.extend(_saved_item(item, labels.labeller, flips) for item in matched)
                per_pair.append(_pair_row(evaluation, labels.labeller, summary))
        if reference is not None:
            per_pair_band.extend(
                _band_row(
                    evaluation, name, summary, reference.labeller, summaries[reference.labeller]
                )
                for name, summary in summaries.items()
                if name != reference.labeller
            )

    first = cases[0].evaluation if cases else None
    repeats = first.stability.repeats if first is not None and first.stability else 1
    return Calibration(
        judge={
            "name": first.judge.name if first else None,
            "evaluator_model": first.judge.evaluator_model if first else None,
            "prompt_version": first.judge.prompt_version if first else None,
            "prompt_sha256": first.judge.prompt_sha256 if first else None,
            "repeats": repeats,
        },
        pairs=tuple((c.evaluation.submission.run_id, c.evaluation.range.id) for c in cases),
        resamples=resamples,
        seed=seed,
        agreement=by_scope(items, resamples=resamples, seed=seed, min_pairs=min_pairs),
        band=human_band(
            judge_all, by_labeller, resamples=resamples, seed=seed, min_pairs=min_pairs
        ),
        per_pair=tuple(per_pair),
        per_pair_band=tuple(per_pair_band),
        # After-penalty readings repeat a sub-score's disagreement, or a penalty's.
        disagreements=tuple(
            _disagreement(i)
            for i in items
            if i.reference != i.predicted and i.target not in AFTER_PENALTY_TARGETS
        ),
        judge_errors=tuple(judge_errors),
        reference=reference_of,
        items=tuple(saved),
        min_pairs=min_pairs,
    )
