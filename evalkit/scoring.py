"""The scoring rules of the evaluation SKILL, as pure functions.

Input: a checkpoint and its grounded verdict. Output: an :class:`ItemScore`,
and over all items a :class:`Summary`. No I/O, no judge calls, no rounding
anywhere but in the reported percentage.

The rules, each a function or a clearly marked step below:

* N/A: a detection-only item has no plan score, a plan-only item no
  detection score; N/A dimensions count in neither score nor max.
* Penalties: fabrication sets the item's detection to 0; wrong attribution
  sets attribution to 0; dangerous advice sets the plan to 0. Only penalties
  whose quote was found verbatim apply.
* Errored items (the judge could not score them) count in neither score nor
  max; the summary is then marked incomplete and lists them.
* Percentages are rounded half-up to one decimal; strong means
  score/max >= 70 %, decided on the unrounded ratio; a dimension whose max
  is 0 has no percentage and no level.
* The diagnostic mode comes from the two levels and is never a merged score.
* Blind fix, per checkpoint: both dimensions apply, the plan total after
  penalties is above 0 and discovery after penalties is 0. The plan keeps its
  points (the dimensions are independent); the item is marked and the summary
  lists such items with their plan points.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import ROUND_HALF_UP, Decimal

from .errors import JudgeError
from .model import (
    DETECTION_SUBSCORES,
    MODES,
    PLAN_SUBSCORES,
    STRONG_THRESHOLD_PCT,
    BlindFixes,
    CapabilityScore,
    Checkpoint,
    Diagnosis,
    DimensionScore,
    DismissedPenalty,
    GroundedPenalty,
    GroundedSubScore,
    GroundedVerdict,
    ItemScore,
    Level,
    Loss,
    Penalty,
    Range,
    Summary,
    Tally,
)
from .penalties import penalty_rule, zeroed_subscores

STRONG_THRESHOLD = Decimal(STRONG_THRESHOLD_PCT) / 100

# --------------------------------------------------------------------------- tallies


def percentage(score: int, maximum: int) -> float | None:
    """score/max as a percentage rounded half-up to one decimal; None when max is 0."""
    if maximum == 0:
        return None
    ratio = Decimal(score) * 100 / Decimal(maximum)
    return float(ratio.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def level(score: int, maximum: int) -> Level | None:
    """``strong`` at >= 70 % of the unrounded ratio (69.96 % is weak); None when max is 0."""
    if maximum == 0:
        return None
    return "strong" if Decimal(score) / Decimal(maximum) >= STRONG_THRESHOLD else "weak"


def tally(score: int, maximum: int) -> Tally:
    return Tally(
        score=score, max=maximum, pct=percentage(score, maximum), level=level(score, maximum)
    )


def diagnose(detection: Level | None, plan: Level | None) -> Diagnosis | None:
    """The SKILL's diagnostic mode; None when either dimension has nothing scorable."""
    if detection is None or plan is None:
        return None
    return MODES[(detection, plan)]


# --------------------------------------------------------------------------- one item


class VerdictShapeError(ValueError):
    """A verdict that does not cover the dimensions its checkpoint's scope needs."""


def score_item(checkpoint: Checkpoint, verdict: GroundedVerdict) -> ItemScore:
    """Apply N/A, grounding results and penalties to one checkpoint's verdict."""
    if verdict.chk_id != checkpoint.id:
        raise JudgeError(f"verdict for {verdict.chk_id} given for {checkpoint.id}")
    if verdict.status == "error":
        return _errored(checkpoint, verdict.error or "the judge gave no reason")
    try:
        detection_claims = _claims(checkpoint.has_detection, verdict.detection, DETECTION_SUBSCORES)
        plan_claims = _claims(checkpoint.has_plan, verdict.plan, PLAN_SUBSCORES)
    except VerdictShapeError as exc:
        # A malformed verdict is the judge's failure on this item, not a zero.
        return _errored(checkpoint, f"unusable verdict: {exc}")

    applied, dismissed = _sort_penalties(checkpoint, verdict.penalties)
    rules = {penalty.flag.rule for penalty in applied}
    zeroed_detection = zeroed_subscores(rules, "detection")
    zeroed_plan = zeroed_subscores(rules, "plan")

    detection = _dimension(detection_claims, zeroed_detection) if detection_claims else None
    plan = _dimension(plan_claims, zeroed_plan) if plan_claims else None
    return ItemScore(
        chk_id=checkpoint.id,
        name=checkpoint.name,
        caps=checkpoint.caps,
        scope=checkpoint.scope,
        status="scored",
        error=None,
        detection=detection,
        plan=plan,
        penalties=tuple(
            Penalty(
                rule=penalty.flag.rule,
                detail=penalty.flag.detail,
                quote=penalty.flag.quote,
                source=penalty.check.source,
                line=penalty.check.line,
            )
            for penalty in applied
        ),
        dismissed_penalties=dismissed,
        blind_fix=is_blind_fix(detection, plan),
    )


