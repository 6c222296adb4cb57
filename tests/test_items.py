"""Labels and evaluations as per-target items."""

from __future__ import annotations

from pathlib import Path

from evalkit.gold_labels import load_labels
from evalkit.research import calibration
from evalkit.research.calibration import calibrate
from evalkit.research.items import (
    ALL_AFTER_PENALTIES,
    ALL_PENALTIES,
    ALL_SUBSCORES,
    Reading,
    clusters_of,
    judge_readings,
    label_items,
    label_readings,
    match,
    reference_label,
    select_target,
)
from tests.labelled import (
    copy_unlabelled_samples,
    first_plan_line,
    judge_evaluation,
    labelled_workspace,
    write_mirror_labels,
)


def test_label_penalties_go_through_the_scoring_core(tmp_path: Path):
    root = copy_unlabelled_samples(tmp_path)
    evaluation = judge_evaluation(root, "demo", "ssh-miner")
    extra = {
        # a verbatim quote from the plan: applies and zeroes CHK-05's plan
        "CHK-05": [
            {
                "rule": "dangerous_advice",
                "source": "plan",
                "quote": first_plan_line(root),
                "detail": "x",
            }
        ],
        # not in the documents: dismissed, as a judge's would be
        "CHK-06": [
            {
                "rule": "fabrication",
                "source": "report",
                "quote": "no such sentence anywhere",
                "detail": "x",
            }
        ],
    }
    path = write_mirror_labels(root, evaluation, "alice", extra_penalties=extra)
    labels = load_labels(path)
    items, summary = label_items(labels, evaluation.range, evaluation.submission)
    by_id = {item.chk_id: item for item in items}
    assert [p.rule for p in by_id["CHK-05"].penalties] == ["dangerous_advice"]
    assert by_id["CHK-05"].plan.total == 0
    assert by_id["CHK-06"].penalties == () and len(by_id["CHK-06"].dismissed_penalties) == 1
    result = calibrate([calibration.Case(evaluation, (labels,))], resamples=0)
    dangerous = result.agreement["pooled"]["penalty:dangerous_advice"]
    assert dangerous.confusion.fn == 1  # labelled, not applied by the judge
    assert result.agreement["pooled"]["penalty:fabrication"].confusion.fn == 0
    assert result.agreement["pooled"]["correctness"].accuracy == 1.0  # pre-penalty
    # After penalties the label's dangerous_advice zeroes CHK-05's plan; the judge's does not.
    after = result.agreement["pooled"]["correctness after penalties"]
    assert after.confusion.fp == 1 and after.accuracy < 1.0


def test_readings_match_target_by_target(tmp_path: Path):
    root = labelled_workspace(tmp_path)
    evaluation = judge_evaluation(root, "demo", "ssh-miner")
    readings, errors = judge_readings(evaluation)
    assert errors == []
    labels = load_labels(root / "runs/demo/ssh-miner/labels/bob.json")
    scores, _ = label_items(labels, evaluation.range, evaluation.submission)
    mine = label_readings(labels, scores)
    items = match(mine, readings)
    assert len(items) == len(mine) == len(readings)
    differ = [(i.chk_id, i.target) for i in items if i.reference != i.predicted]
    assert differ == [
        ("CHK-01", "discovery"),
        ("CHK-01", "discovery after penalties"),
        ("CHK-02", "correctness"),
        ("CHK-02", "correctness after penalties"),
    ]
    assert {i.reference_text for i in items if i.chk_id == "CHK-01"} == {"bob note on CHK-01"}
    subscores = select_target(items, ALL_SUBSCORES)
    penalties = select_target(items, ALL_PENALTIES)
    after = select_target(items, ALL_AFTER_PENALTIES)
    assert len(subscores) == len(after) and len(subscores) + len(penalties) + len(after) == len(
        items
    )
    assert all(i.target.startswith("penalty:") for i in penalties)
    found = clusters_of(subscores)
    assert found.n_pairs == 1 and found.checkpoints[0] == "demo/ssh-miner/CHK-01"


def test_the_reference_is_the_first_non_blind_labeller(tmp_path: Path):
    root = labelled_workspace(tmp_path)
    alice = load_labels(root / "runs/demo/ssh-miner/labels/alice.json")
    bob = load_labels(root / "runs/demo/ssh-miner/labels/bob.json")
    assert reference_label([bob, alice]) is alice
    assert reference_label([bob]) is bob
    assert reference_label([]) is None


def test_match_keeps_the_reference_order_and_drops_unread_targets():
    first = Reading("r", "x", "CHK-02", "evidence", 1)
    second = Reading("r", "x", "CHK-01", "discovery", 0)
    items = match([first, second], [second, Reading("r", "x", "CHK-09", "evidence", 1)])
    assert [(i.chk_id, i.reference, i.predicted) for i in items] == [("CHK-01", 0, 0)]
