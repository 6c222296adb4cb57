"""The small contract between the LLM judge's runner and one model provider.

A :class:`Transport` builds the provider's request body for one checkpoint (that
body is what the response cache keys on), sends one structured-output request
and returns an :class:`Answer` (text, usage, why the model stopped, and the raw
JSON response the cache stores). It classifies every failure as a
:class:`TransportError` of kind ``retryable`` (429, 5xx, timeouts, dropped
connections, unreadable bodies), ``fatal`` (401/403/404: no call can succeed,
the run stops) or ``failed`` (this call only: any other 4xx). Everything else
(concurrency, warm-up, retries, deadline, cache, records, cost) is the runner's.
"""

from __future__ import annotations

import contextvars
import email.utils
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .verdict import StopReason

ErrorKind = Literal["retryable", "fatal", "failed"]
# The runner's usage vocabulary (the Anthropic names; other providers map onto them).
USAGE_FIELDS: tuple[str, ...] = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


@dataclass(frozen=True)
class Answer:
    text: str
    stop: StopReason
    stop_label: str  # the provider's own words, quoted back to the model: "stop_reason=max_tokens"
    usage: Mapping[str, int]  # USAGE_FIELDS
    raw: Mapping[str, Any]  # the JSON response, as cached and recorded
    # What the price table reads (the provider's usage object when it has a breakdown).
    billed: Mapping[str, Any] | None = None


class TransportError(Exception):
    def __init__(self, kind: ErrorKind, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retry_after = retry_after


class Transport(Protocol):
    """One model provider. ``judge_name`` names the judge in records and folders."""

    judge_name: str
    model: str
    key_env: str | None  # the env var holding the API key
    key_purpose: str  # finishes "export it to ...": "judge with Claude"

    def build_request(
        self, *, max_tokens: int, system: str, documents: str, item: str, schema: Mapping[str, Any]
    ) -> dict[str, Any]: ...

    def correction_request(
        self, body: Mapping[str, Any], bad_answer: str, problem_turn: str, *, max_tokens: int
    ) -> dict[str, Any]:
        """``body`` continued with the unusable answer and a user turn stating the problem."""
        ...

    def max_tokens_of(self, body: Mapping[str, Any]) -> int: ...

    def prefix_tokens(self, body: Mapping[str, Any]) -> int:
        """The local estimate of the body's shared, cacheable prefix."""
        ...

    def answer_of(self, raw: Mapping[str, Any]) -> Answer:
        """An :class:`Answer` from a stored raw response (the cache, a correction turn)."""
        ...

    def needs_key(self) -> bool:
        """Whether calls need ``key_env`` set (False for an injected client or a local server)."""
        ...

    def stop_hint(self, message: str) -> str:
        """The one line that ends the run after a fatal error."""
        ...

    async def open(self) -> None: ...

    async def send(self, body: Mapping[str, Any]) -> Answer:
        """One request; raises :class:`TransportError`."""
        ...

    async def close(self) -> None: ...


class SDKClient:
    """The SDK client a transport sends with: one it was given (the caller's, adopted and
    never closed here) or one it made at :meth:`open` (its own, closed at :meth:`close`).
    A transport names how it adopts and how it makes one."""

    def __init__(self, given: Any = None) -> None:
        self._given = given
        self._client: Any = None
        self._owned = False

    def adopt(self, given: Any) -> Any:
        """The client to send with, from the caller's ``given`` one."""
        return given

    def make_client(self) -> Any:
        """A client of this transport's own, when none was given."""
        raise NotImplementedError

    async def open(self) -> None:
        if self._given is not None:
            self._client, self._owned = self.adopt(self._given), False
        else:
            self._client, self._owned = self.make_client(), True

    async def close(self) -> None:
        if self._owned and self._client is not None:
            await self._client.close()
        self._client, self._owned = None, False


def key_value(env: str | None) -> str | None:
    if env is None:
        return None
    return os.environ.get(env, "").strip() or None


def redact(text: str, env: str | None) -> str:
    """``text`` with the value of the key env var (if set and present) replaced."""
    secret = key_value(env)
    if secret and secret in text:
        return text.replace(secret, "[redacted]")
    return text


def redact_json(value: Any, env: str | None) -> Any:
    """``value`` (JSON-ready) with the key redacted from every string in it."""
    secret = key_value(env)
    if not secret:
        return value

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return node.replace(secret, "[redacted]") if secret in node else node
        if isinstance(node, Mapping):
            return {key: walk(item) for key, item in node.items()}
        if isinstance(node, (list, tuple)):
            return [walk(item) for item in node]
        return node

    return walk(value)


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds asked by ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date), or None."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))


# Each judge call sets a list here; a transport's HTTP observer appends one entry per HTTP
# attempt, so an SDK's own retries are counted and recorded too.
HTTP_LOG: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "evalkit_llm_http_log", default=None
)
