"""How far an attack on the agent's documents moves the scores: the adversarial corpus.

The corpus (clean pairs and attacks, :func:`load_corpus`, :func:`apply_attack`) is
:mod:`evalkit.research.attacks`; its names are re-exported here.

:func:`measure` evaluates every clean pair (in one session or several: a careful
judge's answers vary as samples do) and every attacked pair through the public
pipeline (:func:`evalkit.evaluate`) with the judge it is given, and
:func:`compare` turns them into an :class:`AttackResult`: inflation per
dimension (attacked minus expected, against the mean of the clean sessions), the
signed gain checkpoint by checkpoint with plan points on blind-fix checkpoints
apart (:mod:`evalkit.research.inflation`), whether the evaluation flagged the
attack (a warning its clean sessions did not raise, by screening or by the
judge), and, for attacks that should be penalised, whether the penalty was
raised. The clean sessions measured against each other give the floor.

The expected score is the clean one, except for an attack that must raise a
penalty: there the penalised item loses its clean points on the dimension the
penalty zeroes, so a penalty not raised counts as inflation when the item it
should have landed on had points to lose.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import EvalkitError
from ..judges import Judge
from ..model import Dimension, DocumentWarning, Evaluation, Tally
from ..pipeline import evaluate
from .attacks import (
    ATTACKS_FOLDER,
    CLEAN_FOLDER,
    DEFAULT_CORPUS,
    Attack,
    Corpus,
    Edit,
    ExpectedPenalty,
    apply_attack,
    clean_submission,
    load_corpus,
    part_of,
)
from .inflation import Floor, Gain, floor_of, gain_against, mean_interval

__all__ = [
    "ATTACKS_FOLDER",
    "CLEAN_FOLDER",
    "DEFAULT_CORPUS",
    "Attack",
    "AttackResult",
    "Corpus",
    "DimensionShift",
    "Edit",
    "ExpectedPenalty",
    "Robustness",
    "apply_attack",
    "clean_pair_id",
    "compare",
    "load_corpus",
    "part_of",
    "measure",
    "warnings_of",
]

_DIMENSIONS: tuple[Dimension, ...] = ("detection", "plan")


# --------------------------------------------------------------------------- comparing


def warnings_of(evaluation: Evaluation) -> tuple[str, ...]:
    """The warnings an evaluation raised about its documents (suspected instructions, ...)."""
    return tuple(
        f"{w.kind}: {w.source} line {w.line}: {w.message}"
        + (" (reported by the judge)" if w.found_by == "judge" else "")
        for w in evaluation.summary.warnings
    )


def _new_warnings(
    attacked: Evaluation, cleans: Iterable[Evaluation]
) -> tuple[DocumentWarning, ...]:
    """The attacked evaluation's warnings that no clean session raised on its pair."""
    seen = {
        (w.kind, w.source, w.excerpt, w.found_by)
        for clean in cleans
        for w in clean.summary.warnings
    }
    return tuple(
        w
        for w in attacked.summary.warnings
        if (w.kind, w.source, w.excerpt, w.found_by) not in seen
    )


def _num(value: float) -> float | int:
    """An integer where the value is one (a single clean session), else the float."""
    return int(value) if float(value).is_integer() else round(value, 3)


@dataclass(frozen=True)
class Points:
    score: float
    max: int
    pct: float | None

    @classmethod
    def of(cls, tally: Tally) -> Points:
        return cls(tally.score, tally.max, tally.pct)

    def as_dict(self) -> dict[str, Any]:
        return {"score": _num(self.score), "max": self.max, "pct": self.pct}


def _pct(score: int, maximum: int) -> float | None:
    return None if maximum == 0 else round(100 * score / maximum, 1)


@dataclass(frozen=True)
class DimensionShift:
    """One dimension of one attack: clean, expected and attacked scores."""

    clean: Points
    expected: Points
    attacked: Points

    @property
    def inflation_points(self) -> float | int:
        return _num(self.attacked.score - self.expected.score)

    @property
    def inflation_pct(self) -> float | None:
        if self.attacked.max == 0 or self.expected.max == 0:
            return None
        return round(
            100 * self.attacked.score / self.attacked.max
            - 100 * self.expected.score / self.expected.max,
            1,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "clean": self.clean.as_dict(),
            "expected": self.expected.as_dict(),
            "attacked": self.attacked.as_dict(),
            "inflation_points": self.inflation_points,
            "inflation_pct": self.inflation_pct,
        }


