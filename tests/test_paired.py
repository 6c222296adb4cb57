"""Paired statistics: McNemar's exact test, paired bootstrap differences."""

from __future__ import annotations

import pytest

from evalkit.research.paired import excludes_zero, mcnemar, paired_metric, paired_ratio
from evalkit.research.resample import UNIT_CHECKPOINTS, Clusters


def test_mcnemar_exact_on_the_discordant_items():
    a = [True] * 10 + [True] * 1 + [False] * 9
    b = [True] * 10 + [False] * 1 + [True] * 9
    test = mcnemar(a, b)
    assert (test.a_only, test.b_only, test.discordant) == (1, 9, 10)
    # two-sided binomial: 2 * P(X <= 1 | n = 10, p = 1/2) = 2 * 11 / 1024
    assert test.p_value == pytest.approx(22 / 1024)
    assert mcnemar(b, a).p_value == pytest.approx(22 / 1024)
    assert mcnemar([True, False], [True, False]).p_value is None  # nothing discordant
    assert mcnemar([True], [False]).p_value == 1.0
    with pytest.raises(ValueError):
        mcnemar([True], [True, False])


def one_item_checkpoints(n: int) -> Clusters:
    return Clusters(tuple(f"p/r/CHK-{i}" for i in range(n)), ("p/r",) * n)


def test_identical_raters_differ_by_exactly_zero():
    reference = [1, 0] * 20
    judge = [1, 0] * 15 + [0, 1] * 5
    found = paired_metric(reference, judge, judge, one_item_checkpoints(40), resamples=300)
    assert found.delta == 0.0 and found.delta_interval == (0.0, 0.0)
    assert found.a == found.b and found.unit == UNIT_CHECKPOINTS
    assert not excludes_zero(found.delta_interval)


def test_a_better_rater_moves_beyond_noise_and_pairing_narrows_the_difference():
    reference = [1, 0] * 40
    a = list(reference)
    for i in range(0, 80, 4):  # A is wrong on 20 items
        a[i] = 1 - a[i]
    b = list(a)
    for i in range(0, 80, 8):  # B fixes 10 of them and shares the other 10 mistakes
        b[i] = reference[i]
    found = paired_metric(reference, a, b, one_item_checkpoints(80), resamples=1000, seed=2)
    assert found.delta is not None and found.delta > 0.2
    assert excludes_zero(found.delta_interval)
    assert found.a_interval is not None and found.delta_interval is not None
    # what both get wrong cancels out of the paired difference
    assert (found.delta_interval[1] - found.delta_interval[0]) < (
        found.a_interval[1] - found.a_interval[0]
    )
    assert found.to_dict()["delta_ci95"] == list(found.delta_interval)


def test_undefined_kappa_stays_none():
    found = paired_metric([0, 0], [0, 0], [0, 0], one_item_checkpoints(2), resamples=50)
    assert found.a is None and found.b is None and found.delta is None
    assert found.delta_interval is None
    empty = paired_metric([], [], [], Clusters((), ()), resamples=50)
    assert empty.n == 0 and empty.unit is None


def test_paired_ratio_is_a_percentage_of_pooled_scores():
    found = paired_ratio([3, 0, 2], [3, 3, 2], [3, 3, 2], ["x", "x", "y"], resamples=200)
    assert found.a == pytest.approx(500 / 8) and found.b == 100.0
    assert found.delta == pytest.approx(100 - 500 / 8)
    assert found.delta_interval is not None and found.delta_interval[0] >= 0
    none = paired_ratio([0], [0], [0], ["x"], resamples=10)
    assert none.a is None and none.delta is None and none.delta_interval is None
