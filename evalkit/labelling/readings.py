"""Readings: what one side (a labeller, or a judge's evaluation) says of each checkpoint.

The labelling notebook pre-fills a draft from a side and shows its reasons
beside each toggle; adjudication sets two or more sides next to each other.
Both read sides through here:

* :func:`label_side`: a label file, its note and penalty quotes;
* :func:`evaluation_side`: a judge's evaluation, re-derived from its recorded
  ``verdicts.json`` through the same pipeline as ``evalkit run`` (screening,
  grounding, scoring): a sub-score is what grounding kept (a claimed point
  without a verbatim quote is 0, as calibration compares it), with the judge's
  rationale and every quote with where it was found; the penalties are those
  the evaluation applied.

A side's name is the labeller's, or ``judge:<evaluation folder>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import EvalkitError
from ..gold_labels import JUDGE_SIDE_PREFIX, LABELS_DIRNAME, LabelPenalty, LabelSet
from ..grounding import Sources
from ..model import Evaluation, GroundedSubScore, Range, SourceName, Submission
from ..render.verdicts_json import VERDICTS_FILENAME
from ..workspace import read_json

__all__ = [
    "EVALUATIONS_DIRNAME",
    "QuoteRef",
    "Reading",
    "Side",
    "SubReading",
    "evaluation_side",
    "judge_side_name",
    "label_side",
    "list_evaluations",
    "load_evaluation",
]

EVALUATIONS_DIRNAME = "evaluations"


@dataclass(frozen=True)
class QuoteRef:
    """A quote a side gave, and where (if anywhere) it is verbatim."""

    quote: str
    source: SourceName | None
    line: int | None

    @property
    def found(self) -> bool:
        return self.line is not None


@dataclass(frozen=True)
class SubReading:
    value: int | None  # None: the side gave none (an errored judge item)
    rationale: str = ""
    quotes: tuple[QuoteRef, ...] = ()
    claimed: int | None = None  # a judge's claim before grounding


@dataclass(frozen=True)
class Reading:
    """One side's reading of one checkpoint."""

    side: str
    chk_id: str
    detection: Mapping[str, SubReading] | None
    plan: Mapping[str, SubReading] | None
    penalties: tuple[LabelPenalty, ...] = ()
    penalty_quotes: tuple[QuoteRef, ...] = ()
    note: str = ""
    borderline: bool = False
    error: str | None = None  # the judge could not score it

    def values(self, dimension: str) -> dict[str, int | None] | None:
        subs = self.detection if dimension == "detection" else self.plan
        return None if subs is None else {name: sub.value for name, sub in subs.items()}

    def quotes(self) -> tuple[QuoteRef, ...]:
        """Every quote of this reading: sub-scores' first, then penalties'."""
        subs = [*(self.detection or {}).values(), *(self.plan or {}).values()]
        return (*(q for sub in subs for q in sub.quotes), *self.penalty_quotes)


@dataclass(frozen=True)
class Side:
    name: str  # labeller, or judge:<folder>
    kind: Literal["label", "judge"]
    title: str  # how the notebook names it
    readings: Mapping[str, Reading] = field(default_factory=dict)
    caveat: str | None = None  # what was measured of a judge's reliability
    # A judge's passages reported as addressed to the evaluator and found in the documents
    # (set apart before scoring): the labeller sees what the judge set aside.
    reported: tuple[QuoteRef, ...] = ()

    def reading(self, chk_id: str) -> Reading | None:
        return self.readings.get(chk_id)


def _quote_ref(sources: Sources, quote: str, source: str) -> QuoteRef:
    kind: SourceName = "report" if source == "report" else "plan"
    check = sources.check(quote, (kind,))
    return QuoteRef(quote=quote, source=kind, line=check.line if check.found else None)


def label_side(labels: LabelSet, sources: Sources) -> Side:
    """A label file as a side: its sub-scores, note, borderline flag and penalty quotes."""

    def subs(values: Mapping[str, int] | None) -> dict[str, SubReading] | None:
        if values is None:
            return None
        return {name: SubReading(value=value) for name, value in values.items()}

    readings: dict[str, Reading] = {}
    for item in labels.items:
        readings[item.chk_id] = Reading(
            side=labels.labeller,
            chk_id=item.chk_id,
            detection=subs(item.detection),
            plan=subs(item.plan),
            penalties=item.penalties,
            penalty_quotes=tuple(_quote_ref(sources, p.quote, p.source) for p in item.penalties),
            note=item.note,
            borderline=item.borderline,
        )
    blind = "blind" if labels.blind else "not blind"
    return Side(
        name=labels.labeller,
        kind="label",
        title=f"label {labels.labeller} ({blind}, {labels.created or 'undated'})",
        readings=readings,
    )


