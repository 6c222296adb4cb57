"""Cluster-aware bootstrap resamples: whole checkpoints, or pairs then checkpoints."""

from __future__ import annotations

import numpy as np

from evalkit.research.resample import (
    MIN_PAIRS,
    UNIT_CHECKPOINTS,
    UNIT_ITEMS,
    UNIT_PAIRS,
    Clusters,
    checkpoint_weights,
    resampling_unit,
    stratified_weights,
)
from evalkit.research.stats import agreement


def clusters(pairs: int, checkpoints: int, items: int) -> Clusters:
    """``pairs`` x ``checkpoints`` x ``items`` (sub-scores per checkpoint)."""
    chk, pair = [], []
    for p in range(pairs):
        for c in range(checkpoints):
            chk += [f"run{p}/r/CHK-{c:02d}"] * items
            pair += [f"run{p}/r"] * items
    return Clusters(tuple(chk), tuple(pair))


def test_the_unit_follows_the_number_of_pairs():
    assert resampling_unit(None) == UNIT_ITEMS
    assert resampling_unit(clusters(MIN_PAIRS - 1, 3, 5)) == UNIT_CHECKPOINTS
    assert resampling_unit(clusters(MIN_PAIRS, 3, 5)) == UNIT_PAIRS
    assert resampling_unit(clusters(12, 3, 5), min_pairs=20) == UNIT_CHECKPOINTS


def test_checkpoints_are_drawn_whole():
    found = clusters(3, 4, 5)
    weights = checkpoint_weights(found, resamples=200, seed=1)
    assert weights.shape == (200, 60)
    per_checkpoint = weights.reshape(200, 12, 5)
    # every item of a checkpoint is drawn as often as its checkpoint
    assert (per_checkpoint == per_checkpoint[:, :, :1]).all()
    # each resample draws as many checkpoints as there are
    assert (per_checkpoint[:, :, 0].sum(axis=1) == 12).all()
    assert (checkpoint_weights(found, resamples=200, seed=1) == weights).all()
    assert not (checkpoint_weights(found, resamples=200, seed=2) == weights).all()


def test_two_stage_draws_pairs_then_checkpoints_within_them():
    found = clusters(12, 4, 2)
    weights = checkpoint_weights(found, resamples=300, seed=0)
    per_pair = weights.reshape(300, 12, 4, 2)[:, :, :, 0]
    totals = per_pair.sum(axis=2)  # checkpoint draws per pair: a multiple of its size
    assert (totals % 4 == 0).all()
    assert (totals.sum(axis=1) == 48).all()
    # some pair is left out of nearly every resample (12 draws from 12 pairs)
    assert ((totals == 0).sum(axis=1) > 0).mean() > 0.9


def test_stratified_draws_keep_each_stratum_its_size():
    strata = ["a"] * 3 + ["b"] * 5
    weights = stratified_weights(strata, resamples=100, seed=4)
    assert (weights[:, :3].sum(axis=1) == 3).all() and (weights[:, 3:].sum(axis=1) == 5).all()


def width(interval: tuple[float, float] | None) -> float:
    assert interval is not None
    return interval[1] - interval[0]


def clustered_data(pairs: int, checkpoints: int, seed: int = 7) -> tuple[list, list, Clusters]:
    """Five sub-scores per checkpoint that always move together (the label and the judge
    give one value to the whole checkpoint), and pairs on which the judge is right or
    wrong as a whole: data as clustered as data can be."""
    generator = np.random.default_rng(seed)
    reference, predicted = [], []
    for pair in range(pairs):
        wrong_here = 0.6 if pair % 3 == 0 else 0.05
        for _ in range(checkpoints):
            truth = int(generator.random() < 0.5)
            guess = 1 - truth if generator.random() < wrong_here else truth
            reference += [truth] * 5
            predicted += [guess] * 5
    return reference, predicted, clusters(pairs, checkpoints, 5)


def test_the_interval_widens_on_clustered_data_against_the_naive_bootstrap():
    reference, predicted, found = clustered_data(pairs=4, checkpoints=12)
    naive = agreement(reference, predicted, resamples=2000, seed=0)
    by_checkpoint = agreement(reference, predicted, resamples=2000, seed=0, clusters=found)
    assert naive.kappa == by_checkpoint.kappa
    assert (naive.unit, by_checkpoint.unit) == (UNIT_ITEMS, UNIT_CHECKPOINTS)
    # five perfectly correlated sub-scores are one observation, not five: about sqrt(5) wider
    ratio = width(by_checkpoint.intervals["kappa"]) / width(naive.intervals["kappa"])
    assert 1.7 < ratio < 3.0


def test_with_enough_pairs_the_pair_level_spread_widens_it_further():
    reference, predicted, found = clustered_data(pairs=12, checkpoints=8)
    by_checkpoint = agreement(
        reference, predicted, resamples=2000, seed=0, clusters=found, min_pairs=100
    )
    by_pair = agreement(reference, predicted, resamples=2000, seed=0, clusters=found)
    assert (by_checkpoint.unit, by_pair.unit) == (UNIT_CHECKPOINTS, UNIT_PAIRS)
    assert width(by_pair.intervals["kappa"]) > 1.2 * width(by_checkpoint.intervals["kappa"])
    assert by_pair.to_dict()["bootstrap"]["unit"] == UNIT_PAIRS
