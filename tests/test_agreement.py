"""Agreement per target and scope, and the human band."""

from __future__ import annotations

from pathlib import Path

from evalkit.research.agreement import by_scope, human_band, measure
from evalkit.research.calibration import calibrate
from evalkit.research.items import ALL_SUBSCORES, TARGETS, Item, Reading
from evalkit.research.resample import UNIT_CHECKPOINTS
from tests.labelled import cases, labelled_workspace


def test_the_human_band_counts_each_difference(tmp_path: Path):
    result = calibrate(cases(labelled_workspace(tmp_path)), resamples=200, seed=3)
    bob = result.band["judge vs bob"][ALL_SUBSCORES]
    alice = result.band["judge vs alice"][ALL_SUBSCORES]
    humans = result.band["alice vs bob"][ALL_SUBSCORES]
    assert alice.accuracy == 1.0
    assert bob.confusion.fn + bob.confusion.fp == 2
    assert humans.confusion.fn + humans.confusion.fp == 2
    assert bob.n == alice.n == humans.n
    # bob's final scores beside alice's, per pair: bob flipped a discovery and a
    # correctness point on ssh-miner, nothing elsewhere
    rows = {row["range"]: row for row in result.per_pair_band}
    assert set(rows) == {"ssh-miner", "weak-baseline"}
    assert rows["ssh-miner"]["labeller"] == "bob" and rows["ssh-miner"]["reference"] == "alice"
    assert rows["ssh-miner"]["detection_abs_error"] > 0 and rows["ssh-miner"]["plan_abs_error"] > 0
    assert rows["weak-baseline"]["detection_abs_error"] == 0.0


def item(run: str, chk: str, target: str, reference: int, predicted: int) -> Item:
    return Item(run, "rng", chk, target, reference, predicted)


def test_measure_has_every_target_and_scopes_follow_the_items():
    items = [
        item("a", "CHK-01", "discovery", 1, 1),
        item("a", "CHK-02", "discovery", 0, 1),
        item("b", "CHK-01", "discovery", 1, 1),
        item("b", "CHK-01", "penalty:fabrication", 0, 0),
    ]
    found = measure(items, resamples=100, seed=0)
    assert list(found) == list(TARGETS)
    assert found["discovery"].n == 3 and found["evidence"].n == 0
    assert found["discovery"].unit == UNIT_CHECKPOINTS
    assert found["penalty:fabrication"].kappa is None  # one class only: undefined
    scopes = by_scope(items, resamples=0, seed=0)
    assert list(scopes) == ["pooled", "range:rng", "run:a", "run:b"]
    assert scopes["run:b"]["discovery"].n == 1


def test_labellers_are_compared_only_where_both_read():
    judge = [Reading("r", "x", "CHK-01", "discovery", 1)]
    labellers = {
        "a": [Reading("r", "x", "CHK-01", "discovery", 1)],
        "b": [Reading("other", "x", "CHK-01", "discovery", 0)],
    }
    band = human_band(judge, labellers, resamples=0, seed=0)
    assert list(band) == ["judge vs a", "judge vs b"]  # a and b share no checkpoint
    assert band["judge vs a"]["discovery"].accuracy == 1.0
    assert band["judge vs b"]["discovery"].n == 0
