"""RunPlan: validated once, the same names for the CLI and the notebook, strict parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import EvalkitError, JudgeError
from evalkit.runplan import RunPlan, find_workspace, parse_bool, parse_int
from tests.samples import copy_samples


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return copy_samples(tmp_path / "ws")


def test_parameters_round_trip(ws: Path) -> None:
    plan = RunPlan.build(
        range_id="ssh-miner",
        run_id="demo",
        judge="claude",
        ranges_dir="ranges",
        runs_dir="runs",
        judge_settings={"model": "claude-x", "concurrency": 3, "use_cache": False},
        base=ws,
    )
    parameters = plan.to_parameters()
    assert parameters["use_cache"] is False and parameters["concurrency"] == 3
    assert parameters["out_dir"] == str(ws / "runs/demo/ssh-miner/evaluations/claude-claude-x")
    assert RunPlan.from_parameters(parameters, workspace=ws) == plan


@pytest.mark.parametrize(
    ("text", "expected"),
    [("false", False), ("False", False), ("no", False), ("0", False), ("true", True), (True, True)],
)
def test_papermill_strings_are_parsed_strictly(ws: Path, text: object, expected: bool) -> None:
    plan = RunPlan.from_parameters(
        {"range_id": "ssh-miner", "run_id": "demo", "judge": "claude", "use_cache": text},
        workspace=ws,
    )
    assert plan.judge_settings["use_cache"] is expected


@pytest.mark.parametrize(
    ("name", "value"), [("use_cache", "maybe"), ("concurrency", "lots"), ("concurrency", "0")]
)
def test_bad_parameter_values_are_clear_errors(ws: Path, name: str, value: str) -> None:
    with pytest.raises(EvalkitError, match=name if value != "0" else ">= 1|at least 1"):
        RunPlan.from_parameters(
            {"range_id": "ssh-miner", "run_id": "demo", "judge": "claude", name: value},
            workspace=ws,
        )


def test_parse_helpers() -> None:
    assert parse_int("n", " 12 ") == 12
    with pytest.raises(EvalkitError):
        parse_int("n", True)
    with pytest.raises(EvalkitError):
        parse_bool("b", "")


@pytest.mark.parametrize(
    ("field", "value"), [("range_id", "../x"), ("run_id", ".."), ("run_id", "a/b")]
)
def test_ids_are_validated_once(ws: Path, field: str, value: str) -> None:
    given = {"range_id": "ssh-miner", "run_id": "demo", field: value}
    with pytest.raises(EvalkitError, match="invalid"):
        RunPlan.from_parameters(given, workspace=ws)


def test_unknown_judge_and_setting(ws: Path) -> None:
    with pytest.raises(JudgeError, match="rules"):
        RunPlan.build(range_id="r", run_id="x", judge="nope", ranges_dir="a", runs_dir="b")
    with pytest.raises(EvalkitError, match="does not take"):
        RunPlan.build(
            range_id="r",
            run_id="x",
            judge="rules",
            ranges_dir="a",
            runs_dir="b",
            judge_settings={"model": "m"},
            base=ws,
        )


def test_the_notebook_ignores_settings_of_other_judges(ws: Path) -> None:
    parameters = {"range_id": "ssh-miner", "run_id": "demo", "judge": "rules", "model": "m"}
    plan = RunPlan.from_parameters(parameters, workspace=ws)
    assert dict(plan.judge_settings) == {}
    assert plan.out_dir == ws / "runs/demo/ssh-miner/evaluations/rules"


def test_a_hostile_model_name_stays_one_folder(ws: Path) -> None:
    plan = RunPlan.build(
        range_id="ssh-miner",
        run_id="demo",
        judge="claude",
        ranges_dir="ranges",
        runs_dir="runs",
        judge_settings={"model": "x/../../../../escaped"},
        base=ws,
    )
    evaluations = ws / "runs/demo/ssh-miner/evaluations"
    assert plan.out_dir.parent == evaluations
    assert plan.out_dir.resolve().parent == evaluations


def test_workspace_is_found_by_walking_up(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_WORKSPACE", raising=False)
    (ws / "notebooks").mkdir()
    assert find_workspace(ws / "notebooks") == ws.resolve()
    monkeypatch.setenv("EVALKIT_WORKSPACE", str(ws / "runs"))
    assert find_workspace(ws / "notebooks") == (ws / "runs").resolve()


def test_relative_folders_resolve_against_the_workspace(ws: Path) -> None:
    parameters = {"range_id": "ssh-miner", "run_id": "demo", "judge": "claude"}
    plan = RunPlan.from_parameters(
        {**parameters, "cache_dir": ".cache", "prompt_dir": ""}, workspace=ws
    )
    assert plan.ranges_dir == ws / "ranges" and plan.runs_dir == ws / "runs"
    assert plan.judge_settings["cache_dir"] == ws / ".cache"
    assert plan.judge_settings["prompt_dir"] is None
