"""The ``claude`` judge: the LLM judge (:mod:`.llm.runner`) over the Anthropic transport.

Names other code imports from here (the schema, prompts, request builders) are
re-exported from the modules that own them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import JudgeInputError
from .llm.anthropic import (
    DEFAULT_MAX_RETRIES,
    AnthropicTransport,
    answer_text,
    build_request,
    correction_request,
    estimate_tokens,
    prefix_tokens,
    stop_message,
)
from .llm.prompts import DEFAULT_PROMPT_DIR, PromptSet
from .llm.runner import (
    DEFAULT_BACKOFF_BASE_S,
    DEFAULT_BACKOFF_MAX_S,
    DEFAULT_MAX_ATTEMPTS,
    LLMJudge,
)
from .llm.transport import retry_after_seconds
from .llm.verdict import VERDICT_SCHEMA, InvalidAnswer
from .registry import DEFAULT_CLAUDE_MODEL

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

DEFAULT_MODEL = DEFAULT_CLAUDE_MODEL


class ClaudeJudge(LLMJudge):
    """Scores each checkpoint with one Claude call.

    Options: ``model``; ``concurrency`` (requests in flight); ``prompt_dir`` (a folder with
    at least ``system.md`` and ``item.md``; default the packaged ``prompts/v3``);
    ``cache_dir`` (None: no response cache) and ``use_cache`` (False: ignore cached answers
    but still store fresh ones); ``repeats`` (K samples per item, majority kept);
    ``max_tokens`` per answer; ``timeout_s`` per HTTP request; ``total_timeout_s`` for the
    whole judging; ``max_retries`` (the SDK's, per call); ``base_url`` (else
    ``ANTHROPIC_BASE_URL``, else the API); ``client`` (an ``AsyncAnthropic`` to use instead
    of building one: the judge uses a copy with its own retries, timeout and HTTP observer,
    and never closes it). Tuning: ``max_attempts``, ``backoff_base_s``/``backoff_max_s``,
    ``warm_cache`` (None: send the first call alone when the prefix is cacheable).
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        concurrency: int = 8,
        prompt_dir: str | Path | None = None,
        cache_dir: str | Path | None = ".evalkit-cache",
        use_cache: bool = True,
        repeats: int = 1,
        max_tokens: int = 2048,
        timeout_s: float = 120,
        total_timeout_s: float = 1800,
        max_retries: int = DEFAULT_MAX_RETRIES,
        base_url: str | None = None,
        client: AsyncAnthropic | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        backoff_base_s: float = DEFAULT_BACKOFF_BASE_S,
        backoff_max_s: float = DEFAULT_BACKOFF_MAX_S,
        warm_cache: bool | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise JudgeInputError("claude judge: model must be a non-empty model id")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise JudgeInputError(
                f"claude judge: max_retries must be an integer >= 0, not {max_retries!r}"
            )
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or timeout_s < 0:
            raise JudgeInputError(
                f"claude judge: timeout_s must be a number >= 0, not {timeout_s!r}"
            )
        self.max_retries = max_retries
        self.timeout_s = float(timeout_s)
        self.base_url = base_url
        super().__init__(
            AnthropicTransport(
                model,
                timeout_s=timeout_s,
                max_retries=max_retries,
                base_url=base_url,
                client=client,
            ),
            concurrency=concurrency,
            prompt_dir=prompt_dir,
            cache_dir=cache_dir,
            use_cache=use_cache,
            max_tokens=max_tokens,
            total_timeout_s=total_timeout_s,
            max_attempts=max_attempts,
            backoff_base_s=backoff_base_s,
            backoff_max_s=backoff_max_s,
            warm_cache=warm_cache,
            repeats=repeats,
        )


__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_PROMPT_DIR",
    "VERDICT_SCHEMA",
    "ClaudeJudge",
    "InvalidAnswer",
    "PromptSet",
    "answer_text",
    "build_request",
    "correction_request",
    "estimate_tokens",
    "prefix_tokens",
    "retry_after_seconds",
    "stop_message",
]