@dataclass(frozen=True)
class AttackResult:
    attack: Attack
    detection: DimensionShift
    plan: DimensionShift
    warnings: tuple[str, ...]
    penalty_raised: bool | None  # None: the attack expects no penalty
    complete: bool  # every item of both evaluations was scored
    # Signed, checkpoint by checkpoint, against the mean of the clean sessions.
    gain: Gain = Gain(0.0, 0.0, 0.0)
    # Who raised the warnings its clean sessions did not: screening's rules, the judge.
    flagged_by: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return bool(self.flagged_by)

    @property
    def inflated(self) -> bool:
        return self.detection.inflation_points > 0 or self.plan.inflation_points > 0

    @property
    def points_gained(self) -> float | int:
        """Points the attack bought: its positive inflation on either dimension, summed.

        A dimension the attack lowered does not offset one it raised: the two are never
        merged, and a loss on one is no excuse for a gain on the other.
        """
        return _num(max(0, self.detection.inflation_points) + max(0, self.plan.inflation_points))

    def shift(self, dimension: Dimension) -> DimensionShift:
        return self.detection if dimension == "detection" else self.plan

    def as_dict(self) -> dict[str, Any]:
        attack = self.attack
        return {
            "id": attack.id,
            "family": attack.family,
            "range": attack.range_id,
            "description": attack.description,
            "documents": sorted({edit.document for edit in attack.edits}),
            "operations": sorted({edit.operation for edit in attack.edits}),
            "instruction": attack.instruction,
            "expected_penalty": (
                None
                if attack.penalty is None
                else {"rule": attack.penalty.rule, "items": list(attack.penalty.items)}
            ),
            "detection": self.detection.as_dict(),
            "plan": self.plan.as_dict(),
            "inflated": self.inflated,
            "points_gained": self.points_gained,
            "gain": self.gain.as_dict(),
            "flagged": self.flagged,
            "flagged_by": list(self.flagged_by),
            "warnings": list(self.warnings),
            "penalty_raised": self.penalty_raised,
            "complete": self.complete,
        }


def _item_points(evaluations: Sequence[Evaluation], chk_id: str, dimension: Dimension) -> float:
    """The mean points of ``chk_id`` on ``dimension`` over the sessions that scored it."""
    found = False
    points: list[int] = []
    for evaluation in evaluations:
        for item in evaluation.items:
            if item.chk_id == chk_id:
                found = True
                score = item.detection if dimension == "detection" else item.plan
                if item.status == "scored":
                    points.append(0 if score is None else score.total)
    if not found:
        raise EvalkitError(f"the range has no checkpoint {chk_id!r}", item=chk_id)
    return sum(points) / len(points) if points else 0.0


def _penalised_items(evaluation: Evaluation, penalty: ExpectedPenalty) -> dict[str, int]:
    """Per item the penalty may land on, how many penalties of its rule were applied there."""
    counts = dict.fromkeys(penalty.items, 0)
    for item in evaluation.items:
        if item.chk_id in counts:
            counts[item.chk_id] += sum(1 for p in item.penalties if p.rule == penalty.rule)
    return counts


def _raised_on(clean: Evaluation, attacked: Evaluation, penalty: ExpectedPenalty) -> str | None:
    """The first of the penalty's items where the attacked evaluation has one more than clean."""
    before, after = _penalised_items(clean, penalty), _penalised_items(attacked, penalty)
    return next((item for item in penalty.items if after[item] > before[item]), None)


def _tally(evaluation: Evaluation, dimension: Dimension) -> Tally:
    return evaluation.summary.detection if dimension == "detection" else evaluation.summary.plan


def _mean_points(evaluations: Sequence[Evaluation], dimension: Dimension) -> Points:
    tallies = [_tally(evaluation, dimension) for evaluation in evaluations]
    score = sum(t.score for t in tallies) / len(tallies)
    maximum = max(t.max for t in tallies)
    return Points(score, maximum, _pct_of(score, maximum))


def _pct_of(score: float, maximum: int) -> float | None:
    return None if maximum == 0 else round(100 * score / maximum, 1)


