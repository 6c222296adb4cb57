"""End to end: `evalkit calibrate` and `evalkit compare` through the CLI and papermill."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import papermill
import pytest

from tests.samples import REPO, copy_samples, run_evalkit

NOTEBOOKS = {
    "calibrate.ipynb": {
        "judge",
        "model",
        "prompt_dir",
        "repeats",
        "pairs",
        "runs_dir",
        "ranges_dir",
        "out_dir",
        "seed",
        "bootstrap",
    },
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
    pytest.importorskip("evalkit.labels")
    from tests.test_calibration import PAIRS, judge_evaluation, write_mirror_labels

    root = copy_samples(tmp_path / "ws")
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
    assert "accuracy 1.00, kappa 1.00, mode right on 2/2" in result.stdout
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
