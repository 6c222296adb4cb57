"""What judging one (range, run) with Claude should cost, before running it.

The estimate renders exactly the requests :class:`~evalkit.judges.claude.ClaudeJudge`
would send, then counts their input tokens in one of two ways:

* ``use_count_tokens=True``: the Messages API's token counting endpoint
  (``messages.count_tokens``, free of charge, needs ``ANTHROPIC_API_KEY``): one
  call for the shared prefix (system prompt, output schema and documents block)
  and one per checkpoint; an item's own tokens are its count minus the
  prefix's. The calls run concurrently; the first failure cancels the others.
  A 401, 403 or 404 (unknown model) is a :class:`~evalkit.errors.JudgeError`,
  as in a judging run; if counting fails for any other reason, the local
  estimate is used instead and ``warning`` says so.
* otherwise a local estimate, no network: one token per four characters of each
  text block (rounded up per block), plus the output schema's JSON length / 4
  for the structured-output instructions the API adds
  (:func:`~evalkit.judges.claude.prefix_tokens`, which the judge also uses to
  decide whether the prefix is worth warming the cache for). English prose runs at
  about 3.5-4 characters per token, so this is a rough figure (often low by up to
  ~15%); use token counting when the number matters.

Then it applies the judge's caching plan: the first request writes the shared
prefix to the prompt cache (cache-write rate), every later request reads it
(cache-read rate) and pays the input rate only for its item block. A prefix
shorter than the model's cacheable minimum (``min_cacheable_tokens`` in the
price table, 1,024 when not listed) is not cached: every request pays it in
full.

Output tokens cannot be counted in advance: the estimate assumes
``output_tokens_per_item`` (default 350: a verdict of five sub-scores, each
with a quote and a one- or two-sentence rationale, is typically 250-450
tokens). Corrective retries and API errors are not included. Responses already
in the response cache are not subtracted: the estimate is for a cold run.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ...errors import JudgeError, JudgeInputError
from ...model import Range, Submission
from ..claude import ClaudeJudge
from ..registry import missing_key_error
from .anthropic import estimate_tokens, prefix_tokens, stop_message
from .cache import API_KEY_ENV
from .pricing import cost_usd, min_cacheable_tokens, price_warning
from .transport import redact as _redact_key


def redact(text: str) -> str:
    return _redact_key(text, API_KEY_ENV)


DEFAULT_OUTPUT_TOKENS_PER_ITEM = 350
LOCAL_METHOD = "local estimate (characters / 4)"
COUNT_METHOD = "messages.count_tokens"


@dataclass(frozen=True)
class Estimate:
    """Expected requests, tokens and cost of one Claude judging run (a cold cache)."""

    model: str
    method: str  # COUNT_METHOD or LOCAL_METHOD
    items: int
    requests: int
    prefix_tokens: int  # the shared prefix of every request: system, schema, documents
    item_tokens: int  # the item blocks, summed over all requests
    cached_prefix: bool  # whether the prefix is long enough for the prompt cache
    input_tokens: int  # billed at the input rate
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    output_tokens: int  # assumed, see output_tokens_per_item
    output_tokens_per_item: int
    cost_usd: float | None  # None when the model has no price
    cost_without_cache_usd: float | None
    warning: str | None = None
    repeats: int = 1  # samples per item (requests = items x repeats)

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_input_tokens": self.total_input_tokens}


def _prefix_body(body: dict[str, Any]) -> dict[str, Any]:
    first = body["messages"][0]
    return {
        **body,
        "messages": [{"role": "user", "content": [first["content"][0]]}],
    }


def _count_params(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": body["model"],
        "system": body["system"],
        "messages": body["messages"],
        "output_config": body["output_config"],
    }


async def _count_with_api(
    bodies: list[dict[str, Any]], *, client: Any, concurrency: int
) -> tuple[int, list[int]]:
    semaphore = asyncio.Semaphore(max(1, concurrency))

    async def count(body: dict[str, Any]) -> int:
        async with semaphore:
            result = await client.messages.count_tokens(**_count_params(body))
        return int(result.input_tokens)

    # A task group: the first failure cancels the other counts and waits for them, so the
    # caller never closes the client under a request still in flight.
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(count(b)) for b in (_prefix_body(bodies[0]), *bodies)]
    except ExceptionGroup as failed:
        raise _first_failure(failed) from None
    prefix, *totals = (task.result() for task in tasks)
    return prefix, [max(0, total - prefix) for total in totals]


def _first_failure(group: ExceptionGroup) -> Exception:
    """The failure that decides the outcome: one that stops the run, else the first."""
    from anthropic import AuthenticationError, NotFoundError, PermissionDeniedError

    fatal = (AuthenticationError, PermissionDeniedError, NotFoundError)
    return next((f for f in group.exceptions if isinstance(f, fatal)), group.exceptions[0])


def _count_locally(bodies: list[dict[str, Any]]) -> tuple[int, list[int]]:
    items = [estimate_tokens(b["messages"][0]["content"][1]["text"]) for b in bodies]
    return prefix_tokens(bodies[0]), items


async def estimate(
    rng: Range,
    submission: Submission,
    *,
    model: str,
    prompt_dir: str | Path | None = None,
    use_count_tokens: bool,
    max_tokens: int = 2048,
    output_tokens_per_item: int = DEFAULT_OUTPUT_TOKENS_PER_ITEM,
    base_url: str | None = None,
    client: Any | None = None,
    concurrency: int = 8,
    repeats: int = 1,
) -> Estimate:
    """The expected cost of judging ``submission`` against ``rng`` with ``model``.

    With ``repeats`` K every item is asked K times: K times the requests, item tokens
    and output, and the shared prefix is read from the prompt cache by all but the first.
    """
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise JudgeInputError(f"repeats must be an integer >= 1, not {repeats!r}")
    judge = ClaudeJudge(model, prompt_dir=prompt_dir, cache_dir=None, max_tokens=max_tokens)
    bodies = judge.requests_for(rng, submission)
    if not bodies:
        return _assemble(model, LOCAL_METHOD, 0, 0, [], output_tokens_per_item, None, repeats)
    warning: str | None = None
    method = LOCAL_METHOD
    if use_count_tokens:
        try:
            prefix, items = await _count_tokens(bodies, base_url, client, concurrency)
            method = COUNT_METHOD
        except _CountingFailed as exc:
            warning = f"token counting failed ({exc}); the local estimate is used instead"
            prefix, items = _count_locally(bodies)
    else:
        prefix, items = _count_locally(bodies)
    return _assemble(
        model, method, len(bodies), prefix, items, output_tokens_per_item, warning, repeats
    )


class _CountingFailed(Exception):
    pass


async def _count_tokens(
    bodies: list[dict[str, Any]], base_url: str | None, client: Any | None, concurrency: int
) -> tuple[int, list[int]]:
    from anthropic import (
        AnthropicError,
        AsyncAnthropic,
        AuthenticationError,
        NotFoundError,
        PermissionDeniedError,
    )

    owned = client is None
    if owned:
        missing = missing_key_error(
            API_KEY_ENV, "count tokens", without="or estimate locally, without counting"
        )
        if missing is not None:
            raise missing
        client = AsyncAnthropic(base_url=base_url, max_retries=2, timeout=60)
    try:
        return await _count_with_api(bodies, client=client, concurrency=concurrency)
    except (AuthenticationError, PermissionDeniedError, NotFoundError) as exc:
        raise JudgeError(stop_message(exc, bodies[0]["model"])) from None
    except (AnthropicError, ValueError, KeyError, TypeError) as exc:
        raise _CountingFailed(redact(f"{type(exc).__name__}: {exc}")[:300]) from None
    finally:
        if owned and client is not None:
            await client.close()


def _assemble(
    model: str,
    method: str,
    items: int,
    prefix: int,
    item_tokens: list[int],
    output_per_item: int,
    warning: str | None,
    repeats: int = 1,
) -> Estimate:
    requests = items * repeats  # one call per checkpoint and sample
    item_total = sum(item_tokens) * repeats
    cached = prefix >= min_cacheable_tokens(model) and requests > 0
    if cached:
        written, read = prefix, prefix * (requests - 1)
        uncached = item_total
    else:
        written, read = 0, 0
        uncached = item_total + prefix * requests
    output = output_per_item * requests
    usage = {
        "input_tokens": uncached,
        "output_tokens": output,
        "cache_creation_input_tokens": written,
        "cache_read_input_tokens": read,
    }
    no_cache = {"input_tokens": item_total + prefix * requests, "output_tokens": output}
    note = price_warning(model)
    if note:
        warning = f"{warning}; {note}" if warning else note
    return Estimate(
        model=model,
        method=method,
        items=items,
        requests=requests,
        prefix_tokens=prefix,
        item_tokens=item_total,
        cached_prefix=cached,
        input_tokens=uncached,
        cache_creation_input_tokens=written,
        cache_read_input_tokens=read,
        output_tokens=output,
        output_tokens_per_item=output_per_item,
        cost_usd=_round(cost_usd(model, usage)),
        cost_without_cache_usd=_round(cost_usd(model, no_cache)),
        warning=warning,
        repeats=repeats,
    )


def _round(value: float | None) -> float | None:
    return round(value, 6) if value is not None else None


__all__ = ["DEFAULT_OUTPUT_TOKENS_PER_ITEM", "Estimate", "estimate"]
