"""`--judge claude` end to end: the CLI and the notebook, the real SDK, a fake Messages API.

The fake server runs in this process on 127.0.0.1; the CLI, papermill and the notebook's
kernel are separate processes that reach it through ANTHROPIC_BASE_URL, exactly as they
would reach the real API.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import nbformat
import papermill
import pytest

from evalkit.render import validate_scores
from tests.fake_messages_api import FakeMessagesAPI, Reply
from tests.samples import REPO, run_evalkit

KEY = "sk-ant-test-E2E-SECRET-9f8e7d6c5b4a"
MODEL = "claude-sonnet-4-6"
BROKEN_ITEM = "CHK-05"  # the fake always answers this one with unusable JSON
INCOMPLETE = 3  # the exit code of a run written to disk with errored items
INVENTED = "the attacker also installed a kernel rootkit in /lib/modules/evil.ko"

pytestmark = pytest.mark.e2e


def _document(body: dict[str, Any], kind: str) -> str:
    prefix = body["messages"][0]["content"][0]["text"]
    match = re.search(
        rf"<<<BEGIN UNTRUSTED DOCUMENT kind={kind} [^\n]*>>>\n(.*?)\n<<<END UNTRUSTED DOCUMENT",
        prefix,
        re.S,
    )
    assert match, f"no {kind} block in the request"
    return match.group(1)


def _chk_id(body: dict[str, Any]) -> str:
    item = body["messages"][0]["content"][1]["text"]
    return re.search(r"Checkpoint to score: (CHK-\d+)", item).group(1)


def _first_sentence_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip()
        if len(line) > 30 and not line.startswith(("#", "|", "```", "-", ">")):
            return line
    raise AssertionError("no quotable line")


def scripted_judge(body: dict[str, Any], attempt: int) -> Reply:
    """A stand-in for Claude: real quotes for some points, an invented one for evidence."""
    item = body["messages"][0]["content"][1]["text"]
    chk_id = _chk_id(body)
    scope = re.search(r"- Scope: (\S+)", item).group(1)
    if chk_id == BROKEN_ITEM:
        return Reply.text('{"detection": {"discovery": ')
    report_line = _first_sentence_line(_document(body, "analysis-report"))
    plan_line = _first_sentence_line(_document(body, "remediation-plan"))

    def sub(score: int, quote: str | None, why: str) -> dict[str, Any]:
        return {"score": score, "quotes": [quote] if quote else [], "rationale": why}

    verdict: dict[str, Any] = {
        "detection": None,
        "plan": None,
        "penalties": [],
        "addressed_to_evaluator": [],
    }
    if scope != "plan-only":
        verdict["detection"] = {
            "discovery": sub(1, report_line, "The report names the finding."),
            "evidence": sub(1, INVENTED, "Cites an artifact."),
            "attribution": sub(0, None, "No link to the attack chain."),
        }
    if scope != "detection-only":
        verdict["plan"] = {
            "correctness": sub(1, plan_line, "The step is right."),
            "completeness": sub(0, None, "No verification step."),
        }
    return Reply.text(json.dumps(verdict))


@pytest.fixture
def fake_api():
    with FakeMessagesAPI(scripted_judge, min_cacheable_tokens=1024) as api:
        yield api


def cli(workspace: Path, api: FakeMessagesAPI, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url}
    return run_evalkit(*args, cwd=workspace, env=env)


def claude_run(range_id: str, model: str = MODEL) -> tuple[str, ...]:
    """The arguments of `evalkit run` judging the demo run of ``range_id`` with Claude."""
    return (
        "run",
        "--range",
        range_id,
        "--run",
        "demo",
        "--judge",
        "claude",
        "--model",
        model,
        "--quiet",
    )


def all_text_under(*folders: Path) -> str:
    return "\n".join(
        path.read_text(errors="replace")
        for folder in folders
        for path in folder.rglob("*")
        if path.is_file()
    )


def test_cli_claude_judge_scores_grounds_records_and_never_leaks_the_key(workspace, fake_api):
    result = cli(workspace, fake_api, *claude_run("ssh-miner", MODEL))
    assert result.returncode == INCOMPLETE, result.stderr
    out = workspace / f"runs/demo/ssh-miner/evaluations/claude-{MODEL}"
    scores = json.loads((out / "scores.json").read_text())
    validate_scores(scores)

    meta = scores["meta"]
    assert meta["judge"] == "claude" and meta["evaluator_model"] == MODEL
    assert meta["prompt_version"] == "v3" and re.fullmatch(r"[0-9a-f]{64}", meta["prompt_sha256"])
    assert meta["usage"]["requests"] == fake_api.request_count >= 23
    assert meta["usage"]["cache_read_input_tokens"] > 0, "the shared prefix was never cached"
    assert meta["usage"]["cost_usd"] > 0

    items = {item["chk_id"]: item for item in scores["checkpoints"]}
    # The unusable answer is an errored item; the run went on and says it is incomplete.
    assert items[BROKEN_ITEM]["status"] == "error"
    assert scores["summary"]["complete"] is False
    assert scores["summary"]["errored"] == [BROKEN_ITEM]
    # Grounding: the invented evidence quote is withheld, the real one counts.
    chk01 = items["CHK-01"]["detection"]
    assert (chk01["discovery"], chk01["evidence"]) == (1, 0)
    assert chk01["withheld"] == ["evidence"]
    assert "not found verbatim" in chk01["rationale"]

    judgments = (out / "judgments.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in judgments]
    assert {r["chk_id"] for r in records} == set(items)
    assert all(r["request"]["model"] == MODEL for r in records)

    notebook = nbformat.read(out / "evaluation.ipynb", as_version=4)
    errors = [
        o
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]
    assert not errors

    # The key is in none of the outputs, the cache, or what the CLI printed.
    leaked = all_text_under(out, workspace / ".evalkit-cache") + result.stdout + result.stderr
    assert KEY not in leaked and "E2E-SECRET" not in leaked
    assert "INCOMPLETE: 1 item(s) errored" in result.stdout


def test_allow_incomplete_accepts_errored_items(workspace, fake_api):
    result = cli(workspace, fake_api, *claude_run("redis-exposed"), "--allow-incomplete")
    assert result.returncode == 0, result.stderr
    assert "INCOMPLETE: 1 item(s) errored" in result.stdout


def test_an_unreachable_judge_errors_every_item_and_exits_3(workspace):
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    result = run_evalkit(*claude_run("redis-exposed"), "--no-cache", cwd=workspace, env=env)
    assert result.returncode == INCOMPLETE, result.stderr
    out = workspace / f"runs/demo/redis-exposed/evaluations/claude-{MODEL}"
    scores = json.loads((out / "scores.json").read_text())
    assert scores["summary"]["complete"] is False
    assert len(scores["summary"]["errored"]) == len(scores["checkpoints"])


def test_a_key_echoed_by_the_judge_is_redacted_from_every_output(workspace):
    def echoing_judge(body: dict[str, Any], attempt: int) -> Reply:
        reply = scripted_judge(body, attempt)
        echoed = reply.output_text.replace("The report names the finding.", f"key {KEY}")
        return dataclasses.replace(reply, output_text=echoed)

    with FakeMessagesAPI(echoing_judge, min_cacheable_tokens=1024) as api:
        result = cli(workspace, api, *claude_run("ssh-miner"), "--allow-incomplete")
    assert result.returncode == 0, result.stderr
    out = workspace / f"runs/demo/ssh-miner/evaluations/claude-{MODEL}"
    text = all_text_under(out)
    # Redacted (by the judge's answer handling or by the guarded writer), never written.
    assert KEY not in text and "E2E-SECRET" not in text


def test_cached_rerun_asks_again_only_for_the_errored_item(workspace, fake_api):
    args = claude_run("redis-exposed")
    first = cli(workspace, fake_api, *args)
    assert first.returncode == INCOMPLETE, first.stderr
    out = workspace / f"runs/demo/redis-exposed/evaluations/claude-{MODEL}"
    before = json.loads((out / "scores.json").read_text())
    calls = fake_api.request_count

    # The broken item is asked again (errors are never cached), everything else is not.
    second = cli(workspace, fake_api, *args)
    assert second.returncode == INCOMPLETE, second.stderr
    after = json.loads((out / "scores.json").read_text())
    broken_calls = fake_api.request_count - calls
    assert broken_calls == before["meta"]["usage"]["requests"] - (len(before["checkpoints"]) - 1)
    assert {_chk_id(r["body"]) for r in fake_api.requests[calls:]} == {BROKEN_ITEM}
    assert after["checkpoints"] == before["checkpoints"]
    assert after["meta"]["usage"]["requests"] == broken_calls


def test_no_cache_flag_asks_again(workspace, fake_api):
    args = claude_run("weak-baseline")
    assert cli(workspace, fake_api, *args).returncode == INCOMPLETE
    out = workspace / f"runs/demo/weak-baseline/evaluations/claude-{MODEL}"
    first = json.loads((out / "scores.json").read_text())["meta"]["usage"]["requests"]
    calls = fake_api.request_count
    assert calls == first >= 12
    # Every call of the first run is made again: none is served from the cache.
    assert cli(workspace, fake_api, *args, "--no-cache").returncode == INCOMPLETE
    assert fake_api.request_count - calls == first
    assert json.loads((out / "scores.json").read_text())["meta"]["usage"]["requests"] == first


def test_cached_rerun_works_without_an_api_key(workspace, fake_api):
    args = claude_run("weak-baseline")
    assert cli(workspace, fake_api, *args).returncode == INCOMPLETE
    # Drop the broken item from the range, so every answer is in the cache.
    checklist = workspace / "ranges/weak-baseline/checklist.md"
    text = checklist.read_text()
    start = text.index(f"### {BROKEN_ITEM}")
    end = text.index("### CHK-", start + 5)
    checklist.write_text(text[:start] + text[end:])
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    calls = fake_api.request_count
    result = run_evalkit(*args, cwd=workspace, env=env)
    assert result.returncode == 0, result.stderr
    assert fake_api.request_count == calls


def test_notebook_under_papermill_with_the_claude_judge(workspace, fake_api, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    out = workspace / "nb"
    out.mkdir()
    papermill.execute_notebook(
        str(REPO / "notebooks/evaluate.ipynb"),
        str(out / "evaluation.ipynb"),
        parameters={
            "range_id": "redis-exposed",
            "judge": "claude",
            "model": MODEL,
            "ranges_dir": str(workspace / "ranges"),
            "runs_dir": str(workspace / "runs"),
            "cache_dir": str(workspace / "cache"),
            "concurrency": 4,
            "out_dir": str(out),
        },
        cwd=str(out),
        progress_bar=False,
    )
    scores = json.loads((out / "scores.json").read_text())
    assert scores["meta"]["judge"] == "claude"
    assert scores["meta"]["usage"]["requests"] >= 12
    assert (out / "judgments.jsonl").exists()
    notebook_text = (out / "evaluation.ipynb").read_text()
    assert "Cache read" in notebook_text  # the usage table is shown, with human headers
    # The key is in none of the outputs nor the cache.
    assert list((workspace / "cache").rglob("*.json"))
    leaked = all_text_under(out, workspace / "cache")
    assert KEY not in leaked and "E2E-SECRET" not in leaked


def test_an_unpriced_model_reports_a_null_cost_not_a_free_one(workspace, fake_api):
    model = "claude-imaginary-9"
    result = cli(workspace, fake_api, *claude_run("redis-exposed", model))
    assert result.returncode == INCOMPLETE, result.stderr
    out = workspace / f"runs/demo/redis-exposed/evaluations/claude-{model}"
    scores = json.loads((out / "scores.json").read_text())
    validate_scores(scores)
    usage = scores["meta"]["usage"]
    assert usage["requests"] == fake_api.request_count > 0
    assert usage["cost_usd"] is None
    records = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert records and all(r["cost_usd"] is None for r in records)
