"""A local, standard-library fake of an OpenAI-compatible Chat Completions server.

Listens on 127.0.0.1 at a free port and is reached by the *real* ``openai`` SDK, in the
style of :mod:`tests.fake_messages_api`::

    with FakeOpenAIAPI(responder=lambda body, attempt: OAReply.text('{"a": 1}')) as api:
        client = openai.AsyncOpenAI(api_key="sk-test", base_url=api.url)

``POST /v1/chat/completions`` is answered by the responder ``(body, attempt) -> OAReply``
(``attempt`` counts earlier requests with an identical body); anything else is a 404.

Token accounting: ``ceil(chars / 4)`` of the messages' text is ``prompt_tokens``. Prompt
caching is modelled as automatic prefix caching: the longest prefix (in whole 256-character
blocks) that the prompt shares with a prompt answered before is reported as
``usage.prompt_tokens_details.cached_tokens``; a prompt becomes readable once its response
is sent.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

CACHE_BLOCK_CHARS = 256


@dataclasses.dataclass(frozen=True)
class OAReply:
    """One reply: a completion (``content``) or an HTTP error (``status`` != 200)."""

    status: int = 200
    content: str | None = ""
    finish_reason: str = "stop"
    refusal: str | None = None
    error_type: str = ""
    message: str = ""
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict)
    raw_body: bytes | None = None  # sent as is (a malformed body)
    delay: float = 0.0

    @classmethod
    def text(cls, content: str, *, delay: float = 0.0) -> OAReply:
        return cls(content=content, delay=delay)

    @classmethod
    def truncated(cls, content: str, keep: int | None = None) -> OAReply:
        cut = content[: keep if keep is not None else max(1, len(content) // 2)]
        return cls(content=cut, finish_reason="length")

    @classmethod
    def refused(cls, why: str = "I can't help with that.") -> OAReply:
        return cls(content=None, refusal=why)

    @classmethod
    def error(
        cls, status: int, error_type: str, message: str, headers: Mapping[str, str] | None = None
    ) -> OAReply:
        return cls(status=status, error_type=error_type, message=message, headers=headers or {})

    @classmethod
    def rate_limited(cls, retry_after: float = 1.0) -> OAReply:
        return cls.error(
            429, "rate_limit_exceeded", "slow down", {"retry-after": f"{retry_after:g}"}
        )

    @classmethod
    def server_error(cls) -> OAReply:
        return cls.error(500, "server_error", "internal error")

    @classmethod
    def auth_error(cls) -> OAReply:
        return cls.error(401, "invalid_api_key", "Incorrect API key provided")

    @classmethod
    def malformed(cls) -> OAReply:
        return cls(raw_body=b'{"id": "chatcmpl-x", "choices": [')


Responder = Callable[[dict[str, Any], int], OAReply]


def prompt_text(body: Mapping[str, Any]) -> str:
    parts = []
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            parts.extend(str(part.get("text", "")) for part in content)
        else:
            parts.append(str(content or ""))
    return "\n".join(parts)


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


class FakeOpenAIAPI:
    def __init__(self, responder: Responder | None = None) -> None:
        self.responder: Responder = responder or (lambda body, attempt: OAReply.text("{}"))
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._attempts: dict[str, int] = {}
        self._published: list[str] = []
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.headers_seen: list[dict[str, str]] = []

    def start(self) -> Self:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.api = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self._requests)

    def _arrive(self, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, int]:
        """Record a request; its attempt number and its cached prefix length (characters)."""
        identity = json.dumps(body, sort_keys=True)
        prompt = prompt_text(body)
        with self._lock:
            self._requests.append(body)
            self.headers_seen.append(headers)
            attempt = self._attempts.get(identity, 0)
            self._attempts[identity] = attempt + 1
            shared = 0
            for seen in self._published:
                n = 0
                for a, b in zip(seen, prompt, strict=False):
                    if a != b:
                        break
                    n += 1
                shared = max(shared, n)
        return attempt, (shared // CACHE_BLOCK_CHARS) * CACHE_BLOCK_CHARS

    def _publish(self, body: Mapping[str, Any]) -> None:
        with self._lock:
            self._published.append(prompt_text(body))

    def completion(self, body: dict[str, Any], reply: OAReply, cached_chars: int) -> bytes:
        prompt = prompt_text(body)
        prompt_tokens = estimate_tokens(prompt)
        completion_tokens = estimate_tokens(reply.content or reply.refusal or "")
        return json.dumps(
            {
                "id": f"chatcmpl-{next(self._ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": reply.finish_reason,
                        "message": {
                            "role": "assistant",
                            "content": reply.content,
                            "refusal": reply.refusal,
                        },
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                    "prompt_tokens_details": {
                        "cached_tokens": min(prompt_tokens, cached_chars // 4)
                    },
                },
            }
        ).encode("utf-8")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _send(self, status: int, payload: bytes, headers: Mapping[str, str] = {}) -> None:  # noqa: B006
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        api: FakeOpenAIAPI = self.server.api  # type: ignore[attr-defined]
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, b'{"error": {"message": "not found", "type": "not_found"}}')
            return
        body = json.loads(raw or b"{}")
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() != "authorization"}
        headers["has-authorization"] = str("authorization" in {k.lower() for k in self.headers})
        attempt, cached = api._arrive(body, headers)
        reply = api.responder(body, attempt)
        if reply.delay:
            time.sleep(reply.delay)
        if reply.raw_body is not None:
            self._send(200, reply.raw_body)
            return
        if reply.status != 200:
            error = {"error": {"message": reply.message, "type": reply.error_type, "code": None}}
            self._send(reply.status, json.dumps(error).encode("utf-8"), reply.headers)
            return
        payload = api.completion(body, reply, cached)
        api._publish(body)
        self._send(200, payload)
