"""Calibration: a judge's evaluations against label files built in a temporary workspace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import evalkit
from evalkit.errors import EvalkitError
from evalkit.labels import load_labels
from evalkit.research import calibration
from evalkit.research.calibration import ALL_SUBSCORES, calibrate, label_items, select_pairs
from tests.samples import copy_samples

PAIRS = [("demo", "ssh-miner"), ("demo", "weak-baseline")]


def copy_unlabelled_samples(into: Path) -> Path:
    """The sample ranges and runs without the shipped gold labels, so each test writes its own."""
    root = copy_samples(into)
    for folder in (root / "runs").glob("*/*/labels"):
        shutil.rmtree(folder)
    (root / "runs" / "gold-split.json").unlink(missing_ok=True)
    return root


def judge_evaluation(root: Path, run_id: str, range_id: str) -> evalkit.Evaluation:
    rng = evalkit.load_range(root / "ranges", range_id)
    submission = evalkit.load_submission(root / "runs", run_id, rng)
    return evalkit.evaluate(rng, submission, evalkit.make_judge("rules"))


def write_mirror_labels(
    root: Path,
    evaluation: evalkit.Evaluation,
    labeller: str,
    *,
    blind: bool = False,
    flips: dict[str, str] | None = None,
    extra_penalties: dict[str, list[dict]] | None = None,
) -> Path:
    """A label file saying exactly what the judge said (pre-penalty, grounded), except ``flips``
    (chk_id -> sub-score to invert) and ``extra_penalties``."""
    flips = flips or {}
    items = {item.chk_id: item for item in evaluation.items}
    checkpoints = []
    for verdict in evaluation.verdicts:
        item = items[verdict.chk_id]

        def values(claims, applicable, chk_id=verdict.chk_id):
            if not applicable:
                return None
            out = {claim.name: claim.value for claim in claims}
            if flips.get(chk_id) in out:
                out[flips[chk_id]] = 1 - out[flips[chk_id]]
            return out

        checkpoint = evaluation.range.checkpoint(verdict.chk_id)
        penalties = [
            {"rule": p.rule, "source": p.source, "quote": p.quote, "detail": p.detail}
            for p in item.penalties
        ] + (extra_penalties or {}).get(verdict.chk_id, [])
        checkpoints.append(
            {
                "chk_id": verdict.chk_id,
                "detection": values(verdict.detection, checkpoint.has_detection),
                "plan": values(verdict.plan, checkpoint.has_plan),
                "penalties": penalties,
                "note": f"{labeller} note on {verdict.chk_id}",
            }
        )
    folder = root / "runs" / evaluation.submission.run_id / evaluation.range.id / "labels"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{labeller}.json"
    document = {
        "schema_version": 1,
        "labeller": labeller,
        "range": evaluation.range.id,
        "run_id": evaluation.submission.run_id,
        "checklist_sha256": evaluation.range.sha256,
        "created": "2026-11-30",
        "blind": blind,
        "checkpoints": checkpoints,
    }
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = copy_unlabelled_samples(tmp_path)
    for run_id, range_id in PAIRS:
        evaluation = judge_evaluation(root, run_id, range_id)
        write_mirror_labels(root, evaluation, "alice")
        # bob (blind) differs from the judge on two ssh-miner sub-scores
        flips = {"CHK-01": "discovery", "CHK-02": "correctness"} if range_id == "ssh-miner" else {}
        write_mirror_labels(root, evaluation, "bob", blind=True, flips=flips)
    return root


def cases(root: Path, pairs=PAIRS) -> list[calibration.Case]:
    return calibration.evaluate_pairs(
        root / "ranges", root / "runs", evalkit.make_judge("rules"), pairs
    )


def test_a_label_mirroring_the_judge_agrees_everywhere(workspace: Path):
    result = calibrate(cases(workspace), resamples=200, seed=3)
    pooled = result.agreement["pooled"]
    assert pooled[ALL_SUBSCORES].accuracy == 1.0
    assert pooled["penalty:fabrication"].accuracy == 1.0
    assert pooled["penalty:dangerous_advice"].confusion.tp == 2  # CHK-04 and CHK-09
    # alice is not blind, so she is the reference
    assert result.reference == {"demo/ssh-miner": "alice", "demo/weak-baseline": "alice"}
    assert result.disagreements == ()
    for row in result.per_pair:
        assert row["detection_abs_error"] == 0.0 and row["plan_abs_error"] == 0.0
        assert row["mode_match"] is True
    assert set(result.agreement) == {"pooled", "range:ssh-miner", "range:weak-baseline", "run:demo"}


def test_the_human_band_counts_each_difference(workspace: Path):
    result = calibrate(cases(workspace), resamples=200, seed=3)
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


def first_plan_line(root: Path) -> str:
    text = (root / "runs/demo/ssh-miner/remediation-plan.md").read_text(encoding="utf-8")
    return next(line.strip("-* ") for line in text.splitlines() if len(line.strip()) > 20)


def test_errored_judge_items_are_left_out_and_listed(workspace: Path):
    (case, *_) = cases(workspace, [("demo", "ssh-miner")])
    from dataclasses import replace

    from evalkit.scoring import score_all

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


def test_select_pairs(workspace: Path):
    runs = workspace / "runs"
    assert select_pairs(runs, "all") == PAIRS
    assert select_pairs(runs, "*/weak-*") == [("demo", "weak-baseline")]
    with pytest.raises(EvalkitError, match="no labelled pair matches"):
        select_pairs(runs, "nope/*")
    with pytest.raises(EvalkitError, match="split file"):
        select_pairs(runs, "holdout")
    (runs / "gold-split.json").write_text(
        json.dumps({"seed": 1, "tune": ["demo/ssh-miner"], "holdout": ["demo/weak-baseline"]})
    )
    assert select_pairs(runs, "holdout") == [("demo", "weak-baseline")]
    assert select_pairs(runs, "tune") == [("demo", "ssh-miner")]
    with pytest.raises(EvalkitError, match="'fresh' must be a list"):
        select_pairs(runs, "fresh")
    (runs / "gold-split.json").write_text(
        json.dumps({"tune": [], "holdout": [], "fresh": ["demo/ssh-miner"]})
    )
    assert select_pairs(runs, "fresh") == [("demo", "ssh-miner")]


def test_stale_labels_are_refused_before_judging(workspace: Path):
    path = workspace / "runs/demo/ssh-miner/labels/alice.json"
    data = json.loads(path.read_text())
    data["checklist_sha256"] = "0" * 64
    path.write_text(json.dumps(data))
    with pytest.raises(EvalkitError):
        cases(workspace)


def test_outputs_are_written(workspace: Path, tmp_path: Path):
    result = calibrate(cases(workspace), resamples=100, seed=1)
    paths = calibration.write_outputs(result, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert data["agreement"]["pooled"]["all sub-scores"]["accuracy"] == 1.0
    assert "alice vs bob" in data["human_band"]
    report = paths["report"].read_text()
    assert "## Every disagreement" in report and "CHK-01 discovery" not in report
    assert paths["confusion"].read_bytes()[:4] == b"\x89PNG"
    assert paths["agreement"].read_bytes()[:4] == b"\x89PNG"
