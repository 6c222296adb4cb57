"""scores.json: the contract's shape, its schema, and safe writing."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from evalkit import fileio
from evalkit.errors import OutputError
from evalkit.model import Tally
from evalkit.render import (
    load_schema,
    to_scores_dict,
    validate_scores,
    write_outputs,
    write_scores,
)

SKILL_EXAMPLE_KEYS = {
    "meta": {"range", "run_id", "model_under_test", "evaluator_model", "timestamp"},
    "checkpoint": {"chk_id", "name", "detection", "plan", "penalties"},
    "detection": {"discovery", "evidence", "attribution", "total", "max", "rationale"},
    "plan": {"correctness", "completeness", "total", "max", "rationale"},
    "summary": {"total_checkpoints", "detection_only_count", "detection", "plan", "diagnosis"},
}


def by_id(data: dict) -> dict[str, dict]:
    return {item["chk_id"]: item for item in data["checkpoints"]}


def expect_failure(data: dict, json_path: str) -> OutputError:
    with pytest.raises(OutputError) as caught:
        validate_scores(data)
    assert caught.value.json_path == json_path
    assert json_path in str(caught.value)
    assert "\n" not in str(caught.value)
    return caught.value


# --------------------------------------------------------------------------- shape


def test_schema_is_valid_draft_2020_12_and_a_fresh_copy_each_time():
    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    schema["required"] = []
    assert load_schema()["required"] == ["meta", "checkpoints", "summary"]


def test_fixture_evaluations_pass_the_schema(render_evaluation, render_complete_evaluation):
    validate_scores(to_scores_dict(render_evaluation))
    validate_scores(to_scores_dict(render_complete_evaluation))


def test_every_key_of_the_skill_example_keeps_its_name(render_evaluation):
    data = to_scores_dict(render_evaluation)
    assert SKILL_EXAMPLE_KEYS["meta"] <= data["meta"].keys()
    assert SKILL_EXAMPLE_KEYS["summary"] <= data["summary"].keys()
    first = by_id(data)["CHK-01"]
    assert SKILL_EXAMPLE_KEYS["checkpoint"] <= first.keys()
    assert SKILL_EXAMPLE_KEYS["detection"] <= first["detection"].keys()
    assert SKILL_EXAMPLE_KEYS["plan"] <= first["plan"].keys()
    assert {"score", "max", "pct"} <= data["summary"]["detection"].keys()


def test_meta_holds_the_contract_keys(render_evaluation):
    meta = to_scores_dict(render_evaluation)["meta"]
    assert list(meta) == [
        "range",
        "run_id",
        "model_under_test",
        "evaluator_model",
        "timestamp",
        "judge",
        "prompt_version",
        "prompt_sha256",
        "judge_caveat",
        "judge_kind",
        "evalkit_version",
        "inputs",
        "usage",
    ]
    assert meta["judge_caveat"] is None
    assert meta["range"] == "ssh-miner" and meta["run_id"] == "20260411-001"
    assert meta["judge"] == "claude" and meta["evaluator_model"] == "claude-opus-4-7"
    assert meta["inputs"] == render_evaluation.inputs
    assert meta["usage"] == {
        "requests": 4,
        "input_tokens": 12000,
        "output_tokens": 1600,
        "cache_creation_input_tokens": 8000,
        "cache_read_input_tokens": 4000,
        "cost_usd": 0.05,
    }


def test_offline_judge_has_null_prompt_and_zero_usage(render_complete_evaluation):
    meta = to_scores_dict(render_complete_evaluation)["meta"]
    assert meta["prompt_version"] is None and meta["prompt_sha256"] is None
    assert set(meta["usage"].values()) == {0}


def test_dimension_objects_hold_subscores_totals_quotes_withheld_and_penalized(render_evaluation):
    items = by_id(to_scores_dict(render_evaluation))
    detection = items["CHK-01"]["detection"]
    assert list(detection) == [
        "discovery",
        "evidence",
        "attribution",
        "total",
        "max",
        "rationale",
        "quotes",
        "withheld",
        "penalized",
    ]
    assert (detection["discovery"], detection["evidence"], detection["attribution"]) == (1, 0, 1)
    assert (detection["total"], detection["max"]) == (2, 3)
    assert detection["withheld"] == ["evidence"] and detection["penalized"] == []
    assert len(detection["quotes"]) == 2
    assert items["CHK-02"]["detection"]["penalized"] == ["discovery", "evidence"]
    assert items["CHK-02"]["penalties"] == [
        {
            "rule": "fabrication",
            "detail": "CVE-2099-0001 does not exist",
            "quote": "The binary exploits CVE-2099-0001 in sshd.",
        }
    ]


def test_not_applicable_dimensions_are_null(render_evaluation):
    items = by_id(to_scores_dict(render_evaluation))
    assert items["CHK-02"]["scope"] == "detection-only" and items["CHK-02"]["plan"] is None
    assert items["CHK-03"]["scope"] == "plan-only" and items["CHK-03"]["detection"] is None


def test_errored_item_has_status_error_its_reason_and_no_scores(render_evaluation):
    item = by_id(to_scores_dict(render_evaluation))["CHK-04"]
    assert item["status"] == "error"
    assert item["error"] == "judge timed out | after 3 attempts"
    assert item["detection"] is None and item["plan"] is None


def test_dismissed_penalties_are_an_extra_key_only_when_raised(render_evaluation):
    items = by_id(to_scores_dict(render_evaluation))
    assert items["CHK-03"]["dismissed_penalties"] == [
        {
            "rule": "dangerous_advice",
            "detail": "restarts sshd without a fallback",
            "quote": "systemctl restart sshd --force",
            "reason": "its quote is not in the agent's documents",
        }
    ]
    assert "dismissed_penalties" not in items["CHK-01"]


def test_summary_follows_the_contract(render_evaluation):
    summary = to_scores_dict(render_evaluation)["summary"]
    assert summary["detection"] == {"score": 2, "max": 6, "pct": 33.3, "level": "weak"}
    assert summary["plan"] == {"score": 3, "max": 4, "pct": 75.0, "level": "strong"}
    assert summary["diagnosis"] == "Blind fix"
    assert summary["complete"] is False and summary["errored"] == ["CHK-04"]
    assert (summary["total_checkpoints"], summary["detection_only_count"]) == (4, 1)
    assert summary["plan_only_count"] == 1
    assert summary["capabilities"]["CAP-02"] == {
        "name": "Log | auth analysis",
        "items": ["CHK-02", "CHK-03"],
        "detection": {"score": 0, "max": 3, "pct": 0.0},
        "plan": {"score": 1, "max": 2, "pct": 50.0},
    }
    assert summary["top_detection_misses"][0] == {
        "subscore": "evidence",
        "count": 2,
        "items": ["CHK-01", "CHK-02"],
    }
    assert summary["top_plan_defects"] == [
        {"subscore": "completeness", "count": 1, "items": ["CHK-03"]}
    ]


# --------------------------------------------------------------------------- schema failures


def test_missing_key_fails_with_its_path(render_evaluation):
    data = to_scores_dict(render_evaluation)
    del data["checkpoints"][0]["chk_id"]
    error = expect_failure(data, "$.checkpoints[0]")
    assert "'chk_id' is a required property" in str(error)


def test_subscore_of_2_fails_with_its_path(render_evaluation):
    data = to_scores_dict(render_evaluation)
    data["checkpoints"][0]["detection"]["evidence"] = 2
    expect_failure(data, "$.checkpoints[0].detection.evidence")


def test_unknown_scope_fails_with_its_path(render_evaluation):
    data = to_scores_dict(render_evaluation)
    data["checkpoints"][1]["scope"] = "sideways"
    expect_failure(data, "$.checkpoints[1].scope")


def test_first_failure_in_document_order_is_reported(render_evaluation):
    data = to_scores_dict(render_evaluation)
    data["summary"]["diagnosis"] = "Great"
    data["checkpoints"][2]["penalties"] = [{"rule": "rudeness", "detail": "", "quote": ""}]
    error = expect_failure(data, "$.checkpoints[2].penalties[0].rule")
    assert "(and 1 more)" in str(error)


@pytest.mark.parametrize(
    ("mutate", "json_path"),
    [
        (lambda d: d["meta"].update(timestamp="2026-04-11T10:00:00+00:00"), "$.meta.timestamp"),
        (lambda d: d["meta"]["inputs"].update(report_sha256="abc"), "$.meta.inputs.report_sha256"),
        (lambda d: d["checkpoints"][0]["detection"].update(bonus=1), "$.checkpoints[0].detection"),
        (lambda d: d["checkpoints"][0]["plan"].update(max=3), "$.checkpoints[0].plan.max"),
        (lambda d: d["checkpoints"][0].update(status="skipped"), "$.checkpoints[0].status"),
        (lambda d: d["checkpoints"][0].update(error="boom"), "$.checkpoints[0].error"),
        (lambda d: d["checkpoints"][0].update(plan=None), "$.checkpoints[0].plan"),
        (
            lambda d: d["checkpoints"][2].update(detection=d["checkpoints"][0]["detection"]),
            "$.checkpoints[2].detection",
        ),
        (lambda d: d["checkpoints"][3].update(error=None), "$.checkpoints[3].error"),
        (lambda d: d["summary"].update(diagnosis=None), "$.summary.diagnosis"),
        (lambda d: d["summary"]["plan"].update(level="medium"), "$.summary.plan.level"),
        (lambda d: d["summary"].update(complete=True), "$.summary.errored"),
        (
            lambda d: d["summary"]["top_plan_defects"][0].update(subscore="evidence"),
            "$.summary.top_plan_defects[0].subscore",
        ),
    ],
)
def test_schema_is_strict_where_the_contract_is(render_evaluation, mutate, json_path):
    data = to_scores_dict(render_evaluation)
    mutate(data)
    expect_failure(data, json_path)


def test_extra_keys_are_allowed_at_top_levels(render_evaluation):
    data = to_scores_dict(render_evaluation)
    data["repeats"] = {"k": 3}
    data["meta"]["calibration"] = None
    data["checkpoints"][0]["flip_rate"] = 0.0
    data["summary"]["agreement"] = {}
    validate_scores(data)


def test_no_diagnosis_is_valid_when_a_dimension_has_max_0(render_evaluation):
    data = to_scores_dict(render_evaluation)
    data["summary"]["plan"] = {"score": 0, "max": 0, "pct": None, "level": None}
    data["summary"]["diagnosis"] = None
    validate_scores(data)
    data["summary"]["plan"]["pct"] = 0.0
    expect_failure(data, "$.summary.plan.pct")


def test_schema_failure_names_the_file_when_writing(render_evaluation, tmp_path):
    ev = dataclasses.replace(render_evaluation, timestamp="11 April 2026")
    target = tmp_path / "scores.json"
    with pytest.raises(OutputError) as caught:
        write_scores(ev, target)
    assert str(caught.value).startswith(f"{target}: ")
    assert caught.value.json_path == "$.meta.timestamp"


# --------------------------------------------------------------------------- writing


def test_json_round_trip(render_evaluation, tmp_path):
    item = dataclasses.replace(render_evaluation.items[0], name="Détection du mineur")
    ev = dataclasses.replace(render_evaluation, items=(item, *render_evaluation.items[1:]))
    path = write_scores(ev, tmp_path / "out" / "scores.json")
    text = path.read_text(encoding="utf-8")
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert '\n  "meta": {\n    "range": "ssh-miner",' in text
    assert "Détection du mineur" in text  # ensure_ascii=False
    assert json.loads(text) == to_scores_dict(ev)
    validate_scores(json.loads(text))


def test_write_scores_refuses_an_invalid_evaluation_and_keeps_the_old_file(
    render_evaluation, tmp_path
):
    target = tmp_path / "scores.json"
    target.write_text("old\n")
    broken = dataclasses.replace(
        render_evaluation,
        summary=dataclasses.replace(render_evaluation.summary, plan=Tally(3, 4, 75.0, "great")),  # type: ignore[arg-type]
    )
    with pytest.raises(OutputError):
        write_scores(broken, target)
    assert target.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [target]


def test_failed_replace_leaves_the_old_file_and_no_temporary(
    render_evaluation, tmp_path, monkeypatch
):
    target = tmp_path / "scores.json"
    target.write_text("old\n")

    def refuse(src, dst, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(fileio.os, "replace", refuse)
    with pytest.raises(OutputError, match="disk full"):
        write_scores(render_evaluation, target)
    assert target.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [target]


def test_atomic_write_keeps_the_usual_file_mode(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    path = fileio.write_text_atomic(tmp_path / "a.txt", "x\n")
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    assert path.read_bytes() == b"x\n"


# --------------------------------------------------------------------------- write_outputs


def test_write_outputs_writes_scores_report_and_verdicts(render_evaluation, tmp_path):
    paths = write_outputs(render_evaluation, tmp_path / "eval")
    assert paths == {
        "scores": tmp_path / "eval" / "scores.json",
        "report": tmp_path / "eval" / "evaluation-report.md",
        "verdicts": tmp_path / "eval" / "verdicts.json",
    }
    assert json.loads(paths["scores"].read_text()) == to_scores_dict(render_evaluation)
    assert paths["report"].read_text().startswith("# Evaluation: ssh-miner")


def _old_outputs(tmp_path):
    scores, report = tmp_path / "scores.json", tmp_path / "evaluation-report.md"
    scores.write_text("old scores\n")
    report.write_text("old report\n")
    return scores, report


def test_invalid_evaluation_overwrites_neither_file(render_evaluation, tmp_path):
    scores, report = _old_outputs(tmp_path)
    broken = dataclasses.replace(render_evaluation, timestamp="yesterday")
    with pytest.raises(OutputError, match=r"\$\.meta\.timestamp"):
        write_outputs(broken, tmp_path)
    assert scores.read_text() == "old scores\n" and report.read_text() == "old report\n"


def test_report_rendering_failure_overwrites_neither_file(render_evaluation, tmp_path, monkeypatch):
    import evalkit.render as render

    scores, report = _old_outputs(tmp_path)

    def explode(ev):
        raise RuntimeError("template broke")

    monkeypatch.setattr(render, "render_report", explode)
    with pytest.raises(RuntimeError):
        write_outputs(render_evaluation, tmp_path)
    assert scores.read_text() == "old scores\n" and report.read_text() == "old report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evaluation-report.md", "scores.json"]


def test_validation_does_not_mutate_the_data(render_evaluation):
    data = to_scores_dict(render_evaluation)
    before = copy.deepcopy(data)
    validate_scores(data)
    assert data == before


def test_the_docs_name_each_diagnostic_mode_with_its_levels():
    """docs/scores-json.md explains `diagnosis`; it must match the scoring table."""
    from evalkit.model import MODES

    doc = (Path(__file__).resolve().parent.parent / "docs" / "scores-json.md").read_text(
        encoding="utf-8"
    )
    line = next(text for text in doc.splitlines() if text.startswith("| `diagnosis`"))
    for (detection, plan), mode in MODES.items():
        levels = f"both {detection}" if detection == plan else f"detection {detection}, plan {plan}"
        assert f"`{mode}` ({levels})" in line, mode


def test_the_rules_judge_states_its_measured_agreement_in_every_record(tmp_path):
    """scores.json, evaluation-report.md and a replay of them all carry the caveat."""
    from evalkit.checklist import load_range
    from evalkit.judges.file import FileJudge
    from evalkit.judges.rules import MEASURED_AGREEMENT, RulesJudge
    from evalkit.pipeline import evaluate
    from evalkit.render import write_outputs
    from evalkit.runs import load_submission

    repo = Path(__file__).resolve().parent.parent
    rng = load_range(repo / "ranges", "redis-exposed")
    submission = load_submission(repo / "runs", "demo", rng)
    write_outputs(evaluate(rng, submission, RulesJudge()), tmp_path)
    scores = json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))
    assert scores["meta"]["judge_caveat"] == MEASURED_AGREEMENT
    report = (tmp_path / "evaluation-report.md").read_text(encoding="utf-8")
    assert f"> **About this judge.** {MEASURED_AGREEMENT}" in report
    replayed = evaluate(rng, submission, FileJudge.from_record(tmp_path))
    assert replayed.judge.caveat == MEASURED_AGREEMENT
