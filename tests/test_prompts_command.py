"""``evalkit prompts``: the requests it writes are the ones the runner sends."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from evalkit.checklist import load_range
from evalkit.judges.claude import ClaudeJudge
from evalkit.runs import load_submission
from tests.fake_messages_api import FakeMessagesAPI, Reply
from tests.samples import REPO, copy_samples, run_evalkit

KEY = "sk-ant-test-PROMPTS-0a1b2c"
MODEL = "claude-sonnet-4-6"


def _chk_id(body: dict[str, Any]) -> str:
    item = body["messages"][0]["content"][1]["text"]
    found = re.search(r"Checkpoint to score: (CHK-\d+)", item)
    assert found is not None
    return found.group(1)


def _zero_verdict(body: dict[str, Any], attempt: int) -> Reply:
    item = body["messages"][0]["content"][1]["text"]
    scope = re.search(r"- Scope: (\S+)", item)
    assert scope is not None

    def sub() -> dict[str, Any]:
        return {"quotes": [], "rationale": "Not addressed.", "score": 0}

    verdict: dict[str, Any] = {
        "detection": None,
        "plan": None,
        "penalties": [],
        "addressed_to_evaluator": [],
    }
    if scope.group(1) != "plan-only":
        verdict["detection"] = {"discovery": sub(), "evidence": sub(), "attribution": sub()}
    if scope.group(1) != "detection-only":
        verdict["plan"] = {"correctness": sub(), "completeness": sub()}
    return Reply.text(json.dumps(verdict))


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "no-anthropic-config"))
    return KEY


@pytest.mark.parametrize("prompt_dir", [None, REPO / "evalkit" / "prompts" / "v1"])
def test_written_requests_are_the_ones_the_runner_sends(tmp_path, key, prompt_dir):
    out = tmp_path / "requests"
    args = ["prompts", "--range", "redis-exposed", "--run", "demo", "--model", MODEL]
    args += ["--out", str(out)]
    if prompt_dir is not None:
        args += ["--prompt-dir", str(prompt_dir)]
    # No key is needed to write requests: nothing is sent.
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    result = run_evalkit(*args, cwd=REPO, env=env)
    assert result.returncode == 0, result.stderr
    assert "12 requests written" in result.stdout

    rng = load_range(REPO / "ranges", "redis-exposed")
    submission = load_submission(REPO / "runs", "demo", rng)
    with FakeMessagesAPI(_zero_verdict) as api:
        judge = ClaudeJudge(
            MODEL, cache_dir=None, base_url=api.url, prompt_dir=prompt_dir, warm_cache=False
        )
        asyncio.run(judge.judge(rng, submission))
        sent = {_chk_id(r["body"]): r["body"] for r in api.requests}

    assert sorted(sent) == sorted(chk.id for chk in rng.checkpoints)
    system = (out / "system.md").read_text(encoding="utf-8")
    documents = (out / "documents.md").read_text(encoding="utf-8")
    for chk_id, body in sent.items():
        written = json.loads((out / "requests" / f"{chk_id}.json").read_text(encoding="utf-8"))
        assert written == body, chk_id
        assert body["system"] == system
        assert body["messages"][0]["content"][0]["text"] == documents
        item = (out / "items" / f"{chk_id}.md").read_text(encoding="utf-8")
        assert body["messages"][0]["content"][1]["text"] == item
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["prompt_sha256"] == judge.prompts.sha256
    assert manifest["checkpoints"] == [chk.id for chk in rng.checkpoints]
    assert manifest["inputs"]["report"] == submission.report.sha256
    schema = json.loads((out / "verdict.schema.json").read_text(encoding="utf-8"))
    assert schema == next(iter(sent.values()))["output_config"]["format"]["schema"]


def test_a_changed_prompt_changes_the_written_requests(tmp_path):
    prompt = tmp_path / "v2"
    prompt.mkdir()
    v1 = REPO / "evalkit" / "prompts" / "v1"
    (prompt / "system.md").write_text(
        (v1 / "system.md").read_text(encoding="utf-8") + "\nBe strict.\n", encoding="utf-8"
    )
    (prompt / "item.md").write_text((v1 / "item.md").read_text(encoding="utf-8"), "utf-8")
    for name, prompt_dir in (("a", v1), ("b", prompt)):
        result = run_evalkit(
            "prompts",
            "--range",
            "weak-baseline",
            "--run",
            "demo",
            "--prompt-dir",
            str(prompt_dir),
            "--out",
            str(tmp_path / name),
            cwd=REPO,
            env=os.environ,
        )
        assert result.returncode == 0, result.stderr
    assert (tmp_path / "b" / "system.md").read_text(encoding="utf-8").endswith("Be strict.\n")
    a = json.loads((tmp_path / "a" / "manifest.json").read_text(encoding="utf-8"))
    b = json.loads((tmp_path / "b" / "manifest.json").read_text(encoding="utf-8"))
    assert a["prompt_sha256"] != b["prompt_sha256"]
    assert a["prompt_version"] == "v1" and b["prompt_version"] == "v2"


def test_an_unknown_run_is_one_line_and_exit_2_writing_nothing(tmp_path):
    copy_samples(tmp_path)
    out = tmp_path / "out"
    result = run_evalkit(
        "prompts", "--range", "ssh-miner", "--run", "nope", "--out", str(out),
        cwd=tmp_path, env=os.environ,
    )  # fmt: skip
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "nope" in result.stderr
    assert not out.exists()


def test_a_packaged_prompt_version_is_named_by_its_version(tmp_path):
    result = run_evalkit(
        "prompts", "--range", "weak-baseline", "--run", "demo", "--prompt-dir", "v2",
        "--out", str(tmp_path / "v2"), cwd=tmp_path if (tmp_path / "ranges").exists() else REPO,
        env=os.environ,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "v2" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["prompt_version"] == "v2"
    system = (tmp_path / "v2" / "system.md").read_text(encoding="utf-8")
    assert "# What counts as a finding, a step, a risk note" in system


def test_prompt_v3_shows_the_field_it_asks_for(tmp_path):
    out = tmp_path / "v3"
    result = run_evalkit(
        "prompts", "--range", "ssh-miner", "--run", "demo", "--prompt-dir", "v3",
        "--out", str(out), cwd=REPO, env=os.environ,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    schema = json.loads((out / "verdict.schema.json").read_text(encoding="utf-8"))
    assert "addressed_to_evaluator" in schema["required"]
    system = (out / "system.md").read_text(encoding="utf-8")
    assert "# Passages addressed to the evaluator" in system
    # The rubric is rendered into the system prompt, not left as a template variable.
    assert "{{" not in system and "| correctness | 0/1 |" in system
    body = json.loads((out / "requests" / "CHK-01.json").read_text(encoding="utf-8"))
    assert body["output_config"]["format"]["schema"] == schema
