"""End to end: `evalkit agents` over records that `evalkit batch` wrote with the rules judge,
and the batch leaderboard's intervals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.samples import copy_samples, run_evalkit
from tests.test_research_cli import environment

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_samples(tmp_path_factory.mktemp("agents"), runs=("demo", "agent-b", "agent-c"))
    result = run_evalkit(
        "batch", "--no-notebook", "--runs", "demo", "agent-b", "--workers", "1",
        cwd=root, env=environment(),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return root


def test_the_leaderboard_shows_an_interval_beside_each_mean(workspace: Path):
    text = (workspace / "runs/leaderboard.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith(("| 1 |", "| 2 |"))]
    assert len(rows) == 2
    for row in rows:
        detection, plan = (cell.strip() for cell in row.split("|")[5:7])
        for cell in (detection, plan):
            mean, interval = cell.split(" [")
            low, high = (float(x) for x in interval.rstrip("]").split(", "))
            assert low <= float(mean) <= high


def test_agents_compares_two_runs_range_by_range_and_pooled(workspace: Path):
    result = run_evalkit(
        "agents", "demo", "agent-b", "--judge", "rules", "--out", "ag", "--bootstrap", "300",
        cwd=workspace, env=environment(),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("all ranges, detection: no difference beyond noise, Δ -2.2 pp [")
    assert lines[1].startswith("agent-b plans better on all ranges: Δ +16.2 pp [")
    assert "  agent-b plans better on redis-exposed: Δ +55.0 pp [" in "\n".join(lines)
    data = json.loads((workspace / "ag/agents.json").read_text())
    assert data["ranges"] == ["redis-exposed", "ssh-miner", "weak-baseline"]
    pooled = [r for r in data["rows"] if r["scope"] == "pooled" and r["group"] == "overall"]
    assert [r["dimension"] for r in pooled] == ["detection", "plan"]
    assert pooled[1]["better"] == "agent-b" and pooled[1]["delta_ci95"][0] > 0
    assert any(r["group"].startswith("CAP-") for r in data["rows"])
    report = (workspace / "ag/agents-report.md").read_text()
    assert report.startswith("# Agents A/B: agent-b vs demo (judge rules)")
    assert "nan" not in report and "None" not in report

    one = run_evalkit(
        "agents", "demo", "agent-b", "--ranges", "ssh-miner", "--out", "ag1",
        "--bootstrap", "100", cwd=workspace, env=environment(),
    )  # fmt: skip
    assert one.returncode == 0, one.stderr
    assert json.loads((workspace / "ag1/agents.json").read_text())["ranges"] == ["ssh-miner"]


def test_a_missing_evaluation_is_one_line_and_exit_2(workspace: Path):
    for args, message in (
        (["demo", "agent-c"], "no rules evaluation of agent-c/redis-exposed"),
        (["demo", "agent-b", "--judge", "claude"], "no claude evaluation of demo/redis-exposed"),
        (["demo", "nobody"], "run folder is missing"),
    ):
        result = run_evalkit("agents", *args, "--out", "bad", cwd=workspace, env=environment())
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert not (workspace / "bad").exists()


def test_a_fresh_clone_is_told_what_to_run_first_and_that_works(tmp_path: Path):
    root = copy_samples(tmp_path / "fresh", runs=("demo", "agent-b"))
    result = run_evalkit("agents", "demo", "agent-b", cwd=root, env=environment())
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "(and 5 more)" in result.stderr
    suggested = result.stderr.split("`")[1]
    assert suggested == "evalkit batch --runs demo agent-b --judge rules"
    ran = run_evalkit(*suggested.split()[1:], "--no-notebook", cwd=root, env=environment())
    assert ran.returncode == 0, ran.stderr
    again = run_evalkit("agents", "demo", "agent-b", cwd=root, env=environment())
    assert again.returncode == 0, again.stderr
