"""Agreement between two raters of binary labels, with percentile bootstrap intervals.

Pure functions: 0/1 sequences in, numbers out; no I/O. ``reference`` is the rater
taken as the truth (a gold label, or the first labeller), ``predicted`` the one
measured against it (the judge, or the second labeller). Positive means 1.

Undefined values are ``None``, never NaN and never a made-up number:

* no items: every metric is ``None`` (``n`` is 0);
* Cohen's kappa is ``(p_o - p_e) / (1 - p_e)``; when ``p_e == 1`` (both raters
  gave one and the same class to every item) it is 0/0. It is then ``None``
  while accuracy says 1.0: perfect agreement on a single class shows nothing
  about the rater's ability to tell the classes apart, so a kappa of 1.0 would
  be a claim the data cannot support;
* TPR is ``None`` when the reference has no positives, TNR when it has no negatives;
* macro-F1 is the mean of the F1 of class 1 and of class 0 over the classes
  that occur in either rater; a class that occurs in neither has no F1 and is
  left out (so one class only, perfectly agreed, gives 1.0).

Bootstrap: items are resampled with replacement (``numpy.random.default_rng(seed)``,
so the same seed gives the same interval), each metric is computed on every
resample where it is defined, and the 2.5th and 97.5th percentiles of those
values form the 95 % interval. A metric defined on no resample has no interval.
Given the items' :class:`~evalkit.research.resample.Clusters`, whole checkpoints
(or pairs, then checkpoints) are resampled instead of single items; the
:class:`Agreement` says which (``unit``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .resample import MIN_PAIRS, UNIT_ITEMS, Clusters, checkpoint_weights, resampling_unit

__all__ = [
    "METRICS",
    "Agreement",
    "Confusion",
    "agreement",
    "bootstrap_intervals",
    "cohen_kappa",
    "confusion",
    "metric_draws",
    "percentile_interval",
]

# The metrics an Agreement reports, in display order.
METRICS: tuple[str, ...] = ("base_rate", "accuracy", "kappa", "macro_f1", "tpr", "tnr")

DEFAULT_RESAMPLES = 1000
DEFAULT_SEED = 0

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Confusion:
    """The 2x2 confusion matrix, reference as rows and predicted as columns."""

    tp: int  # reference 1, predicted 1
    fn: int  # reference 1, predicted 0
    fp: int  # reference 0, predicted 1
    tn: int  # reference 0, predicted 0

    @property
    def n(self) -> int:
        return self.tp + self.fn + self.fp + self.tn

    def matrix(self) -> list[list[int]]:
        """``[[tn, fp], [fn, tp]]``: row = reference 0/1, column = predicted 0/1."""
        return [[self.tn, self.fp], [self.fn, self.tp]]

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(
            self.tp + other.tp, self.fn + other.fn, self.fp + other.fp, self.tn + other.tn
        )


@dataclass(frozen=True)
class Agreement:
    """Every statistic of one (reference, predicted) comparison; see the module docstring."""

    n: int
    confusion: Confusion
    base_rate: float | None  # share of reference positives
    accuracy: float | None
    kappa: float | None
    macro_f1: float | None
    tpr: float | None  # sensitivity: predicted 1 where the reference is 1
    tnr: float | None  # specificity: predicted 0 where the reference is 0
    # metric -> (low, high) percentile bootstrap interval, or None where undefined.
    intervals: Mapping[str, tuple[float, float] | None] = field(default_factory=dict)
    resamples: int = 0
    seed: int | None = None
    # What the bootstrap resampled: "items", "checkpoints" or "pairs, then checkpoints".
    unit: str | None = None

    def value(self, metric: str) -> float | None:
        value: float | None = getattr(self, metric)
        return value

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            **{metric: self.value(metric) for metric in METRICS},
            "confusion": {
                "tp": self.confusion.tp,
                "fn": self.confusion.fn,
                "fp": self.confusion.fp,
                "tn": self.confusion.tn,
            },
            "ci95": {
                metric: (list(interval) if interval is not None else None)
                for metric, interval in self.intervals.items()
            },
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "unit": self.unit},
        }


# --------------------------------------------------------------------------- point values


def _as_binary(values: Sequence[int], name: str) -> npt.NDArray[np.bool_]:
    array = np.asarray(values, dtype=np.int64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of 0/1")
    if array.size and not np.isin(array, (0, 1)).all():
        raise ValueError(f"{name} holds values other than 0 and 1")
    return array.astype(bool)


def _pair(
    reference: Sequence[int], predicted: Sequence[int]
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    ref = _as_binary(reference, "reference")
    pred = _as_binary(predicted, "predicted")
    if ref.shape != pred.shape:
        raise ValueError(f"{ref.size} reference labels but {pred.size} predicted ones")
    return ref, pred


def confusion(reference: Sequence[int], predicted: Sequence[int]) -> Confusion:
    ref, pred = _pair(reference, predicted)
    return Confusion(
        tp=int(np.sum(ref & pred)),
        fn=int(np.sum(ref & ~pred)),
        fp=int(np.sum(~ref & pred)),
        tn=int(np.sum(~ref & ~pred)),
    )


def _divide(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """Element-wise ratio, NaN where the denominator is 0 (undefined, not zero)."""
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _metrics(
    tp: FloatArray, fn: FloatArray, fp: FloatArray, tn: FloatArray
) -> dict[str, FloatArray]:
    """Every metric from confusion counts (arrays: one value per resample); NaN = undefined."""
    n = tp + fn + fp + tn
    observed = _divide(tp + tn, n)
    expected = _divide((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn), n * n)
    # 1 - p_e == 0 exactly when both raters used one and the same class throughout.
    kappa = _divide(observed - expected, 1.0 - expected)
    kappa = np.where(np.isclose(expected, 1.0), np.nan, kappa)
    f1_positive = _divide(2 * tp, 2 * tp + fp + fn)
    f1_negative = _divide(2 * tn, 2 * tn + fn + fp)
    with np.errstate(invalid="ignore"):
        both = np.stack([f1_positive, f1_negative])
        defined = ~np.isnan(both)
        macro_f1 = _divide(np.where(defined, both, 0.0).sum(axis=0), defined.sum(axis=0) * 1.0)
    return {
        "base_rate": _divide(tp + fn, n),
        "accuracy": observed,
        "kappa": kappa,
        "macro_f1": macro_f1,
        "tpr": _divide(tp, tp + fn),
        "tnr": _divide(tn, tn + fp),
    }


def _scalar(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def cohen_kappa(reference: Sequence[int], predicted: Sequence[int]) -> float | None:
    """Cohen's kappa; ``None`` with no items or when both raters used one same class only."""
    return agreement(reference, predicted, resamples=0).kappa


