"""K samples of one item's verdict -> the one verdict kept (majority per sub-score).

Errored samples are left out; if every sample errored, the item errors with the
first sample's reason. Per sub-score the majority of the scored samples wins,
ties going to 0; the quotes and rationale kept are those of the first sample
that voted for the kept value. A penalty rule is kept when at least half the
scored samples raise it (with the first raising sample's flags). A passage any
scored sample reported as addressed to the evaluator is kept (the union, in the
order first reported): one careful reading that saw it is enough to check it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...model import PenaltyFlag, SubScoreVerdict, Verdict
from ...stability import flag_kept, majority


def combine_samples(samples: Sequence[Verdict]) -> Verdict:
    if len(samples) == 1:
        return samples[0]
    scored = [sample for sample in samples if sample.status == "scored"]
    if not scored:
        return samples[0]
    if len(scored) == 1:
        return scored[0]
    first = scored[0]
    return Verdict(
        chk_id=first.chk_id,
        status="scored",
        detection=_dimension([s.detection for s in scored]),
        plan=_dimension([s.plan for s in scored]),
        penalties=_penalties(scored),
        addressed_to_evaluator=tuple(
            dict.fromkeys(quote for sample in scored for quote in sample.addressed_to_evaluator)
        ),
    )


def _dimension(
    dimensions: Sequence[Mapping[str, SubScoreVerdict] | None],
) -> dict[str, SubScoreVerdict] | None:
    present = [d for d in dimensions if d is not None]
    if not present:
        return None
    kept: dict[str, SubScoreVerdict] = {}
    for name in present[0]:
        claims = [d[name] for d in present if name in d]
        value = majority([claim.value for claim in claims])
        kept[name] = (
            next(claim for claim in claims if claim.value == value)
            if any(claim.value == value for claim in claims)
            else SubScoreVerdict(value=value)
        )
    return kept


def _penalties(scored: Sequence[Verdict]) -> tuple[PenaltyFlag, ...]:
    rules: list[str] = []
    for sample in scored:
        for flag in sample.penalties:
            if flag.rule not in rules:
                rules.append(flag.rule)
    kept: list[PenaltyFlag] = []
    for rule in rules:
        raising = [s for s in scored if any(f.rule == rule for f in s.penalties)]
        if flag_kept(len(raising), len(scored)):
            kept.extend(f for f in raising[0].penalties if f.rule == rule)
    return tuple(kept)
