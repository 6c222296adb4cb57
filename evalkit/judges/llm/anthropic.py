"""The Anthropic Messages API transport (the ``claude`` judge).

The request: ``system`` is the rendered ``system.md``; the user turn has two text
blocks, the shared prefix (``documents.md``) marked ``cache_control:
{"type": "ephemeral"}``, then the item block. Structured output goes through
``output_config.format`` (a JSON schema); no ``temperature``, no forced
``tool_choice``. The SDK retries each call ``max_retries`` times (default 1: it
sleeps inside the concurrency slot, whereas the runner's backoff releases it).
The key is read from ``ANTHROPIC_API_KEY`` by the SDK itself, only when a call
has to be made; it never passes through evalkit.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .transport import HTTP_LOG, Answer, SDKClient, TransportError, retry_after_seconds
from .verdict import StopReason, clip

if TYPE_CHECKING:  # the SDK is imported lazily: building a judge needs no network stack
    from anthropic import AsyncAnthropic

API_KEY_ENV = "ANTHROPIC_API_KEY"
DEFAULT_MAX_RETRIES = 1
RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every status >= 500 (529 overloaded too)
CHARS_PER_TOKEN = 4  # the local token estimate (estimate_tokens, prefix_tokens)

_STOPS: dict[str, StopReason] = {
    "end_turn": "end",
    "stop_sequence": "end",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "model_context_window_exceeded": "context_window",
}


def build_request(
    *,
    model: str,
    max_tokens: int,
    system: str,
    documents: str,
    item: str,
    schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The Messages API body for one checkpoint (no headers: they never leave the SDK).

    ``schema``: the answer schema the prompt asks for (default: the one without
    ``addressed_to_evaluator``, which prompts v1 and v2 ask for)."""
    from .verdict import VERDICT_SCHEMA

    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": system,
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": documents, "cache_control": {"type": "ephemeral"}},
                    {"type": "text", "text": item},
                ],
            }
        ],
        "output_config": {
            "format": {"type": "json_schema", "schema": dict(schema or VERDICT_SCHEMA)}
        },
    }


def correction_request(
    body: Mapping[str, Any], bad_answer: str, problem_turn: str, *, max_tokens: int
) -> dict[str, Any]:
    """``body`` continued with the unusable answer and a user turn stating the problem.

    The first user turn is kept as it is, so the prompt-cache prefix still matches.
    """
    return {
        **body,
        "max_tokens": max_tokens,
        "messages": [
            *body["messages"],
            {"role": "assistant", "content": [{"type": "text", "text": bad_answer or "(empty)"}]},
            {"role": "user", "content": [{"type": "text", "text": problem_turn}]},
        ],
    }


