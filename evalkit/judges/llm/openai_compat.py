"""The OpenAI-compatible Chat Completions transport (the ``openai-compatible`` judge).

What vLLM, Ollama, llama.cpp's server and OpenAI all speak: ``POST
/chat/completions`` with ``response_format: {"type": "json_schema", ...}``. The
request is a system message (``system.md``) and one user message: the shared
documents block, a blank line, then the item block, so a server with automatic
prefix caching reuses the documents across items. ``max_tokens`` (not
``max_completion_tokens``) is sent, which local servers accept.

The key comes only from ``OPENAI_API_KEY``. With no key set and a ``base_url``
on a loopback address (``localhost``, ``127.0.0.1``, ``::1``), a placeholder is
sent instead, so a local server without authentication works; any other server
needs the key. The SDK's own retries are off (``max_retries=0``): the runner
retries, counts and records every attempt. Cached prompt tokens are read from
``usage.prompt_tokens_details.cached_tokens``; a model missing from the price
table costs ``null`` (unknown).

The ``openai`` SDK is an optional extra: ``pip install 'evalkit[openai]'``.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from ...errors import JudgeError, JudgeInputError
from .transport import Answer, SDKClient, TransportError, key_value, retry_after_seconds
from .verdict import StopReason, clip

API_KEY_ENV = "OPENAI_API_KEY"
LOCAL_PLACEHOLDER_KEY = "evalkit-local-no-key"
RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every status >= 500
CHARS_PER_TOKEN = 4

_STOPS: dict[str, StopReason] = {
    "stop": "end",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def is_local(base_url: str | None) -> bool:
    """Whether ``base_url`` points at this machine (a loopback address or ``localhost``)."""
    if not base_url:
        return False
    host = urlparse(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _import_openai() -> Any:
    try:
        import openai
    except ImportError:
        raise JudgeError(
            "the openai-compatible judge needs the openai package: pip install 'evalkit[openai]'"
        ) from None
    return openai


def answer_of(raw: Mapping[str, Any]) -> Answer:
    from .records import coerce_usage

    choices = raw.get("choices") or [{}]
    first = choices[0] if isinstance(choices, list) and choices else {}
    choice: Mapping[str, Any] = first if isinstance(first, Mapping) else {}
    found = choice.get("message")
    message: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    finish = str(choice.get("finish_reason") or "")
    stop: StopReason = _STOPS.get(finish, "other" if finish else "end")
    label = f"finish_reason={finish}"
    if message.get("refusal"):
        stop, label = "refusal", f"refusal: {clip(str(message['refusal']), 200)}"
    given = raw.get("usage")
    usage: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    details = usage.get("prompt_tokens_details")
    cached = coerce_usage(
        {"cache_read_input_tokens": details.get("cached_tokens")}
        if isinstance(details, Mapping)
        else None
    )["cache_read_input_tokens"]
    counts = coerce_usage(
        {
            "input_tokens": usage.get("prompt_tokens"),
            "output_tokens": usage.get("completion_tokens"),
        }
    )
    tokens = {
        "input_tokens": max(0, counts["input_tokens"] - cached),
        "output_tokens": counts["output_tokens"],
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cached,
    }
    return Answer(
        text=str(message.get("content") or ""),
        stop=stop,
        stop_label=label,
        usage=tokens,
        raw=raw,
        billed=tokens,
    )


class OpenAICompatTransport(SDKClient):
    judge_name = "openai-compatible"
    key_env: str | None = API_KEY_ENV
    key_purpose = "judge with an OpenAI-compatible server (not needed for a local --base-url)"

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        timeout_s: float = 120,
        client: Any = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise JudgeInputError("openai-compatible judge: model must be a non-empty model id")
        super().__init__(client)
        self.model = model
        self.base_url = base_url or None
        self.timeout_s = float(timeout_s)

    def build_request(
        self, *, max_tokens: int, system: str, documents: str, item: str, schema: Mapping[str, Any]
    ) -> dict[str, Any]:
        return {
            "model": self.model,
            "max_tokens": max_tokens,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": f"{documents}\n\n{item}"},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "verdict", "strict": True, "schema": dict(schema)},
            },
        }

    def correction_request(
        self, body: Mapping[str, Any], bad_answer: str, problem_turn: str, *, max_tokens: int
    ) -> dict[str, Any]:
        return {
            **body,
            "max_tokens": max_tokens,
            "messages": [
                *body["messages"],
                {"role": "assistant", "content": bad_answer or "(empty)"},
                {"role": "user", "content": problem_turn},
            ],
        }

    def max_tokens_of(self, body: Mapping[str, Any]) -> int:
        return int(body["max_tokens"])

    def prefix_tokens(self, body: Mapping[str, Any]) -> int:
        schema = json.dumps(body["response_format"]["json_schema"]["schema"], separators=(",", ":"))
        system = body["messages"][0]["content"]
        user = body["messages"][1]["content"]
        return -(-(len(system) + len(schema) + len(user)) // CHARS_PER_TOKEN)

    def answer_of(self, raw: Mapping[str, Any]) -> Answer:
        return answer_of(raw)

    def needs_key(self) -> bool:
        return self._given is None and not is_local(self.base_url)

    def stop_hint(self, message: str) -> str:
        return message

    def make_client(self) -> Any:
        openai = _import_openai()
        key = key_value(API_KEY_ENV)
        if key is None and is_local(self.base_url):
            key = LOCAL_PLACEHOLDER_KEY
        return openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout_s
        )

    async def send(self, body: Mapping[str, Any]) -> Answer:
        openai = _import_openai()
        try:
            completion = await self._client.chat.completions.create(**body)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise TransportError(
                "fatal",
                f"authentication failed: check {API_KEY_ENV} (HTTP {exc.status_code}: "
                f"{clip(str(exc.message), 300)})",
            ) from None
        except openai.NotFoundError as exc:
            raise TransportError(
                "fatal",
                f"model {self.model!r} not found: check --model and --base-url "
                f"(HTTP 404: {clip(str(exc.message), 300)})",
            ) from None
        except openai.APIStatusError as exc:
            retryable = exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
            raise TransportError(
                "retryable" if retryable else "failed",
                f"HTTP {exc.status_code}: {clip(str(exc.message), 300)}",
                retry_after=retry_after_seconds(exc.response.headers),
            ) from None
        except openai.APIConnectionError as exc:  # APITimeoutError included
            raise TransportError("retryable", f"{type(exc).__name__}: {exc.message}") from None
        except (openai.APIResponseValidationError, json.JSONDecodeError, UnicodeError) as exc:
            raise TransportError(
                "retryable", f"malformed response: {clip(str(exc), 200)}"
            ) from None
        if not hasattr(completion, "model_dump"):
            raise TransportError(
                "retryable",
                f"malformed response: unreadable response body ({type(completion).__name__})",
            )
        raw: dict[str, Any] = completion.model_dump(mode="json", exclude_unset=True)
        return answer_of(raw)


def openai_compatible_judge(
    model: str | None = None,
    *,
    base_url: str | None = None,
    timeout_s: float = 120,
    client: Any = None,
    **runner_settings: Any,
) -> Any:
    """The LLM judge over this transport (``runner_settings`` go to :class:`LLMJudge`)."""
    from .runner import LLMJudge

    if not model:
        raise JudgeError("openai-compatible judge: --model is required (the server's model id)")
    transport = OpenAICompatTransport(model, base_url=base_url, timeout_s=timeout_s, client=client)
    return LLMJudge(transport, **runner_settings)
