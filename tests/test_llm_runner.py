"""The LLM judge's runner, run over every transport against its fake server.

One suite, parametrised over the Anthropic and the OpenAI-compatible transports:
concurrency, warm-up, retries, the correction turn, the response cache, records,
cost, the key's redaction and repeats.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evalkit.errors import JudgeError
from evalkit.judges import make_judge
from evalkit.judges.llm.runner import LLMJudge
from tests.fake_messages_api import FakeMessagesAPI, Reply
from tests.fake_openai_api import FakeOpenAIAPI, OAReply
from tests.test_claude_judge import (
    MODEL,
    QUOTE_PLAN,
    QUOTE_REPORT,
    make_range,
    make_submission,
    verdict_for,
)

KEYS = {"claude": "sk-ant-test-SECRET-0123456789", "openai-compatible": "sk-oa-test-SECRET-987"}
OPENAI_MODEL = "local-judge-7b"  # not in the price table: its cost is unknown
# A long report, so the shared prefix is long enough for the fakes to cache it.
LONG_REPORT = make_submission().report.text + "\n" + "Timeline line with detail.\n" * 400


@dataclass
class Provider:
    name: str
    start: Callable[[Callable[[dict[str, Any], int], Any]], Any]
    text: Callable[[str], Any]
    truncated: Callable[[str], Any]
    refused: Callable[[], Any]
    rate_limited: Callable[[float], Any]
    server_error: Callable[[], Any]
    malformed: Callable[[], Any]
    auth_error: Callable[[], Any]
    item_text: Callable[[dict[str, Any]], str]
    turns: Callable[[dict[str, Any]], int]
    max_tokens: Callable[[dict[str, Any]], int]
    cached_tokens_key: str
    judge: Callable[..., LLMJudge]
    bodies: Callable[[Any], list[dict[str, Any]]]  # the request bodies the fake received


def _claude_judge(api: Any, tmp_path: Path, **overrides: Any) -> LLMJudge:
    options: dict[str, Any] = {
        "base_url": api.url,
        "cache_dir": tmp_path / "cache",
        "max_retries": 0,
        "timeout_s": 5,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
        **overrides,
    }
    from evalkit.judges.claude import ClaudeJudge

    return ClaudeJudge(MODEL, **options)


def _openai_judge(api: Any, tmp_path: Path, **overrides: Any) -> LLMJudge:
    from evalkit.judges.llm.openai_compat import openai_compatible_judge

    options: dict[str, Any] = {
        "base_url": api.url,
        "cache_dir": tmp_path / "cache",
        "timeout_s": 5,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
        **overrides,
    }
    judge: LLMJudge = openai_compatible_judge(OPENAI_MODEL, **options)
    return judge


CLAUDE = Provider(
    name="claude",
    start=lambda responder: FakeMessagesAPI(responder).start(),
    text=Reply.text,
    truncated=lambda text: Reply.truncated(text),
    refused=lambda: Reply.refusal(),
    rate_limited=lambda seconds: Reply.rate_limited(seconds),
    server_error=Reply.server_error,
    malformed=lambda: Reply.malformed(),
    auth_error=Reply.auth_error,
    item_text=lambda body: body["messages"][0]["content"][1]["text"],
    turns=lambda body: len(body["messages"]),
    max_tokens=lambda body: body["max_tokens"],
    cached_tokens_key="cache_read_input_tokens",
    judge=_claude_judge,
    bodies=lambda api: [r["body"] for r in api.requests],
)
OPENAI = Provider(
    name="openai-compatible",
    start=lambda responder: FakeOpenAIAPI(responder).start(),
    text=OAReply.text,
    truncated=lambda text: OAReply.truncated(text),
    refused=lambda: OAReply.refused(),
    rate_limited=lambda seconds: OAReply.rate_limited(seconds),
    server_error=OAReply.server_error,
    malformed=OAReply.malformed,
    auth_error=OAReply.auth_error,
    item_text=lambda body: body["messages"][1]["content"],
    turns=lambda body: len(body["messages"]) - 1,  # not counting the system message
    max_tokens=lambda body: body["max_tokens"],
    cached_tokens_key="cache_read_input_tokens",
    judge=_openai_judge,
    bodies=lambda api: api.requests,
)


@pytest.fixture(params=[CLAUDE, OPENAI], ids=lambda p: p.name)
def provider(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Provider:
    p: Provider = request.param
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "no-anthropic-config"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEYS["claude"])
    monkeypatch.setenv("OPENAI_API_KEY", KEYS["openai-compatible"])
    return p


@pytest.fixture
def serve(provider: Provider) -> Iterator[Callable[..., Any]]:
    started: list[Any] = []

    def _serve(responder: Callable[[dict[str, Any], int], Any] | None = None) -> Any:
        api = provider.start(responder or (lambda body, attempt: good(provider, body)))
        started.append(api)
        return api

    yield _serve
    for api in started:
        api.stop()


def item_of(provider: Provider, body: dict[str, Any]) -> tuple[str, str]:
    item = provider.item_text(body)
    chk = re.search(r"Checkpoint to score: (CHK-\d+)", item)
    scope = re.search(r"- Scope: (\S+)", item)
    assert chk and scope, item
    return chk.group(1), scope.group(1)


def answer_for(provider: Provider, body: dict[str, Any], value: int = 1, note: str = "ok") -> str:
    # verdict_for reads the item block in the Anthropic layout; hand it that layout.
    chk, scope = item_of(provider, body)
    shim = {
        "messages": [{"content": [{}, {"text": f"Checkpoint to score: {chk}\n- Scope: {scope}"}]}]
    }
    return json.dumps(verdict_for(shim, value, note))


def good(provider: Provider, body: dict[str, Any]) -> Any:
    return provider.text(answer_for(provider, body))


def run(judge: LLMJudge, n: int = 3, report: str | None = None, **kwargs: Any) -> Any:
    submission = make_submission(report) if report else make_submission()
    return asyncio.run(judge.judge(make_range(n), submission, **kwargs))


def test_every_item_is_scored_and_costed(provider: Provider, serve: Any, tmp_path: Path) -> None:
    api = serve()
    result = run(provider.judge(api, tmp_path))
    assert [v.status for v in result.verdicts] == ["scored"] * 3
    assert api.request_count == 3
    assert result.verdicts[0].detection["discovery"].quotes == (QUOTE_REPORT,)
    assert result.verdicts[1].plan is None
    assert result.usage.requests == 3 and result.usage.input_tokens > 0
    if provider is CLAUDE:
        assert result.usage.cost_usd is not None and result.usage.cost_usd > 0
    else:
        assert result.usage.cost_usd is None  # an unknown price stays unknown
    record = result.records[0]
    assert set(record) >= {"chk_id", "sample", "attempt", "turn", "cache_key", "usage", "cost_usd"}
    assert record["cached"] is False and record["response"] is not None


def test_concurrency_bound_is_respected(provider: Provider, serve: Any, tmp_path: Path) -> None:
    lock = threading.Lock()
    state = {"now": 0, "max": 0}

    def responder(body: dict[str, Any], attempt: int) -> Any:
        import time

        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.05)
        with lock:
            state["now"] -= 1
        return good(provider, body)

    api = serve(responder)
    result = run(provider.judge(api, tmp_path, concurrency=3, warm_cache=False), n=9)
    assert all(v.status == "scored" for v in result.verdicts)
    assert state["max"] == 3


def test_warm_up_sends_the_first_call_alone_and_later_calls_read_the_cache(
    provider: Provider, serve: Any, tmp_path: Path
) -> None:
    lock = threading.Lock()
    state = {"now": 0, "first_alone": True, "seen": 0}

    def responder(body: dict[str, Any], attempt: int) -> Any:
        import time

        with lock:
            state["seen"] += 1
            first = state["seen"] == 1
            state["now"] += 1
        time.sleep(0.05)
        with lock:
            if first and state["now"] > 1:
                state["first_alone"] = False
            state["now"] -= 1
        return good(provider, body)

    api = serve(responder)
    result = run(
        provider.judge(api, tmp_path, concurrency=4, warm_cache=True), n=5, report=LONG_REPORT
    )
    assert state["first_alone"]
    reads = [r["usage"][provider.cached_tokens_key] for r in result.records]
    assert reads[0] == 0 and all(n > 0 for n in reads[1:])


def test_retries_honour_retry_after_and_server_errors(
    provider: Provider, serve: Any, tmp_path: Path
) -> None:
    def responder(body: dict[str, Any], attempt: int) -> Any:
        chk, _ = item_of(provider, body)
        if attempt == 0:
            return provider.rate_limited(0.2) if chk == "CHK-01" else provider.server_error()
        return good(provider, body)

    api = serve(responder)
    judge = provider.judge(api, tmp_path, backoff_base_s=0, backoff_max_s=0)
    waits: list[float] = []
    judge._backoff = lambda failures, retry_after, original=judge._backoff: (  # type: ignore[method-assign]
        waits.append(original(failures, retry_after)) or waits[-1]
    )
    result = run(judge, n=2)
    assert [v.status for v in result.verdicts] == ["scored", "scored"]
    assert api.request_count == 4
    assert [r["attempt"] for r in result.records] == [1, 2, 1, 2]
    assert "429" in result.records[0]["error"] and "500" in result.records[2]["error"]
    assert max(waits) >= 0.2  # retry-after honoured, although the backoff itself is 0


def test_malformed_bodies_are_retried(provider: Provider, serve: Any, tmp_path: Path) -> None:
    def responder(body: dict[str, Any], attempt: int) -> Any:
        return provider.malformed() if attempt == 0 else good(provider, body)

    api = serve(responder)
    result = run(provider.judge(api, tmp_path), n=1)
    assert result.verdicts[0].status == "scored"
    assert result.records[0]["error"].startswith("malformed response")


@pytest.mark.parametrize("problem", ["not json", "truncated", "refused"])
def test_the_one_correction_turn(
    provider: Provider, serve: Any, tmp_path: Path, problem: str
) -> None:
    def responder(body: dict[str, Any], attempt: int) -> Any:
        if provider.turns(body) > 1:
            return good(provider, body)
        if problem == "truncated":
            return provider.truncated(answer_for(provider, body))
        if problem == "refused":
            return provider.refused()
        return provider.text("no json here")

    api = serve(responder)
    result = run(provider.judge(api, tmp_path, max_tokens=100), n=1)
    assert result.verdicts[0].status == "scored"
    first, second = provider.bodies(api)
    assert provider.turns(second) == 3
    assert provider.max_tokens(second) == (200 if problem == "truncated" else 100)
    assert [r["turn"] for r in result.records] == [1, 2]
    assert result.records[0]["error"].startswith("invalid answer")


def test_a_second_unusable_answer_fails_only_its_item(
    provider: Provider, serve: Any, tmp_path: Path
) -> None:
    def responder(body: dict[str, Any], attempt: int) -> Any:
        chk, _ = item_of(provider, body)
        return provider.text("nope") if chk == "CHK-02" else good(provider, body)

    api = serve(responder)
    result = run(provider.judge(api, tmp_path))
    assert [v.status for v in result.verdicts] == ["scored", "error", "scored"]
    assert "no usable answer after one retry" in result.verdicts[1].error


def test_the_response_cache_makes_a_rerun_free(
    provider: Provider, serve: Any, tmp_path: Path
) -> None:
    api = serve()
    first = run(provider.judge(api, tmp_path))
    again = run(provider.judge(api, tmp_path))
    assert api.request_count == 3
    assert again.verdicts == first.verdicts
    assert all(r["cached"] for r in again.records)
    assert again.usage.cached_responses == 3 and again.usage.cost_usd == 0


def test_a_fatal_error_stops_the_run(provider: Provider, serve: Any, tmp_path: Path) -> None:
    api = serve(lambda body, attempt: provider.auth_error())
    with pytest.raises(JudgeError, match="authentication failed"):
        run(provider.judge(api, tmp_path, concurrency=1))
    assert api.request_count == 1


def test_the_key_is_redacted_from_verdicts_records_and_cache(
    provider: Provider, serve: Any, tmp_path: Path
) -> None:
    key = KEYS[provider.name]
    api = serve(lambda body, attempt: provider.text(answer_for(provider, body, note=f"key {key}")))
    result = run(provider.judge(api, tmp_path), n=1)
    verdict = result.verdicts[0]
    assert verdict.status == "scored"
    assert "[redacted]" in verdict.detection["discovery"].rationale
    assert key not in json.dumps(result.records)
    cached = [p.read_text() for p in (tmp_path / "cache").rglob("*.json")]
    assert len(cached) == 1 and key not in cached[0]


def test_repeats_take_the_majority_with_one_cache_entry_per_sample(
    provider: Provider, serve: Any, tmp_path: Path
) -> None:
    counter = {"n": 0}
    lock = threading.Lock()

    def responder(body: dict[str, Any], attempt: int) -> Any:
        with lock:
            counter["n"] += 1
            n = counter["n"]
        return provider.text(answer_for(provider, body, value=0 if n == 1 else 1))

    api = serve(responder)
    result = run(provider.judge(api, tmp_path, repeats=3, concurrency=1), n=1)
    assert api.request_count == 3
    (verdict,) = result.verdicts
    assert verdict.detection["discovery"].value == 1  # two of three
    assert len(result.samples["CHK-01"]) == 3
    assert {r["sample"] for r in result.records} == {0, 1, 2}
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 3
    again = run(provider.judge(api, tmp_path, repeats=3), n=1)
    assert api.request_count == 3 and again.verdicts == result.verdicts


def test_the_registry_builds_each_llm_judge(provider: Provider, serve: Any, tmp_path: Path) -> None:
    api = serve()
    settings: dict[str, Any] = {"cache_dir": tmp_path / "cache", "repeats": 1}
    if provider is OPENAI:
        settings.update(model=OPENAI_MODEL, base_url=api.url)
    judge = make_judge(provider.name, **settings)
    assert judge.info.name == provider.name
    assert QUOTE_PLAN  # the shared fixtures are the Claude judge's
