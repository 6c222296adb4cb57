"""calibrate(): a judge's evaluations against label files built in a temporary workspace."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from evalkit.model import SubScoreVerdict, Verdict
from evalkit.research import calibration
from evalkit.research.calibration import ALL_AFTER_PENALTIES, ALL_SUBSCORES, calibrate
from evalkit.research.resample import UNIT_CHECKPOINTS
from evalkit.scoring import score_all
from evalkit.stability import stability_of
from tests.labelled import (
    PAIRS,
    cases,
    copy_unlabelled_samples,
    judge_evaluation,
    labelled_workspace,
    write_mirror_labels,
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return labelled_workspace(tmp_path)


def test_a_label_mirroring_the_judge_agrees_everywhere(workspace: Path):
    result = calibrate(cases(workspace), resamples=200, seed=3)
    pooled = result.agreement["pooled"]
    assert pooled[ALL_SUBSCORES].accuracy == 1.0
    assert pooled["penalty:fabrication"].accuracy == 1.0
    # weak-baseline CHK-04 and CHK-09; ssh-miner CHK-11 (crontab -r)
    assert pooled["penalty:dangerous_advice"].confusion.tp == 3
    # alice is not blind, so she is the reference
    assert result.reference == {"demo/ssh-miner": "alice", "demo/weak-baseline": "alice"}
    assert result.disagreements == ()
    for row in result.per_pair:
        assert row["detection_abs_error"] == 0.0 and row["plan_abs_error"] == 0.0
        assert row["mode_match"] is True
    assert set(result.agreement) == {"pooled", "range:ssh-miner", "range:weak-baseline", "run:demo"}


def test_two_pairs_are_too_few_to_resample_pairs(workspace: Path):
    result = calibrate(cases(workspace), resamples=50, seed=3)
    assert result.agreement["pooled"][ALL_SUBSCORES].unit == UNIT_CHECKPOINTS
    data = result.to_dict()
    assert data["agreement"]["pooled"][ALL_SUBSCORES]["bootstrap"]["unit"] == UNIT_CHECKPOINTS
    assert data["bootstrap"]["min_pairs_for_pair_resampling"] == 10


def test_every_compared_item_is_kept_with_its_reference_labeller(workspace: Path):
    result = calibrate(cases(workspace), resamples=0)
    items = result.to_dict()["items"]
    pooled = result.agreement["pooled"]
    assert len(items) == pooled[ALL_SUBSCORES].n + pooled[ALL_AFTER_PENALTIES].n + sum(
        pooled[t].n for t in calibration.PENALTY_TARGETS
    )
    first = items[0]
    assert set(first) == {
        "run",
        "range",
        "chk_id",
        "target",
        "judge",
        "label",
        "labeller",
        "flip_rate",
    }
    assert {row["labeller"] for row in items} == {"alice"}
    assert all(row["flip_rate"] is None for row in items)  # one verdict per checkpoint
    assert result.judge["repeats"] == 1


def test_flip_rates_of_repeated_verdicts_are_kept(workspace: Path):
    (case,) = cases(workspace, [("demo", "ssh-miner")])
    verdict = next(v for v in case.evaluation.verdicts if v.detection)

    def sample(value: int) -> Verdict:
        names = ("discovery", "evidence", "attribution")
        return Verdict(verdict.chk_id, detection={n: SubScoreVerdict(value) for n in names})

    # Three samples: 1, 1, 0 (two of the three pairs of samples disagree)
    stability = stability_of({verdict.chk_id: [sample(1), sample(1), sample(0)]})
    evaluation = replace(case.evaluation, stability=stability)
    result = calibrate([calibration.Case(evaluation, case.labels)], resamples=0)
    assert result.judge["repeats"] == 3
    flips = {(row["chk_id"], row["target"]): row["flip_rate"] for row in result.to_dict()["items"]}
    assert flips[(verdict.chk_id, "discovery")] == pytest.approx(2 / 3)
    assert flips[(verdict.chk_id, "penalty:fabrication")] is None


def test_disagreements_show_the_judge_rationale_beside_the_note(tmp_path: Path):
    root = copy_unlabelled_samples(tmp_path)
    evaluation = judge_evaluation(root, "demo", "ssh-miner")
    write_mirror_labels(root, evaluation, "alice", flips={"CHK-03": "evidence"})
    result = calibrate(cases(root, [("demo", "ssh-miner")]), resamples=0)
    (row,) = result.disagreements
    assert (row["chk_id"], row["target"], row["judge"], row["label"]) == (
        "CHK-03",
        "evidence",
        1,
        0,
    )
    assert row["label_note"] == "alice note on CHK-03"
    assert row["judge_rationale"] and row["judge_quotes"]
    assert result.agreement["pooled"]["evidence"].confusion.fp == 1
    # one evidence point fewer in the label: the detection percentage differs
    (pair,) = result.per_pair
    assert pair["detection_abs_error"] > 0


def test_errored_judge_items_are_left_out_and_listed(workspace: Path):
    (case, *_) = cases(workspace, [("demo", "ssh-miner")])
    verdicts = tuple(
        replace(v, status="error", detection=None, plan=None, error="timeout")
        if v.chk_id == "CHK-01"
        else v
        for v in case.evaluation.verdicts
    )
    items, summary = score_all(case.evaluation.range, verdicts)
    errored = replace(case.evaluation, verdicts=verdicts, items=items, summary=summary)
    result = calibrate([calibration.Case(errored, case.labels)], resamples=0)
    assert result.judge_errors == (
        {"run": "demo", "range": "ssh-miner", "chk_id": "CHK-01", "error": "timeout"},
    )
    full = calibrate([case], resamples=0)
    assert (
        result.agreement["pooled"][ALL_SUBSCORES].n == full.agreement["pooled"][ALL_SUBSCORES].n - 5
    )
    assert not any(row["chk_id"] == "CHK-01" for row in result.to_dict()["items"])


def test_the_old_names_still_import_from_calibration():
    for name in ("select_pairs", "evaluate_pairs", "label_items", "write_outputs", "Case"):
        assert hasattr(calibration, name)
    assert PAIRS
