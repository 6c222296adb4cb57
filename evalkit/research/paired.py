"""Paired statistics: two raters (judges, agents) measured on the same items.

Pure functions; ``None`` is undefined, never NaN.

* :func:`paired_metric`: an agreement metric (kappa by default) of rater A and of
  rater B against one reference, and the difference B - A with a *paired*
  bootstrap interval: every resample draws the same clusters (checkpoints, or
  pairs then checkpoints, :mod:`evalkit.research.resample`) for both raters, so
  what the two share (the same hard checkpoints, the same documents) cancels out
  of the difference instead of widening it.
* :func:`paired_ratio`: the same for a ratio of sums (score / max x 100, an
  agent's detection or plan percentage), resampling checkpoints within strata.
* :func:`mcnemar`: McNemar's exact test on per-item right/wrong: of the items
  where exactly one rater is right, is each as likely to be the one? A two-sided
  binomial test (``scipy.stats.binomtest``) of the discordant counts at p = 0.5.
  It takes items as independent, which clustered items are not; the verdicts of
  the reports rest on the clustered interval, and the test stands beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from .resample import MIN_PAIRS, Clusters, checkpoint_weights, resampling_unit, stratified_weights
from .stats import DEFAULT_RESAMPLES, DEFAULT_SEED, metric_draws, percentile_interval

__all__ = [
    "LEVEL",
    "McNemar",
    "PairedDelta",
    "excludes_zero",
    "mcnemar",
    "paired_metric",
    "paired_ratio",
]

LEVEL = 0.95
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test: ``a_only`` items only A got right, ``b_only`` only B."""

    a_only: int
    b_only: int
    # Two-sided exact p; None when no item is discordant (the test has nothing to test).
    p_value: float | None

    @property
    def discordant(self) -> int:
        return self.a_only + self.b_only

    def to_dict(self) -> dict[str, Any]:
        return {"a_only": self.a_only, "b_only": self.b_only, "p_value": self.p_value}


def mcnemar(a_right: Sequence[bool], b_right: Sequence[bool]) -> McNemar:
    """McNemar's exact test on paired right/wrong outcomes (see the module docstring)."""
    from scipy.stats import binomtest

    if len(a_right) != len(b_right):
        raise ValueError(f"{len(a_right)} outcomes for A but {len(b_right)} for B")
    a_only = sum(1 for a, b in zip(a_right, b_right, strict=True) if a and not b)
    b_only = sum(1 for a, b in zip(a_right, b_right, strict=True) if b and not a)
    if a_only + b_only == 0:
        return McNemar(0, 0, None)
    p_value = float(binomtest(b_only, a_only + b_only, 0.5, alternative="two-sided").pvalue)
    return McNemar(a_only, b_only, min(1.0, p_value))


@dataclass(frozen=True)
class PairedDelta:
    """A statistic for A and for B on the same items, and B - A, each with its interval."""

    a: float | None
    b: float | None
    delta: float | None
    a_interval: tuple[float, float] | None
    b_interval: tuple[float, float] | None
    delta_interval: tuple[float, float] | None
    n: int  # items
    resamples: int
    seed: int | None
    unit: str | None  # what was resampled

    def to_dict(self) -> dict[str, Any]:
        def pair(value: tuple[float, float] | None) -> list[float] | None:
            return None if value is None else list(value)

        return {
            "n": self.n,
            "a": self.a,
            "b": self.b,
            "delta": self.delta,
            "a_ci95": pair(self.a_interval),
            "b_ci95": pair(self.b_interval),
            "delta_ci95": pair(self.delta_interval),
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "unit": self.unit},
        }


def excludes_zero(interval: tuple[float, float] | None) -> bool:
    """True when the interval lies wholly above or wholly below 0: beyond noise."""
    return interval is not None and (interval[0] > 0 or interval[1] < 0)


