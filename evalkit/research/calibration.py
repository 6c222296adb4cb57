"""Calibration: a judge's evaluations measured against the gold labels.

The flow, each step a function here:

1. :func:`select_pairs`: which labelled (run, range) pairs to use (``all``,
   the ``tune``/``holdout``/``fresh`` parts of ``runs/gold-split.json``, or globs);
2. :func:`evaluate_pairs`: check every label file, then evaluate each pair
   with the judge through the public pipeline (:func:`evalkit.evaluate`);
3. :func:`calibrate`: pure; compares the judge with the labels and returns a
   :class:`Calibration`;
4. :func:`write_outputs`: ``calibration.json``, ``calibration-report.md`` and
   two figures.

What is compared with what:

* **Sub-scores** are compared *before* penalties and *after* grounding (a
  point the judge could not quote is a 0), because labels are recorded before
  penalties: this measures the judge's reading.
* **Penalties** are compared per rule and per checkpoint: did the judge apply
  the rule (quote verbatim, dimension applicable) where the labeller applied it.
  The labeller's penalties go through the same scoring core as the judge's
  (:func:`label_items`), so a label penalty whose quote is not in the
  documents, or that hits an N/A dimension, does not count either.
* **Final scores**: the label's per-dimension percentages and diagnostic mode
  come from :func:`evalkit.scoring.summarize` over the label's items, exactly
  as the judge's do.
* A checkpoint the judge errored on is left out of every comparison and listed.

The **reference** label of a pair, which the main tables use, is the one by
``reference_labeller`` (``evalkit calibrate --reference``, e.g. an adjudicated
label), else the first non-blind labeller by name (the first by name when all
are blind). The human band compares the judge with every labeller by name, and
every two labellers of the same pairs with each other.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..checklist import load_range
from ..errors import EvalkitError
from ..grounding import Sources
from ..labels import LabelSet, check_labels, find_labels, labelled_pairs
from ..model import (
    SUBSCORES,
    Evaluation,
    GroundedPenalty,
    GroundedSubScore,
    GroundedVerdict,
    ItemScore,
    PenaltyFlag,
    PenaltyRule,
    Range,
    SourceName,
    Submission,
    Summary,
)
from ..penalties import PENALTY_TABLE
from ..runs import load_submission
from ..scoring import score_all
from ._markdown import markdown_table
from .stats import DEFAULT_RESAMPLES, DEFAULT_SEED, METRICS, Agreement, agreement

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

    from ..judges import Judge

__all__ = [
    "ALL_SUBSCORES",
    "SPLIT_FILENAME",
    "Calibration",
    "Case",
    "calibrate",
    "calibration_judge",
    "evaluate_pairs",
    "write_evaluations",
    "label_items",
    "select_pairs",
    "write_outputs",
]

SPLIT_FILENAME = "gold-split.json"
# The named parts of the split file: tuning, reporting, and pairs added after the holdout
# had been measured (never seen while any judge rule was chosen).
SPLIT_PARTS = ("tune", "holdout", "fresh")
SELECTIONS = ("all", *SPLIT_PARTS)
JSON_NAME = "calibration.json"
REPORT_NAME = "calibration-report.md"
CONFUSION_PNG = "confusion-grid.png"
AGREEMENT_PNG = "agreement.png"
EVALUATIONS_DIR = "evaluations"

# Targets compared one by one: the five sub-scores, then the three penalty rules.
SUBSCORE_TARGETS: tuple[str, ...] = tuple(n for names in SUBSCORES.values() for n in names)
PENALTY_TARGETS: tuple[str, ...] = tuple(f"penalty:{rule.name}" for rule in PENALTY_TABLE)
# Pooled rows: every sub-score together, and every penalty rule together.
ALL_SUBSCORES = "all sub-scores"
ALL_PENALTIES = "all penalties"
TARGETS: tuple[str, ...] = (*SUBSCORE_TARGETS, ALL_SUBSCORES, *PENALTY_TARGETS, ALL_PENALTIES)
JUDGE = "judge"


# --------------------------------------------------------------------------- selecting pairs


def select_pairs(runs_dir: str | Path, selection: str = "all") -> list[tuple[str, str]]:
    """The labelled (run, range) pairs named by ``selection``.

    ``all``: every labelled pair; ``tune``/``holdout``/``fresh``: that part of
    ``<runs_dir>/gold-split.json``; otherwise a comma list of ``run/range``
    globs (``demo/*``, ``*/ssh-miner``). An empty result is an error.
    """
    labelled = labelled_pairs(Path(runs_dir))
    selection = selection.strip() or "all"
    if selection == "all":
        chosen = list(labelled)
    elif selection in SPLIT_PARTS:
        chosen = _split_part(Path(runs_dir), selection, labelled)
    else:
        patterns = [p.strip() for p in selection.split(",") if p.strip()]
        chosen = [
            pair
            for pair in labelled
            if any(fnmatch.fnmatchcase("/".join(pair), p) for p in patterns)
        ]
        unmatched = [
            p for p in patterns if not any(fnmatch.fnmatchcase("/".join(x), p) for x in labelled)
        ]
        if unmatched:
            raise EvalkitError(
                f"no labelled pair matches {', '.join(unmatched)} (pairs are run/range)",
                path=Path(runs_dir),
            )
    if not chosen:
        raise EvalkitError(
            f"no labelled (run, range) pair selected by {selection!r}", path=Path(runs_dir)
        )
    return chosen


def _split_part(
    runs_dir: Path, part: str, labelled: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    path = runs_dir / SPLIT_FILENAME
    try:
        split = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise EvalkitError(f"pairs={part!r} needs the split file", path=path) from exc
    except (OSError, ValueError) as exc:
        raise EvalkitError(f"cannot read the split file: {exc}", path=path) from exc
    names = split.get(part) if isinstance(split, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise EvalkitError(f'{part!r} must be a list of "run/range" strings', path=path)
    known = {"/".join(pair): pair for pair in labelled}
    missing = [name for name in names if name not in known]
    if missing:
        raise EvalkitError(f"{part}: no label files for {', '.join(missing)}", path=path)
    return [known[name] for name in names]


# --------------------------------------------------------------------------- evaluating


def calibration_judge(judge: str, *, model: str, prompt_dir: str = "", repeats: int = 1) -> Judge:
    """The judge to calibrate, built from the notebook's (and the command's) parameters.

    ``repeats`` above 1 needs a backend that draws repeated verdicts; one that
    does not take the setting is refused rather than silently judged once.
    """
    from ..judges import judge_options, make_judge

    if repeats < 1:
        raise EvalkitError("repeats must be at least 1")
    options = judge_options(judge, model=model, prompt_dir=prompt_dir or None, repeats=repeats)
    if repeats != 1 and "repeats" not in options:
        raise EvalkitError(f"the {judge} judge does not take repeats")
    return make_judge(judge, **options)


@dataclass(frozen=True)
class Case:
    """One labelled pair: the judge's evaluation and every label file of it."""

    evaluation: Evaluation
    labels: tuple[LabelSet, ...]