def estimate_tokens(text: str) -> int:
    """The local token estimate: one token per four characters, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def prefix_tokens(body: Mapping[str, Any]) -> int:
    """The local estimate of a request's shared, cacheable prefix.

    The system prompt, the output schema (the API turns it into instructions it adds
    to the prompt) and the documents block, each rounded up on its own. Both the
    warm-up decision and :mod:`.estimate` use it, so they agree.
    """
    schema = json.dumps(body["output_config"]["format"]["schema"], separators=(",", ":"))
    documents = body["messages"][0]["content"][0]["text"]
    return estimate_tokens(body["system"]) + estimate_tokens(schema) + estimate_tokens(documents)


def answer_text(message: Mapping[str, Any]) -> str:
    """The concatenated text blocks of a raw Messages API response."""
    blocks = message.get("content") or []
    return "".join(
        str(block.get("text", ""))
        for block in blocks
        if isinstance(block, Mapping) and block.get("type") == "text"
    )


def answer_of(message: Mapping[str, Any]) -> Answer:
    from .records import coerce_usage

    stop = str(message.get("stop_reason") or "")
    usage = message.get("usage") if isinstance(message.get("usage"), Mapping) else {}
    return Answer(
        text=answer_text(message),
        stop=_STOPS.get(stop, "other" if stop else "end"),
        stop_label=f"stop_reason={stop}",
        usage=coerce_usage(usage),
        raw=message,
        billed=usage,
    )


async def _observe_http(request: Any, call_next: Any) -> Any:
    entries = HTTP_LOG.get()
    started = time.monotonic()
    try:
        response = await call_next(request)
    except Exception as exc:
        if entries is not None:
            entries.append(
                {
                    "retries_taken": request.retries_taken,
                    "status": None,
                    "error": type(exc).__name__,
                    "latency_s": round(time.monotonic() - started, 4),
                }
            )
        raise
    if entries is not None:
        entries.append(
            {
                "retries_taken": request.retries_taken,
                "status": response.status_code,
                "request_id": response.headers.get("request-id"),
                "latency_s": round(time.monotonic() - started, 4),
            }
        )
    return response


def stop_message(exc: Any, model: str) -> str:
    """Why a 401, 403 or 404 from the API stops the run (shared with the estimate)."""
    from .transport import redact

    detail = redact(clip(str(exc.api_message or exc.message), 300), API_KEY_ENV)
    if exc.status_code == 404:
        return f"model {model!r} not found: check --model (HTTP 404: {detail})"
    if exc.status_code == 403:
        return f"permission denied (HTTP 403): {detail}"
    return f"authentication failed: check {API_KEY_ENV} (HTTP {exc.status_code}: {detail})"


def _describe_status(exc: Any) -> str:
    kind = exc.type or type(exc).__name__
    detail = exc.api_message or exc.message
    return f"HTTP {exc.status_code} {kind}: {clip(str(detail), 300)}"


class AnthropicTransport(SDKClient):
    judge_name = "claude"
    key_env: str | None = API_KEY_ENV
    key_purpose = "judge with Claude"

    def __init__(
        self,
        model: str,
        *,
        timeout_s: float = 120,
        max_retries: int = DEFAULT_MAX_RETRIES,
        base_url: str | None = None,
        client: AsyncAnthropic | None = None,
    ) -> None:
        super().__init__(client)
        self.model = model
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.base_url = base_url

    def build_request(
        self, *, max_tokens: int, system: str, documents: str, item: str, schema: Mapping[str, Any]
    ) -> dict[str, Any]:
        return build_request(
            model=self.model,
            max_tokens=max_tokens,
            system=system,
            documents=documents,
            item=item,
            schema=schema,
        )

    def correction_request(
        self, body: Mapping[str, Any], bad_answer: str, problem_turn: str, *, max_tokens: int
    ) -> dict[str, Any]:
        return correction_request(body, bad_answer, problem_turn, max_tokens=max_tokens)

    def max_tokens_of(self, body: Mapping[str, Any]) -> int:
        return int(body["max_tokens"])

    def prefix_tokens(self, body: Mapping[str, Any]) -> int:
        return prefix_tokens(body)

    def answer_of(self, raw: Mapping[str, Any]) -> Answer:
        return answer_of(raw)

    def needs_key(self) -> bool:
        return self._given is None

    def stop_hint(self, message: str) -> str:
        return message  # already worded by stop_message

    def adopt(self, given: Any) -> Any:
        # A copy with this judge's retries, timeout and HTTP observer (appended after the
        # caller's own middleware). It shares the caller's connection pool: not ours to close.
        client = given.with_options(max_retries=self.max_retries, timeout=self.timeout_s)
        return client.with_middleware(_observe_http)

    def make_client(self) -> Any:
        from anthropic import AsyncAnthropic

        # No api_key argument: the SDK reads ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL when
        # base_url is None) itself, so the key never passes through evalkit.
        return AsyncAnthropic(
            base_url=self.base_url,
            max_retries=self.max_retries,
            timeout=self.timeout_s,
            middleware=[_observe_http],
        )

    async def send(self, body: Mapping[str, Any]) -> Answer:
        from anthropic import (
            APIConnectionError,
            APIResponseValidationError,
            APIStatusError,
            AuthenticationError,
            NotFoundError,
            PermissionDeniedError,
        )

        try:
            message = await self._client.messages.create(**body)
        except (AuthenticationError, PermissionDeniedError, NotFoundError) as exc:
            raise TransportError("fatal", stop_message(exc, self.model)) from None
        except APIStatusError as exc:
            retryable = exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
            raise TransportError(
                "retryable" if retryable else "failed",
                _describe_status(exc),
                retry_after=retry_after_seconds(exc.response.headers),
            ) from None
        except APIConnectionError as exc:  # APITimeoutError included
            raise TransportError("retryable", f"{type(exc).__name__}: {exc.message}") from None
        except (APIResponseValidationError, json.JSONDecodeError, UnicodeError) as exc:
            raise TransportError(
                "retryable", f"malformed response: {clip(str(exc), 200)}"
            ) from None
        # A 200 whose JSON is null, a list or a scalar is not parsed into a Message.
        if not hasattr(message, "to_dict"):
            raise TransportError(
                "retryable",
                f"malformed response: unreadable response body ({type(message).__name__})",
            )
        return answer_of(message.to_dict(mode="json"))
