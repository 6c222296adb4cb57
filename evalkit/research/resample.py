"""Bootstrap resamples that respect how the compared items cluster.

An item is one sub-score (or penalty rule) of one checkpoint of one (run, range)
pair. Items are not independent: a checkpoint's five sub-scores move together
(no discovery means no evidence and no attribution), and the checkpoints of one
pair share one report, one plan and one reading of them. Resampling single items
treats 5 correlated sub-scores as 5 independent observations and gives intervals
that are too narrow. So the unit resampled here is a cluster:

* **checkpoints**: whole checkpoints are drawn with replacement, each bringing
  every one of its items (the default);
* **pairs, then checkpoints**: when there are at least :data:`MIN_PAIRS` pairs,
  a two-stage resample: pairs are drawn with replacement, then checkpoints with
  replacement within each drawn pair (as many as the pair has). This carries the
  variation between documents into the interval as well.

Why a threshold, and why 10: a resample of G pairs can only be one of the
C(2G-1, G) multisets of them (126 for 5 pairs, against 92,378 for 10), a
percentile interval over so few distinct values is coarse and unstable, and the
bootstrap's variance of a mean over G clusters is (G-1)/G of the plug-in one
(0.8 at G = 5), so with a handful of pairs a pair-level resample understates and
jumps rather than measures. Below 10 pairs the interval therefore resamples
checkpoints only: it does not reflect how much a figure would move on other
documents, and reports say so. The two-stage resample, with enough pairs, is if
anything slightly conservative (the within-pair variation enters twice).

:func:`checkpoint_weights` returns, per resample, how many times each item is
drawn (its checkpoint's count), so any statistic of weighted confusion counts
can be computed for every resample at once; two raters compared on the same
items get the same weights (a paired resample).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "MIN_PAIRS",
    "UNIT_CHECKPOINTS",
    "UNIT_ITEMS",
    "UNIT_PAIRS",
    "Clusters",
    "checkpoint_weights",
    "resampling_unit",
    "stratified_weights",
]

MIN_PAIRS = 10
UNIT_ITEMS = "items"
UNIT_CHECKPOINTS = "checkpoints"
UNIT_PAIRS = "pairs, then checkpoints"

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Clusters:
    """For each compared item, in order: the checkpoint and the pair it belongs to.

    ``checkpoints[i]`` must name the checkpoint uniquely across pairs (e.g.
    ``"demo/ssh-miner/CHK-01"``); ``pairs[i]`` is its pair (``"demo/ssh-miner"``).
    """

    checkpoints: tuple[str, ...]
    pairs: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.checkpoints) != len(self.pairs):
            raise ValueError("one checkpoint and one pair per item")

    @property
    def n_pairs(self) -> int:
        return len(set(self.pairs))

    def subset(self, keep: Sequence[bool]) -> Clusters:
        """The clusters of the items where ``keep`` is true."""
        chosen = [i for i, flag in enumerate(keep) if flag]
        return Clusters(
            tuple(self.checkpoints[i] for i in chosen), tuple(self.pairs[i] for i in chosen)
        )


def _uniform(size: int) -> list[float]:
    return [1 / size] * size


def resampling_unit(clusters: Clusters | None, min_pairs: int = MIN_PAIRS) -> str:
    """What a bootstrap over these items resamples: items, checkpoints, or pairs then
    checkpoints (at least ``min_pairs`` pairs)."""
    if clusters is None:
        return UNIT_ITEMS
    return UNIT_PAIRS if clusters.n_pairs >= min_pairs else UNIT_CHECKPOINTS


def checkpoint_weights(
    clusters: Clusters,
    *,
    resamples: int,
    seed: int,
    min_pairs: int = MIN_PAIRS,
) -> IntArray:
    """``resamples`` x items: how often each item is drawn in each resample.

    Every item of a checkpoint gets its checkpoint's count, so checkpoints are
    drawn whole; see the module docstring for the two schemes. Deterministic for
    a given seed and item order.
    """
    generator = np.random.default_rng(seed)
    checkpoint_ids = list(dict.fromkeys(clusters.checkpoints))
    index = {name: i for i, name in enumerate(checkpoint_ids)}
    item_checkpoint = np.array([index[name] for name in clusters.checkpoints], dtype=np.int64)
    if not checkpoint_ids or resamples <= 0:
        return np.zeros((max(resamples, 0), len(clusters.checkpoints)), dtype=np.int64)
    per_checkpoint: IntArray
    if resampling_unit(clusters, min_pairs) == UNIT_PAIRS:
        pair_of = dict(zip(clusters.checkpoints, clusters.pairs, strict=True))
        pair_ids = list(dict.fromkeys(clusters.pairs))
        members = {
            pair: [index[c] for c in checkpoint_ids if pair_of[c] == pair] for pair in pair_ids
        }
        # Stage 1: how often each pair is drawn; stage 2: that many times its own size of
        # checkpoint draws within it (a sum of multinomials with one p is one multinomial).
        pair_draws = generator.multinomial(len(pair_ids), _uniform(len(pair_ids)), resamples)
        per_checkpoint = np.zeros((resamples, len(checkpoint_ids)), dtype=np.int64)
        for column, pair in enumerate(pair_ids):
            inside = members[pair]
            draws = pair_draws[:, column] * len(inside)
            per_checkpoint[:, inside] = generator.multinomial(draws, _uniform(len(inside)))
    else:
        size = len(checkpoint_ids)
        per_checkpoint = generator.multinomial(size, _uniform(size), resamples)
    weights: IntArray = per_checkpoint[:, item_checkpoint]
    return weights


def stratified_weights(strata: Sequence[str], *, resamples: int, seed: int) -> IntArray:
    """``resamples`` x items: items drawn with replacement within each stratum (as many as
    the stratum holds), so every stratum keeps its size. Used where the strata are fixed
    by design (the ranges two agents were run on) and the items are checkpoints."""
    generator = np.random.default_rng(seed)
    weights = np.zeros((max(resamples, 0), len(strata)), dtype=np.int64)
    if resamples <= 0:
        return weights
    for stratum in dict.fromkeys(strata):
        inside = [i for i, name in enumerate(strata) if name == stratum]
        size = len(inside)
        weights[:, inside] = generator.multinomial(size, _uniform(size), resamples)
    return weights
