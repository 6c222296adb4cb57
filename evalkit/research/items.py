"""Labels and evaluations as per-target items: what calibration compares, one by one.

A *target* is one sub-score (``discovery`` ... ``completeness``) or one penalty
rule (``penalty:<rule>``). A :class:`Reading` is one rater's 0/1 on one target of
one checkpoint of one (run, range) pair; an :class:`Item` is the reference
label's reading beside the judge's on the same target.

* **Sub-scores** are read *before* penalties and *after* grounding: a point the
  judge claimed but could not quote verbatim is a 0, and labels are recorded
  before penalties.
* **Sub-scores after penalties** (``<sub-score> after penalties``) are the points
  that count: after grounding, with the rater's penalties applied by the one penalty
  table (a label's, as the scoring core applies them). Reading them beside the
  sub-scores before penalties shows what penalties add to agreement or take from it.
* **Penalties** are read per rule and per checkpoint, for each rule whose
  dimension the checkpoint has: 1 when the rule was applied. A label's
  penalties go through the scoring core first (:func:`label_items`), so one
  whose quote is not in its document, or that hits an N/A dimension, does not
  count either.
* A checkpoint the judge errored on has no reading (it is listed instead).

Pure functions over plain dataclasses; nothing here reads a file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import cast

from ..errors import EvalkitError
from ..gold_labels import LabelSet
from ..grounding import Sources
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
from ..scoring import score_all
from .resample import Clusters

__all__ = [
    "AFTER_PENALTIES",
    "AFTER_PENALTY_TARGETS",
    "ALL_AFTER_PENALTIES",
    "ALL_PENALTIES",
    "ALL_SUBSCORES",
    "POOLED_ROWS",
    "PENALTY_TARGETS",
    "SUBSCORE_TARGETS",
    "TARGETS",
    "Item",
    "UnscoredItem",
    "Reading",
    "clusters_of",
    "judge_readings",
    "label_items",
    "label_readings",
    "match",
    "members_of",
    "reference_label",
    "select_target",
]

# Targets compared one by one: the five sub-scores, the three penalty rules, and the five
# sub-scores after penalties.
SUBSCORE_TARGETS: tuple[str, ...] = tuple(n for names in SUBSCORES.values() for n in names)
PENALTY_TARGETS: tuple[str, ...] = tuple(f"penalty:{rule.name}" for rule in PENALTY_TABLE)
AFTER_PENALTIES = " after penalties"
AFTER_PENALTY_TARGETS: tuple[str, ...] = tuple(f"{n}{AFTER_PENALTIES}" for n in SUBSCORE_TARGETS)
# Pooled rows: every sub-score together, every penalty rule together, every sub-score
# after penalties together.
ALL_SUBSCORES = "all sub-scores"
ALL_PENALTIES = "all penalties"
ALL_AFTER_PENALTIES = "all sub-scores after penalties"
POOLED_ROWS: dict[str, tuple[str, ...]] = {
    ALL_SUBSCORES: SUBSCORE_TARGETS,
    ALL_PENALTIES: PENALTY_TARGETS,
    ALL_AFTER_PENALTIES: AFTER_PENALTY_TARGETS,
}
TARGETS: tuple[str, ...] = (
    *SUBSCORE_TARGETS,
    ALL_SUBSCORES,
    *PENALTY_TARGETS,
    ALL_PENALTIES,
    *AFTER_PENALTY_TARGETS,
    ALL_AFTER_PENALTIES,
)


@dataclass(frozen=True)
class Reading:
    """One rater's 0/1 on one target of one checkpoint, with what it said about it."""

    run: str
    range: str
    chk_id: str
    target: str
    value: int
    text: str = ""  # the judge's rationale, or the label's note
    quotes: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.run, self.range, self.chk_id, self.target)


@dataclass(frozen=True)
class Item:
    """The reference's reading (the truth) beside the predicted one, on one target."""

    run: str
    range: str
    chk_id: str
    target: str
    reference: int
    predicted: int
    reference_text: str = ""
    predicted_text: str = ""
    predicted_quotes: tuple[str, ...] = ()

    @property
    def pair(self) -> str:
        return f"{self.run}/{self.range}"

    @property
    def checkpoint(self) -> str:
        return f"{self.run}/{self.range}/{self.chk_id}"


@dataclass(frozen=True)
class UnscoredItem:
    """A checkpoint the judge could not score: left out of every comparison."""

    run: str
    range: str
    chk_id: str
    error: str | None


def members_of(target: str) -> tuple[str, ...]:
    """The targets a row reads: its members for a pooled row, else the target itself."""
    return POOLED_ROWS.get(target, (target,))


def select_target(items: Iterable[Item], target: str) -> list[Item]:
    """The items of one target, or of every member target for a pooled row."""
    members = members_of(target)
    return [item for item in items if item.target in members]


