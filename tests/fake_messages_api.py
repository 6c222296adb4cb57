"""A local, standard-library fake of the Anthropic Messages API for tests and benchmarks.

The fake listens on 127.0.0.1 at a free port and is reached by the *real* SDK, so the SDK's
own request building, retry loop, error mapping and response parsing are all exercised::

    from tests.fake_messages_api import FakeMessagesAPI, Reply, scripted

    with FakeMessagesAPI(responder=scripted(Reply.rate_limited(0.2), Reply.text("ok"))) as api:
        client = anthropic.AsyncAnthropic(api_key="sk-ant-test-x", base_url=api.url, max_retries=2)
        ...
        assert api.request_count == 2

Endpoints
    ``POST /v1/messages``               answered by the responder (see below);
    ``POST /v1/messages/count_tokens``  ``{"input_tokens": N}`` from the local estimate;
    ``POST /v1/messages/batches``       creates a Message Batch (``batch_creates`` records it);
    ``GET /v1/messages/batches/{id}``   the batch: ``in_progress`` for its first
                                        ``batch_polls`` retrieves, then ``ended``;
    ``GET .../batches/{id}/results``    the results file (JSONL), one line per request:
                                        ``batch_outcome(custom_id, params)`` picks
                                        succeeded / errored / canceled / expired (default:
                                        succeeded, answered by the responder; a responder
                                        error reply becomes an errored result);
    anything else                       404 with an Anthropic error body.

Responders
    A responder is any callable ``(body: dict, attempt: int) -> Reply`` (a bare ``str`` return is
    accepted as ``Reply.text(str)``). ``attempt`` counts earlier ``/v1/messages`` requests with an
    identical JSON body, so SDK retries of one call see 0, 1, 2, ... Responders are called from
    server threads, possibly concurrently. They compose as ordinary functions, e.g.::

        ok = scripted(Reply.text('{"verdict": "pass"}'))

        def responder(body: dict, attempt: int) -> Reply:
            if "flaky" in str(body["messages"]):      # route on the request content
                return by_attempt(Reply.overloaded(), Reply.text("late"))(body, attempt)
            return ok(body, attempt)

    ``scripted(*replies)`` serves replies in arrival order (global, so nondeterministic across
    concurrent callers); ``by_attempt(*replies)`` picks by ``attempt`` (deterministic per body).

Token accounting
    Tokens are estimated as ``ceil(len(chars) / 4)`` per content unit (each tool definition, each
    system block, each message content block), so prefix counts add up exactly and
    ``input_tokens + cache_creation_input_tokens + cache_read_input_tokens`` always equals what
    ``count_tokens`` reports for the same body. Prompt caching follows the API's rules closely
    enough for cost tests: breakpoints are blocks with ``cache_control: {"type": "ephemeral"}``
    (order: tools, system, messages; a top-level ``cache_control`` marks the last block); a
    breakpoint's prefix is cacheable only if it has >= ``min_cacheable_tokens`` tokens; the
    longest live cached prefix is a read, the rest up to the last cacheable breakpoint is a
    write. A written prefix becomes readable only when the response that wrote it is sent (the
    lookup happens at arrival), so concurrent identical requests all pay the write, as with the
    real API. Entries live for the
    block's ``ttl`` (5 min default, 1 h) and reads refresh them. Caches are keyed by model.
    Not modelled: the 20-block lookback, invalidation by ``tool_choice``/``thinking`` changes,
    images (counted as their JSON text), and streaming (``stream: true`` gets a 400).
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import urlsplit

__all__ = [
    "FakeMessagesAPI",
    "Reply",
    "Responder",
    "by_attempt",
    "estimate_input_tokens",
    "estimate_tokens",
    "scripted",
]

log = logging.getLogger(__name__)

Responder = Callable[[dict[str, Any], int], "Reply | str"]

MESSAGES_PATH = "/v1/messages"
BATCHES_PATH = "/v1/messages/batches"
BATCH_RESULT_TYPES = ("succeeded", "errored", "canceled", "expired")
BatchOutcome = Callable[[str, dict[str, Any]], str]
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"
# Header values that must never be recorded, logged or echoed. SDK 2.14 sends `api_key` as
# `Authorization: Bearer ...`; older SDKs and curl users send `x-api-key`.
SECRET_HEADERS = frozenset({"x-api-key", "authorization"})
REDACTED = "[redacted]"
MAX_BREAKPOINTS = 4  # the API rejects more explicit cache_control blocks than this
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")


# --------------------------------------------------------------------------------------------
# Replies
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """What the fake should answer to one request. Build with the classmethods."""

    kind: Literal["message", "error", "drop", "malformed"]
    output_text: str = ""  # not `text`: that name is the classmethod below
    stop_reason: str | None = "end_turn"
    stop_sequence: str | None = None
    stop_details: Mapping[str, Any] | None = None
    status: int = 200
    error_type: str = ""
    message: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    raw_body: bytes = b""
    delay: float = 0.0  # seconds slept (without blocking other requests) before answering

    # -- successful messages ------------------------------------------------------------------

    @classmethod
    def text(
        cls,
        text: str,
        stop_reason: str = "end_turn",
        *,
        stop_sequence: str | None = None,
        delay: float = 0.0,
    ) -> Reply:
        """A 200 message whose single content block is ``{"type": "text", "text": text}``."""
        return cls(
            "message",
            output_text=text,
            stop_reason=stop_reason,
            stop_sequence=stop_sequence,
            delay=delay,
        )

    @classmethod
    def truncated(cls, text: str, keep: int | None = None, *, delay: float = 0.0) -> Reply:
        """A ``stop_reason="max_tokens"`` message with ``text`` cut to its first ``keep`` chars.

        ``keep`` defaults to half the text (e.g. JSON cut mid-object). The server also clips the
        text to ``max_tokens * 4`` chars and reports ``output_tokens`` equal to the request's
        ``max_tokens``, as the API does when it runs out of budget.
        """
        keep = len(text) // 2 if keep is None else keep
        return cls("message", output_text=text[:keep], stop_reason="max_tokens", delay=delay)

    @classmethod
    def refusal(
        cls,
        text: str = "I can't help with that request.",
        category: str | None = None,
        *,
        delay: float = 0.0,
    ) -> Reply:
        """A ``stop_reason="refusal"`` message, with SDK 2.14's ``stop_details`` filled in."""
        details = {"type": "refusal", "category": category, "explanation": None}
        return cls(
            "message", output_text=text, stop_reason="refusal", stop_details=details, delay=delay
        )

    # -- errors -------------------------------------------------------------------------------

    @classmethod
    def error(
        cls,
        status: int,
        error_type: str,
        message: str,
        headers: Mapping[str, str] | None = None,
        *,
        delay: float = 0.0,
    ) -> Reply:
        """An Anthropic error: ``{"type": "error", "error": {"type": ..., "message": ...}}``."""
        return cls(
            "error",
            stop_reason=None,
            status=status,
            error_type=error_type,
            message=message,
            headers=tuple((headers or {}).items()),
            delay=delay,
        )

    @classmethod
    def rate_limited(cls, retry_after: float = 1.0, *, delay: float = 0.0) -> Reply:
        """429 ``rate_limit_error`` with a ``retry-after`` header (seconds; floats allowed)."""
        # `repr`-free formatting so 1.0 is sent as "1" like the API's integer header.
        value = f"{retry_after:g}"
        return cls.error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
            {"retry-after": value},
            delay=delay,
        )

    @classmethod
    def overloaded(cls, *, delay: float = 0.0) -> Reply:
        """529 ``overloaded_error``."""
        return cls.error(529, "overloaded_error", "Overloaded", delay=delay)

    @classmethod
    def server_error(cls, *, delay: float = 0.0) -> Reply:
        """500 ``api_error``."""
        return cls.error(500, "api_error", "Internal server error", delay=delay)

    @classmethod
    def auth_error(cls, *, delay: float = 0.0) -> Reply:
        """401 ``authentication_error``."""
        return cls.error(401, "authentication_error", "invalid x-api-key", delay=delay)

    @classmethod
    def bad_request(cls, message: str = "invalid request", *, delay: float = 0.0) -> Reply:
        """400 ``invalid_request_error``."""
        return cls.error(400, "invalid_request_error", message, delay=delay)

    # -- transport faults ---------------------------------------------------------------------

    @classmethod
    def drop(cls, *, delay: float = 0.0) -> Reply:
        """Close the connection without sending any response."""
        return cls("drop", stop_reason=None, delay=delay)

    @classmethod
    def malformed(
        cls, body: bytes = b'{"id": "msg_fake", "type": "mess', *, delay: float = 0.0
    ) -> Reply:
        """A 200 ``application/json`` response whose body is not valid JSON."""
        return cls("malformed", stop_reason=None, raw_body=body, delay=delay)

    def with_delay(self, seconds: float) -> Reply:
        """This reply, answered after ``seconds``."""
        return dataclasses.replace(self, delay=seconds)


