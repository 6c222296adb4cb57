"""End to end: `evalkit calibrate` and `evalkit compare` through the CLI and papermill."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import papermill
import pytest

from tests.fake_messages_api import CHANGED_LINE, FakeMessagesAPI, canned_verdicts
from tests.samples import REPO, copy_samples, run_evalkit

pytestmark = pytest.mark.e2e

NOTEBOOKS = {
    "calibrate.ipynb": {
        "judge",
        "model",
        "prompt_dir",
        "repeats",
        # The judge as evaluate.ipynb takes it (JudgeConfig.to_parameters), not as JSON.
        "concurrency",
        "use_cache",
        "cache_dir",
        "base_url",
        "verdicts",
        "pairs",
        "runs_dir",
        "ranges_dir",
        "out_dir",
        "seed",
        "bootstrap",
        "reference",
    },
    "compare.ipynb": {"evaluations", "names", "out_dir", "seed", "bootstrap"},
}


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_is_clean_and_parameterised(name: str):
    path = REPO / "notebooks" / name
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    described = papermill.inspect_notebook(str(path))
    assert set(described) == NOTEBOOKS[name]
    for parameter, info in described.items():
        assert info["help"], f"{parameter} has no help comment"
    assert (REPO / "evalkit" / "notebooks" / name).resolve() == path.resolve()


@pytest.fixture
def labelled_workspace(tmp_path: Path) -> Path:
    from tests.labelled import (
        PAIRS,
        copy_unlabelled_samples,
        judge_evaluation,
        write_mirror_labels,
    )

    root = copy_unlabelled_samples(tmp_path / "ws")
    for run_id, range_id in PAIRS:
        evaluation = judge_evaluation(root, run_id, range_id)
        write_mirror_labels(root, evaluation, "alice")
        write_mirror_labels(root, evaluation, "bob", blind=True, flips={"CHK-01": "evidence"})
    return root


def test_calibrate_end_to_end(labelled_workspace: Path):
    root = labelled_workspace
    result = run_evalkit(
        "calibrate", "--bootstrap", "100", "--quiet", "--out", "cal", cwd=root, env=environment()
    )
    assert result.returncode == 0, result.stderr
    assert "accuracy 1.00, kappa 1.00 [1.00, 1.00], mode right on 2/2" in result.stdout
    out = root / "cal"
    for name in (
        "calibration.ipynb",
        "calibration.json",
        "calibration-report.md",
        "confusion-grid.png",
        "agreement.png",
    ):
        assert (out / name).is_file(), name
    data = json.loads((out / "calibration.json").read_text())
    assert data["pairs"] == ["demo/ssh-miner", "demo/weak-baseline"]
    band = data["human_band"]["alice vs bob"]["all sub-scores"]
    assert band["confusion"]["fn"] + band["confusion"]["fp"] == 2


def test_calibrate_refuses_bad_selection_with_one_line(labelled_workspace: Path):
    root = labelled_workspace
    for args, message in (
        (["--pairs", "holdout"], "gold-split.json"),
        (["--pairs", "nope/*"], "no labelled pair matches"),
        (["--repeats", "3"], "does not take repeats"),
    ):
        result = run_evalkit("calibrate", *args, "--out", "cal", cwd=root, env=environment())
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert not (root / "cal").exists()


def test_compare_two_calibrations_end_to_end(labelled_workspace: Path):
    """The README's loop with the rules judge: calibrate twice, then compare the two."""
    root = labelled_workspace
    env = environment()
    for out in ("calibration/old", "calibration/new"):
        result = run_evalkit(
            "calibrate", "--quiet", "--bootstrap", "50", "--out", out, cwd=root, env=env
        )
        assert result.returncode == 0, result.stderr
        assert (root / out / "evaluations/demo/ssh-miner/scores.json").is_file()
    result = run_evalkit(
        "compare",
        "calibration/old",
        "calibration/new",
        "--name",
        "old",
        "--name",
        "new",
        "--bootstrap",
        "50",
        "--quiet",
        cwd=root,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("new vs old: 0 sub-score(s) changed (none); kappa 1.00")
    out = root / "comparison"
    for name in (
        "compare.ipynb",
        "compare.json",
        "compare-report.md",
        "delta-bars.png",
        "slope-chart.png",
    ):
        assert (out / name).is_file(), name
    assert len(json.loads((out / "compare.json").read_text())["leaderboard"]) == 4


def test_compare_refuses_mixed_inputs_with_one_line(tmp_path: Path):
    root = copy_samples(tmp_path / "ws")
    env = environment()
    result = run_evalkit(
        "run", "--run", "demo", "--range", "ssh-miner", "--quiet", cwd=root, env=env
    )
    assert result.returncode == 0, result.stderr
    first = root / "runs/demo/ssh-miner/evaluations/rules"
    second = root / "second"
    second.mkdir()
    data = json.loads((first / "scores.json").read_text())
    data["meta"]["inputs"]["checklist_sha256"] = "f" * 64
    (second / "scores.json").write_text(json.dumps(data))
    result = run_evalkit("compare", str(first), str(second), "--out", "cmp", cwd=root, env=env)
    assert result.returncode == 2
    assert "refusing to mix" in result.stderr and "checklist_sha256" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (root / "cmp").exists()


# The README's loop with an LLM judge: a fake Messages API serves canned verdicts whose
def test_the_readme_loop_with_a_fake_messages_api(labelled_workspace: Path):
    root = labelled_workspace
    shutil.copytree(REPO / "evalkit/prompts/v1", root / "prompts-v2")
    system = root / "prompts-v2/system.md"
    text = system.read_text(encoding="utf-8")
    assert text.count(CHANGED_LINE[0]) == 1
    system.write_text(text.replace(*CHANGED_LINE), encoding="utf-8")
    with FakeMessagesAPI(canned_verdicts) as api:
        env = {
            **environment(),
            "ANTHROPIC_API_KEY": "sk-ant-test-loop",
            "ANTHROPIC_BASE_URL": api.url,
        }
        for name, prompts in (("v1", str(REPO / "evalkit/prompts/v1")), ("v2", "prompts-v2")):
            result = run_evalkit(
                "calibrate",
                "--judge",
                "claude",
                "--prompt-dir",
                prompts,
                "--pairs",
                "demo/ssh-miner",
                "--out",
                f"calibration/{name}",
                "--bootstrap",
                "50",
                "--quiet",
                cwd=root,
                env=env,
            )
            assert result.returncode == 0, result.stderr
    result = run_evalkit(
        "compare",
        "calibration/v1",
        "calibration/v2",
        "--name",
        "v1",
        "--name",
        "v2",
        "--bootstrap",
        "50",
        "--quiet",
        cwd=root,
        env=environment(),
    )
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    # Only completeness moved, on every checkpoint that has a plan.
    assert re.match(r"v2 vs v1: (\d+) sub-score\(s\) changed \(completeness \1\)", first), first


def test_calibrate_says_why_when_the_judge_answered_nothing(tmp_path: Path):
    # Issue 18: an unreachable or refusing judge reported "0 sub-scores" and exited 0.
    from tests.fake_messages_api import Reply

    workspace = copy_samples(tmp_path, runs=("demo",))
    with FakeMessagesAPI(lambda body, attempt: Reply.bad_request("no")) as api:
        env = environment() | {"ANTHROPIC_API_KEY": "sk-ant-test-x", "ANTHROPIC_BASE_URL": api.url}
        result = run_evalkit(
            "calibrate", "--judge", "claude", "--pairs", "demo/ssh-miner", "--quiet",
            cwd=workspace, env=env,
        )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "the judge answered nothing" in lines[0], result.stderr
