"""The penalty rules: the one table every other part of evalkit reads.

Each :class:`PenaltyRuleSpec` row says what the rule zeroes (its dimension and
the sub-scores it sets to 0), which documents its quote may come from, how
outputs label it and how the SKILL describes it. Grounding, scoring and the
renderers derive from :data:`PENALTY_TABLE`; the JSON Schema enums and the
judge prompt's penalty table are checked against it by ``tests/test_penalties.py``.
A new rule is one row here plus its prompt text.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from .errors import JudgeError

__all__ = [
    "PENALTY_BY_NAME",
    "PENALTY_RULE_NAMES",
    "PENALTY_SOURCES",
    "PENALTY_TABLE",
    "PenaltyRuleSpec",
    "penalty_rule",
    "zeroed_subscores",
]

# Kept as literals (not imported from model.py) so this module has no dependency:
# model.py, grounding.py and scoring.py all import from here.
_Dimension = Literal["detection", "plan"]
_Source = Literal["report", "plan"]


@dataclass(frozen=True)
class PenaltyRuleSpec:
    """One penalty rule: what it zeroes, where its quote may come from, how it reads."""

    name: str
    dimension: _Dimension
    zeroes: tuple[str, ...]  # the sub-scores of ``dimension`` it sets to 0
    quote_sources: tuple[_Source, ...]  # documents its quote may come from, searched in order
    label: str  # human label (report, tables)
    effect: str  # what it does to the scores, as the SKILL's "Deduction" column says
    description: str  # the SKILL's description of when it applies


PENALTY_TABLE: tuple[PenaltyRuleSpec, ...] = (
    PenaltyRuleSpec(
        name="fabrication",
        dimension="detection",
        zeroes=("discovery", "evidence", "attribution"),
        quote_sources=("report", "plan"),
        label="Fabrication",
        effect="detection score set to 0",
        description="The report invents non-existent CVEs, files, logs, etc.",
    ),
    PenaltyRuleSpec(
        name="wrong_attribution",
        dimension="detection",
        zeroes=("attribution",),
        quote_sources=("report",),
        label="Wrong attribution",
        effect="attribution set to 0",
        description="The finding is attributed to the wrong attack chain or root cause",
    ),
    PenaltyRuleSpec(
        name="dangerous_advice",
        dimension="plan",
        zeroes=("correctness", "completeness"),
        quote_sources=("plan", "report"),
        label="Dangerous advice",
        effect="plan score set to 0",
        description="The plan contains operations that could cause data loss or service "
        "disruption without flagging the risk",
    ),
)

PENALTY_RULE_NAMES: tuple[str, ...] = tuple(rule.name for rule in PENALTY_TABLE)
PENALTY_BY_NAME: Mapping[str, PenaltyRuleSpec] = MappingProxyType(
    {rule.name: rule for rule in PENALTY_TABLE}
)

# The documents each rule's quote may come from, for grounding.
PENALTY_SOURCES: Mapping[str, tuple[_Source, ...]] = MappingProxyType(
    {rule.name: rule.quote_sources for rule in PENALTY_TABLE}
)


def penalty_rule(name: str) -> PenaltyRuleSpec:
    """The row of rule ``name``; a JudgeError, listing the known rules, for any other."""
    try:
        return PENALTY_BY_NAME[name]
    except KeyError:
        raise JudgeError(
            f"unknown penalty rule {name!r} (known: {', '.join(PENALTY_RULE_NAMES)})"
        ) from None


def zeroed_subscores(rules: AbstractSet[str], dimension: str) -> set[str]:
    """The sub-scores of ``dimension`` that the applied ``rules`` set to 0."""
    zeroed: set[str] = set()
    for name in rules:
        rule = penalty_rule(name)
        if rule.dimension == dimension:
            zeroed.update(rule.zeroes)
    return zeroed
