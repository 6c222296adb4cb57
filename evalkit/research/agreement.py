"""Agreement of compared items, per target and scope, and the human band.

Every interval here is cluster-aware: the bootstrap draws whole checkpoints, or
pairs then checkpoints when the items span at least
:data:`~evalkit.research.resample.MIN_PAIRS` pairs (see
:mod:`evalkit.research.resample`); each :class:`~evalkit.research.stats.Agreement`
says which (``unit``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from .items import TARGETS, Item, Reading, clusters_of, match, select_target
from .resample import MIN_PAIRS
from .stats import Agreement, agreement

__all__ = ["JUDGE", "by_scope", "human_band", "measure"]

JUDGE = "judge"


def measure(
    items: Sequence[Item], *, resamples: int, seed: int, min_pairs: int = MIN_PAIRS
) -> dict[str, Agreement]:
    """Per target (and the pooled rows): the agreement of ``predicted`` with ``reference``."""
    out: dict[str, Agreement] = {}
    for target in TARGETS:
        chosen = select_target(items, target)
        out[target] = agreement(
            [item.reference for item in chosen],
            [item.predicted for item in chosen],
            resamples=resamples,
            seed=seed,
            clusters=clusters_of(chosen),
            min_pairs=min_pairs,
        )
    return out


def by_scope(
    items: Sequence[Item], *, resamples: int, seed: int, min_pairs: int = MIN_PAIRS
) -> dict[str, dict[str, Agreement]]:
    """``pooled``, then ``range:<id>`` and ``run:<id>`` in the order the items name them."""
    scopes = {"pooled": measure(items, resamples=resamples, seed=seed, min_pairs=min_pairs)}
    for prefix, field in (("range:", "range"), ("run:", "run")):
        for value in dict.fromkeys(getattr(item, field) for item in items):
            chosen = [item for item in items if getattr(item, field) == value]
            scopes[f"{prefix}{value}"] = measure(
                chosen, resamples=resamples, seed=seed, min_pairs=min_pairs
            )
    return scopes


def human_band(
    judge: Sequence[Reading],
    labellers: Mapping[str, Sequence[Reading]],
    *,
    resamples: int,
    seed: int,
    min_pairs: int = MIN_PAIRS,
) -> dict[str, dict[str, Agreement]]:
    """The judge against each labeller by name, then each two labellers against each other
    over the checkpoints both labelled (the first named is taken as the truth)."""
    band: dict[str, dict[str, Agreement]] = {}
    names = sorted(labellers)
    for name in names:
        band[f"{JUDGE} vs {name}"] = measure(
            match(labellers[name], judge), resamples=resamples, seed=seed, min_pairs=min_pairs
        )
    for first, second in itertools.combinations(names, 2):
        both = match(labellers[first], labellers[second])
        if both:
            band[f"{first} vs {second}"] = measure(
                both, resamples=resamples, seed=seed, min_pairs=min_pairs
            )
    return band