def scripted(*replies: Reply) -> Responder:
    """A responder serving ``replies`` in arrival order, then repeating the last one."""
    if not replies:
        raise ValueError("scripted() needs at least one Reply")
    counter = itertools.count()
    lock = threading.Lock()

    def responder(body: dict[str, Any], attempt: int) -> Reply:
        with lock:
            index = next(counter)
        return replies[min(index, len(replies) - 1)]

    return responder


def by_attempt(*replies: Reply) -> Responder:
    """A responder answering attempt *n* of each distinct body with ``replies[n]`` (last repeats).

    Unlike :func:`scripted` this is deterministic under concurrency: every distinct request
    gets the same sequence, e.g. ``by_attempt(Reply.overloaded(), Reply.text("ok"))`` makes
    each call fail once and succeed on the SDK's retry.
    """
    if not replies:
        raise ValueError("by_attempt() needs at least one Reply")

    def responder(body: dict[str, Any], attempt: int) -> Reply:
        return replies[min(attempt, len(replies) - 1)]

    return responder


def _default_responder(body: dict[str, Any], attempt: int) -> Reply:
    return Reply.text("{}")


# --------------------------------------------------------------------------------------------
# Token estimate and cache model
# --------------------------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """The fake's deterministic tokenizer: one token per 4 characters, rounded up."""
    return math.ceil(len(text) / 4)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _strip_cache_control(block: Any) -> Any:
    # Markers must not change a prefix's identity: moving a breakpoint later should still hit
    # the cache written by an earlier breakpoint over the same content.
    if isinstance(block, dict):
        return {k: _strip_cache_control(v) for k, v in block.items() if k != "cache_control"}
    if isinstance(block, list):
        return [_strip_cache_control(v) for v in block]
    return block