def clusters_of(items: Sequence[Item]) -> Clusters:
    """Each item's checkpoint and pair, for a bootstrap that resamples them whole."""
    return Clusters(tuple(i.checkpoint for i in items), tuple(i.pair for i in items))


def reference_label(labels: Sequence[LabelSet], preferred: str | None = None) -> LabelSet | None:
    """The label the main tables compare with: the one by ``preferred`` (an adjudicated
    label, ``evalkit calibrate --reference``), else the first non-blind labeller by name (the
    first by name when all are blind). A pair without the preferred label is an error."""
    if preferred is not None:
        named = [label for label in labels if label.labeller == preferred]
        if not named:
            pair = f"{labels[0].run_id}/{labels[0].range_id}" if labels else "a pair"
            raise EvalkitError(f"{pair} has no label by reference labeller {preferred!r}")
        return named[0]
    if not labels:
        return None
    return sorted(labels, key=lambda label: (label.blind, label.labeller))[0]


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


def _penalty_readings(run: str, range_id: str, item: ItemScore, note: str | None) -> list[Reading]:
    """Per rule whose dimension the checkpoint has: 1 if the rule was applied."""
    readings = []
    for rule, dim_name in ((spec.name, spec.dimension) for spec in PENALTY_TABLE):
        if getattr(item, dim_name) is None:
            continue
        applied = [p for p in item.penalties if p.rule == rule]
        readings.append(
            Reading(
                run=run,
                range=range_id,
                chk_id=item.chk_id,
                target=f"penalty:{rule}",
                value=int(bool(applied)),
                text=note if note is not None else " ".join(p.detail for p in applied),
                quotes=tuple(p.quote for p in applied),
            )
        )
    return readings


def _after_penalty_readings(run: str, range_id: str, item: ItemScore) -> list[Reading]:
    """The points that count, per sub-score: after grounding and penalties."""
    return [
        Reading(
            run=run,
            range=range_id,
            chk_id=item.chk_id,
            target=f"{name}{AFTER_PENALTIES}",
            value=value,
            text=dimension.rationale,
            quotes=dimension.quotes,
        )
        for dimension in (item.detection, item.plan)
        if dimension is not None
        for name, value in dimension.subscores.items()
    ]


def judge_readings(evaluation: Evaluation) -> tuple[list[Reading], list[UnscoredItem]]:
    """One reading per (checkpoint, target) the judge scored; and the errored checkpoints."""
    readings: list[Reading] = []
    errors: list[UnscoredItem] = []
    run, range_id = evaluation.submission.run_id, evaluation.range.id
    items = {item.chk_id: item for item in evaluation.items}
    for verdict in evaluation.verdicts:
        item = items.get(verdict.chk_id)
        if item is None:
            continue
        if item.status == "error":
            errors.append(UnscoredItem(run, range_id, item.chk_id, item.error))
            continue
        checkpoint = evaluation.range.checkpoint(item.chk_id)
        for dim_name, claims in (("detection", verdict.detection), ("plan", verdict.plan)):
            applicable = (
                checkpoint.has_detection if dim_name == "detection" else checkpoint.has_plan
            )
            if not applicable or claims is None:
                continue
            readings.extend(
                Reading(
                    run=run,
                    range=range_id,
                    chk_id=item.chk_id,
                    target=claim.name,
                    value=claim.value,
                    text=claim.rationale,
                    quotes=tuple(c.quote for c in claim.quotes if c.found),
                )
                for claim in claims
            )
        readings.extend(_penalty_readings(run, range_id, item, None))
        readings.extend(_after_penalty_readings(run, range_id, item))
    return readings, errors


def label_readings(labels: LabelSet, items: Sequence[ItemScore]) -> list[Reading]:
    """The label's readings of ``items`` (its scored checkpoints, from :func:`label_items`)."""
    readings: list[Reading] = []
    run, range_id = labels.run_id, labels.range_id
    by_id = {item.chk_id: item for item in labels.items}
    for item in items:
        if item.status != "scored":
            continue
        label = by_id[item.chk_id]
        for values in (label.detection, label.plan):
            readings.extend(
                Reading(run, range_id, item.chk_id, name, value, text=label.note)
                for name, value in (values or {}).items()
            )
        readings.extend(_penalty_readings(run, range_id, item, label.note))
        readings.extend(
            replace(reading, text=label.note)
            for reading in _after_penalty_readings(run, range_id, item)
        )
    return readings


def match(reference: Sequence[Reading], predicted: Sequence[Reading]) -> list[Item]:
    """The targets both read, in the reference's order: the items compared."""
    by_key = {reading.key: reading for reading in predicted}
    items = []
    for truth in reference:
        other = by_key.get(truth.key)
        if other is None:
            continue
        items.append(
            Item(
                run=truth.run,
                range=truth.range,
                chk_id=truth.chk_id,
                target=truth.target,
                reference=truth.value,
                predicted=other.value,
                reference_text=truth.text,
                predicted_text=other.text,
                predicted_quotes=other.quotes,
            )
        )
    return items
