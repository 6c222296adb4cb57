"""End to end: `evalkit ab` (and compare's A/B section) with the rules judge, a `file` judge
whose verdicts the test writes, and the shipped gold labels."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import evalkit
from evalkit import render
from tests.samples import copy_samples, run_evalkit
from tests.test_research_cli import environment

pytestmark = pytest.mark.e2e

PAIR = "demo/ssh-miner"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The samples with their gold labels, the rules judge's configuration, and a `file`
    judge's: the rules judge's own verdicts with every plan sub-score set to 0."""
    root = copy_samples(tmp_path_factory.mktemp("ab"))
    rng = evalkit.load_range(root / "ranges", "ssh-miner")
    evaluation = evalkit.evaluate(
        rng, evalkit.load_submission(root / "runs", "demo", rng), evalkit.make_judge("rules")
    )
    render.write_outputs(evaluation, root / "rules-eval")
    verdicts = json.loads((root / "rules-eval/verdicts.json").read_text())
    for verdict in verdicts:
        for claim in (verdict.get("plan") or {}).values():
            claim.update(score=0, quotes=[])
    (root / "configs").mkdir()
    (root / "configs/zero-plan.json").write_text(json.dumps(verdicts))
    (root / "configs/rules.yaml").write_text("judge: rules\n")
    (root / "configs/zero-plan.yaml").write_text("judge: file\nverdicts: zero-plan.json\n")
    return root


def ab(root: Path, *args: str):
    return run_evalkit("ab", *args, "--bootstrap", "200", "--quiet", cwd=root, env=environment())


def test_ab_of_two_configurations_then_of_their_calibrations(workspace: Path):
    root = workspace
    result = ab(root, "configs/rules.yaml", "configs/zero-plan.yaml", "--pairs", PAIR)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("rules: rules on 1 pair(s): 103 sub-scores")
    assert lines[1].startswith("zero-plan: file on 1 pair(s): 103 sub-scores")
    headline = lines[2]
    assert headline.startswith("rules agrees better on correctness: Δκ -"), headline
    assert (
        "  discovery: no difference beyond noise, Δκ +0.00 [0.00, 0.00] (no item differs)" in lines
    )
    for folder in ("ab/rules", "ab/zero-plan"):
        assert (root / folder / "calibration.json").is_file()
        assert (root / folder / "calibration-report.md").is_file()
    data = json.loads((root / "ab/ab.json").read_text())
    assert data["headline"] == headline and data["pairs"] == [PAIR]
    assert data["reference_labeller"] == {PAIR: "a"}
    correctness = next(t for t in data["targets"] if t["target"] == "correctness")
    assert correctness["moved"] == "rules" and correctness["kappa"]["delta_ci95"][1] < 0
    assert correctness["mcnemar"]["a_only"] > 0 and correctness["mcnemar"]["b_only"] == 0
    report = (root / "ab/ab-report.md").read_text()
    assert report.startswith("# A/B test of two judges: zero-plan vs rules")
    assert "resampled: checkpoints (1 pair(s), fewer than 10" in report

    # The saved calibration folders give the same A/B, without judging again.
    again = ab(root, "ab/rules", "ab/zero-plan", "--out", "ab-again")
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0] == headline

    # compare of the two calibrations gains the A/B section.
    compared = run_evalkit(
        "compare",
        "ab/rules",
        "ab/zero-plan",
        "--name",
        "rules",
        "--name",
        "zero-plan",
        "--bootstrap",
        "200",
        "--quiet",
        "--out",
        "cmp",
        cwd=root,
        env=environment(),
    )
    assert compared.returncode == 0, compared.stderr
    assert f"A/B against the labels: {headline}" in compared.stdout.splitlines()
    data = json.loads((root / "cmp/compare.json").read_text())
    assert data["ab"]["zero-plan"]["headline"] == headline
    report = (root / "cmp/compare-report.md").read_text()
    assert "## A/B against the labels: zero-plan vs rules" in report
    assert "nan" not in report and "None" not in report

    # Calibrations of different pairs, or with different labels, are refused.
    other = ab(root, "configs/rules.yaml", "ab/rules", "--pairs", "demo/weak-baseline")
    assert other.returncode == 2
    assert "calibrated other pairs" in other.stderr
    assert len(other.stderr.strip().splitlines()) == 1
    shutil.copytree(root / "ab/rules", root / "relabelled")
    path = root / "relabelled/calibration.json"
    saved = json.loads(path.read_text())
    saved["reference_labeller"][PAIR] = "b"
    path.write_text(json.dumps(saved))
    refused = ab(root, "ab/rules", "relabelled", "--out", "nothing")
    assert refused.returncode == 2
    assert "different labels for demo/ssh-miner" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert not (root / "nothing").exists()


def test_bad_configurations_are_one_line_and_exit_2(workspace: Path):
    root = workspace
    (root / "configs/bad.yaml").write_text("judge: rules\nverdicts: x.json\n")
    (root / "configs/nojudge.yaml").write_text("model: m\n")
    for args, message in (
        (["configs/bad.yaml", "configs/rules.yaml"], "the rules judge does not take verdicts"),
        (["configs/nojudge.yaml", "configs/rules.yaml"], "with a judge name"),
        (["configs/missing.yaml", "configs/rules.yaml"], "neither a calibration folder"),
        (["configs/rules.yaml", "configs/rules.yaml", "--pairs", "nope/*"], "no labelled pair"),
    ):
        result = ab(root, *args, "--out", "bad-out")
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert not (root / "bad-out").exists()