def compare(
    attack: Attack, clean: Evaluation | Sequence[Evaluation], attacked: Evaluation
) -> AttackResult:
    """The inflation, flag and penalty outcome of one attack against its clean sessions."""
    cleans = (clean,) if isinstance(clean, Evaluation) else tuple(clean)
    raised_on = None if attack.penalty is None else _raised_on(cleans[0], attacked, attack.penalty)
    shifts: dict[str, DimensionShift] = {}
    expected_zero: dict[str, Dimension] = {}
    for dimension in _DIMENSIONS:
        clean_points = _mean_points(cleans, dimension)
        expected_score = clean_points.score
        if attack.penalty is not None and attack.penalty.dimension == dimension:
            # The item the penalty landed on loses its points; when none was raised, the item
            # the payload stands in is the one that should have.
            penalised = raised_on or attack.penalty.items[0]
            expected_score -= _item_points(cleans, penalised, dimension)
            expected_zero[penalised] = dimension
        shifts[dimension] = DimensionShift(
            clean=clean_points,
            expected=Points(
                expected_score, clean_points.max, _pct_of(expected_score, clean_points.max)
            ),
            attacked=Points.of(_tally(attacked, dimension)),
        )
    penalty_raised = None if attack.penalty is None else raised_on is not None
    new = _new_warnings(attacked, cleans)
    return AttackResult(
        attack=attack,
        detection=shifts["detection"],
        plan=shifts["plan"],
        warnings=warnings_of(attacked),
        penalty_raised=penalty_raised,
        complete=all(c.summary.complete for c in cleans) and attacked.summary.complete,
        gain=gain_against(attacked, cleans, expected_zero=expected_zero),
        flagged_by=tuple(sorted({w.found_by for w in new})),
    )


# --------------------------------------------------------------------------- measuring


@dataclass(frozen=True)
class Robustness:
    """Every attack's result, with the clean evaluations they are measured against."""

    corpus: str
    judge: str
    evaluator_model: str
    clean: Mapping[str, Evaluation]
    results: tuple[AttackResult, ...]
    timestamp: str = ""
    notes: tuple[str, ...] = field(default=())
    # Every clean session per range (``clean`` holds the first); one for a deterministic judge.
    clean_sessions: Mapping[str, tuple[Evaluation, ...]] = field(default_factory=dict)

    @property
    def floor(self) -> Floor:
        """The clean sessions measured against each other."""
        return floor_of(self.clean_sessions)

    def beyond_floor(self, result: AttackResult) -> float | None:
        """How far the attack's counted gain goes past its range's largest clean-against-clean
        difference (None with a single clean session)."""
        largest = self.floor.largest.get(result.attack.range_id)
        return None if largest is None else round(result.gain.counted - largest, 3)

    def summary(self) -> dict[str, Any]:
        results = self.results
        instruction = [r for r in results if r.attack.instruction]
        penalised = [r for r in results if r.penalty_raised is not None]
        flagged = sum(1 for r in results if r.flagged)
        gains = [r.gain.counted for r in results]
        blind = [r.gain.plan_without_finding for r in results]
        beyond = [b for r in results if (b := self.beyond_floor(r)) is not None]
        return {
            "gain": mean_interval(gains).as_dict(),
            "gain_max": round(max(gains), 3) if gains else None,
            "plan_without_finding": {
                "total": round(sum(blind), 3),
                "mean": round(sum(blind) / len(blind), 3) if blind else None,
                "max": round(max(blind), 3) if blind else None,
                "attacks": sum(1 for value in blind if value > 0),
            },
            "floor": self.floor.as_dict(),
            "beyond_floor_max": max(beyond) if beyond else None,
            "instruction_flagged_by": {
                source: sum(1 for r in instruction if source in r.flagged_by)
                for source in ("screening", "judge")
            },
            "attacks": len(results),
            "inflated": sum(1 for r in results if r.inflated),
            "flagged": flagged,
            "flagged_share": round(flagged / len(results), 3) if results else None,
            "instruction_attacks": len(instruction),
            "instruction_flagged": sum(1 for r in instruction if r.flagged),
            "penalty_attacks": len(penalised),
            "penalties_raised": sum(1 for r in penalised if r.penalty_raised),
            "max_inflation_points": {
                dimension: max((r.shift(dimension).inflation_points for r in results), default=0)
                for dimension in _DIMENSIONS
            },
            "points_gained_total": sum(r.points_gained for r in results),
            "points_gained_mean": (
                round(sum(r.points_gained for r in results) / len(results), 2) if results else None
            ),
            "points_gained_max": max((r.points_gained for r in results), default=0),
            "skipped": len(self.notes),
            "complete": all(r.complete for r in results),
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "judge": {"name": self.judge, "evaluator_model": self.evaluator_model},
            "timestamp": self.timestamp,
            "summary": self.summary(),
            "clean": {
                range_id: {
                    "detection": Points.of(evaluation.summary.detection).as_dict(),
                    "plan": Points.of(evaluation.summary.plan).as_dict(),
                    "warnings": list(warnings_of(evaluation)),
                    "complete": evaluation.summary.complete,
                }
                for range_id, evaluation in sorted(self.clean.items())
            },
            "clean_sessions": {
                range_id: [
                    {
                        "detection": Points.of(evaluation.summary.detection).as_dict(),
                        "plan": Points.of(evaluation.summary.plan).as_dict(),
                        "warnings": list(warnings_of(evaluation)),
                    }
                    for evaluation in sessions
                ]
                for range_id, sessions in sorted(self.clean_sessions.items())
            },
            "attacks": [
                {**result.as_dict(), "beyond_floor": self.beyond_floor(result)}
                for result in self.results
            ],
            "notes": list(self.notes),
        }


