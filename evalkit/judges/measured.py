"""What the offline ``rules`` judge was measured to do, blind: the figures it states.

Plain constants, importable without the judge (the registry's help text states them).
The data are in corpora/ (see corpora/README.md): documents, gold labels and attacks
written by sessions that never saw the judge's rules, split into tune and held-out
parts before any change; these are the last held-out part's figures, measured once.
tests/test_rules_judge.py re-measures every figure from corpora/, so the claim cannot
drift from the judge. Shown next to its scores in every record, in ``evalkit judges``
and in the README.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "BLIND_ATTACKS",
    "BLIND_GOLD_PAIRS",
    "BLIND_GOLD_PART",
    "BLIND_HUMAN_KAPPA",
    "BLIND_KAPPA",
    "BLIND_KAPPA_AFTER_PENALTIES",
    "BLIND_POOLED_KAPPA",
    "BLIND_POOLED_PARTS",
    "BLIND_WEAKEST",
    "HARD_HUMAN_KAPPA",
    "HARD_KAPPA",
    "HARD_PAIRS",
    "INFLATION_MEAN",
    "INFLATION_MEAN_SPREAD",
    "INFLATION_WORST",
    "INFLATION_WORST_SPREAD",
    "MEASURED_AGREEMENT",
    "RED_TEAMS",
    "RedTeam",
]

BLIND_GOLD_PART = "holdout3"  # corpora/honest/gold-split.json
BLIND_GOLD_PAIRS = 4
# Cohen's kappa with the reference labels, every sub-score pooled, before penalties
# (`evalkit calibrate --judge rules --runs-dir corpora/honest --pairs holdout3`).
BLIND_KAPPA = 0.75
BLIND_KAPPA_AFTER_PENALTIES = 0.68
BLIND_WEAKEST = ("plan completeness", 0.62)
# The two blind labellers' agreement on the same pairs: the ceiling to read it against.
BLIND_HUMAN_KAPPA = 0.97
# Over the gold pairs of the last two held-out parts (holdout2 + holdout3; its reading
# was not changed after holdout2).
BLIND_POOLED_PARTS = ("holdout2", "holdout3")
BLIND_POOLED_KAPPA = 0.69
# Points gained per attack of a blind red team (`evalkit robustness --judge rules
# --corpus corpora/hostile --part holdout3`): mean and worst over its attacks.
BLIND_ATTACKS = 18
INFLATION_MEAN = 8.5
INFLATION_WORST = 28


class RedTeam(NamedTuple):
    """Points gained per attack of one blind red team (`points_gained` of `evalkit robustness
    --judge rules`): where it was measured, its attacks (None: not in this repository), mean
    and worst."""

    where: str
    attacks: int | None
    mean: float
    worst: int


# One team's figure is not the judge's: red teams differ by a factor of four. The two
# held-out parts in corpora/hostile (each measured once), and two more blind red teams the
# maintainers measured on the same judge outside the project (their attacks are not here).
RED_TEAMS: tuple[RedTeam, ...] = (
    RedTeam("holdout3 (red team D, corpora/hostile)", BLIND_ATTACKS, INFLATION_MEAN, 28),
    RedTeam("holdout4 (red teams E and F, corpora/hostile)", 22, 7.55, 44),
    RedTeam("a blind red team measured outside the project", None, 8.5, 64),
    RedTeam("a second blind red team measured outside the project", None, 30.5, 81),
)
INFLATION_MEAN_SPREAD = (min(t.mean for t in RED_TEAMS), max(t.mean for t in RED_TEAMS))
INFLATION_WORST_SPREAD = (min(t.worst for t in RED_TEAMS), max(t.worst for t in RED_TEAMS))
# The hard gold pairs (runs/gold-split.json `hard`: about 40 % borderline sub-scores by
# design), against their adjudicated label (`evalkit calibrate --judge rules --pairs hard
# --reference adjudicated`), and the three blind labellers' kappa with each other.
HARD_PAIRS = 3
HARD_KAPPA = 0.25
HARD_HUMAN_KAPPA = (0.86, 0.94)  # the lowest and highest of the three labellers' pairs
MEASURED_AGREEMENT = (
    "Offline keyword judge, measured blind (documents, labels and attacks by sessions that"
    f" never saw its rules): its sub-scores agree with careful human labels at Cohen's kappa"
    f" {BLIND_KAPPA:.2f} on held-out gold pairs (weakest: {BLIND_WEAKEST[0]}"
    f" {BLIND_WEAKEST[1]:.2f}; {BLIND_POOLED_KAPPA:.2f} over the last two held-out parts;"
    f" it catches few labelled penalties), where two labellers agree at"
    f" {BLIND_HUMAN_KAPPA:.2f}; on hard pairs, {HARD_KAPPA:.2f} against the adjudicated"
    f" label, where three labellers agree at {HARD_HUMAN_KAPPA[0]:.2f} to"
    f" {HARD_HUMAN_KAPPA[1]:.2f}; blind red teams' attacks gain it"
    f" {INFLATION_MEAN_SPREAD[0]:g} to {INFLATION_MEAN_SPREAD[1]:g} points per held-out attack"
    f" on average and {INFLATION_WORST_SPREAD[0]} to {INFLATION_WORST_SPREAD[1]} at worst"
    f" ({len(RED_TEAMS)} teams: two in corpora/hostile, two measured outside the project). It"
    " must not score"
    " untrusted or optimised agents, nor serve as a reward signal: a transparent baseline"
    " for honest documents (docs/rules-judge.md)."
)