def load_pairs(
    ranges_dir: str | Path, runs_dir: str | Path, pairs: Sequence[tuple[str, str]]
) -> list[tuple[Range, Submission, tuple[LabelSet, ...]]]:
    """Read and check every pair's checklist, documents and labels; nothing is judged.

    Any problem (a stale or incomplete label file, a missing document) is an
    :class:`EvalkitError` naming the file, raised before any judge call.
    """
    loaded = []
    for run_id, range_id in pairs:
        rng = load_range(ranges_dir, range_id)
        submission = load_submission(runs_dir, run_id, rng)
        labels = find_labels(Path(runs_dir), run_id, range_id)
        problems = [problem for label in labels for problem in check_labels(label, rng, submission)]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise EvalkitError(f"{run_id}/{range_id}: {problems[0]}{more}")
        loaded.append((rng, submission, labels))
    return loaded


def evaluate_pairs(
    ranges_dir: str | Path,
    runs_dir: str | Path,
    judge: Judge,
    pairs: Sequence[tuple[str, str]],
    *,
    progress: bool = False,
) -> list[Case]:
    """Evaluate every selected pair with ``judge`` through :func:`evalkit.evaluate`."""
    from ..pipeline import evaluate

    return [
        Case(evaluate(rng, submission, judge, progress=progress), labels)
        for rng, submission, labels in load_pairs(ranges_dir, runs_dir, pairs)
    ]


# --------------------------------------------------------------------------- labels as scores


