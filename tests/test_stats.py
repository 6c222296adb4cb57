"""Agreement statistics against values computed by hand (see the comments)."""

from __future__ import annotations

import pytest

from evalkit.research.stats import METRICS, Confusion, agreement, bootstrap_intervals, cohen_kappa

# ref  1 1 1 0 0 0 0 1 0 1
# pred 1 0 1 0 1 0 0 1 0 1  -> tp 4, fn 1, fp 1, tn 4
BALANCED = ([1, 1, 1, 0, 0, 0, 0, 1, 0, 1], [1, 0, 1, 0, 1, 0, 0, 1, 0, 1])


def test_balanced_case_by_hand():
    result = agreement(*BALANCED, resamples=0)
    assert result.confusion == Confusion(tp=4, fn=1, fp=1, tn=4)
    assert result.confusion.matrix() == [[4, 1], [1, 4]]
    assert result.n == 10
    assert result.base_rate == 0.5
    assert result.accuracy == pytest.approx(0.8)
    # p_o = 0.8, p_e = (5*5 + 5*5) / 100 = 0.5, kappa = 0.3 / 0.5
    assert result.kappa == pytest.approx(0.6)
    # F1(1) = 8 / 10, F1(0) = 8 / 10
    assert result.macro_f1 == pytest.approx(0.8)
    assert result.tpr == pytest.approx(0.8)
    assert result.tnr == pytest.approx(0.8)


def test_unbalanced_case_by_hand():
    # tp 2, fn 2, fp 1, tn 1
    result = agreement([1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 1], resamples=0)
    assert result.confusion == Confusion(tp=2, fn=2, fp=1, tn=1)
    assert result.base_rate == pytest.approx(4 / 6)
    assert result.accuracy == pytest.approx(0.5)
    # p_e = (4*3 + 2*3) / 36 = 0.5 = p_o
    assert result.kappa == pytest.approx(0.0)
    # F1(1) = 4/7, F1(0) = 2/5
    assert result.macro_f1 == pytest.approx((4 / 7 + 2 / 5) / 2)
    assert result.tpr == pytest.approx(0.5)
    assert result.tnr == pytest.approx(0.5)


def test_kappa_by_hand():
    # tp 2, fn 1, fp 0, tn 1: p_o 0.75, p_e (3*2 + 1*2)/16 = 0.5
    assert cohen_kappa([1, 1, 1, 0], [1, 1, 0, 0]) == pytest.approx(0.5)
    # total disagreement on a balanced set
    assert cohen_kappa([1, 0, 1, 0], [0, 1, 0, 1]) == pytest.approx(-1.0)
    # perfect agreement over both classes
    assert cohen_kappa([1, 0, 1], [1, 0, 1]) == pytest.approx(1.0)
    # one rater constant, the other not: p_e = p_o = 2/3, kappa 0 (defined)
    assert cohen_kappa([1, 1, 1], [1, 0, 1]) == pytest.approx(0.0)


def test_no_items_gives_none_everywhere():
    result = agreement([], [])
    assert result.n == 0
    for metric in METRICS:
        assert result.value(metric) is None
    assert all(interval is None for interval in result.intervals.values())


@pytest.mark.parametrize("value", [0, 1])
def test_one_class_only_with_perfect_agreement(value):
    result = agreement([value] * 5, [value] * 5)
    assert result.accuracy == 1.0
    assert result.kappa is None  # 0/0: undefined, not a fake 1.0 and not NaN
    assert result.macro_f1 == 1.0
    assert (result.tpr, result.tnr) == ((1.0, None) if value else (None, 1.0))
    assert result.intervals["kappa"] is None
    assert result.intervals["accuracy"] == (1.0, 1.0)


def test_to_dict_has_no_nan():
    data = agreement([1, 1], [1, 1]).to_dict()
    assert data["kappa"] is None and data["ci95"]["kappa"] is None
    assert data["confusion"] == {"tp": 2, "fn": 0, "fp": 0, "tn": 0}


def test_bootstrap_is_deterministic_under_a_seed():
    first = bootstrap_intervals(*BALANCED, resamples=500, seed=7)
    again = bootstrap_intervals(*BALANCED, resamples=500, seed=7)
    other = bootstrap_intervals(*BALANCED, resamples=500, seed=8)
    assert first == again
    assert first != other


def test_bootstrap_interval_brackets_the_point_value():
    reference = BALANCED[0] * 5
    predicted = BALANCED[1] * 5
    result = agreement(reference, predicted, resamples=2000, seed=1)
    for metric in METRICS:
        low, high = result.intervals[metric]
        assert low <= result.value(metric) <= high, metric
    low, high = result.intervals["kappa"]
    assert low < 0.6 < high and high - low < 0.8


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        agreement([1, 0], [1])
    with pytest.raises(ValueError):
        agreement([1, 2], [1, 0])
