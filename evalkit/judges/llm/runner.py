"""The provider-neutral LLM judge: one structured, cached, costed call per checkpoint.

* **One call per checkpoint and sample**, items scored independently and run
  concurrently with at most ``concurrency`` requests in flight. With ``repeats``
  K > 1 each item is asked K times (one cache entry per sample) and the majority
  verdict is kept (:mod:`.repeats`).
* **Warm-up**: the shared prefix (system prompt, schema, documents) is
  byte-identical for every item, so every call after the first can read it from
  the provider's prompt cache; because an entry is readable only once the call
  that wrote it has answered, the first call is sent alone (``warm_cache``; by
  default only when the prefix is long enough to be cached at all).
* **The one correction turn**: an invalid, truncated or refused answer is asked
  again once in the same conversation with the problem stated; a second failure
  makes the item ``status: error`` and the run goes on.
* **Retries**: errors the transport calls retryable are retried ``max_attempts``
  times with exponential backoff and jitter, never sooner than ``retry-after``;
  the wait releases the concurrency slot. ``total_timeout_s`` bounds the whole
  judging: unfinished items become ``status: error``. A fatal error (401, 403,
  404) stops the run with :class:`~evalkit.errors.JudgeError`.
* **Crash safety**: an answer is written to the response cache the moment it
  arrives, before it is parsed, so a killed run never pays for it twice. A cached
  answer that does not parse is asked again.
* **Secrets**: the key (the value of the transport's key env var) is redacted
  from every answer before anything stores or reads it, and from every error.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import JudgeError, JudgeInputError, OutputError
from ...model import Checkpoint, JudgeInfo, Range, Submission, Usage, Verdict
from ..base import JudgeBase, JudgeResult, ProgressCallback
from ..registry import missing_key_error
from .cache import ResponseCache, SecretInCacheError, cache_key
from .pricing import cost_usd, min_cacheable_tokens, price_warning
from .prompts import PromptSet
from .records import CallRecord, coerce_usage
from .repeats import combine_samples
from .transport import HTTP_LOG, Answer, Transport, TransportError, redact, redact_json
from .verdict import InvalidAnswer, clip, parse_answer

log = logging.getLogger(__name__)

DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BACKOFF_BASE_S = 2.0
DEFAULT_BACKOFF_MAX_S = 60.0
# A truncated answer is retried with twice the max_tokens, up to this (unless set higher).
RETRY_MAX_TOKENS_CAP = 16384


# The cache entry field naming where a stored answer came from (absent: a direct call).
BATCH_SOURCE = "message_batches"


@dataclass(frozen=True)
class PendingRequest:
    """One (checkpoint, sample) answer the response cache does not hold yet."""

    key: str  # the response-cache key of the answer
    chk_id: str
    sample: int
    body: Mapping[str, Any]  # the first request the runner would send for it


class _RunStopped(Exception):
    """A fatal error: no call can succeed, the whole run stops with this message."""


class _CallFailed(Exception):
    """One call could not be completed (after retries); the item fails with this message."""


class _Stopped(Exception):
    """The run is stopping (another item hit a fatal error): send nothing more."""


@dataclass
class _Item:
    index: int
    checkpoint: Checkpoint
    body: dict[str, Any]
    keys: list[str]  # one cache key per sample
    hits: list[Verdict | None]  # per sample: the verdict from cache, if any
    hit_entries: list[Mapping[str, Any] | None]


@dataclass
class _Run:
    cache: ResponseCache | None
    semaphore: asyncio.Semaphore
    deadline: float
    warm: asyncio.Event
    warm_owner: tuple[str, int] | None
    price_note: str | None
    records: list[CallRecord] = field(default_factory=list)
    attempts: dict[tuple[str, int], int] = field(default_factory=dict)
    stopped: bool = False  # set on a fatal error, before anything else can be sent

    def next_attempt(self, chk_id: str, sample: int) -> int:
        n = self.attempts.get((chk_id, sample), 0) + 1
        self.attempts[(chk_id, sample)] = n
        return n


def _check_int(judge: str, name: str, value: Any, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise JudgeInputError(f"{judge} judge: {name} must be an integer >= {low}, not {value!r}")


def _check_number(judge: str, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise JudgeInputError(f"{judge} judge: {name} must be a number >= 0, not {value!r}")


class LLMJudge(JudgeBase):
    """Scores each checkpoint with an LLM reached through ``transport`` (see the module doc)."""

    def __init__(
        self,
        transport: Transport,
        *,
        concurrency: int = 8,
        prompt_dir: str | Path | None = None,
        cache_dir: str | Path | None = ".evalkit-cache",
        use_cache: bool = True,
        max_tokens: int = 2048,
        total_timeout_s: float = 1800,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        backoff_base_s: float = DEFAULT_BACKOFF_BASE_S,
        backoff_max_s: float = DEFAULT_BACKOFF_MAX_S,
        warm_cache: bool | None = None,
        repeats: int = 1,
    ) -> None:
        name = transport.judge_name
        for setting, value, low in (
            ("concurrency", concurrency, 1),
            ("max_tokens", max_tokens, 1),
            ("max_attempts", max_attempts, 1),
            ("repeats", repeats, 1),
        ):
            _check_int(name, setting, value, low)
        for setting, number in (
            ("total_timeout_s", total_timeout_s),
            ("backoff_base_s", backoff_base_s),
            ("backoff_max_s", backoff_max_s),
        ):
            _check_number(name, setting, number)
        self.transport = transport
        self.model = transport.model
        self.concurrency = concurrency
        self.prompts = PromptSet.load(prompt_dir)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.use_cache = use_cache
        self.max_tokens = max_tokens
        self.total_timeout_s = float(total_timeout_s)
        self.max_attempts = max_attempts
        self.backoff_base_s = float(backoff_base_s)
        self.backoff_max_s = float(backoff_max_s)
        self.warm_cache = warm_cache
        self.repeats = repeats

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.model!r}, prompt={self.prompts.version}, "
            f"concurrency={self.concurrency})"
        )

    @property
    def info(self) -> JudgeInfo:
        return JudgeInfo(
            name=self.transport.judge_name,
            evaluator_model=self.model,
            prompt_version=self.prompts.version,
            prompt_sha256=self.prompts.sha256,
        )

    def _redact(self, text: str) -> str:
        return redact(text, self.transport.key_env)

    # ----------------------------------------------------------------- planning

    def requests_for(self, rng: Range, submission: Submission) -> list[dict[str, Any]]:
        """The first request body of each checkpoint, in checklist order."""
        system = self.prompts.system()
        documents = self.prompts.documents(rng, submission)
        return [
            self.transport.build_request(
                max_tokens=self.max_tokens,
                system=system,
                documents=documents,
                item=self.prompts.item(rng, checkpoint),
                schema=self.prompts.verdict_schema,
            )
            for checkpoint in rng.checkpoints
        ]

    def _cache(self) -> ResponseCache | None:
        if self.cache_dir is None:
            return None
        return ResponseCache(
            self.cache_dir, read=self.use_cache, write=True, secret_env=self.transport.key_env
        )

    def _parse(self, checkpoint: Checkpoint, raw: Mapping[str, Any]) -> Verdict:
        answer = self.transport.answer_of(raw)
        return parse_answer(
            checkpoint,
            answer.text,
            answer.stop,
            answer.stop_label,
            addressed=self.prompts.asks_addressed,
        )

    def _plan(self, rng: Range, submission: Submission, cache: ResponseCache | None) -> list[_Item]:
        items: list[_Item] = []
        for index, (checkpoint, body) in enumerate(
            zip(rng.checkpoints, self.requests_for(rng, submission), strict=True)
        ):
            keys = [
                cache_key(
                    model=self.model, prompt_sha256=self.prompts.sha256, request=body, sample=s
                )
                for s in range(self.repeats)
            ]
            hits: list[Verdict | None] = []
            entries: list[Mapping[str, Any] | None] = []
            for key in keys:
                entry = cache.get(key) if cache is not None else None
                verdict = None
                if entry is not None:
                    try:
                        verdict = self._parse(checkpoint, entry.response)
                    except InvalidAnswer:
                        verdict = None  # unusable under today's rules (or a crash): ask again
                hits.append(verdict)
                entries.append(entry.data if verdict is not None and entry is not None else None)
            items.append(_Item(index, checkpoint, body, keys, hits, entries))
        return items

    def _should_warm(self, items: list[_Item]) -> bool:
        pending = sum(1 for item in items for hit in item.hits if hit is None)
        if pending < 2 or self.concurrency < 2:
            return False
        if self.warm_cache is not None:
            return self.warm_cache
        # Warming only pays when the prefix is long enough for the model to cache it at all.
        return self.transport.prefix_tokens(items[0].body) >= min_cacheable_tokens(self.model)

    def preflight(self, rng: Range, submission: Submission) -> int:
        """How many (item, sample) answers must come from the API; no network.

        Raises JudgeError when some must and the API key is not set, so a CLI can fail
        before starting anything. :meth:`judge` makes the same check. When some must and
        the cache folder cannot be written, says so once (the run goes on uncached).
        """
        cache = self._cache()
        items = self._plan(rng, submission, cache)
        pending = sum(1 for item in items for hit in item.hits if hit is None)
        self._require_key(needs_api=pending > 0)
        if pending and cache is not None:
            cache.check_writable()
        return pending

    def pending_requests(self, rng: Range, submission: Submission) -> list[PendingRequest]:
        """Every (item, sample) answer :meth:`judge` would have to ask for, with its cache key.

        The bodies are the ones :meth:`judge` sends first (one planning path for both), so an
        answer obtained elsewhere (the Message Batches API) and stored with
        :meth:`cache_entry` under ``key`` is a cache hit for the runner.
        """
        return [
            PendingRequest(item.keys[sample], item.checkpoint.id, sample, item.body)
            for item in self._plan(rng, submission, self._cache())
            for sample, hit in enumerate(item.hits)
            if hit is None
        ]

    def response_cache(self) -> ResponseCache | None:
        """The response cache this judge reads and writes (None without a cache folder)."""
        return self._cache()

    def cache_entry(
        self,
        *,
        chk_id: str,
        sample: int,
        request: Mapping[str, Any],
        response: Mapping[str, Any],
        final_request: Mapping[str, Any] | None = None,
        turns: int = 1,
        previous: list[Mapping[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """The response-cache entry for one answer (the one shape, whoever asked)."""
        return {
            "model": self.model,
            "prompt_sha256": self.prompts.sha256,
            "prompt_version": self.prompts.version,
            "sample": sample,
            "chk_id": chk_id,
            "request": request,
            "final_request": final_request if final_request is not None else request,
            "turns": turns,
            "previous_responses": list(previous or []),
            "response": response,
        }

    def _require_key(self, *, needs_api: bool) -> None:
        env = self.transport.key_env
        if needs_api and env and self.transport.needs_key():
            error = missing_key_error(env, self.transport.key_purpose)
            if error is not None:
                raise error

    # ----------------------------------------------------------------- judging

    async def judge(
        self,
        rng: Range,
        submission: Submission,
        *,
        on_item_done: ProgressCallback | None = None,
    ) -> JudgeResult:
        cache = self._cache()
        items = self._plan(rng, submission, cache)
        needs_api = any(hit is None for item in items for hit in item.hits)
        self._require_key(needs_api=needs_api)
        warm_owner = None
        if self._should_warm(items):
            first = next((i, s) for i in items for s, hit in enumerate(i.hits) if hit is None)
            warm_owner = (first[0].checkpoint.id, first[1])
        samples: dict[str, tuple[Verdict, ...]] = {}
        tasks: list[asyncio.Task[None]] = []
        opened = False
        try:
            if needs_api:
                await self.transport.open()
                opened = True
            run = _Run(
                cache=cache,
                semaphore=asyncio.Semaphore(self.concurrency),
                deadline=asyncio.get_running_loop().time() + self.total_timeout_s,
                warm=asyncio.Event(),
                warm_owner=warm_owner,
                price_note=price_warning(self.model),
            )
            if warm_owner is None:
                run.warm.set()
            if run.price_note and needs_api:
                log.warning("%s judge: %s", self.transport.judge_name, run.price_note)
            tasks = [
                asyncio.create_task(self._judge_item(run, item, samples, on_item_done))
                for item in items
            ]
            if tasks:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            # On the first failure (a fatal error, a failing progress callback), on any error
            # above, or when judge() itself is cancelled, nothing else may keep running or
            # spending, and the client is closed only once nothing uses it.
            for task in tasks:
                if not task.done():
                    task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if opened:
                await self.transport.close()
        failures = [
            t.exception()
            for t in tasks
            if not t.cancelled() and t.exception() and not isinstance(t.exception(), _Stopped)
        ]
        for failure in failures:
            if isinstance(failure, _RunStopped):
                raise JudgeError(str(failure)) from None
        if failures:
            raise failures[0]  # type: ignore[misc]
        records = sorted(run.records, key=lambda r: (r.order[0], r.sample, r.attempt, r.order[1]))
        usage_by_item: dict[str, Usage] = {item.checkpoint.id: Usage() for item in items}
        for record in records:
            usage_by_item[record.chk_id] += record.usage
        total = Usage()
        for usage in usage_by_item.values():
            total += usage
        verdicts = tuple(combine_samples(samples[item.checkpoint.id]) for item in items)
        return JudgeResult(
            verdicts=verdicts,
            usage=total,
            usage_by_item=usage_by_item,
            # Redacted again as a whole: a key pasted into the documents is in the requests.
            records=tuple(
                redact_json(record.to_json(), self.transport.key_env) for record in records
            ),
            samples={chk: tuple(found) for chk, found in samples.items()},
        )

    async def _judge_item(
        self,
        run: _Run,
        item: _Item,
        samples: dict[str, tuple[Verdict, ...]],
        on_item_done: ProgressCallback | None,
    ) -> None:
        found = await asyncio.gather(
            *(self._judge_sample(run, item, s) for s in range(self.repeats))
        )
        samples[item.checkpoint.id] = tuple(found)
        if on_item_done is not None:
            on_item_done(item.checkpoint.id)

    async def _judge_sample(self, run: _Run, item: _Item, sample: int) -> Verdict:
        checkpoint = item.checkpoint
        cached = item.hits[sample]
        if cached is not None:
            entry = item.hit_entries[sample] or {}
            # An answer the Message Batches API gave was paid for there (at the batch rate):
            # its usage and cost belong to this evaluation, not zero as for a replayed answer.
            from_batch = entry.get("source") == BATCH_SOURCE and isinstance(
                entry.get("response"), Mapping
            )
            self._record(
                run,
                item,
                sample,
                turn=int(entry.get("turns", 1)),
                cached=True,
                request=entry.get("final_request", item.body),
                answer=self.transport.answer_of(entry["response"]) if from_batch else None,
                response=entry.get("response"),
                error=None,
                latency=0.0,
                http=[],
                batch_id=str(entry.get("batch_id") or "unknown") if from_batch else None,
            )
            return cached
        owner = run.warm_owner == (checkpoint.id, sample)
        try:
            async with asyncio.timeout_at(run.deadline):
                if not owner:
                    await run.warm.wait()
                return await self._ask(run, item, sample, owner)
        except TimeoutError:
            return Verdict.failed(
                checkpoint.id,
                f"{self.transport.judge_name} judge: timed out: the judging time budget "
                f"(total_timeout_s={self.total_timeout_s:g}) ran out before this item was scored",
            )
        finally:
            if owner:
                run.warm.set()

    async def _ask(self, run: _Run, item: _Item, sample: int, owner: bool) -> Verdict:
        checkpoint = item.checkpoint
        name = self.transport.judge_name
        body = item.body
        previous: list[Mapping[str, Any]] = []
        problem: str | None = None
        last: Answer | None = None
        for turn in (1, 2):
            if turn == 2:
                assert problem is not None and last is not None
                max_tokens = self.transport.max_tokens_of(body)
                if last.stop == "max_tokens":  # more room, within reason
                    max_tokens = min(2 * max_tokens, max(max_tokens, RETRY_MAX_TOKENS_CAP))
                body = self.transport.correction_request(
                    item.body, last.text, self.prompts.retry(problem), max_tokens=max_tokens
                )
            try:
                answer = await self._call(run, item, sample, turn, body)
            except _CallFailed as exc:
                return Verdict.failed(checkpoint.id, f"{name} judge: {exc}")
            finally:
                if owner:
                    run.warm.set()
            # Stored before anything else happens to it: a crash from here on costs nothing.
            self._store(run, item, sample, turn, body, answer.raw, previous)
            try:
                verdict = parse_answer(
                    checkpoint,
                    answer.text,
                    answer.stop,
                    answer.stop_label,
                    addressed=self.prompts.asks_addressed,
                )
            except InvalidAnswer as exc:
                previous.append(answer.raw)
                last = answer
                self._annotate_last(run, item, sample, f"invalid answer: {exc.problem}")
                if not exc.retryable:
                    return Verdict.failed(checkpoint.id, f"{name} judge: {exc.problem}")
                if turn == 2:
                    return Verdict.failed(
                        checkpoint.id,
                        f"{name} judge: no usable answer after one retry: {exc.problem}",
                    )
                problem = exc.problem
                continue
            return verdict
        raise AssertionError("unreachable")

    def _store(
        self,
        run: _Run,
        item: _Item,
        sample: int,
        turn: int,
        final_request: Mapping[str, Any],
        response: Mapping[str, Any],
        previous: list[Mapping[str, Any]],
    ) -> None:
        if run.cache is None:
            return
        entry = self.cache_entry(
            chk_id=item.checkpoint.id,
            sample=sample,
            request=item.body,
            response=response,
            final_request=final_request,
            turns=turn,
            previous=previous,
        )
        try:
            run.cache.put(item.keys[sample], entry)
        except (OSError, OutputError, SecretInCacheError) as exc:
            log.warning(
                "%s judge: response not cached: %s",
                self.transport.judge_name,
                self._redact(str(exc)),
            )

    async def _call(
        self, run: _Run, item: _Item, sample: int, turn: int, body: dict[str, Any]
    ) -> Answer:
        """One judge call, retried on transient failures; the (redacted) answer."""
        loop = asyncio.get_running_loop()
        failures = 0
        while True:
            http: list[dict[str, Any]] = []
            token = HTTP_LOG.set(http)
            sent = False
            answer: Answer | None = None
            started = answered = time.monotonic()
            # What the record says unless the call ends otherwise: only a cancellation (time
            # budget, run stop) leaves a sent request without an outcome.
            error: str | None = "cancelled before the response arrived (time budget or run stop)"
            retry_after: float | None = None
            retryable = False
            try:
                async with run.semaphore:
                    if run.stopped:
                        raise _Stopped()
                    started = time.monotonic()
                    sent = True
                    answer = await self.transport.send(body)
                answered = time.monotonic()
                answer = self._redacted(answer)
                error = None
                return answer
            except _Stopped:
                raise
            except TransportError as exc:
                answered = time.monotonic()
                error = self._redact(exc.message)
                if exc.kind == "fatal":
                    run.stopped = True
                    raise _RunStopped(self._redact(self.transport.stop_hint(exc.message))) from None
                retryable = exc.kind == "retryable"
                retry_after = exc.retry_after
            except Exception as exc:  # anything else fails this item, never the run
                answered = time.monotonic()
                error = self._redact(f"{type(exc).__name__}: {clip(str(exc), 300)}")
            finally:
                HTTP_LOG.reset(token)
                if sent:  # one record per request sent: it may have been billed
                    self._record(
                        run,
                        item,
                        sample,
                        turn=turn,
                        cached=False,
                        request=body,
                        answer=answer,
                        response=answer.raw if answer is not None else None,
                        error=error,
                        latency=answered - started,
                        http=http,
                    )
            failures += 1
            if not retryable:
                raise _CallFailed(error)
            if failures >= self.max_attempts:
                raise _CallFailed(f"gave up after {failures} attempts: {error}")
            delay = self._backoff(failures, retry_after)
            if loop.time() + delay >= run.deadline:
                raise _CallFailed(
                    f"gave up after {failures} attempts: {error} (waiting {delay:.1f}s more "
                    f"would exceed total_timeout_s={self.total_timeout_s:g})"
                )
            await asyncio.sleep(delay)

    def _redacted(self, answer: Answer) -> Answer:
        env = self.transport.key_env
        raw = redact_json(answer.raw, env)
        if raw is answer.raw:
            return answer
        return self.transport.answer_of(raw)

    def _backoff(self, failures: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter, never shorter than what the server asked."""
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2.0 ** (failures - 1))
        delay = ceiling * (0.5 + random.random() / 2)
        if retry_after is not None:
            delay = max(delay, retry_after + random.uniform(0, 0.1 * max(retry_after, 0.01)))
        return delay

    def _record(
        self,
        run: _Run,
        item: _Item,
        sample: int,
        *,
        turn: int,
        cached: bool,
        request: Mapping[str, Any],
        answer: Answer | None,
        response: Mapping[str, Any] | None,
        error: str | None,
        latency: float,
        http: list[dict[str, Any]],
        batch_id: str | None = None,
    ) -> None:
        cost: float | None
        if cached and batch_id is not None and answer is not None:  # paid through a batch
            tokens = coerce_usage(answer.usage)
            cost = cost_usd(
                self.model,
                answer.billed if answer.billed is not None else answer.usage,
                batch=True,
            )
            requests = 1
        elif cached or answer is None:  # served from disk, or nothing came back
            tokens = coerce_usage(None)
            cost = 0.0 if cached else cost_usd(self.model, {})
            requests = 0 if cached else max(1, len(http))
        else:
            tokens = coerce_usage(answer.usage)
            cost = cost_usd(
                self.model, answer.billed if answer.billed is not None else answer.usage
            )
            requests = max(1, len(http))
        run.records.append(
            CallRecord(
                chk_id=item.checkpoint.id,
                sample=sample,
                attempt=1 if cached else run.next_attempt(item.checkpoint.id, sample),
                turn=turn,
                cache_key=item.keys[sample],
                cached=cached,
                request=request,
                response=response,
                error=error,
                requests=requests,
                tokens=tokens,
                cost_usd=round(cost, 8) if cost is not None else None,
                latency_s=round(latency, 4),
                http_attempts=tuple(http),
                warning=None if cached and batch_id is None else run.price_note,
                batch_id=batch_id,
                order=(item.index, len(run.records)),
            )
        )

    def _annotate_last(self, run: _Run, item: _Item, sample: int, error: str) -> None:
        """Mark the latest record of (item, sample) as an unusable answer."""
        for position in range(len(run.records) - 1, -1, -1):
            record = run.records[position]
            if record.chk_id == item.checkpoint.id and record.sample == sample:
                run.records[position] = record.with_error(self._redact(error))
                return