def _block_text(block: Any) -> str:
    """The characters a block is billed for."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return _canonical(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            return "".join(_block_text(b) for b in content)
        return str(content)
    if kind == "tool_use":
        return str(block.get("name", "")) + _canonical(block.get("input", {}))
    return _canonical(_strip_cache_control(block))


@dataclass(frozen=True)
class _Unit:
    """One billable unit of the prompt, in the API's caching order."""

    identity: Any  # what makes two prefixes equal (section, role, block without markers)
    tokens: int
    cache_control: Mapping[str, Any] | None


def _as_blocks(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return content
    return []


def _units(body: Mapping[str, Any]) -> list[_Unit]:
    units: list[_Unit] = []

    def add(identity_prefix: tuple[Any, ...], block: Any) -> None:
        cc = block.get("cache_control") if isinstance(block, dict) else None
        if not (isinstance(cc, dict) and cc.get("type") == "ephemeral"):
            cc = None
        identity = (*identity_prefix, _strip_cache_control(block))
        units.append(_Unit(identity, estimate_tokens(_block_text(block)), cc))

    for tool in body.get("tools") or []:
        add(("tool",), tool)
    for block in _as_blocks(body.get("system")):
        add(("system",), block)
    for index, message in enumerate(body.get("messages") or []):
        if not isinstance(message, dict):
            continue
        for block in _as_blocks(message.get("content")):
            add(("message", index, message.get("role")), block)
    return units


def estimate_input_tokens(body: Mapping[str, Any]) -> int:
    """Total input tokens the fake bills for ``body`` (what ``count_tokens`` returns)."""
    return sum(unit.tokens for unit in _units(body))


@dataclass(frozen=True)
class _CachePlan:
    """The usage split for one request, and the prefixes to publish once it is answered."""

    input_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    writes: tuple[tuple[str, float], ...]  # (prefix hash, ttl seconds)


def _breakpoints(body: Mapping[str, Any], units: list[_Unit]) -> list[tuple[int, float]]:
    """(unit index, ttl seconds) of every cache breakpoint, in prompt order."""
    points = [(i, u.cache_control) for i, u in enumerate(units) if u.cache_control is not None]
    top = body.get("cache_control")
    if isinstance(top, dict) and top.get("type") == "ephemeral" and units:
        # Automatic caching: the API puts the marker on the last block of the request.
        points = [p for p in points if p[0] != len(units) - 1] + [(len(units) - 1, top)]
    return [(i, TTL_SECONDS.get(str(cc.get("ttl", "5m")), 300.0)) for i, cc in points]


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


class _ApiError(Exception):
    """Raised inside a handler to answer with an Anthropic error body."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status, self.error_type, self.message = status, error_type, message


class FakeMessagesAPI:
    """A fake Anthropic Messages API on ``127.0.0.1`` (see the module docstring).

    Args:
        responder: ``(body, attempt) -> Reply`` for ``POST /v1/messages``; default answers
            ``Reply.text("{}")``.
        latency: seconds added to every request (before the reply's own ``delay``); requests
            sleep in their own threads so latency never serializes concurrent calls.
        min_cacheable_tokens: the smallest prefix, in estimated tokens, that prompt caching
            stores (the API's minimum is 1024 for most models).
        batch_outcome: ``(custom_id, params) -> "succeeded" | "errored" | "canceled" |
            "expired"`` for each Message Batch request (default: all succeed).
        batch_polls: retrieves of a batch that report it ``in_progress`` before it has ended.
        port: 0 picks a free port.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        min_cacheable_tokens: int = 1024,
        batch_outcome: BatchOutcome | None = None,
        batch_polls: int = 1,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.responder: Responder = responder or _default_responder
        self.latency = latency
        self.min_cacheable_tokens = min_cacheable_tokens
        self._host, self._port = host, port
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._answered: list[dict[str, Any]] = []
        self._count_tokens_requests: list[dict[str, Any]] = []
        self._responder_errors: list[BaseException] = []
        self._seen_bodies: dict[str, int] = {}
        self._cache: dict[str, float] = {}  # prefix hash -> monotonic expiry
        self._ids = itertools.count(1)
        self.batch_outcome = batch_outcome
        self.batch_polls = batch_polls
        self._batches: dict[str, dict[str, Any]] = {}
        self._batch_ids = itertools.count(1)
        self._request_ids = itertools.count(1)
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind and serve in a daemon thread; returns self (``api = FakeMessagesAPI().start()``)."""
        if self._server is not None:
            return self
        self._stopping.clear()
        server = _Server((self._host, self._port), _Handler)
        server.api = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-messages-api:{server.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests still sleeping wake up and answer immediately."""
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeMessagesAPI is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """The ``base_url`` to give the SDK."""
        return f"http://{self._host}:{self.port}"

    # -- observations -------------------------------------------------------------------------

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Snapshot of ``POST /v1/messages`` requests, oldest first.

        Each item: ``body`` (parsed JSON), ``headers`` (lower-cased, credentials redacted),
        ``attempt``, ``path`` (with query), ``received_at`` (``time.monotonic()``).
        """
        with self._lock:
            return list(self._requests)

    @property
    def answered(self) -> list[dict[str, Any]]:
        """Snapshot of the ``POST /v1/messages`` requests whose reply delay has run out, so
        the reply went (or was about to go) out: ``body``, ``attempt`` and ``answered_at``
        (``time.monotonic()``, comparable with ``received_at``). A request the
        client gave up on before then is not here, whatever became of its connection."""
        with self._lock:
            return list(self._answered)

    @property
    def request_count(self) -> int:
        """How many ``POST /v1/messages`` requests arrived (retries included)."""
        with self._lock:
            return len(self._requests)

    @property
    def count_tokens_requests(self) -> list[dict[str, Any]]:
        """Snapshot of ``POST /v1/messages/count_tokens`` requests."""
        with self._lock:
            return list(self._count_tokens_requests)

    @property
    def responder_errors(self) -> list[BaseException]:
        """Exceptions raised by the responder (each was answered with a 500 ``api_error``)."""
        with self._lock:
            return list(self._responder_errors)

    @property
    def batch_creates(self) -> list[list[dict[str, Any]]]:
        """The ``requests`` list of each ``POST /v1/messages/batches``, oldest first."""
        with self._lock:
            return [list(batch["requests"]) for batch in self._batches.values()]

    @property
    def batch_retrieves(self) -> int:
        """How many ``GET /v1/messages/batches/{id}`` requests arrived."""
        with self._lock:
            return sum(batch["polls"] for batch in self._batches.values())

    def clear_cache(self) -> None:
        """Forget every cached prompt prefix."""
        with self._lock:
            self._cache.clear()

    # -- request handling (called from handler threads) ----------------------------------------

    def _mark_answered(self, body: dict[str, Any], attempt: int) -> None:
        with self._lock:
            self._answered.append(
                {"body": body, "attempt": attempt, "answered_at": time.monotonic()}
            )

    def _record(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> int:
        record = {"path": path, "body": body, "headers": headers, "received_at": time.monotonic()}
        with self._lock:
            if urlsplit(path).path == COUNT_TOKENS_PATH:
                self._count_tokens_requests.append(record)
                return 0
            key = _canonical(body)
            attempt = self._seen_bodies.get(key, 0)
            self._seen_bodies[key] = attempt + 1
            record["attempt"] = attempt
            self._requests.append(record)
            return attempt

    def _ask_responder(self, body: dict[str, Any], attempt: int) -> Reply:
        try:
            reply = self.responder(body, attempt)
        except Exception as exc:  # surface test bugs as a visible, retryable API failure
            log.exception("fake responder raised")
            with self._lock:
                self._responder_errors.append(exc)
            return Reply.error(500, "api_error", f"fake responder raised {type(exc).__name__}")
        return Reply.text(reply) if isinstance(reply, str) else reply

    def _plan_cache(self, body: Mapping[str, Any]) -> _CachePlan:
        units = _units(body)
        total = sum(u.tokens for u in units)
        cumulative = list(itertools.accumulate(u.tokens for u in units))
        points = [
            (i, ttl)
            for i, ttl in _breakpoints(body, units)
            if cumulative[i] >= self.min_cacheable_tokens
        ]
        if len([u for u in units if u.cache_control]) > MAX_BREAKPOINTS:
            raise _ApiError(
                400,
                "invalid_request_error",
                f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided.",
            )
        if not points:
            return _CachePlan(total, 0, 0, ())

        model = body.get("model")
        hashes = [
            (
                i,
                hashlib.sha256(
                    _canonical([model, [u.identity for u in units[: i + 1]]]).encode()
                ).hexdigest(),
                ttl,
            )
            for i, ttl in points
        ]
        now = time.monotonic()
        read = 0
        with self._lock:
            for i, digest, ttl in reversed(hashes):  # the longest live prefix wins
                expiry = self._cache.get(digest)
                if expiry is not None and expiry > now:
                    self._cache[digest] = now + ttl  # a hit refreshes the entry
                    read = cumulative[i]
                    break
        written = cumulative[points[-1][0]] - read
        return _CachePlan(
            input_tokens=total - read - written,
            cache_creation_input_tokens=written,
            cache_read_input_tokens=read,
            writes=tuple((digest, ttl) for _, digest, ttl in hashes),
        )

    def _publish(self, plan: _CachePlan) -> None:
        # Called when the writing response is about to be sent, never at arrival: the API serves
        # cache reads from completed writes, so requests in flight together each pay a write.
        now = time.monotonic()
        with self._lock:
            for digest, ttl in plan.writes:
                self._cache[digest] = max(self._cache.get(digest, 0.0), now + ttl)

    def _message_json(self, body: Mapping[str, Any], reply: Reply, plan: _CachePlan) -> bytes:
        text = reply.output_text
        max_tokens = body.get("max_tokens")
        output_tokens = max(1, estimate_tokens(text))  # the API never bills 0 output tokens
        if reply.stop_reason == "max_tokens" and isinstance(max_tokens, int):
            text = text[: max_tokens * 4]
            output_tokens = max_tokens
        message: dict[str, Any] = {
            "id": f"msg_fake_{next(self._ids)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            # A refusal may come with no text at all; other messages always carry their block.
            "content": []
            if reply.stop_reason == "refusal" and not text
            else [{"type": "text", "text": text}],
            "stop_reason": reply.stop_reason,
            "stop_sequence": reply.stop_sequence,
            "usage": {
                "input_tokens": plan.input_tokens,
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": plan.cache_creation_input_tokens,
                "cache_read_input_tokens": plan.cache_read_input_tokens,
            },
        }
        if reply.stop_details is not None:
            message["stop_details"] = dict(reply.stop_details)
        return json.dumps(message).encode()

    # -- Message Batches ------------------------------------------------------------------------

    def _create_batch(self, body: Any) -> dict[str, Any]:
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            raise _ApiError(400, "invalid_request_error", "requests: must be a non-empty list")
        seen: set[str] = set()
        for request in requests:
            custom_id = request.get("custom_id") if isinstance(request, dict) else None
            if not isinstance(custom_id, str) or not _CUSTOM_ID.fullmatch(custom_id):
                raise _ApiError(400, "invalid_request_error", f"custom_id: invalid {custom_id!r}")
            if custom_id in seen:
                raise _ApiError(400, "invalid_request_error", f"custom_id: {custom_id} repeated")
            seen.add(custom_id)
            if not isinstance(request.get("params"), dict):
                raise _ApiError(400, "invalid_request_error", "params: Field required")
        with self._lock:
            batch_id = f"msgbatch_fake_{next(self._batch_ids)}"
            self._batches[batch_id] = {"requests": requests, "polls": 0, "results": None}
        return self._batch_json(batch_id)

    def _retrieve_batch(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is None:
                raise _ApiError(404, "not_found_error", f"no batch {batch_id}")
            batch["polls"] += 1
            ready = batch["polls"] > self.batch_polls and batch["results"] is None
        if ready:
            results = [self._batch_result(r["custom_id"], r["params"]) for r in batch["requests"]]
            with self._lock:
                batch["results"] = results
        return self._batch_json(batch_id)

    def _batch_result(self, custom_id: str, params: dict[str, Any]) -> dict[str, Any]:
        outcome = self.batch_outcome(custom_id, params) if self.batch_outcome else "succeeded"
        if outcome not in BATCH_RESULT_TYPES:
            raise ValueError(f"batch_outcome gave {outcome!r}")
        reply = self._ask_responder(params, 0) if outcome == "succeeded" else None
        if reply is not None and reply.kind != "message":
            outcome = "errored"
        result: dict[str, Any] = {"type": outcome}
        if outcome == "succeeded" and reply is not None:
            plan = _CachePlan(estimate_input_tokens(params), 0, 0, ())
            result["message"] = json.loads(self._message_json(params, reply, plan))
        elif outcome == "errored":
            result["error"] = {
                "type": "error",
                "error": {"type": "api_error", "message": "fake batch request failed"},
            }
        return {"custom_id": custom_id, "result": result}

    def _batch_json(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._batches[batch_id]
            results = batch["results"]
            count = len(batch["requests"])
        counts = dict.fromkeys(BATCH_RESULT_TYPES, 0)
        if results is not None:
            for line in results:
                counts[line["result"]["type"]] += 1
        stamp = "2026-01-01T00:00:00Z"
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "ended" if results is not None else "in_progress",
            "request_counts": {"processing": 0 if results is not None else count, **counts},
            "created_at": stamp,
            "expires_at": "2026-01-02T00:00:00Z",
            "ended_at": stamp if results is not None else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.url}{BATCHES_PATH}/{batch_id}/results"
            if results is not None
            else None,
        }

    def _batch_results_jsonl(self, batch_id: str) -> bytes:
        with self._lock:
            batch = self._batches.get(batch_id)
            results = batch["results"] if batch is not None else None
        if results is None:
            raise _ApiError(404, "not_found_error", f"no results for {batch_id} yet")
        return "".join(json.dumps(line) + "\n" for line in results).encode()

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)  # wakes early on stop() so shutdown is prompt

    def _next_request_id(self) -> str:
        return f"req_fake_{next(self._request_ids)}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver's default backlog of 5 can drop SYNs when 8+ clients connect at once, and the
    # client's SYN retry then costs a full second.
    request_queue_size = 128
    api: FakeMessagesAPI

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up mid-response (timeouts, cancelled tasks) are normal in tests.
        log.debug("fake messages API: error while handling a request", exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    server: _Server

    # -- plumbing -----------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        # Only the request line and status reach the log; headers (credentials) never do.
        log.debug("fake messages API: " + format, *args)

    def _read_body(self) -> bytes:
        if self.headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def _safe_headers(self) -> dict[str, str]:
        return {
            k.lower(): (REDACTED if k.lower() in SECRET_HEADERS else v)
            for k, v in self.headers.items()
        }

    def _send(
        self,
        status: int,
        payload: bytes,
        request_id: str,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.send_header("request-id", request_id)
        if self.server.api._stopping.is_set():
            # Don't keep serving a pooled keep-alive connection after stop().
            self.close_connection = True
            self.send_header("connection", "close")
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _send_error(
        self,
        status: int,
        error_type: str,
        message: str,
        request_id: str,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> None:
        payload = {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": request_id,
        }
        self._send(status, json.dumps(payload).encode(), request_id, headers)

    # -- routing ------------------------------------------------------------------------------

    def do_POST(self) -> None:
        api = self.server.api
        request_id = api._next_request_id()
        raw = self._read_body()  # always drain it, so keep-alive framing stays correct
        path = urlsplit(self.path).path
        try:
            if path == BATCHES_PATH:
                if not (self.headers.get("x-api-key") or self.headers.get("authorization")):
                    raise _ApiError(401, "authentication_error", "x-api-key header is required")
                try:
                    created = api._create_batch(json.loads(raw or b"null"))
                except ValueError:
                    raise _ApiError(400, "invalid_request_error", "invalid JSON") from None
                self._send(200, json.dumps(created).encode(), request_id)
                return
            if path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
                raise _ApiError(404, "not_found_error", f"Not found: {path}")
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                raise _ApiError(
                    400, "invalid_request_error", "Request body is not valid JSON"
                ) from None
            if not isinstance(body, dict):
                raise _ApiError(400, "invalid_request_error", "Request body must be an object")
            attempt = api._record(self.path, body, self._safe_headers())
            if not (self.headers.get("x-api-key") or self.headers.get("authorization")):
                raise _ApiError(401, "authentication_error", "x-api-key header is required")
            required = (
                ("model", "messages")
                if path == COUNT_TOKENS_PATH
                else ("model", "messages", "max_tokens")
            )
            missing = [name for name in required if name not in body]
            if missing:
                raise _ApiError(400, "invalid_request_error", f"{missing[0]}: Field required")
            if path == COUNT_TOKENS_PATH:
                api._sleep(api.latency)
                payload = json.dumps({"input_tokens": estimate_input_tokens(body)}).encode()
                self._send(200, payload, request_id)
                return
            if body.get("stream"):
                raise _ApiError(
                    400, "invalid_request_error", "the fake Messages API does not support streaming"
                )
            self._answer(api, body, attempt, request_id)
        except _ApiError as err:
            api._sleep(api.latency)
            self._send_error(err.status, err.error_type, err.message, request_id)

    def _answer(
        self, api: FakeMessagesAPI, body: dict[str, Any], attempt: int, request_id: str
    ) -> None:
        reply = api._ask_responder(body, attempt)
        # The cache is consulted when the request arrives (the API looks it up at the start of
        # prefill), not after the simulated generation time.
        plan = api._plan_cache(body) if reply.kind == "message" else None
        api._sleep(api.latency + reply.delay)
        api._mark_answered(body, attempt)
        match reply.kind:
            case "drop":
                self.close_connection = True  # return without a byte: the client sees EOF
            case "malformed":
                self._send(200, reply.raw_body, request_id)
            case "error":
                self._send_error(
                    reply.status, reply.error_type, reply.message, request_id, reply.headers
                )
            case "message":
                assert plan is not None
                payload = api._message_json(body, reply, plan)
                # Publish before the bytes go out: once the client holds this response, any
                # request it sends next must be able to read the prefix (no race with tests).
                api._publish(plan)
                self._send(200, payload, request_id)

    def _not_found(self) -> None:
        api = self.server.api
        self._read_body()
        api._sleep(api.latency)
        path = urlsplit(self.path).path
        self._send_error(404, "not_found_error", f"Not found: {path}", api._next_request_id())

    def do_GET(self) -> None:
        api = self.server.api
        request_id = api._next_request_id()
        self._read_body()
        parts = urlsplit(self.path).path.removeprefix(BATCHES_PATH + "/").split("/")
        if not urlsplit(self.path).path.startswith(BATCHES_PATH + "/") or len(parts) > 2:
            self._not_found()
            return
        try:
            if not (self.headers.get("x-api-key") or self.headers.get("authorization")):
                raise _ApiError(401, "authentication_error", "x-api-key header is required")
            api._sleep(api.latency)
            if len(parts) == 2 and parts[1] == "results":
                self._send(200, api._batch_results_jsonl(parts[0]), request_id)
            elif len(parts) == 1:
                self._send(200, json.dumps(api._retrieve_batch(parts[0])).encode(), request_id)
            else:
                raise _ApiError(404, "not_found_error", f"Not found: {self.path}")
        except _ApiError as err:
            self._send_error(err.status, err.error_type, err.message, request_id)

    do_PUT = do_PATCH = do_DELETE = _not_found


# --------------------------------------------------------------------------- canned verdicts

# The README's prompt loop without a key: completeness depends on one line of the system
# prompt, which the README's new prompt changes; every other sub-score is fixed.
CHANGED_LINE = ("edge-case handling and consideration of side effects", "a verification step")


def canned_verdicts(body: dict[str, Any], attempt: int) -> Reply:
    """Structured verdicts that quote the plan and react to the one changed prompt line."""
    item = body["messages"][0]["content"][1]["text"]
    scope = re.search(r"- Scope: (\S+)", item).group(1)
    prefix = body["messages"][0]["content"][0]["text"]
    plan = re.search(
        r"<<<BEGIN UNTRUSTED DOCUMENT kind=remediation-plan [^\n]*>>>\n(.*?)\n<<<END", prefix, re.S
    ).group(1)
    plan_line = next(line.strip() for line in plan.splitlines() if len(line.strip()) > 30)
    lenient = CHANGED_LINE[1] in json.dumps(body.get("system"))

    def sub(score: int) -> dict[str, Any]:
        return {"score": score, "quotes": [plan_line] if score else [], "rationale": "canned"}

    verdict: dict[str, Any] = {
        "detection": None,
        "plan": None,
        "penalties": [],
        "addressed_to_evaluator": [],
    }
    if scope != "plan-only":
        verdict["detection"] = {name: sub(0) for name in ("discovery", "evidence", "attribution")}
    if scope != "detection-only":
        verdict["plan"] = {"correctness": sub(1), "completeness": sub(1 if lenient else 0)}
    return Reply.text(json.dumps(verdict))


def main(argv: list[str] | None = None) -> int:
    """Serve the fake Messages API with :func:`canned_verdicts` until interrupted.

    From the repository root: ``python -m tests.fake_messages_api --port 8765``, then
    ``ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=fake evalkit calibrate ...``.
    """
    import argparse

    parser = argparse.ArgumentParser(
        description=main.__doc__.splitlines()[0] if main.__doc__ else ""
    )
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args(argv)
    with FakeMessagesAPI(canned_verdicts, port=args.port) as api:
        print(f"fake Messages API at {api.url} (canned verdicts); Ctrl-C stops it", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