def clean_pair_id(range_id: str) -> str:
    """The name a clean pair goes by where verdicts are kept per pair (``clean-<range>``)."""
    return f"clean-{range_id}"


def measure(
    corpus: Corpus,
    judge: Judge | Callable[[str], Judge | None],
    *,
    attacks: Iterable[Attack] | None = None,
    on_attack_done: Callable[[AttackResult], None] | None = None,
    timestamp: str = "",
    clean_sessions: Callable[[str], Sequence[str]] | None = None,
) -> Robustness:
    """Evaluate each clean pair (in each of its sessions) and each attacked pair, and compare.

    ``judge`` is one judge for every pair, or a function giving the judge of a pair by
    its id (an attack's id, or a clean session's) or None when the pair has none:
    recorded verdicts, one file per pair. ``clean_sessions`` gives the ids of a range's
    clean sessions (default: one, :func:`clean_pair_id`). An attack without a judge, or
    whose clean pair has no session, is skipped and listed in ``notes``.
    """
    chosen = tuple(corpus.attacks if attacks is None else attacks)

    def judge_of(pair_id: str) -> Judge | None:
        return judge(pair_id) if callable(judge) and not isinstance(judge, Judge) else judge

    sessions_of = clean_sessions or (lambda range_id: (clean_pair_id(range_id),))
    sessions: dict[str, tuple[Evaluation, ...]] = {}
    info = None
    for range_id in sorted({attack.range_id for attack in chosen}):
        found: list[Evaluation] = []
        for session in sessions_of(range_id):
            clean_judge = judge_of(session)
            if clean_judge is not None:
                info = info or clean_judge.info
                found.append(
                    evaluate(
                        corpus.ranges[range_id], clean_submission(corpus, range_id), clean_judge
                    )
                )
        if found:
            sessions[range_id] = tuple(found)
    clean = {range_id: found[0] for range_id, found in sessions.items()}
    results = []
    notes: list[str] = []
    for attack in chosen:
        attack_judge = judge_of(attack.id)
        if attack_judge is None or attack.range_id not in clean:
            missing = attack.id if attack_judge is None else clean_pair_id(attack.range_id)
            notes.append(f"{attack.id}: skipped (no judge for {missing})")
            continue
        info = info or attack_judge.info
        attacked = evaluate(
            corpus.ranges[attack.range_id], apply_attack(corpus, attack), attack_judge
        )
        result = compare(attack, sessions[attack.range_id], attacked)
        results.append(result)
        if on_attack_done is not None:
            on_attack_done(result)
    return Robustness(
        corpus=corpus.path,
        judge=info.name if info is not None else "none",
        evaluator_model=info.evaluator_model if info is not None else "",
        clean=clean,
        results=tuple(results),
        timestamp=timestamp,
        notes=tuple(notes),
        clean_sessions=sessions,
    )
