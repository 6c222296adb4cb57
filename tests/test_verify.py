"""`evalkit verify`: a record re-derived from its verdicts and inputs, every difference named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalkit
from evalkit.cli import main
from evalkit.render import write_outputs
from evalkit.verify import verify

RANGES = ("ssh-miner", "redis-exposed", "weak-baseline")


def evaluate_into(workspace: Path, range_id: str) -> Path:
    rng = evalkit.load_range(workspace / "ranges", range_id)
    submission = evalkit.load_submission(workspace / "runs", "demo", rng)
    evaluation = evalkit.evaluate(rng, submission, evalkit.make_judge("rules"))
    folder = workspace / "runs/demo" / range_id / "evaluations/rules"
    write_outputs(evaluation, folder)
    return folder


def edit_scores(folder: Path, change) -> None:
    path = folder / "scores.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))


@pytest.mark.parametrize("range_id", RANGES)
def test_fresh_outputs_verify(workspace: Path, range_id: str):
    result = verify(evaluate_into(workspace, range_id))
    assert result.ok, result.differences
    assert result.checked_quotes > 0


def test_cli_exit_codes(workspace: Path, capsys):
    folder = evaluate_into(workspace, "ssh-miner")
    assert main(["verify", str(folder)]) == 0
    assert ": ok (" in capsys.readouterr().out
    edit_scores(folder, lambda d: d["summary"]["detection"].update(pct=99.9))
    assert main(["verify", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "$.summary.detection.pct: recorded 99.9, re-derived" in out
    assert "1 difference(s)" in out


def test_a_tampered_score_is_reported(workspace: Path):
    folder = evaluate_into(workspace, "weak-baseline")

    def raise_a_score(data):
        item = next(
            c for c in data["checkpoints"] if c["detection"] and c["detection"]["total"] == 0
        )
        item["detection"]["discovery"] = 1
        item["detection"]["total"] = 1

    edit_scores(folder, raise_a_score)
    differences = verify(folder).differences
    assert any(".detection.discovery: recorded 1, re-derived 0" in d for d in differences)
    assert any(".detection.total: recorded 1, re-derived 0" in d for d in differences)


def test_a_tampered_quote_is_reported(workspace: Path):
    folder = evaluate_into(workspace, "ssh-miner")

    def change_quote(data):
        item = next(c for c in data["checkpoints"] if c["detection"] and c["detection"]["quotes"])
        item["detection"]["quotes"][0] = "The attacker came from 198.51.100.77 via telnet."

    edit_scores(folder, change_quote)
    differences = verify(folder).differences
    assert any("quote not found verbatim in the report" in d for d in differences)
    assert any(".detection.quotes[0]: recorded" in d for d in differences)


def test_a_tampered_verdict_quote_is_reported(workspace: Path):
    folder = evaluate_into(workspace, "ssh-miner")
    path = folder / "verdicts.json"
    verdicts = json.loads(path.read_text())
    first = next(answer for answer in verdicts if answer["chk_id"] == "CHK-01")
    sub = first["detection"]["discovery"]
    sub["quotes"] = ["a passage the agent never wrote"]
    path.write_text(json.dumps(verdicts))
    differences = verify(folder).differences
    assert any(d.startswith("$.checkpoints[0].detection") for d in differences)


def test_a_changed_input_is_reported(workspace: Path):
    folder = evaluate_into(workspace, "redis-exposed")
    plan = workspace / "runs/demo/redis-exposed/remediation-plan.md"
    plan.write_text(plan.read_text() + "\nOne more line.\n")
    differences = verify(folder).differences
    assert any(d.startswith("$.meta.inputs.plan_sha256: recorded") for d in differences)
    assert all("report_sha256" not in d and "checklist_sha256" not in d for d in differences)


def test_a_folder_outside_a_workspace_is_bad_input(tmp_path: Path):
    (tmp_path / "scores.json").write_text("{}")
    (tmp_path / "verdicts.json").write_text("{}")
    assert main(["verify", str(tmp_path)]) == 2