def label_items(
    labels: LabelSet, rng: Range, submission: Submission
) -> tuple[tuple[ItemScore, ...], Summary]:
    """A label's final scores, by the judge's own scoring rules.

    The label's sub-scores stand as grounded points (a labeller needs no quote
    for a point); its penalties are grounded in the document they name and then
    applied, or dismissed, by :func:`evalkit.scoring.score_all`.
    """
    sources = Sources.of(submission)

    def dimension(
        values: Mapping[str, int] | None, note: str
    ) -> tuple[GroundedSubScore, ...] | None:
        if values is None:
            return None
        return tuple(
            GroundedSubScore(name=name, claimed=value, value=value, quotes=(), rationale=note)
            for name, value in values.items()
        )

    verdicts = []
    for item in labels.items:
        penalties = tuple(
            GroundedPenalty(
                # check_labels has held rule and source to their allowed values.
                flag=PenaltyFlag(
                    rule=cast(PenaltyRule, penalty.rule),
                    detail=penalty.detail,
                    quote=penalty.quote,
                ),
                check=sources.check(penalty.quote, (cast(SourceName, penalty.source),)),
            )
            for penalty in item.penalties
        )
        verdicts.append(
            GroundedVerdict(
                chk_id=item.chk_id,
                status="scored",
                detection=dimension(item.detection, item.note),
                plan=dimension(item.plan, item.note),
                penalties=penalties,
            )
        )
    return score_all(rng, verdicts)


# --------------------------------------------------------------------------- readings