def judge_side_name(folder: str) -> str:
    return f"{JUDGE_SIDE_PREFIX}{folder}"


def _sub_reading(sub: GroundedSubScore) -> SubReading:
    return SubReading(
        value=sub.value,
        rationale=sub.rationale,
        quotes=tuple(QuoteRef(q.quote, q.source, q.line if q.found else None) for q in sub.quotes),
        claimed=sub.claimed,
    )


def evaluation_side(evaluation: Evaluation, folder: str) -> Side:
    """A judge's evaluation as a side named ``judge:<folder>`` (see the module docstring)."""
    name = judge_side_name(folder)
    items = {item.chk_id: item for item in evaluation.items}
    readings: dict[str, Reading] = {}
    for verdict in evaluation.verdicts:
        item = items.get(verdict.chk_id)
        if verdict.status == "error" or item is None:
            readings[verdict.chk_id] = Reading(
                side=name,
                chk_id=verdict.chk_id,
                detection=None,
                plan=None,
                error=verdict.error or "the judge could not score it",
            )
            continue
        penalties = tuple(
            LabelPenalty(
                rule=penalty.rule, source=penalty.source or "report", quote=penalty.quote,
                detail=penalty.detail,
            )
            for penalty in item.penalties
        )  # fmt: skip
        readings[verdict.chk_id] = Reading(
            side=name,
            chk_id=verdict.chk_id,
            detection=(
                {sub.name: _sub_reading(sub) for sub in verdict.detection}
                if verdict.detection is not None
                else None
            ),
            plan=(
                {sub.name: _sub_reading(sub) for sub in verdict.plan}
                if verdict.plan is not None
                else None
            ),
            penalties=penalties,
            penalty_quotes=tuple(
                QuoteRef(p.quote, p.source, p.line) for p in item.penalties if p.line is not None
            ),
        )
    judge = evaluation.judge
    return Side(
        name=name,
        kind="judge",
        title=f"judge {folder} ({judge.evaluator_model})",
        readings=readings,
        caveat=judge.caveat,
        reported=tuple(
            QuoteRef(passage.quote, passage.source, passage.first_line)
            for passage in evaluation.reported_passages
            if passage.found and passage.source is not None
        ),
    )


# --------------------------------------------------------------------------- on disk


def _pair_dir(runs_dir: str | Path, run_id: str, range_id: str) -> Path:
    return Path(runs_dir) / run_id / range_id


def list_evaluations(runs_dir: str | Path, run_id: str, range_id: str) -> list[str]:
    """The evaluation folders of a pair that hold recorded verdicts, sorted."""
    folder = _pair_dir(runs_dir, run_id, range_id) / EVALUATIONS_DIRNAME
    if not folder.is_dir():
        return []
    return sorted(
        entry.name
        for entry in folder.iterdir()
        if not entry.name.startswith(".") and (entry / VERDICTS_FILENAME).is_file()
    )


def load_evaluation(
    runs_dir: str | Path, folder: str, rng: Range, submission: Submission
) -> Evaluation:
    """The evaluation in ``evaluations/<folder>``, re-derived from its ``verdicts.json``
    by the ``file`` judge and :func:`evalkit.evaluate` (no judge is asked), with the
    judge's name, model and caveat from its ``scores.json`` when there is one."""
    from ..judges.file import FileJudge
    from ..model import JudgeInfo
    from ..pipeline import evaluate

    base = _pair_dir(runs_dir, submission.run_id, rng.id) / EVALUATIONS_DIRNAME / folder
    info = JudgeInfo(name=folder, evaluator_model=folder)
    scores = base / "scores.json"
    if scores.is_file():
        try:
            # Never through a link out of the runs folder, and bounded.
            meta = read_json(scores, runs_dir, what="scores.json").get("meta", {})
            info = JudgeInfo(
                name=str(meta.get("judge") or folder),
                evaluator_model=str(meta.get("evaluator_model") or folder),
                caveat=meta.get("judge_caveat"),
            )
        except (EvalkitError, AttributeError):
            pass
    judge = FileJudge(base / VERDICTS_FILENAME, info=info, root=runs_dir)
    return evaluate(rng, submission, judge)


def labels_dir(runs_dir: str | Path, run_id: str, range_id: str) -> Path:
    return _pair_dir(runs_dir, run_id, range_id) / LABELS_DIRNAME
