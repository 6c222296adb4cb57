"""The fake Messages API, exercised through the real ``anthropic`` SDK (no network)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx2
import pytest

from tests.fake_messages_api import (
    FakeMessagesAPI,
    Reply,
    by_attempt,
    estimate_input_tokens,
    estimate_tokens,
    scripted,
)

MODEL = "claude-sonnet-4-6"  # not in the SDK's deprecated list, so no DeprecationWarning
KEY = "sk-ant-test-not-a-secret"
USER = [{"role": "user", "content": "Score this report."}]
# ~1500 estimated tokens: above the default 1024-token caching minimum.
LONG_RUBRIC = "Checkpoint: the agent names the attacker's persistence mechanism. " * 90


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeMessagesAPI]]:
    """Start fakes on demand; all are stopped at teardown."""
    started: list[FakeMessagesAPI] = []

    def _serve(**kwargs: Any) -> FakeMessagesAPI:
        api = FakeMessagesAPI(**kwargs).start()
        started.append(api)
        return api

    yield _serve
    for api in started:
        api.stop()


def client_for(api: FakeMessagesAPI, max_retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=api.url, max_retries=max_retries, timeout=5)


def async_client_for(api: FakeMessagesAPI, max_retries: int = 0) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key=KEY, base_url=api.url, max_retries=max_retries, timeout=5
    )


def create(client: anthropic.Anthropic, **overrides: Any) -> anthropic.types.Message:
    kwargs: dict[str, Any] = {"model": MODEL, "max_tokens": 256, "messages": USER}
    return client.messages.create(**(kwargs | overrides))


def cached_system(text: str = LONG_RUBRIC) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]


# -- success paths ----------------------------------------------------------------------------


def test_normal_message_has_sdk_shape_and_usage(serve):
    api = serve(responder=scripted(Reply.text('{"verdict": "pass"}')))
    with client_for(api) as client:
        message = create(client, system="You are a strict judge.")

    assert isinstance(message, anthropic.types.Message)
    assert message.id.startswith("msg_fake_")
    assert message.model == MODEL  # echoed from the request
    assert message.role == "assistant" and message.type == "message"
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text == '{"verdict": "pass"}'
    assert message.stop_reason == "end_turn" and message.stop_sequence is None
    assert message._request_id is not None and message._request_id.startswith("req_fake_")
    expected_in = estimate_tokens("You are a strict judge.") + estimate_tokens(USER[0]["content"])
    assert message.usage.input_tokens == expected_in
    assert message.usage.output_tokens == estimate_tokens('{"verdict": "pass"}')
    assert message.usage.cache_creation_input_tokens == 0
    assert message.usage.cache_read_input_tokens == 0

    (recorded,) = api.requests
    assert api.request_count == 1 and recorded["attempt"] == 0
    assert recorded["body"]["system"] == "You are a strict judge."
    assert recorded["body"]["max_tokens"] == 256
    # SDK 2.14 sends the API key as a bearer token; the fake never keeps its value.
    assert recorded["headers"]["authorization"] == "[redacted]"
    assert KEY not in json.dumps(api.requests)


def test_default_responder_answers_empty_json_object(serve):
    api = serve()
    with client_for(api) as client:
        assert create(client).content[0].text == "{}"


def test_responder_may_return_a_bare_string(serve):
    api = serve(responder=lambda body, attempt: f"attempt {attempt}")
    with client_for(api) as client:
        assert create(client).content[0].text == "attempt 0"
        assert create(client).content[0].text == "attempt 1"  # identical body, so a repeat


def test_refusal_stop_reason(serve):
    api = serve(responder=scripted(Reply.refusal(category="cyber")))
    with client_for(api) as client:
        message = create(client)
    assert message.stop_reason == "refusal"
    assert message.content[0].text == "I can't help with that request."
    assert message.stop_details is not None
    assert message.stop_details.type == "refusal" and message.stop_details.category == "cyber"


def test_truncated_reply_reports_max_tokens(serve):
    full = '{"verdicts": [{"id": "c1", "met": true}, {"id": "c2", "met": false}]}'
    api = serve(responder=scripted(Reply.truncated(full)))
    with client_for(api) as client:
        message = create(client, max_tokens=64)
    assert message.stop_reason == "max_tokens"
    text = message.content[0].text
    assert text == full[: len(full) // 2] and full.startswith(text)
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    assert message.usage.output_tokens == 64  # the API bills the whole budget


def test_truncated_text_is_clipped_to_the_token_budget(serve):
    api = serve(responder=scripted(Reply.truncated("x" * 400, keep=400)))
    with client_for(api) as client:
        message = create(client, max_tokens=10)
    assert message.content[0].text == "x" * 40


def test_count_tokens_uses_the_same_estimate(serve):
    api = serve()
    system = cached_system()
    with client_for(api) as client:
        counted = client.messages.count_tokens(model=MODEL, system=system, messages=USER)
        message = create(client, system=system)
    body = {"model": MODEL, "system": system, "messages": USER}
    assert counted.input_tokens == estimate_input_tokens(body)
    usage = message.usage
    total = usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
    assert total == counted.input_tokens
    assert len(api.count_tokens_requests) == 1
    assert api.request_count == 1  # count_tokens is not a /v1/messages request


def test_extra_body_passes_fields_the_sdk_has_no_kwarg_for(serve):
    api = serve()
    with client_for(api) as client:
        # SDK 2.14's messages.create() has no `temperature` parameter at all.
        with pytest.raises(TypeError, match="temperature"):
            create(client, temperature=0.0)
        create(client, extra_body={"temperature": 0.0}, output_config={"effort": "low"})
    body = api.requests[-1]["body"]
    assert body["temperature"] == 0.0 and body["output_config"] == {"effort": "low"}


# -- prompt caching -----------------------------------------------------------------------------


def test_cache_write_then_read_for_the_same_prefix(serve):
    api = serve()
    system = cached_system()
    prefix_tokens = estimate_tokens(LONG_RUBRIC)
    assert prefix_tokens >= 1024
    with client_for(api) as client:
        first = create(client, system=system).usage
        second = create(
            client,
            system=system,
            messages=[{"role": "user", "content": "A different report after the cached rubric."}],
        ).usage

    assert first.cache_creation_input_tokens == prefix_tokens
    assert first.cache_read_input_tokens == 0
    assert first.input_tokens == estimate_tokens(USER[0]["content"])
    assert second.cache_read_input_tokens == prefix_tokens
    assert second.cache_creation_input_tokens == 0
    assert second.input_tokens == estimate_tokens("A different report after the cached rubric.")


def test_no_caching_below_the_minimum_length(serve):
    api = serve()
    short = cached_system("A short rubric.")
    with client_for(api) as client:
        for _ in range(2):
            usage = create(client, system=short).usage
            assert usage.cache_creation_input_tokens == 0
            assert usage.cache_read_input_tokens == 0
            assert usage.input_tokens == estimate_input_tokens({"system": short, "messages": USER})


def test_min_cacheable_tokens_is_configurable(serve):
    api = serve(min_cacheable_tokens=2)
    short = cached_system("A short rubric.")
    with client_for(api) as client:
        assert create(client, system=short).usage.cache_creation_input_tokens == 4
        assert create(client, system=short).usage.cache_read_input_tokens == 4


def test_cache_is_keyed_by_prefix_and_model(serve):
    api = serve()
    with client_for(api) as client:
        create(client, system=cached_system())
        other_text = create(client, system=cached_system(LONG_RUBRIC + "!")).usage
        other_model = create(client, system=cached_system(), model="claude-haiku-4-5").usage
    assert other_text.cache_read_input_tokens == 0 and other_text.cache_creation_input_tokens
    assert other_model.cache_read_input_tokens == 0 and other_model.cache_creation_input_tokens


def test_longest_cached_breakpoint_is_read_and_the_rest_written(serve):
    api = serve()
    long_user = "The agent's full report. " * 200
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": long_user, "cache_control": {"type": "ephemeral"}},
            ],
        }
    ]
    with client_for(api) as client:
        create(client, system=cached_system())  # writes the system prefix only
        usage = create(client, system=cached_system(), messages=messages).usage
        again = create(client, system=cached_system(), messages=messages).usage
    rubric, report = estimate_tokens(LONG_RUBRIC), estimate_tokens(long_user)
    assert (usage.cache_read_input_tokens, usage.cache_creation_input_tokens) == (rubric, report)
    assert usage.input_tokens == 0
    assert (again.cache_read_input_tokens, again.cache_creation_input_tokens) == (
        rubric + report,
        0,
    )


def test_top_level_cache_control_marks_the_last_block(serve):
    api = serve(min_cacheable_tokens=1)
    with client_for(api) as client:
        first = create(client, system=LONG_RUBRIC, cache_control={"type": "ephemeral"}).usage
        second = create(client, system=LONG_RUBRIC, cache_control={"type": "ephemeral"}).usage
    total = estimate_input_tokens({"system": LONG_RUBRIC, "messages": USER})
    assert (first.cache_creation_input_tokens, first.input_tokens) == (total, 0)
    assert second.cache_read_input_tokens == total


def test_concurrent_requests_all_write_until_a_write_completes(serve):
    api = serve(latency=0.2)

    async def scenario() -> list[Any]:
        async with async_client_for(api) as client:

            async def one() -> Any:
                message = await client.messages.create(
                    model=MODEL, max_tokens=16, messages=USER, system=cached_system()
                )
                return message.usage

            together = await asyncio.gather(one(), one())
            return [*together, await one()]

    first, second, after = asyncio.run(scenario())
    prefix = estimate_tokens(LONG_RUBRIC)
    assert first.cache_creation_input_tokens == second.cache_creation_input_tokens == prefix
    assert after.cache_read_input_tokens == prefix and after.cache_creation_input_tokens == 0


def test_clear_cache_forgets_prefixes(serve):
    api = serve()
    with client_for(api) as client:
        create(client, system=cached_system())
        api.clear_cache()
        assert create(client, system=cached_system()).usage.cache_read_input_tokens == 0


# -- errors and retries -----------------------------------------------------------------------


def test_rate_limit_retry_after_is_honoured_by_sdk_retries(serve):
    api = serve(responder=scripted(Reply.rate_limited(retry_after=0.5), Reply.text("ok")))
    with client_for(api, max_retries=2) as client:
        started = time.monotonic()
        message = create(client)
        elapsed = time.monotonic() - started
    assert message.content[0].text == "ok"
    assert api.request_count == 2
    assert elapsed >= 0.5
    first, retry = api.requests
    assert (first["attempt"], retry["attempt"]) == (0, 1)  # the SDK resends an identical body
    assert retry["headers"]["x-stainless-retry-count"] == "1"


def test_rate_limit_without_retries_raises_rate_limit_error(serve):
    api = serve(responder=scripted(Reply.rate_limited(retry_after=3)))
    with client_for(api) as client, pytest.raises(anthropic.RateLimitError) as caught:
        create(client)
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "3"
    assert caught.value.type == "rate_limit_error"


def test_retry_after_ms_takes_precedence(serve, monkeypatch):
    import anthropic._base_client as sdk_client

    waits: list[float] = []
    real_sleep = time.sleep

    def recorded_sleep(seconds: float) -> None:
        waits.append(seconds)
        real_sleep(seconds)

    # The SDK's own pause before its retry, read where it sleeps: 50 ms, not 30 s.
    monkeypatch.setattr(sdk_client.time, "sleep", recorded_sleep)
    api = serve(
        responder=by_attempt(
            Reply.error(500, "api_error", "boom", {"retry-after-ms": "50", "retry-after": "30"}),
            Reply.text("ok"),
        )
    )
    with client_for(api, max_retries=1) as client:
        assert create(client).content[0].text == "ok"
    assert waits == [0.05]


def test_overloaded_maps_to_overloaded_error(serve):
    api = serve(responder=scripted(Reply.overloaded()))
    with client_for(api) as client, pytest.raises(anthropic.OverloadedError) as caught:
        create(client)
    error = caught.value
    assert isinstance(error, anthropic.InternalServerError)
    assert error.status_code == 529 and error.type == "overloaded_error"
    assert error.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
        "request_id": error.request_id,
    }
    assert error.request_id is not None and error.request_id.startswith("req_fake_")
    assert api.request_count == 1


def test_server_error_maps_to_internal_server_error(serve):
    api = serve(responder=scripted(Reply.server_error()))
    with client_for(api) as client, pytest.raises(anthropic.InternalServerError) as caught:
        create(client)
    assert type(caught.value) is anthropic.InternalServerError
    assert caught.value.status_code == 500 and caught.value.type == "api_error"


def test_auth_error_is_not_retried(serve):
    api = serve(responder=scripted(Reply.auth_error()))
    with client_for(api, max_retries=2) as client, pytest.raises(anthropic.AuthenticationError):
        create(client)
    assert api.request_count == 1


def test_x_should_retry_header_overrides_the_status_policy(serve):
    api = serve(
        responder=scripted(
            Reply.error(
                400,
                "invalid_request_error",
                "retry me",
                {"x-should-retry": "true", "retry-after-ms": "10"},
            ),
            Reply.text("ok"),
        )
    )
    with client_for(api, max_retries=1) as client:
        assert create(client).content[0].text == "ok"
    assert api.request_count == 2


def test_drop_raises_api_connection_error(serve):
    api = serve(responder=scripted(Reply.drop()))
    with client_for(api) as client, pytest.raises(anthropic.APIConnectionError) as caught:
        create(client)
    assert not isinstance(caught.value, anthropic.APITimeoutError)
    assert isinstance(caught.value.__cause__, httpx2.RemoteProtocolError)


def test_drop_is_retried_by_the_sdk(serve):
    api = serve(responder=by_attempt(Reply.drop(), Reply.text("ok")))
    with client_for(api, max_retries=1) as client:
        assert create(client).content[0].text == "ok"
    assert api.request_count == 2


def test_slow_reply_times_out_as_api_timeout_error(serve):
    api = serve(responder=scripted(Reply.text("late", delay=1.0)))
    with client_for(api) as client, pytest.raises(anthropic.APITimeoutError):
        create(client, timeout=0.2)


def test_malformed_json_raises_json_decode_error_without_retrying(serve):
    api = serve(responder=scripted(Reply.malformed(), Reply.text("never reached")))
    # The SDK parses the body outside its error mapping, so the stdlib error escapes as-is
    # (not an anthropic.APIError) and is not retried.
    with client_for(api, max_retries=2) as client, pytest.raises(json.JSONDecodeError):
        create(client)
    assert api.request_count == 1


async def test_malformed_json_async_client_behaves_the_same(serve):
    api = serve(responder=scripted(Reply.malformed()))
    async with async_client_for(api, max_retries=2) as client:
        with pytest.raises(json.JSONDecodeError):
            await client.messages.create(model=MODEL, max_tokens=16, messages=USER)
    assert api.request_count == 1


def test_unknown_path_is_404_with_an_error_body(serve):
    api = serve()
    with client_for(api) as client, pytest.raises(anthropic.NotFoundError) as caught:
        client.models.retrieve("claude-nope")
    assert caught.value.type == "not_found_error"


def test_streaming_is_rejected_as_a_bad_request(serve):
    api = serve()
    with client_for(api) as client, pytest.raises(anthropic.BadRequestError):
        create(client, stream=True)


def test_responder_exception_becomes_a_500(serve):
    def broken(body: dict[str, Any], attempt: int) -> Reply:
        raise KeyError("oops")

    api = serve(responder=broken)
    with client_for(api) as client, pytest.raises(anthropic.InternalServerError):
        create(client)
    assert [type(e) for e in api.responder_errors] == [KeyError]


def test_raw_requests_without_credentials_are_rejected_and_keys_never_kept(serve):
    api = serve()
    body = json.dumps({"model": MODEL, "max_tokens": 8, "messages": USER}).encode()

    def post(headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(
            api.url + "/v1/messages",
            data=body,
            method="POST",
            headers={"content-type": "application/json", **headers},
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, json.load(response)
        except urllib.error.HTTPError as err:
            return err.code, json.load(err)

    status, payload = post({})
    assert status == 401 and payload["error"]["type"] == "authentication_error"
    status, payload = post({"x-api-key": KEY})
    assert status == 200 and payload["type"] == "message"
    assert api.requests[-1]["headers"]["x-api-key"] == "[redacted]"
    assert KEY not in json.dumps(api.requests)


# -- responders and concurrency -----------------------------------------------------------------


def test_scripted_repeats_its_last_reply_and_by_attempt_is_per_body():
    responder = scripted(Reply.overloaded(), Reply.text("a"))
    assert [responder({}, 0).kind for _ in range(3)] == ["error", "message", "message"]
    per_body = by_attempt(Reply.overloaded(), Reply.text("b"))
    assert per_body({}, 0).kind == "error" and per_body({}, 5).output_text == "b"
    with pytest.raises(ValueError):
        scripted()


def test_context_manager_and_start_stop():
    api = FakeMessagesAPI()
    with pytest.raises(RuntimeError):
        _ = api.url
    with api:
        url = api.url
        assert url.startswith("http://127.0.0.1:")
    api.start()
    try:
        with client_for(api) as client:
            assert create(client).content[0].text == "{}"
    finally:
        api.stop()


async def test_eight_concurrent_requests_do_not_serialize_latency(serve):
    # Each request holds its server thread for a while; if the fake served them one at a
    # time, at most one would ever be in flight. Counted, not timed: no wall-clock bound.
    lock = threading.Lock()
    in_flight = [0]
    peak = [0]

    def slow(body: dict[str, Any], attempt: int) -> Reply:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.5)
        with lock:
            in_flight[0] -= 1
        return Reply.text("{}")

    api = serve(responder=slow)
    async with async_client_for(api) as client:
        started = time.monotonic()
        messages = await asyncio.gather(
            *(
                client.messages.create(
                    model=MODEL,
                    max_tokens=16,
                    messages=[{"role": "user", "content": f"report {i}"}],
                )
                for i in range(8)
            )
        )
        elapsed = time.monotonic() - started
    assert len({m.id for m in messages}) == 8
    assert api.request_count == 8
    assert peak[0] == 8  # all eight were served at once
    assert elapsed >= 0.5  # the latency was really paid (a lower bound only)


# -- Message Batches ---------------------------------------------------------------------------


def test_batches_end_after_the_configured_polls_and_serve_a_results_file():
    fates = {"a": "succeeded", "b": "errored", "c": "canceled", "d": "expired"}
    params = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    with FakeMessagesAPI(
        lambda body, attempt: Reply.text("ok"),
        batch_outcome=lambda custom_id, params: fates[custom_id],
        batch_polls=2,
    ) as api:
        client = anthropic.Anthropic(api_key="sk-ant-test-x", base_url=api.url, max_retries=0)
        created = client.messages.batches.create(
            requests=[{"custom_id": c, "params": params} for c in fates]
        )
        statuses = [client.messages.batches.retrieve(created.id) for _ in range(3)]
        results = {
            line.custom_id: line.result for line in client.messages.batches.results(created.id)
        }
        assert api.request_count == 0  # batch requests are not /v1/messages calls
        assert [r["custom_id"] for r in api.batch_creates[0]] == list(fates)
        with pytest.raises(anthropic.BadRequestError):
            client.messages.batches.create(requests=[{"custom_id": "bad id!", "params": params}])
        with pytest.raises(anthropic.NotFoundError):
            client.messages.batches.retrieve("msgbatch_missing")
    assert [s.processing_status for s in statuses] == ["in_progress", "in_progress", "ended"]
    assert statuses[0].request_counts.processing == 4
    assert statuses[-1].request_counts.succeeded == 1 and statuses[-1].request_counts.expired == 1
    assert {c: r.type for c, r in results.items()} == fates
    assert results["a"].message.content[0].text == "ok"
    assert results["a"].message.usage.input_tokens > 0
