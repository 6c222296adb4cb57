"""`evalkit batch --batch-api`: judge requests through the Message Batches API into the cache.

The real SDK talks to the fake Messages API (tests/fake_messages_api.py) on 127.0.0.1, which
serves the batches endpoints with a chosen mix of succeeded / errored / canceled / expired.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path
from typing import Any

import anthropic
import pytest

from evalkit.checklist import load_range
from evalkit.errors import JudgeError
from evalkit.judges.claude import ClaudeJudge
from evalkit.judges.llm import anthropic_batches
from evalkit.judges.llm.cache import ResponseCache
from evalkit.judges.llm.pricing import BATCH_DISCOUNT, cost_usd
from evalkit.judges.llm.runner import BATCH_SOURCE, PendingRequest
from evalkit.runs import load_submission
from tests.fake_messages_api import FakeMessagesAPI, Reply
from tests.samples import REPO, copy_samples, run_evalkit

KEY = "sk-ant-test-BATCH-SECRET-0a1b2c"
MODEL = "claude-sonnet-4-6"
RANGE = "redis-exposed"


def _chk_id(body: dict[str, Any]) -> str:
    item = body["messages"][0]["content"][1]["text"]
    return re.search(r"Checkpoint to score: (CHK-\d+)", item).group(1)


def valid_verdict(body: dict[str, Any], attempt: int) -> Reply:
    """A usable answer for any checkpoint: every sub-score 0, no quotes."""
    item = body["messages"][0]["content"][1]["text"]
    scope = re.search(r"- Scope: (\S+)", item).group(1)

    def sub() -> dict[str, Any]:
        return {"score": 0, "quotes": [], "rationale": "Not addressed."}

    verdict: dict[str, Any] = {
        "detection": None,
        "plan": None,
        "penalties": [],
        "addressed_to_evaluator": [],
    }
    if scope != "plan-only":
        verdict["detection"] = {"discovery": sub(), "evidence": sub(), "attribution": sub()}
    if scope != "detection-only":
        verdict["plan"] = {"correctness": sub(), "completeness": sub()}
    return Reply.text(json.dumps(verdict))


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return KEY


def inputs() -> tuple[Any, Any]:
    rng = load_range(REPO / "ranges", RANGE)
    return rng, load_submission(REPO / "runs", "demo", rng)


def judge_for(api: FakeMessagesAPI, cache_dir: Path, **options: Any) -> ClaudeJudge:
    return ClaudeJudge(MODEL, cache_dir=cache_dir, base_url=api.url, **options)


def client_for(api: FakeMessagesAPI) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=api.url, max_retries=0)


def fill(judge: ClaudeJudge, api: FakeMessagesAPI, **options: Any) -> anthropic_batches.Summary:
    rng, submission = inputs()
    return anthropic_batches.fill_cache(
        judge,
        judge.pending_requests(rng, submission),
        client=client_for(api),
        poll_interval_s=0,
        progress=False,
        **options,
    )


def request(key: str, text: str = "x") -> PendingRequest:
    return PendingRequest(key=key, chk_id="CHK-01", sample=0, body={"text": text})


# --------------------------------------------------------------------------- splitting


def test_split_cuts_at_the_count_limit():
    requests = [request(f"k{i}") for i in range(7)]
    batches = anthropic_batches.split_requests(requests, max_count=3, max_bytes=10**6)
    assert [len(b) for b in batches] == [3, 3, 1]
    assert [r for b in batches for r in b] == requests  # order kept, nothing lost


def test_split_cuts_at_the_size_limit_and_refuses_a_request_too_big_for_any_batch():
    requests = [request(f"k{i}", "y" * 100) for i in range(5)]
    size = anthropic_batches.request_size(requests[0])
    batches = anthropic_batches.split_requests(requests, max_count=100, max_bytes=2 * size + 1)
    assert [len(b) for b in batches] == [2, 2, 1]
    assert all(sum(map(anthropic_batches.request_size, b)) <= 2 * size + 1 for b in batches)
    with pytest.raises(JudgeError, match="above the"):
        anthropic_batches.split_requests(requests, max_bytes=size - 1)


def test_the_api_limits_are_the_documented_ones():
    assert anthropic_batches.MAX_REQUESTS_PER_BATCH == 100_000
    assert anthropic_batches.MAX_BATCH_BYTES == 256 * 1024 * 1024


# --------------------------------------------------------------------------- the pass


def test_custom_ids_are_the_cache_keys_and_params_the_runners_bodies(tmp_path, key):
    with FakeMessagesAPI(valid_verdict) as api:
        judge = judge_for(api, tmp_path / "cache", repeats=2)
        rng, submission = inputs()
        pending = judge.pending_requests(rng, submission)
        assert len(pending) == 2 * len(rng.checkpoints)  # every checkpoint, every sample
        summary = fill(judge, api, max_count=5)
        sent = [r for batch in api.batch_creates for r in batch]
    assert [len(batch) for batch in api.batch_creates][:-1] == [5] * (len(sent) // 5)
    assert [r["custom_id"] for r in sent] == [p.key for p in pending]
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", r["custom_id"]) for r in sent)
    assert [r["params"] for r in sent] == [p.body for p in pending]
    assert summary.counts["succeeded"] == len(pending) and summary.submitted == len(pending)
    # Nothing is left to ask: the same planning now finds every answer in the cache.
    assert judge.pending_requests(rng, submission) == []


def test_results_enter_the_cache_in_the_direct_calls_shape(tmp_path, key):
    with FakeMessagesAPI(valid_verdict) as api:
        direct = judge_for(api, tmp_path / "direct")
        rng, submission = inputs()
        asyncio.run(direct.judge(rng, submission))
        batched = judge_for(api, tmp_path / "batched")
        pending = batched.pending_requests(rng, submission)
        fill(batched, api)
    for item in pending:
        want = ResponseCache(tmp_path / "direct").get(item.key)
        got = ResponseCache(tmp_path / "batched").get(item.key)
        assert want is not None and got is not None
        assert set(got.data) - set(want.data) == {"source", "batch_id"}
        assert got.data["source"] == BATCH_SOURCE
        for field in ("model", "prompt_sha256", "sample", "chk_id", "request", "turns"):
            assert got.data[field] == want.data[field]
    assert KEY not in "".join(p.read_text() for p in (tmp_path / "batched").rglob("*.json"))


def test_the_runner_then_asks_nothing_and_costs_at_the_batch_rate(tmp_path, key):
    with FakeMessagesAPI(valid_verdict) as api:
        judge = judge_for(api, tmp_path / "cache")
        fill(judge, api)
        rng, submission = inputs()
        result = asyncio.run(judge.judge(rng, submission))
        assert api.request_count == 0  # no direct call
    assert all(v.status == "scored" for v in result.verdicts)
    for record in result.records:
        usage = record["response"]["usage"]
        assert record["batch_id"].startswith("msgbatch_") and record["cached"] is True
        assert record["cost_usd"] == pytest.approx(BATCH_DISCOUNT * cost_usd(MODEL, usage))
        assert record["cost_usd"] > 0
    assert result.usage.cost_usd == pytest.approx(
        sum(r["cost_usd"] for r in result.records), abs=1e-5
    )
    assert result.usage.input_tokens > 0


def test_errored_canceled_expired_stay_uncached_and_are_asked_directly(tmp_path, key):
    rng, _ = inputs()
    fates = ["errored", "canceled", "expired"]
    unlucky = {c.id: fates[i] for i, c in enumerate(rng.checkpoints[:3])}

    def outcome(custom_id: str, params: dict[str, Any]) -> str:
        return unlucky.get(_chk_id(params), "succeeded")

    with FakeMessagesAPI(valid_verdict, batch_outcome=outcome, batch_polls=2) as api:
        judge = judge_for(api, tmp_path / "cache")
        summary = fill(judge, api)
        assert api.batch_retrieves >= 3  # polled until the batch ended
        assert summary.counts == {
            "succeeded": len(rng.checkpoints) - 3,
            "errored": 1,
            "canceled": 1,
            "expired": 1,
        }
        assert "3 left uncached" in summary.line()
        _, submission = inputs()
        assert {p.chk_id for p in judge.pending_requests(rng, submission)} == set(unlucky)
        result = asyncio.run(judge.judge(rng, submission))
        asked = sorted(_chk_id(r["body"]) for r in api.requests)
    assert asked == sorted(unlucky)  # exactly those, directly
    assert all(v.status == "scored" for v in result.verdicts)
    direct = [r for r in result.records if r["batch_id"] is None]
    assert sorted(r["chk_id"] for r in direct) == sorted(unlucky)
    assert all(
        r["cost_usd"] == pytest.approx(cost_usd(MODEL, r["response"]["usage"])) for r in direct
    )


def test_an_interrupted_pass_resumes_its_batches_by_id(tmp_path, key):
    class Interrupted(Exception):
        pass

    def stop(seconds: float) -> None:
        raise Interrupted

    with FakeMessagesAPI(valid_verdict, batch_polls=1) as api:
        judge = judge_for(api, tmp_path / "cache")
        with pytest.raises(JudgeError, match="Interrupted"):
            fill(judge, api, sleep=stop)
        [batch_id] = anthropic_batches.open_batches(judge.response_cache())
        summary = fill(judge, api)
        assert len(api.batch_creates) == 1  # nothing submitted twice
    assert summary.submitted == 0 and summary.resumed == summary.requests > 0
    assert summary.batch_ids == [batch_id]
    assert summary.counts["succeeded"] == summary.requests
    assert anthropic_batches.open_batches(judge.response_cache()) == {}


# --------------------------------------------------------------------------- the CLI


def test_batch_api_with_another_judge_is_refused_in_one_line(tmp_path):
    workspace = copy_samples(tmp_path, runs=("demo",))
    result = run_evalkit("batch", "--batch-api", "--judge", "rules", cwd=workspace, env=os.environ)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "--batch-api needs --judge claude" in result.stderr
    assert not list((workspace / "runs").rglob("evaluations"))


@pytest.mark.e2e
def test_cli_batch_api_end_to_end(tmp_path):
    workspace = copy_samples(tmp_path, runs=("demo",))
    rng = load_range(workspace / "ranges", RANGE)
    expired = rng.checkpoints[0].id

    def outcome(custom_id: str, params: dict[str, Any]) -> str:
        return "expired" if _chk_id(params) == expired else "succeeded"

    with FakeMessagesAPI(valid_verdict, batch_outcome=outcome) as api:
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url}
        args = ("batch", "--batch-api", "--judge", "claude", "--model", MODEL, "--ranges", RANGE)
        result = run_evalkit(
            *args, "--workers", "1", "--batch-poll-interval", "0", cwd=workspace, env=env
        )
        assert result.returncode == 0, result.stderr
        asked = [_chk_id(r["body"]) for r in api.requests]
        sent = [r for batch in api.batch_creates for r in batch]
    assert len(sent) == len(rng.checkpoints)
    assert asked == [expired]  # only the expired one went direct, from the notebook
    assert (
        f"{len(rng.checkpoints)} requests in 1 batch(es)" in result.stdout
        and "1 expired; 1 left uncached" in result.stdout
    )
    out = workspace / f"runs/demo/{RANGE}/evaluations/claude-{MODEL}"
    scores = json.loads((out / "scores.json").read_text())
    assert scores["summary"]["complete"] is True
    records = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    batched = [r for r in records if r["batch_id"]]
    assert len(batched) == len(rng.checkpoints) - 1
    expected = sum(r["cost_usd"] for r in records)
    assert scores["meta"]["usage"]["cost_usd"] == pytest.approx(expected, abs=1e-5)
    direct_cost = sum(r["cost_usd"] for r in records if not r["batch_id"])
    full_price = direct_cost + sum(cost_usd(MODEL, r["response"]["usage"]) for r in batched)
    assert scores["meta"]["usage"]["cost_usd"] < full_price
    assert (out / "evaluation.ipynb").is_file()
    leaked = "".join(p.read_text(errors="replace") for p in workspace.rglob("*") if p.is_file())
    assert KEY not in leaked + result.stdout + result.stderr


def test_a_journalled_batch_the_api_no_longer_knows_is_submitted_again(tmp_path, key):
    with FakeMessagesAPI(valid_verdict) as api:
        judge = judge_for(api, tmp_path / "cache")
        rng, submission = inputs()
        keys = [p.key for p in judge.pending_requests(rng, submission)]
        journal = tmp_path / "cache" / anthropic_batches.JOURNAL_FOLDER / "msgbatch_gone.json"
        journal.parent.mkdir(parents=True)
        journal.write_text(json.dumps({"batch_id": "msgbatch_gone", "custom_ids": keys}))
        summary = fill(judge, api)
        assert len(api.batch_creates) == 1
    assert summary.resumed == 0 and summary.submitted == len(keys)
    assert summary.counts["succeeded"] == len(keys)
    assert anthropic_batches.open_batches(judge.response_cache()) == {}