def is_blind_fix(detection: DimensionScore | None, plan: DimensionScore | None) -> bool:
    """Plan points without a finding: both dimensions scored, the plan total after penalties
    above 0, discovery after penalties 0. False where a dimension is N/A."""
    if detection is None or plan is None:
        return False
    return plan.total > 0 and detection.subscores.get("discovery", 0) == 0


def blind_fixes(items: Iterable[ItemScore]) -> BlindFixes:
    """The blind-fix checkpoints, in checklist order, and the plan points they earned."""
    marked = [item for item in items if item.status == "scored" and item.blind_fix]
    return BlindFixes(
        items=tuple(item.chk_id for item in marked),
        plan_points=sum(item.plan.total for item in marked if item.plan is not None),
    )


def _sort_penalties(
    checkpoint: Checkpoint, penalties: tuple[GroundedPenalty, ...]
) -> tuple[list[GroundedPenalty], tuple[DismissedPenalty, ...]]:
    """Split the judge's penalties into those that apply and those dismissed, with why."""
    applied: list[GroundedPenalty] = []
    dismissed: list[DismissedPenalty] = []
    for penalty in penalties:
        # A penalty on an N/A dimension changes nothing.
        dimension = penalty_rule(penalty.flag.rule).dimension
        applicable = checkpoint.has_detection if dimension == "detection" else checkpoint.has_plan
        if not penalty.applies:
            reason = "its quote is not in the agent's documents"
            dismissed.append(DismissedPenalty(penalty.flag, reason))
        elif not applicable:
            reason = f"the {dimension} dimension is N/A for a {checkpoint.scope} checkpoint"
            dismissed.append(DismissedPenalty(penalty.flag, reason))
        else:
            applied.append(penalty)
    return applied, tuple(dismissed)


def _errored(checkpoint: Checkpoint, error: str) -> ItemScore:
    return ItemScore(
        chk_id=checkpoint.id,
        name=checkpoint.name,
        caps=checkpoint.caps,
        scope=checkpoint.scope,
        status="error",
        error=error,
        detection=None,
        plan=None,
    )


def _claims(
    applicable: bool, claims: tuple[GroundedSubScore, ...] | None, names: tuple[str, ...]
) -> tuple[GroundedSubScore, ...] | None:
    """The sub-scores of one dimension in canonical order, or None when N/A."""
    if not applicable:
        # The judge's opinion on an N/A dimension is ignored, never counted.
        return None
    if claims is None:
        raise VerdictShapeError(f"no {'/'.join(names)} scores for an applicable dimension")
    by_name = {claim.name: claim for claim in claims}
    missing = [name for name in names if name not in by_name]
    if missing:
        raise VerdictShapeError(f"missing sub-score(s): {', '.join(missing)}")
    unknown = [name for name in by_name if name not in names]
    if unknown:
        raise VerdictShapeError(f"unknown sub-score(s): {', '.join(unknown)}")
    # The judge's claim is checked, not the grounded value, which is always 0 or 1.
    bad = [name for name in names if by_name[name].claimed not in (0, 1)]
    if bad:
        raise VerdictShapeError(f"sub-score(s) not 0 or 1: {', '.join(bad)}")
    return tuple(by_name[name] for name in names)


