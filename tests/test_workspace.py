"""The workspace: discovery, confined reads and checked outputs (evalkit/workspace.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError, OutputError, RunError
from evalkit.workspace import WORKSPACE_ENV, Workspace, find_workspace
from tests.samples import clean_env, copy_samples, run_evalkit


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(WORKSPACE_ENV, raising=False)
    workspace = copy_samples(tmp_path / "ws", runs=("demo",))
    monkeypatch.chdir(workspace)
    return workspace


def test_the_workspace_is_found_walking_up_from_a_run_folder(ws: Path, monkeypatch):
    assert find_workspace(ws / "runs/demo/ssh-miner") == ws
    monkeypatch.chdir(ws / "runs/demo")
    found = Workspace.find()
    assert (found.root, found.ranges_dir, found.runs_dir) == (ws, ws / "ranges", ws / "runs")
    monkeypatch.setenv(WORKSPACE_ENV, str(ws))
    monkeypatch.chdir(ws.parent)
    assert Workspace.find().runs_dir == ws / "runs"


def test_flags_win_over_discovery_and_are_relative_to_the_working_directory(ws: Path):
    found = Workspace.find(ranges_dir="ranges", runs_dir="elsewhere/runs")
    assert found.ranges_dir == ws / "ranges" and found.runs_dir == ws / "elsewhere/runs"


def test_every_command_finds_the_workspace_from_a_run_folder(ws: Path):
    result = run_evalkit("ranges", cwd=ws / "runs/demo", env=clean_env())
    assert result.returncode == 0, result.stderr
    assert [line.split()[0] for line in result.stdout.splitlines()] == [
        "redis-exposed",
        "ssh-miner",
        "weak-baseline",
    ]


def test_a_missing_folder_says_how_to_point_elsewhere(tmp_path: Path):
    result = run_evalkit("ranges", cwd=tmp_path, env=clean_env())
    assert result.returncode == 2
    assert "--ranges-dir" in result.stderr and WORKSPACE_ENV in result.stderr


def test_each_path_is_read_under_its_root(ws: Path, tmp_path: Path):
    elsewhere = tmp_path / "named"
    workspace = Workspace.find(named=[elsewhere])
    assert workspace.read_root("runs/demo/run.yaml") == ws / "runs"
    assert workspace.read_root(ws / "ranges/ssh-miner/checklist.md") == ws / "ranges"
    assert workspace.read_root(elsewhere / "a.json") == elsewhere
    assert workspace.read_root("configs/a.yaml") == ws
    with pytest.raises(RunError, match="outside the workspace"):
        workspace.read_root(tmp_path / "not-named" / "x.json")


def test_a_link_that_stays_inside_is_read_one_that_leads_out_is_refused(ws: Path, tmp_path: Path):
    workspace = Workspace.find()
    report = ws / "runs/demo/ssh-miner/intrusion-report.md"
    (ws / "runs/demo/alias.md").symlink_to(report)
    assert workspace.read_bytes("runs/demo/alias.md") == report.read_bytes()
    secret = tmp_path / "secret.txt"
    secret.write_text("secret\n")
    (ws / "runs/demo/leak.md").symlink_to(secret)
    with pytest.raises(RunError, match="leads outside") as error:
        workspace.read_bytes("runs/demo/leak.md")
    assert str(secret) not in str(error.value), "the target is none of the input's business"
    assert Workspace.find(allow_outside_inputs=True).read_bytes("runs/demo/leak.md") == b"secret\n"
    with pytest.raises(RunError, match="outside the workspace"):
        workspace.read_bytes("runs/demo/../../../secret.txt")


def test_a_fifo_is_refused_without_blocking(ws: Path):
    os.mkfifo(ws / "runs/demo/ssh-miner/pipe.md")
    with pytest.raises(RunError, match="not a regular file"):
        Workspace.find().read_bytes("runs/demo/ssh-miner/pipe.md")


def test_json_is_read_confined_and_bounded(ws: Path):
    (ws / "runs/deep.json").write_text("[" * 500 + "]" * 500)
    with pytest.raises(EvalkitError, match="deeper than"):
        Workspace.find().read_json("runs/deep.json")
    with pytest.raises(EvalkitError, match="cannot read"):
        Workspace.find().read_json("runs/missing.json")


@pytest.mark.parametrize("out", ["link", "link/sub"])
def test_an_output_folder_through_a_link_is_refused_before_anything(
    ws: Path, tmp_path: Path, out: str
):
    (tmp_path / "elsewhere").mkdir()
    (ws / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(RunError, match="symlink"):
        Workspace.find().check_out(out)
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_an_output_target_is_checked_before_the_first_is_written(ws: Path, tmp_path: Path):
    (tmp_path / "elsewhere").mkdir()
    (ws / "out").mkdir()
    (ws / "out/items").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    workspace = Workspace.find()
    with pytest.raises(RunError, match="symlink"):
        workspace.check_out("out", ["system.md", "items/CHK-01.md"])
    (ws / "afile").write_text("x")
    with pytest.raises(RunError, match="is a file"):
        workspace.check_out("afile")
    made = workspace.make_out("fresh/out", ["a.json"])
    assert made == ws / "fresh/out" and made.is_dir()


def test_writes_stay_in_the_workspace_or_a_named_folder(ws: Path, tmp_path: Path):
    workspace = Workspace.find(named=[tmp_path / "given"])
    assert workspace.write_text("notes/a.md", "a\n").read_text() == "a\n"
    assert workspace.write_text(tmp_path / "given/b.md", "b\n").read_text() == "b\n"
    with pytest.raises(OutputError, match="outside the workspace"):
        workspace.write_text(tmp_path / "not-given/c.md", "c\n")
