"""compare: evaluation sets side by side, with added, removed and errored items."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

import evalkit
from evalkit import render
from evalkit.errors import EvalkitError
from evalkit.research.compare import ALL_SUBSCORES, compare, load_sets, summary_lines, write_outputs

REPO = Path(__file__).resolve().parent.parent
RANGES = ("ssh-miner", "redis-exposed", "weak-baseline")


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The rules judge's evaluations of the demo run, one folder per range."""
    root = tmp_path_factory.mktemp("baseline")
    for range_id in RANGES:
        rng = evalkit.load_range(REPO / "ranges", range_id)
        submission = evalkit.load_submission(REPO / "runs", "demo", rng)
        evaluation = evalkit.evaluate(rng, submission, evalkit.make_judge("rules"))
        render.write_outputs(evaluation, root / range_id)
    return root


def edit(folder: Path, range_id: str, change) -> None:
    path = folder / range_id / "scores.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def variant(baseline: Path, into: Path) -> Path:
    shutil.copytree(baseline, into)
    return into


def item(data: dict, chk_id: str) -> dict:
    return next(c for c in data["checkpoints"] if c["chk_id"] == chk_id)


def test_identical_sets_agree_fully(baseline: Path, tmp_path: Path):
    other = variant(baseline, tmp_path / "same")
    result = compare(load_sets([baseline, other]), resamples=50)
    assert result.changes == ()
    assert result.kappa[str(other)][ALL_SUBSCORES].accuracy == 1.0
    assert all(row["detection_delta"] == 0.0 and not row["mode_changed"] for row in result.pairs)
    assert len(result.leaderboard) == 6


def test_added_removed_errored_and_changed_items(baseline: Path, tmp_path: Path):
    other = variant(baseline, tmp_path / "new")

    def ssh(data: dict) -> None:
        item(data, "CHK-01")["detection"]["evidence"] = 0  # changed sub-score
        errored = item(data, "CHK-02")
        errored.update(status="error", error="timeout", detection=None, plan=None)
        data["checkpoints"] = [c for c in data["checkpoints"] if c["chk_id"] != "CHK-03"]
        extra = copy.deepcopy(item(data, "CHK-04"))
        extra["chk_id"] = "CHK-99"
        data["checkpoints"].append(extra)
        data["summary"]["detection"]["pct"] -= 10.0
        data["summary"]["diagnosis"] = "Blind fix"

    def redis(data: dict) -> None:
        item(data, "CHK-01")["penalties"].append(
            {"rule": "fabrication", "detail": "x", "quote": "y"}
        )

    edit(other, "ssh-miner", ssh)
    edit(other, "redis-exposed", redis)
    shutil.rmtree(other / "weak-baseline")  # a pair removed
    result = compare(load_sets([baseline, other], names=["old", "new"]), resamples=50)
    kinds = {(row["chk_id"], row["change"], row["target"]) for row in result.changes}
    assert ("CHK-01", "sub-score", "evidence") in kinds
    assert ("CHK-02", "errored", None) in kinds
    assert ("CHK-03", "removed", None) in kinds
    assert ("CHK-99", "added", None) in kinds
    assert ("CHK-01", "penalty", "penalty:fabrication") in kinds
    assert (None, "pair removed", None) in kinds
    ssh_row = next(r for r in result.pairs if r["range"] == "ssh-miner")
    assert ssh_row["detection_delta"] == -10.0 and ssh_row["mode_changed"] is True
    evidence = result.kappa["new"]["evidence"]
    assert evidence.confusion.fn == 1 and evidence.confusion.fp == 0
    # the errored and the removed checkpoints are not compared
    assert result.kappa["new"]["discovery"].n == result.kappa["new"]["evidence"].n
    (line,) = summary_lines(result)
    assert "new vs old: 1 sub-score(s) changed (evidence 1)" in line
    assert "1 mode(s) changed" in line and "errored 1" in line and "pair removed 1" in line

    back = compare(load_sets([other, baseline], names=["new", "old"]), resamples=0)
    kinds = {(row["chk_id"], row["change"]) for row in back.changes}
    assert ("CHK-02", "recovered") in kinds and (None, "pair added") in kinds


def test_mixing_different_inputs_is_refused(baseline: Path, tmp_path: Path):
    other = variant(baseline, tmp_path / "other-doc")
    edit(other, "ssh-miner", lambda d: d["meta"]["inputs"].update(report_sha256="0" * 64))
    with pytest.raises(EvalkitError, match="refusing to mix.*demo/ssh-miner.*report_sha256"):
        load_sets([baseline, other])


def test_two_evaluations_of_one_pair_in_a_set_are_refused(baseline: Path, tmp_path: Path):
    twice = tmp_path / "twice"
    shutil.copytree(baseline / "ssh-miner", twice / "a")
    shutil.copytree(baseline / "ssh-miner", twice / "b")
    with pytest.raises(EvalkitError, match="two evaluations of demo/ssh-miner"):
        load_sets([baseline, twice])


def test_bad_folders_are_refused(baseline: Path, tmp_path: Path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(EvalkitError, match="no scores.json"):
        load_sets([baseline, tmp_path / "empty"])
    with pytest.raises(EvalkitError, match="at least two"):
        load_sets([baseline])
    broken = variant(baseline, tmp_path / "broken")
    (broken / "ssh-miner" / "scores.json").write_text("{")
    with pytest.raises(EvalkitError, match="not a readable scores.json"):
        load_sets([baseline, broken])


def test_outputs_are_written(baseline: Path, tmp_path: Path):
    other = variant(baseline, tmp_path / "new")
    edit(other, "ssh-miner", lambda d: item(d, "CHK-05")["detection"].update(attribution=0))
    result = compare(load_sets([baseline, other]), resamples=50)
    paths = write_outputs(result, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert data["changes"][0]["target"] == "attribution"
    assert "## Leaderboard" in paths["report"].read_text()
    for name in ("delta_bars", "slope_chart"):
        assert paths[name].read_bytes()[:4] == b"\x89PNG"


def test_the_command_keeps_its_lock_inside_the_folder_it_writes(baseline: Path, tmp_path: Path):
    # Issue 19: compare left .comparison.lock in the repository root it ran from.
    import os

    from tests.samples import run_evalkit

    other = variant(baseline, tmp_path / "new")
    env = {k: v for k, v in os.environ.items() if k != "EVALKIT_WORKSPACE"}
    result = run_evalkit(
        "compare", str(baseline), str(other), "--out", "cmp", cwd=tmp_path, env=env
    )
    assert result.returncode == 0, result.stderr
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".lock")]
    assert (tmp_path / "cmp/.evalkit.lock").exists()