def _dimension(claims: tuple[GroundedSubScore, ...], zeroed: set[str]) -> DimensionScore:
    subscores: dict[str, int] = {}
    penalized: list[str] = []
    quotes: list[str] = []
    for claim in claims:
        value = claim.value
        if claim.name in zeroed and value == 1:
            penalized.append(claim.name)
            value = 0
        subscores[claim.name] = value
        if value == 1:
            quotes.extend(check.quote for check in claim.quotes if check.found)
    rationale = " ".join(
        f"{claim.name.capitalize()}: {claim.rationale}" for claim in claims if claim.rationale
    )
    if penalized:
        rationale = f"{rationale} Zeroed by penalty: {', '.join(penalized)}.".strip()
    return DimensionScore(
        subscores=subscores,
        total=sum(subscores.values()),
        max=len(claims),
        rationale=rationale,
        quotes=tuple(dict.fromkeys(quotes)),
        withheld=tuple(claim.name for claim in claims if claim.withheld),
        penalized=tuple(penalized),
    )


# --------------------------------------------------------------------------- summary


def _dimension_tally(items: Iterable[ItemScore], dimension: str) -> Tally:
    scores = [getattr(item, dimension) for item in items if item.status == "scored"]
    scores = [score for score in scores if score is not None]
    return tally(sum(s.total for s in scores), sum(s.max for s in scores))


def _losses(items: Sequence[ItemScore], dimension: str, names: tuple[str, ...]) -> tuple[Loss, ...]:
    losses = []
    for name in names:
        losers = tuple(
            item.chk_id
            for item in items
            if item.status == "scored"
            and getattr(item, dimension) is not None
            and getattr(item, dimension).subscores[name] == 0
        )
        if losers:
            losses.append(Loss(subscore=name, count=len(losers), items=losers))
    # Most frequent first; ties keep the SKILL's sub-score order (sort is stable).
    return tuple(sorted(losses, key=lambda loss: -loss.count))


def _capability_ids(rng: Range, items: Sequence[ItemScore]) -> list[str]:
    declared = [capability.id for capability in rng.capabilities]
    used = [cap for item in items for cap in item.caps if cap not in declared]
    return declared + list(dict.fromkeys(used))


def summarize(rng: Range, items: Sequence[ItemScore]) -> Summary:
    """Totals, levels, diagnosis, per-CAP breakdown and top losses over all items."""
    detection = _dimension_tally(items, "detection")
    plan = _dimension_tally(items, "plan")
    capabilities = []
    for cap in _capability_ids(rng, items):
        members = [item for item in items if cap in item.caps]
        cap_detection = _dimension_tally(members, "detection")
        cap_plan = _dimension_tally(members, "plan")
        capabilities.append(
            CapabilityScore(
                cap=cap,
                name=rng.capability_name(cap),
                items=tuple(item.chk_id for item in members),
                detection=cap_detection,
                plan=cap_plan,
                diagnosis=diagnose(cap_detection.level, cap_plan.level),
            )
        )
    errored = tuple(item.chk_id for item in items if item.status == "error")
    return Summary(
        total_checkpoints=len(rng.checkpoints),
        detection_only_count=sum(1 for c in rng.checkpoints if c.scope == "detection-only"),
        plan_only_count=sum(1 for c in rng.checkpoints if c.scope == "plan-only"),
        detection=detection,
        plan=plan,
        diagnosis=diagnose(detection.level, plan.level),
        complete=not errored,
        errored=errored,
        capabilities=tuple(capabilities),
        top_detection_misses=_losses(items, "detection", DETECTION_SUBSCORES),
        top_plan_defects=_losses(items, "plan", PLAN_SUBSCORES),
        blind_fix=blind_fixes(items),
    )


def score_all(
    rng: Range, verdicts: Sequence[GroundedVerdict]
) -> tuple[tuple[ItemScore, ...], Summary]:
    """Score every checkpoint of ``rng``; a checkpoint with no verdict is an errored item."""
    by_id = {verdict.chk_id: verdict for verdict in verdicts}
    items = tuple(
        score_item(checkpoint, by_id[checkpoint.id])
        if checkpoint.id in by_id
        else _errored(checkpoint, "the judge returned no verdict for this checkpoint")
        for checkpoint in rng.checkpoints
    )
    return items, summarize(rng, items)