def _scalar(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _difference(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def _paired(
    point_a: float | None,
    point_b: float | None,
    draws: tuple[FloatArray, FloatArray] | None,
    *,
    n: int,
    resamples: int,
    seed: int,
    unit: str,
) -> PairedDelta:
    """A, B and B - A with their percentile intervals from the same bootstrap ``draws``
    (None: no bootstrap, so no interval, seed or unit)."""
    intervals: list[tuple[float, float] | None] = [None, None, None]
    if draws is not None:
        draws_a, draws_b = draws
        intervals = [
            percentile_interval(draws_a, LEVEL),
            percentile_interval(draws_b, LEVEL),
            percentile_interval(draws_b - draws_a, LEVEL),  # NaN where either is undefined
        ]
    return PairedDelta(
        a=point_a,
        b=point_b,
        delta=_difference(point_a, point_b),
        a_interval=intervals[0],
        b_interval=intervals[1],
        delta_interval=intervals[2],
        n=n,
        resamples=max(resamples, 0) if n else 0,
        seed=seed if draws is not None else None,
        unit=unit if draws is not None else None,
    )


def paired_metric(
    reference: Sequence[int],
    a: Sequence[int],
    b: Sequence[int],
    clusters: Clusters,
    *,
    metric: str = "kappa",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    min_pairs: int = MIN_PAIRS,
) -> PairedDelta:
    """``metric`` of A and of B against ``reference``, and B - A, with paired intervals."""
    n = len(reference)
    if not (len(a) == len(b) == n == len(clusters.checkpoints)):
        raise ValueError("reference, a, b and clusters must have one entry per item")
    ones = np.ones((1, n), dtype=np.int64)
    point_a = _scalar(metric_draws(reference, a, ones)[metric][0]) if n else None
    point_b = _scalar(metric_draws(reference, b, ones)[metric][0]) if n else None
    if not (n and resamples > 0):
        return _paired(point_a, point_b, None, n=n, resamples=resamples, seed=seed, unit="")
    weights = checkpoint_weights(clusters, resamples=resamples, seed=seed, min_pairs=min_pairs)
    draws = (
        metric_draws(reference, a, weights)[metric],
        metric_draws(reference, b, weights)[metric],
    )
    unit = resampling_unit(clusters, min_pairs)
    return _paired(point_a, point_b, draws, n=n, resamples=resamples, seed=seed, unit=unit)


def _ratio(scores: FloatArray, maxes: FloatArray) -> FloatArray:
    out = np.full(np.broadcast(scores, maxes).shape, np.nan)
    np.divide(scores * 100.0, maxes, out=out, where=maxes != 0)
    return out


def paired_ratio(
    a_scores: Sequence[int],
    b_scores: Sequence[int],
    maxes: Sequence[int],
    strata: Sequence[str],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedDelta:
    """``100 * sum(score) / sum(max)`` for A and for B over the same checkpoints (one
    entry each, with the same ``max``), and B - A; the bootstrap draws checkpoints
    within each stratum, the same draws for both. Undefined (None) when max sums to 0."""
    n = len(maxes)
    if not (len(a_scores) == len(b_scores) == n == len(strata)):
        raise ValueError("a_scores, b_scores, maxes and strata must have one entry per checkpoint")
    sa = np.asarray(a_scores, dtype=np.float64)
    sb = np.asarray(b_scores, dtype=np.float64)
    mx = np.asarray(maxes, dtype=np.float64)
    point_a = _scalar(_ratio(sa.sum(keepdims=True), mx.sum(keepdims=True))[0]) if n else None
    point_b = _scalar(_ratio(sb.sum(keepdims=True), mx.sum(keepdims=True))[0]) if n else None
    if not (n and resamples > 0):
        return _paired(point_a, point_b, None, n=n, resamples=resamples, seed=seed, unit="")
    weights = stratified_weights(strata, resamples=resamples, seed=seed).astype(np.float64)
    draws = (_ratio(weights @ sa, weights @ mx), _ratio(weights @ sb, weights @ mx))
    return _paired(point_a, point_b, draws, n=n, resamples=resamples, seed=seed, unit="checkpoints")