def _readings_of_judge(evaluation: Evaluation) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One row per (checkpoint, target) the judge scored; and the errored checkpoints."""
    rows: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    key = {"run": evaluation.submission.run_id, "range": evaluation.range.id}
    items = {item.chk_id: item for item in evaluation.items}
    for verdict in evaluation.verdicts:
        item = items.get(verdict.chk_id)
        if item is None:
            continue
        if item.status == "error":
            errors.append({**key, "chk_id": item.chk_id, "error": item.error})
            continue
        checkpoint = evaluation.range.checkpoint(item.chk_id)
        for dim_name, claims in (("detection", verdict.detection), ("plan", verdict.plan)):
            applicable = (
                checkpoint.has_detection if dim_name == "detection" else checkpoint.has_plan
            )
            if not applicable or claims is None:
                continue
            for claim in claims:
                rows.append(
                    {
                        **key,
                        "chk_id": item.chk_id,
                        "target": claim.name,
                        "value": claim.value,
                        "rationale": claim.rationale,
                        "quotes": [c.quote for c in claim.quotes if c.found],
                    }
                )
        rows.extend(_penalty_rows(key, item))
    return rows, errors


def _penalty_rows(key: Mapping[str, str], item: ItemScore) -> list[dict[str, Any]]:
    """Per rule whose dimension the checkpoint has: 1 if the rule was applied."""
    rows = []
    for rule, dim_name in ((spec.name, spec.dimension) for spec in PENALTY_TABLE):
        if getattr(item, dim_name) is None:
            continue
        applied = [p for p in item.penalties if p.rule == rule]
        rows.append(
            {
                **key,
                "chk_id": item.chk_id,
                "target": f"penalty:{rule}",
                "value": int(bool(applied)),
                "rationale": " ".join(p.detail for p in applied),
                "quotes": [p.quote for p in applied],
            }
        )
    return rows


def _readings_of_label(labels: LabelSet, items: Sequence[ItemScore]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    key = {"run": labels.run_id, "range": labels.range_id}
    by_id = {item.chk_id: item for item in labels.items}
    for item in items:
        if item.status != "scored":
            continue
        label = by_id[item.chk_id]
        for values in (label.detection, label.plan):
            for name, value in (values or {}).items():
                rows.append(
                    {
                        **key,
                        "chk_id": item.chk_id,
                        "target": name,
                        "value": value,
                        "note": label.note,
                    }
                )
        for row in _penalty_rows(key, item):
            row["note"] = label.note
            rows.append(row)
    return rows


# --------------------------------------------------------------------------- the result


@dataclass(frozen=True)
class Calibration:
    """Everything :func:`calibrate` measured; :meth:`to_dict` is ``calibration.json``."""

    judge: Mapping[str, Any]
    pairs: tuple[tuple[str, str], ...]
    resamples: int
    seed: int
    # scope ("pooled", "range:<id>", "run:<id>") -> target -> Agreement (judge vs reference)
    agreement: Mapping[str, Mapping[str, Agreement]]
    # "judge vs <labeller>" / "<a> vs <b>" -> target -> Agreement
    band: Mapping[str, Mapping[str, Agreement]]
    per_pair: tuple[Mapping[str, Any], ...]
    disagreements: tuple[Mapping[str, Any], ...]
    judge_errors: tuple[Mapping[str, Any], ...]
    reference: Mapping[str, str] = field(default_factory=dict)  # "run/range" -> labeller
    # Per pair, every other labeller's final scores against the reference: the human band.
    per_pair_band: tuple[Mapping[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        def table(block: Mapping[str, Mapping[str, Agreement]]) -> dict[str, Any]:
            return {
                scope: {target: value.to_dict() for target, value in targets.items()}
                for scope, targets in block.items()
            }

        return {
            "judge": dict(self.judge),
            "pairs": ["/".join(pair) for pair in self.pairs],
            "reference_labeller": dict(self.reference),
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "level": 0.95},
            "agreement": table(self.agreement),
            "human_band": table(self.band),
            "per_pair": [dict(row) for row in self.per_pair],
            "per_pair_human_band": [dict(row) for row in self.per_pair_band],
            "disagreements": [dict(row) for row in self.disagreements],
            "judge_errors": [dict(row) for row in self.judge_errors],
        }

    # ----- tables for the notebook and the report

    def frame(self, scope: str = "pooled") -> pd.DataFrame:
        """One row per target of ``scope``: n, every metric and its 95 % interval."""
        return _agreement_frame(self.agreement.get(scope, {}))

    def scopes(self, prefix: str) -> list[str]:
        return [scope for scope in self.agreement if scope.startswith(prefix)]

    def band_frame(self, metric: str = "kappa") -> pd.DataFrame:
        """Sub-score x comparison: ``metric`` with its interval, HealthBench style."""
        import pandas as pd

        columns: dict[str, dict[str, str]] = {}
        for comparison, targets in self.band.items():
            columns[comparison] = {
                target: _with_interval(value, metric) for target, value in targets.items()
            }
        return pd.DataFrame(columns).reindex(
            [t for t in TARGETS if any(t in c for c in columns.values())]
        )

    def pairs_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(list(self.per_pair))

    def pairs_band_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(list(self.per_pair_band))

    def disagreements_frame(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(list(self.disagreements))


def _with_interval(value: Agreement, metric: str) -> str:
    point = value.value(metric)
    if point is None:
        return "n/a"
    interval = value.intervals.get(metric)
    return f"{point:.2f}" + (f" [{interval[0]:.2f}, {interval[1]:.2f}]" if interval else "")


def _agreement_frame(targets: Mapping[str, Agreement]) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for target, value in targets.items():
        row: dict[str, Any] = {"target": target, "n": value.n}
        for metric in METRICS:
            row[metric] = _with_interval(value, metric)
        c = value.confusion
        row["confusion [[tn, fp], [fn, tp]]"] = str(c.matrix())
        rows.append(row)
    return pd.DataFrame(rows).set_index("target") if rows else pd.DataFrame()


# --------------------------------------------------------------------------- calibrate


def _reference(labels: Sequence[LabelSet], preferred: str | None = None) -> LabelSet | None:
    if preferred is not None:
        named = [label for label in labels if label.labeller == preferred]
        if not named:
            pair = f"{labels[0].run_id}/{labels[0].range_id}" if labels else "a pair"
            raise EvalkitError(f"{pair} has no label by reference labeller {preferred!r}")
        return named[0]
    if not labels:
        return None
    ordered = sorted(labels, key=lambda label: (label.blind, label.labeller))
    return ordered[0]


def _measure(merged: pd.DataFrame, resamples: int, seed: int) -> dict[str, Agreement]:
    """Per target (and pooled) agreement of ``value_ref`` (truth) and ``value_pred``."""
    out: dict[str, Agreement] = {}
    groups: list[tuple[str, Callable[[pd.DataFrame], Any]]] = [
        *((t, lambda f, t=t: f["target"] == t) for t in SUBSCORE_TARGETS),
        (ALL_SUBSCORES, lambda f: f["target"].isin(SUBSCORE_TARGETS)),
        *((t, lambda f, t=t: f["target"] == t) for t in PENALTY_TARGETS),
        (ALL_PENALTIES, lambda f: f["target"].isin(PENALTY_TARGETS)),
    ]
    for name, select in groups:
        part = merged[select(merged)] if len(merged) else merged
        out[name] = agreement(
            [int(v) for v in part.get("value_ref", [])],
            [int(v) for v in part.get("value_pred", [])],
            resamples=resamples,
            seed=seed,
        )
    return out


def _merge(reference: pd.DataFrame, predicted: pd.DataFrame) -> pd.DataFrame:
    keys = ["run", "range", "chk_id", "target"]
    if reference.empty or predicted.empty:
        import pandas as pd

        return pd.DataFrame(columns=[*keys, "value_ref", "value_pred"])
    return reference.merge(predicted, on=keys, suffixes=("_ref", "_pred"), how="inner")


def calibrate(
    cases: Sequence[Case],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    reference_labeller: str | None = None,
) -> Calibration:
    """Compare the judge with the labels of every case; pure (no I/O, no judge call).

    ``reference_labeller`` names the reference labeller of every pair (an EvalkitError for a
    pair without that label); None keeps the first non-blind labeller by name.
    """
    import pandas as pd

    judge_rows: list[dict[str, Any]] = []
    judge_errors: list[dict[str, Any]] = []
    label_rows: dict[str, list[dict[str, Any]]] = {}  # labeller -> rows
    reference_rows: list[dict[str, Any]] = []
    per_pair: list[dict[str, Any]] = []
    per_pair_band: list[dict[str, Any]] = []
    reference_of: dict[str, str] = {}
    for case in cases:
        evaluation = case.evaluation
        rows, errors = _readings_of_judge(evaluation)
        judge_rows.extend(rows)
        judge_errors.extend(errors)
        reference = _reference(case.labels, reference_labeller)
        pair_name = f"{evaluation.submission.run_id}/{evaluation.range.id}"
        summaries: dict[str, Summary] = {}
        for labels in case.labels:
            items, summary = label_items(labels, evaluation.range, evaluation.submission)
            summaries[labels.labeller] = summary
            # Only checkpoints the judge scored are compared.
            scored = {i.chk_id for i in evaluation.items if i.status == "scored"}
            readings = _readings_of_label(labels, [i for i in items if i.chk_id in scored])
            label_rows.setdefault(labels.labeller, []).extend(readings)
            if labels is reference:
                reference_of[pair_name] = labels.labeller
                reference_rows.extend(readings)
                per_pair.append(_pair_row(evaluation, labels.labeller, summary))
        if reference is not None:
            per_pair_band.extend(
                _band_row(
                    evaluation, name, summary, reference.labeller, summaries[reference.labeller]
                )
                for name, summary in summaries.items()
                if name != reference.labeller
            )

    judge_frame = pd.DataFrame(judge_rows)
    reference_frame = pd.DataFrame(reference_rows)
    merged = _merge(reference_frame, judge_frame)

    scopes: dict[str, dict[str, Agreement]] = {"pooled": _measure(merged, resamples, seed)}
    for column, prefix in (("range", "range:"), ("run", "run:")):
        values = list(dict.fromkeys(merged[column])) if len(merged) else []
        for value in values:
            scopes[f"{prefix}{value}"] = _measure(merged[merged[column] == value], resamples, seed)

    band: dict[str, dict[str, Agreement]] = {}
    frames = {name: pd.DataFrame(rows) for name, rows in sorted(label_rows.items())}
    for name, frame in frames.items():
        band[f"{JUDGE} vs {name}"] = _measure(_merge(frame, judge_frame), resamples, seed)
    for first, second in itertools.combinations(frames, 2):
        both = _merge(frames[first], frames[second])
        if len(both):
            band[f"{first} vs {second}"] = _measure(both, resamples, seed)

    first_case = cases[0].evaluation.judge if cases else None
    return Calibration(
        judge={
            "name": first_case.name if first_case else None,
            "evaluator_model": first_case.evaluator_model if first_case else None,
            "prompt_version": first_case.prompt_version if first_case else None,
            "prompt_sha256": first_case.prompt_sha256 if first_case else None,
        },
        pairs=tuple((c.evaluation.submission.run_id, c.evaluation.range.id) for c in cases),
        resamples=resamples,
        seed=seed,
        agreement=scopes,
        band=band,
        per_pair=tuple(per_pair),
        per_pair_band=tuple(per_pair_band),
        disagreements=tuple(_disagreements(merged)),
        judge_errors=tuple(judge_errors),
        reference=reference_of,
    )


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
    error = _abs_error

    return {
        "run": evaluation.submission.run_id,
        "range": evaluation.range.id,
        "labeller": labeller,
        "judge_detection_pct": judged.detection.pct,
        "label_detection_pct": label.detection.pct,
        "detection_abs_error": error(judged.detection.pct, label.detection.pct),
        "judge_plan_pct": judged.plan.pct,
        "label_plan_pct": label.plan.pct,
        "plan_abs_error": error(judged.plan.pct, label.plan.pct),
        "judge_mode": judged.diagnosis,
        "label_mode": label.diagnosis,
        "mode_match": judged.diagnosis == label.diagnosis,
        "judge_complete": judged.complete,
    }


def _disagreements(merged: pd.DataFrame) -> Iterable[dict[str, Any]]:
    if not len(merged):
        return []
    differ = merged[merged["value_ref"] != merged["value_pred"]]
    return [
        {
            "run": row["run"],
            "range": row["range"],
            "chk_id": row["chk_id"],
            "target": row["target"],
            "judge": int(row["value_pred"]),
            "label": int(row["value_ref"]),
            "judge_rationale": row.get("rationale_pred", row.get("rationale", "")) or "",
            "judge_quotes": list(row.get("quotes_pred", row.get("quotes", [])) or []),
            "label_note": row.get("note", "") or "",
        }
        for row in differ.to_dict("records")
    ]


# --------------------------------------------------------------------------- outputs


def report_markdown(result: Calibration) -> str:
    """``calibration-report.md``: every table of the result, then every disagreement."""

    def md(frame: pd.DataFrame, index: bool = True) -> str:
        return markdown_table(frame, index=index)

    judge = result.judge
    lines = [
        f"# Calibration of the {judge.get('name')} judge ({judge.get('evaluator_model')})",
        "",
        f"Pairs: {', '.join('/'.join(p) for p in result.pairs)}. Reference labeller per pair: "
        + ", ".join(f"{k}: {v}" for k, v in result.reference.items())
        + ".",
        f"Intervals: percentile bootstrap 95 %, {result.resamples} resamples of the items, "
        f"seed {result.seed}. Sub-scores are compared before penalties and after grounding; "
        "penalties per rule and per checkpoint. `n/a`: undefined (see docs/calibration.md).",
        "",
        "## Pooled",
        "",
        md(result.frame("pooled")),
        "",
        "## Human band (kappa)",
        "",
        md(result.band_frame("kappa")),
        "",
        "## Human band (accuracy)",
        "",
        md(result.band_frame("accuracy")),
        "",
        "## Per (run, range): final scores and diagnostic mode",
        "",
        md(result.pairs_frame(), index=False),
        "",
        "## Per (run, range): the other labellers against the reference (human band)",
        "",
        md(result.pairs_band_frame(), index=False),
        "",
    ]
    for title, prefix in (("Per range", "range:"), ("Per run", "run:")):
        lines += [f"## {title}", ""]
        for scope in result.scopes(prefix):
            lines += [f"### {scope.split(':', 1)[1]}", "", md(result.frame(scope)), ""]
    if result.judge_errors:
        lines += ["## Checkpoints the judge errored on (left out)", ""]
        lines += [
            f"- {e['run']}/{e['range']} {e['chk_id']}: {e['error']}" for e in result.judge_errors
        ]
        lines.append("")
    lines += ["## Every disagreement", ""]
    if not result.disagreements:
        lines.append("None.")
    for row in result.disagreements:
        quotes = "; ".join(f"“{q}”" for q in row["judge_quotes"]) or "(none)"
        lines += [
            f"### {row['run']}/{row['range']} {row['chk_id']} {row['target']}: "
            f"judge {row['judge']}, label {row['label']}",
            "",
            f"- judge: {row['judge_rationale'] or '(no rationale)'}",
            f"- judge quotes: {quotes}",
            f"- label note: {row['label_note'] or '(no note)'}",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


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