# --------------------------------------------------------------------------- bootstrap


def metric_draws(
    reference: Sequence[int], predicted: Sequence[int], weights: npt.NDArray[np.int64]
) -> dict[str, FloatArray]:
    """Every metric on every resample given by ``weights`` (resamples x items: how often
    each item is drawn); NaN where a metric is undefined on a resample."""
    ref, pred = _pair(reference, predicted)
    w = weights.astype(np.float64)

    def count(mask: npt.NDArray[np.bool_]) -> FloatArray:
        counts: FloatArray = w @ mask.astype(np.float64)
        return counts

    return _metrics(count(ref & pred), count(ref & ~pred), count(~ref & pred), count(~ref & ~pred))


def percentile_interval(draws: FloatArray, level: float = 0.95) -> tuple[float, float] | None:
    """The percentile interval of the defined (non-NaN) ``draws``; None when there are none."""
    defined = draws[~np.isnan(draws)]
    if defined.size == 0:
        return None
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return (float(low), float(high))


def bootstrap_intervals(
    reference: Sequence[int],
    predicted: Sequence[int],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
    clusters: Clusters | None = None,
    min_pairs: int = MIN_PAIRS,
) -> dict[str, tuple[float, float] | None]:
    """Percentile bootstrap interval of every metric; deterministic per seed.

    Without ``clusters`` single items are resampled; with them, whole checkpoints, or
    pairs then checkpoints (see :mod:`evalkit.research.resample`).
    """
    ref, pred = _pair(reference, predicted)
    if ref.size == 0 or resamples <= 0:
        return {metric: None for metric in METRICS}
    if clusters is not None:
        if len(clusters.checkpoints) != ref.size:
            raise ValueError(f"{ref.size} items but {len(clusters.checkpoints)} clusters")
        weights = checkpoint_weights(clusters, resamples=resamples, seed=seed, min_pairs=min_pairs)
        values = metric_draws(reference, predicted, weights)
        return {metric: percentile_interval(values[metric], level) for metric in METRICS}
    generator = np.random.default_rng(seed)
    picks = generator.integers(0, ref.size, size=(resamples, ref.size))
    ref_draws, pred_draws = ref[picks], pred[picks]

    def count(mask: npt.NDArray[np.bool_]) -> FloatArray:
        counts: FloatArray = np.sum(mask, axis=1, dtype=np.float64)
        return counts

    values = _metrics(
        count(ref_draws & pred_draws),
        count(ref_draws & ~pred_draws),
        count(~ref_draws & pred_draws),
        count(~ref_draws & ~pred_draws),
    )
    return {metric: percentile_interval(values[metric], level) for metric in METRICS}


def agreement(
    reference: Sequence[int],
    predicted: Sequence[int],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    clusters: Clusters | None = None,
    min_pairs: int = MIN_PAIRS,
) -> Agreement:
    """n, base rate, accuracy, kappa, macro-F1, TPR, TNR and the confusion matrix,
    each with a bootstrap 95 % interval (``resamples=0``: no intervals). With
    ``clusters``, the bootstrap resamples checkpoints (or pairs, then checkpoints)."""
    counts = confusion(reference, predicted)
    point = _metrics(*(np.array([float(x)]) for x in (counts.tp, counts.fn, counts.fp, counts.tn)))
    values = {metric: _scalar(point[metric][0]) for metric in METRICS}
    intervals = (
        bootstrap_intervals(
            reference,
            predicted,
            resamples=resamples,
            seed=seed,
            clusters=clusters,
            min_pairs=min_pairs,
        )
        if resamples > 0
        else {}
    )
    return Agreement(
        n=counts.n,
        confusion=counts,
        intervals=intervals,
        resamples=max(resamples, 0),
        seed=seed if resamples > 0 else None,
        unit=(UNIT_ITEMS if clusters is None else resampling_unit(clusters, min_pairs))
        if resamples > 0
        else None,
        base_rate=values["base_rate"],
        accuracy=values["accuracy"],
        kappa=values["kappa"],
        macro_f1=values["macro_f1"],
        tpr=values["tpr"],
        tnr=values["tnr"],
    )
