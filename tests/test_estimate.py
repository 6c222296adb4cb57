"""``estimate``: the expected cost of a Claude judging run, before running it."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anthropic
import httpx2
import pytest

from evalkit.errors import JudgeError
from evalkit.judges.claude import DEFAULT_PROMPT_DIR, PromptSet
from evalkit.judges.llm.estimate import (
    COUNT_METHOD,
    DEFAULT_OUTPUT_TOKENS_PER_ITEM,
    LOCAL_METHOD,
    Estimate,
    estimate,
)
from tests import test_claude_judge as base
from tests.test_claude_judge import (
    KEY,
    MODEL,
    REPORT,
    judge_for,
    make_range,
    make_submission,
    run,
)

# The fake-server and API-key fixtures, shared with the judge tests.
api_key = base.api_key
serve = base.serve


def tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def local(rng: Any, submission: Any, **kwargs: Any) -> Estimate:
    return asyncio.run(
        estimate(
            rng, submission, model=kwargs.pop("model", MODEL), use_count_tokens=False, **kwargs
        )
    )


def test_local_estimate_follows_the_documented_arithmetic() -> None:
    rng, submission = make_range(5), make_submission()
    prompts = PromptSet.load()
    schema = tokens(json.dumps(prompts.verdict_schema, separators=(",", ":")))
    prefix = tokens(prompts.system()) + schema + tokens(prompts.documents(rng, submission))
    items = sum(tokens(prompts.item(rng, c)) for c in rng.checkpoints)

    result = local(rng, submission)
    assert result.method == LOCAL_METHOD and result.warning is None
    assert (result.items, result.requests) == (5, 5)
    assert result.prefix_tokens == prefix and result.item_tokens == items
    assert result.cached_prefix  # the v1 system prompt alone is over 1,024 tokens
    assert result.cache_creation_input_tokens == prefix
    assert result.cache_read_input_tokens == 4 * prefix
    assert result.input_tokens == items
    assert result.output_tokens == 5 * DEFAULT_OUTPUT_TOKENS_PER_ITEM
    expected = (items * 3 + 5 * 350 * 15 + prefix * 3.75 + 4 * prefix * 0.30) / 1e6
    assert result.cost_usd == pytest.approx(expected, abs=1e-6)
    uncached = ((items + 5 * prefix) * 3 + 5 * 350 * 15) / 1e6
    assert result.cost_without_cache_usd == pytest.approx(uncached, abs=1e-6)
    assert result.cost_usd < result.cost_without_cache_usd
    assert result.as_dict()["total_input_tokens"] == items + 5 * prefix


def test_repeats_multiply_the_requests_and_all_but_the_first_read_the_prefix() -> None:
    rng, submission = make_range(2), make_submission()
    once, thrice = local(rng, submission), local(rng, submission, repeats=3)
    assert (thrice.requests, thrice.repeats) == (6, 3)
    assert thrice.item_tokens == 3 * once.item_tokens
    assert thrice.output_tokens == 3 * once.output_tokens
    assert thrice.cache_creation_input_tokens == once.prefix_tokens
    assert thrice.cache_read_input_tokens == 5 * once.prefix_tokens
    with pytest.raises(JudgeError, match="repeats"):
        local(rng, submission, repeats=0)


def test_output_assumption_scales_the_estimate() -> None:
    rng, submission = make_range(2), make_submission()
    result = local(rng, submission, output_tokens_per_item=100)
    assert result.requests == 2 and result.output_tokens == 200
    assert result.cache_read_input_tokens == result.prefix_tokens


def test_a_prefix_below_the_cacheable_minimum_is_paid_in_full(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    (small / "system.md").write_text("Score it.\n")
    (small / "item.md").write_text((DEFAULT_PROMPT_DIR / "item.md").read_text())
    rng, submission = make_range(3), make_submission()
    result = local(rng, submission, prompt_dir=small)
    assert not result.cached_prefix
    assert result.cache_creation_input_tokens == result.cache_read_input_tokens == 0
    assert result.input_tokens == result.item_tokens + 3 * result.prefix_tokens
    assert result.cost_usd == pytest.approx(result.cost_without_cache_usd)


def test_unknown_model_has_no_cost_and_says_why() -> None:
    result = local(make_range(1), make_submission(), model="claude-imaginary-9")
    assert result.cost_usd is None and result.cost_without_cache_usd is None
    assert "no price for model 'claude-imaginary-9'" in result.warning


def test_count_tokens_estimate_matches_what_the_run_then_uses(serve, api_key, tmp_path) -> None:
    api = serve(min_cacheable_tokens=1024)
    rng, submission = make_range(4), make_submission()
    counted = asyncio.run(
        estimate(rng, submission, model=MODEL, use_count_tokens=True, base_url=api.url)
    )
    assert counted.method == COUNT_METHOD and counted.warning is None
    assert len(api.count_tokens_requests) == 5  # the prefix, then each item
    assert api.request_count == 0  # counting sends no message
    for request in api.count_tokens_requests:
        assert "max_tokens" not in request["body"]
        assert (
            request["body"]["output_config"]["format"]["schema"] == PromptSet.load().verdict_schema
        )

    actual = run(judge_for(api, tmp_path), rng, submission).usage
    assert counted.input_tokens == actual.input_tokens
    assert counted.cache_creation_input_tokens == actual.cache_creation_input_tokens
    assert counted.cache_read_input_tokens == actual.cache_read_input_tokens
    assert counted.requests == actual.requests


def test_count_tokens_needs_the_key(monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(JudgeError, match="ANTHROPIC_API_KEY is not set"):
        asyncio.run(estimate(make_range(1), make_submission(), model=MODEL, use_count_tokens=True))


def test_count_tokens_failure_falls_back_to_the_local_estimate(api_key) -> None:
    async def scenario() -> Estimate:
        client = anthropic.AsyncAnthropic(
            api_key=KEY, base_url="http://127.0.0.1:9", max_retries=0, timeout=2
        )
        try:
            return await estimate(
                make_range(2),
                make_submission(),
                model=MODEL,
                use_count_tokens=True,
                client=client,
            )
        finally:
            await client.close()

    result = asyncio.run(scenario())
    assert result.method == LOCAL_METHOD
    assert "token counting failed" in result.warning and KEY not in result.warning
    assert result.requests == 2


@pytest.mark.parametrize(
    ("error", "status", "expected"),
    [
        (
            anthropic.AuthenticationError,
            401,
            "authentication failed: check ANTHROPIC_API_KEY (HTTP 401: refused)",
        ),
        (anthropic.PermissionDeniedError, 403, "permission denied (HTTP 403): refused"),
        (
            anthropic.NotFoundError,
            404,
            f"model '{MODEL}' not found: check --model (HTTP 404: refused)",
        ),
    ],
)
def test_count_tokens_auth_or_model_failure_is_a_judge_error(
    api_key, error: type[anthropic.APIStatusError], status: int, expected: str
) -> None:
    # As in a judging run: no estimate can be right when no request can be made.
    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages/count_tokens")
    response = httpx2.Response(status, request=request)

    class Messages:
        async def count_tokens(self, **params: Any) -> Any:
            raise error("refused", response=response, body=None)

    class Client:
        messages = Messages()

    with pytest.raises(JudgeError) as caught:
        asyncio.run(
            estimate(
                make_range(1),
                make_submission(),
                model=MODEL,
                use_count_tokens=True,
                client=Client(),
            )
        )
    assert str(caught.value) == expected


def test_a_failed_count_stops_the_others_before_the_client_is_closed(api_key, monkeypatch) -> None:
    in_flight_at_close: list[int] = []

    class Messages:
        in_flight = 0
        completed = 0

        async def count_tokens(self, **params: Any) -> Any:
            self.in_flight += 1
            try:
                if len(params["messages"][0]["content"]) == 1:  # the prefix: fails first
                    await asyncio.sleep(0.01)
                    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages/count_tokens")
                    raise anthropic.APIConnectionError(request=request)
                await asyncio.sleep(3)
                self.completed += 1
                return SimpleNamespace(input_tokens=100)
            finally:
                self.in_flight -= 1

    class OwnedClient:
        def __init__(self, **options: Any) -> None:
            self.messages = Messages()

        async def close(self) -> None:
            in_flight_at_close.append(self.messages.in_flight)
            completed_at_close.append(self.messages.completed)

    completed_at_close: list[int] = []
    monkeypatch.setattr(anthropic, "AsyncAnthropic", OwnedClient)
    result = asyncio.run(
        estimate(make_range(3), make_submission(), model=MODEL, use_count_tokens=True)
    )
    assert completed_at_close == [0]  # the slow counts were cancelled, not awaited
    assert result.method == LOCAL_METHOD and "APIConnectionError" in result.warning
    assert in_flight_at_close == [0]


def test_the_judge_warms_the_cache_exactly_when_the_estimate_says_it_is_cached(
    serve, api_key, tmp_path
) -> None:
    # One prefix estimate (system, schema, documents) for both: with a short system prompt, a
    # report padded to the cacheable minimum is cached by the estimate and warmed by the judge.
    small = tmp_path / "small"
    small.mkdir()
    (small / "system.md").write_text("Score it.\n")
    (small / "item.md").write_text((DEFAULT_PROMPT_DIR / "item.md").read_text())
    rng = make_range(2)

    def padded(chars: int) -> Any:
        return make_submission(report=REPORT + "x" * chars)

    def cached(chars: int) -> bool:
        return local(rng, padded(chars), prompt_dir=small).cached_prefix

    low, high = 0, 20_000  # find the shortest padding that is cached
    assert not cached(low) and cached(high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if cached(middle) else (middle, high)

    def gap(chars: int) -> float:
        """Seconds between the two requests' arrivals: the latency when the first was alone."""
        api = serve(latency=0.25)
        judge = judge_for(api, tmp_path, prompt_dir=small, cache_dir=None, concurrency=2)
        run(judge, rng, padded(chars))
        first, second = sorted(r["received_at"] for r in api.requests)
        first_answer = min(answer["answered_at"] for answer in api.answered)
        return second - first, second < first_answer

    seconds, overlapped = gap(high)
    assert seconds >= 0.25 and not overlapped  # cached: the first call warmed the cache alone
    seconds, overlapped = gap(low)
    assert overlapped  # not cached: no reason to wait; both were in flight at once
