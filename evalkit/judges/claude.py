"""Claude as the judge: one structured, cached, costed Messages API call per checkpoint.

How one evaluation is judged
----------------------------
* **One call per checkpoint**, items scored independently, run concurrently on
  ``AsyncAnthropic`` with at most ``concurrency`` requests in flight.
* **The request**: ``system`` is the rendered ``system.md``; the user turn has two
  text blocks: the *shared prefix* (the range's Facts, the report and the plan,
  each document fenced as untrusted data; ``documents.md``) marked
  ``cache_control: {"type": "ephemeral"}``, then the *item block* (``item.md``).
  The prefix is byte-identical for every item, so every call after the first
  reads it from the prompt cache. Because a prompt-cache entry becomes readable
  only once the call that wrote it has answered, the first call is sent alone
  and the rest wait for it (``warm_cache``; by default only when the prefix is
  long enough to be cached at all, by the same :func:`prefix_tokens` estimate
  that :mod:`.estimate` uses). Both documents are fenced with one boundary
  token derived from both texts, so neither can contain an end marker.
* **Structured output**: ``output_config.format`` is a JSON schema
  (:data:`VERDICT_SCHEMA`); no ``temperature``, no forced ``tool_choice``.
  The answer is checked (JSON, schema, a dimension present exactly when the
  checkpoint's scope has it, scores 0/1). An invalid, truncated
  (``max_tokens``) or refused answer is retried once, in the same conversation
  (the cached prefix intact) with the problem stated; a second failure makes
  the item ``status: error`` and the run goes on.
* **Resilience**: the SDK retries each call ``max_retries`` times (default 1);
  around it, 429/408/409/5xx/529, dropped connections, timeouts and unreadable
  response bodies are retried ``max_attempts`` times with exponential backoff
  and jitter, waiting at least what ``retry-after``/``retry-after-ms`` asks.
  The SDK sleeps between its retries while holding a concurrency slot;
  evalkit's backoff releases the slot, so other items proceed meanwhile. The
  whole judging is bounded by ``total_timeout_s``: items unfinished by then are
  ``status: error``, finished ones are kept. A 401 (authentication), 403
  (permission) or 404 (model not found) stops the run at once with
  :class:`~evalkit.errors.JudgeError`; any other 4xx fails only its item.
* **Response cache** (:mod:`.cache`): each valid answer is written to disk as it
  arrives, keyed by model, prompt hash, rendered request and sample index.
* **Records**: one JSON-ready dict per call (cache hits included) with the
  request body, the raw response, usage, latency and cost; never a header and
  never the key. A call to a model the price table does not know costs
  ``None`` (unknown), and so does any total it is part of; a cache hit costs 0.

The API key is read from ``ANTHROPIC_API_KEY`` by the SDK itself, only when a
call has to be made: a fully cached re-run needs no key and no network.
"""

from __future__ import annotations

import asyncio
import contextvars
import email.utils
import hashlib
import json
import logging
import math
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
import jsonschema
from jsonschema.exceptions import best_match

from ..errors import JudgeError
from ..model import (
    DETECTION_SUBSCORES,
    PENALTY_RULES,
    PLAN_SUBSCORES,
    Checkpoint,
    JudgeInfo,
    PenaltyFlag,
    Range,
    Submission,
    SubScoreVerdict,
    Usage,
    Verdict,
)
from .base import JudgeResult, ProgressCallback
from .cache import API_KEY_ENV, ResponseCache, SecretInCacheError, cache_key
from .pricing import cost_usd, min_cacheable_tokens, price_warning
from .registry import DEFAULT_CLAUDE_MODEL

if TYPE_CHECKING:  # the SDK is imported lazily: building a judge needs no network stack
    from anthropic import AsyncAnthropic

log = logging.getLogger(__name__)

DEFAULT_MODEL = DEFAULT_CLAUDE_MODEL
# One answer per item. Repeats (K answers, majority vote) are on the roadmap; the sample
# index is already part of every cache key and record so they need no migration.
SAMPLES = 1
PROMPTS_ROOT = Path(__file__).resolve().parent.parent / "prompts"
DEFAULT_PROMPT_DIR = PROMPTS_ROOT / "v1"
REQUIRED_TEMPLATES: tuple[str, ...] = ("system.md", "item.md")
# Taken from the packaged v1 prompt when a custom prompt folder does not have them.
OPTIONAL_TEMPLATES: tuple[str, ...] = ("documents.md", "retry.md")
VERSION_FILE = "VERSION"

# The SDK's own retries per call: few, because the SDK sleeps inside the concurrency slot.
DEFAULT_MAX_RETRIES = 1
# Outer retry policy (around the SDK's own retries; its backoff releases the slot).
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BACKOFF_BASE_S = 2.0
DEFAULT_BACKOFF_MAX_S = 60.0
RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every status >= 500 (529 overloaded too)
CHARS_PER_TOKEN = 4  # the local token estimate (estimate_tokens, prefix_tokens)
MAX_PROBLEM_CHARS = 400
# A truncated answer is retried with twice the max_tokens, up to this (unless set higher).
RETRY_MAX_TOKENS_CAP = 16384

# --------------------------------------------------------------------------- verdict schema


def _subscore_schema() -> dict[str, Any]:
    # Evidence before verdict: the model writes its quotes and rationale, then the score.
    return {
        "type": "object",
        "properties": {
            "quotes": {"type": "array", "items": {"type": "string"}},
            "rationale": {"type": "string"},
            "score": {"enum": [0, 1]},
        },
        "required": ["quotes", "rationale", "score"],
        "additionalProperties": False,
    }


def _dimension_schema(names: Sequence[str]) -> dict[str, Any]:
    return {
        "anyOf": [
            {"type": "null"},
            {
                "type": "object",
                "properties": {name: _subscore_schema() for name in names},
                "required": list(names),
                "additionalProperties": False,
            },
        ]
    }


VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "detection": _dimension_schema(DETECTION_SUBSCORES),
        "plan": _dimension_schema(PLAN_SUBSCORES),
        "penalties": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "rule": {"enum": list(PENALTY_RULES)},
                    "detail": {"type": "string"},
                    "quote": {"type": "string"},
                },
                "required": ["rule", "detail", "quote"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["detection", "plan", "penalties"],
    "additionalProperties": False,
}
_VALIDATOR = jsonschema.Draft202012Validator(VERDICT_SCHEMA)


class InvalidAnswer(Exception):
    """The model's answer cannot be used as a verdict; ``problem`` says why, for the model."""

    def __init__(self, problem: str, *, retryable: bool = True) -> None:
        super().__init__(problem)
        self.problem = problem
        self.retryable = retryable


def _clip(text: str, limit: int = MAX_PROBLEM_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def answer_text(message: Mapping[str, Any]) -> str:
    """The concatenated text blocks of a raw Messages API response."""
    blocks = message.get("content") or []
    return "".join(
        str(block.get("text", ""))
        for block in blocks
        if isinstance(block, Mapping) and block.get("type") == "text"
    )


def parse_verdict(checkpoint: Checkpoint, message: Mapping[str, Any]) -> Verdict:
    """The verdict in a raw response for ``checkpoint``; :class:`InvalidAnswer` if unusable."""
    stop = message.get("stop_reason")
    if stop == "refusal":
        raise InvalidAnswer(
            "you declined to answer (stop_reason=refusal). This is an authorised evaluation "
            "of a security report: only score the documents against the checkpoint"
        )
    if stop == "max_tokens":
        raise InvalidAnswer(
            "your answer was cut off at the max_tokens limit before the JSON was complete "
            "(stop_reason=max_tokens); answer more briefly"
        )
    if stop == "model_context_window_exceeded":
        raise InvalidAnswer("the request exceeds the model's context window", retryable=False)
    text = answer_text(message)
    try:
        data = json.loads(text)
    except ValueError as exc:
        detail = getattr(exc, "msg", str(exc))
        where = (
            f" at line {exc.lineno} column {exc.colno}"
            if isinstance(exc, json.JSONDecodeError)
            else ""
        )
        raise InvalidAnswer(f"your answer is not valid JSON ({detail}{where})") from None
    error = best_match(_VALIDATOR.iter_errors(data))
    if error is not None:
        path = "/".join(str(part) for part in error.absolute_path) or "(top level)"
        raise InvalidAnswer(
            _clip(f"your JSON does not match the schema at {path}: {error.message}")
        )
    detection = _dimension(checkpoint, data, "detection", DETECTION_SUBSCORES)
    plan = _dimension(checkpoint, data, "plan", PLAN_SUBSCORES)
    penalties = tuple(
        PenaltyFlag(rule=flag["rule"], detail=flag["detail"], quote=flag["quote"])
        for flag in data["penalties"]
    )
    return Verdict(
        chk_id=checkpoint.id,
        status="scored",
        detection=detection,
        plan=plan,
        penalties=penalties,
    )


def _dimension(
    checkpoint: Checkpoint, data: Mapping[str, Any], dimension: str, names: Sequence[str]
) -> dict[str, SubScoreVerdict] | None:
    applies = checkpoint.has_detection if dimension == "detection" else checkpoint.has_plan
    value = data[dimension]
    if applies and value is None:
        raise InvalidAnswer(
            f'"{dimension}" is null, but the {dimension} dimension applies to {checkpoint.id} '
            f"(scope {checkpoint.scope}): score all of its sub-scores"
        )
    if not applies and value is not None:
        raise InvalidAnswer(
            f'"{dimension}" must be null: the {dimension} dimension is N/A for {checkpoint.id} '
            f"(scope {checkpoint.scope})"
        )
    if value is None:
        return None
    claims: dict[str, SubScoreVerdict] = {}
    for name in names:
        sub = value[name]
        score = sub["score"]
        if isinstance(score, bool) or not isinstance(score, int) or score not in (0, 1):
            raise InvalidAnswer(f"{dimension}/{name}/score must be the integer 0 or 1")
        if score == 1 and not any(quote.strip() for quote in sub["quotes"]):
            raise InvalidAnswer(
                f"{dimension}/{name} is 1 but has no quote: a point needs the exact passage "
                "it rests on in quotes (or score it 0)"
            )
        claims[name] = SubScoreVerdict(
            value=score, quotes=tuple(sub["quotes"]), rationale=sub["rationale"]
        )
    return claims


# --------------------------------------------------------------------------- prompts


@dataclass(frozen=True)
class _DocumentView:
    filename: str
    text: str
    boundary: str


def _boundary(*texts: str) -> str:
    """One fence token for all ``texts``, derived from all of them.

    A document cannot contain a hash of itself, so none of the texts can contain the
    end marker; one token per document would let one document forge the other's.
    """
    joined = "\0".join(texts)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class PromptSet:
    """The judge prompt templates of one folder, with their version and hash."""

    directory: Path
    version: str
    sha256: str
    sources: Mapping[str, str]  # template name -> text
    _env: jinja2.Environment = field(repr=False, compare=False)

    @classmethod
    def load(cls, prompt_dir: str | Path | None = None) -> PromptSet:
        directory = Path(prompt_dir) if prompt_dir is not None else DEFAULT_PROMPT_DIR
        if not directory.is_dir():
            raise JudgeError("prompt folder not found", path=directory)
        sources: dict[str, str] = {}
        for name in REQUIRED_TEMPLATES:
            path = directory / name
            if not path.is_file():
                raise JudgeError(
                    f"prompt template {name} is missing (a prompt folder needs "
                    f"{' and '.join(REQUIRED_TEMPLATES)})",
                    path=path,
                )
            sources[name] = path.read_text(encoding="utf-8")
        for name in OPTIONAL_TEMPLATES:
            path = directory / name
            if not path.is_file():
                path = DEFAULT_PROMPT_DIR / name
            sources[name] = path.read_text(encoding="utf-8")
        version_path = directory / VERSION_FILE
        version = directory.name
        if version_path.is_file():
            lines = version_path.read_text(encoding="utf-8").strip().splitlines()
            version = lines[0].strip() if lines else version
            sources[VERSION_FILE] = version_path.read_text(encoding="utf-8")
        digest = hashlib.sha256()
        for name in sorted(sources):
            digest.update(name.encode("utf-8") + b"\0")
            digest.update(sources[name].encode("utf-8") + b"\0")
        env = jinja2.Environment(
            loader=jinja2.DictLoader(sources),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=True,
        )
        for name in (*REQUIRED_TEMPLATES, *OPTIONAL_TEMPLATES):
            try:
                env.get_template(name)
            except jinja2.TemplateSyntaxError as exc:
                raise JudgeError(
                    f"prompt template {name}: {exc.message}", path=directory / name, line=exc.lineno
                ) from None
        return cls(
            directory=directory,
            version=version,
            sha256=digest.hexdigest(),
            sources=sources,
            _env=env,
        )

    def _render(self, name: str, **context: Any) -> str:
        try:
            return self._env.get_template(name).render(**context)
        except jinja2.TemplateError as exc:
            raise JudgeError(f"prompt template {name}: {exc}", path=self.directory / name) from None

    def system(self) -> str:
        return self._render("system.md")

    def documents(self, rng: Range, submission: Submission) -> str:
        boundary = _boundary(submission.report.text, submission.plan.text)

        def view(doc: Any) -> _DocumentView:
            return _DocumentView(filename=doc.filename, text=doc.text, boundary=boundary)

        return self._render(
            "documents.md",
            range=rng,
            facts=list(rng.facts),
            report=view(submission.report),
            plan=view(submission.plan),
        )

    def item(self, rng: Range, checkpoint: Checkpoint) -> str:
        caps = [{"id": cap, "name": rng.capability_name(cap)} for cap in checkpoint.caps]
        return self._render(
            "item.md",
            chk=checkpoint,
            has_detection=checkpoint.has_detection,
            has_plan=checkpoint.has_plan,
            caps=caps,
            extra=list(checkpoint.extra.items()),
        )

    def retry(self, problem: str) -> str:
        return self._render("retry.md", problem=problem)


def build_request(
    *, model: str, max_tokens: int, system: str, documents: str, item: str
) -> dict[str, Any]:
    """The Messages API body for one checkpoint (no headers: they never leave the SDK)."""
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
        "output_config": {"format": {"type": "json_schema", "schema": VERDICT_SCHEMA}},
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
    warm-up decision and :mod:`.estimate` use it, so they agree on what is cached.
    """
    schema = json.dumps(body["output_config"]["format"]["schema"], separators=(",", ":"))
    documents = body["messages"][0]["content"][0]["text"]
    return estimate_tokens(body["system"]) + estimate_tokens(schema) + estimate_tokens(documents)


# --------------------------------------------------------------------------- secrets


def redact(text: str) -> str:
    """``text`` with the value of ANTHROPIC_API_KEY (if set and present) replaced."""
    secret = os.environ.get(API_KEY_ENV, "").strip()
    if secret and secret in text:
        return text.replace(secret, "[redacted]")
    return text


# --------------------------------------------------------------------------- HTTP observation

# Each judge call sets a list here; the client middleware appends one entry per HTTP attempt,
# so the SDK's own retries are counted and recorded too.
_HTTP_LOG: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "evalkit_claude_http_log", default=None
)


async def _observe_http(request: Any, call_next: Any) -> Any:
    entries = _HTTP_LOG.get()
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


# --------------------------------------------------------------------------- the judge


class _RunStopped(Exception):
    """A 401, 403 or 404: no call can succeed, the whole run stops with this message."""


class _CallFailed(Exception):
    """One call could not be completed (after retries); the item fails with this message."""


class _Stopped(Exception):
    """The run is stopping (another item hit a 401/403/404): send nothing more."""


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
    client: Any
    cache: ResponseCache | None
    semaphore: asyncio.Semaphore
    deadline: float
    warm: asyncio.Event
    warm_owner: tuple[str, int] | None
    price_note: str | None
    records: list[dict[str, Any]] = field(default_factory=list)
    attempts: dict[tuple[str, int], int] = field(default_factory=dict)
    stopped: bool = False  # set on a 401/403/404, before anything else can be sent

    def next_attempt(self, chk_id: str, sample: int) -> int:
        n = self.attempts.get((chk_id, sample), 0) + 1
        self.attempts[(chk_id, sample)] = n
        return n


def _usage_of(raw: Mapping[str, Any] | None) -> dict[str, int]:
    usage = (raw or {}).get("usage") or {}

    def number(name: str) -> int:
        value = usage.get(name)
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0

    return {
        "input_tokens": number("input_tokens"),
        "output_tokens": number("output_tokens"),
        "cache_creation_input_tokens": number("cache_creation_input_tokens"),
        "cache_read_input_tokens": number("cache_read_input_tokens"),
    }


def _usage_from_record(record: Mapping[str, Any]) -> Usage:
    u = record["usage"]
    return Usage(
        requests=u["requests"],
        input_tokens=u["input_tokens"],
        output_tokens=u["output_tokens"],
        cache_creation_input_tokens=u["cache_creation_input_tokens"],
        cache_read_input_tokens=u["cache_read_input_tokens"],
        cost_usd=u["cost_usd"],  # None for a call to an unpriced model: unknown, not free
        latency_s=u["latency_s"],
        cached_responses=u["cached_responses"],
    )


class ClaudeJudge:
    """Scores each checkpoint with one Claude call (see the module docstring).

    Options: ``model``; ``concurrency`` (requests in flight); ``prompt_dir`` (a folder with
    at least ``system.md`` and ``item.md``; default the packaged ``prompts/v1``);
    ``cache_dir`` (None: no response cache) and ``use_cache`` (False: ignore cached answers
    but still store fresh ones); ``max_tokens`` per answer; ``timeout_s`` per HTTP request;
    ``total_timeout_s`` for the whole judging; ``max_retries`` (the SDK's, per call);
    ``base_url`` (else ``ANTHROPIC_BASE_URL``, else the API); ``client`` (an
    ``AsyncAnthropic`` to use instead of building one: the judge uses a copy of it with its
    own ``max_retries``, ``timeout_s`` and HTTP observer, and never closes it). Tuning:
    ``max_attempts`` (evalkit's own tries per call), ``backoff_base_s``/``backoff_max_s``,
    ``warm_cache`` (None: send the first call alone when the prefix is cacheable;
    True/False: always/never).

    ``max_retries`` defaults to 1 so that retries mostly happen in evalkit's own backoff
    loop (``max_attempts``): the SDK sleeps between its retries *inside* the concurrency
    slot, keeping it from other items, whereas evalkit's backoff releases the slot while it
    waits. Both honour ``retry-after``.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        concurrency: int = 8,
        prompt_dir: str | Path | None = None,
        cache_dir: str | Path | None = ".evalkit-cache",
        use_cache: bool = True,
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
            raise JudgeError("claude judge: model must be a non-empty model id")
        for name, value, low in (
            ("concurrency", concurrency, 1),
            ("max_tokens", max_tokens, 1),
            ("max_attempts", max_attempts, 1),
            ("max_retries", max_retries, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise JudgeError(f"claude judge: {name} must be an integer >= {low}, not {value!r}")
        for name, number in (
            ("timeout_s", timeout_s),
            ("total_timeout_s", total_timeout_s),
            ("backoff_base_s", backoff_base_s),
            ("backoff_max_s", backoff_max_s),
        ):
            if isinstance(number, bool) or not isinstance(number, (int, float)) or number < 0:
                raise JudgeError(f"claude judge: {name} must be a number >= 0, not {number!r}")
        self.model = model
        self.concurrency = concurrency
        self.prompts = PromptSet.load(prompt_dir)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.use_cache = use_cache
        self.max_tokens = max_tokens
        self.timeout_s = float(timeout_s)
        self.total_timeout_s = float(total_timeout_s)
        self.max_retries = max_retries
        self.base_url = base_url
        self.max_attempts = max_attempts
        self.backoff_base_s = float(backoff_base_s)
        self.backoff_max_s = float(backoff_max_s)
        self.warm_cache = warm_cache
        self._client = client

    def __repr__(self) -> str:
        return (
            f"ClaudeJudge(model={self.model!r}, prompt={self.prompts.version}, "
            f"concurrency={self.concurrency})"
        )

    @property
    def info(self) -> JudgeInfo:
        return JudgeInfo(
            name="claude",
            evaluator_model=self.model,
            prompt_version=self.prompts.version,
            prompt_sha256=self.prompts.sha256,
        )

    # ----------------------------------------------------------------- planning

    def requests_for(self, rng: Range, submission: Submission) -> list[dict[str, Any]]:
        """The first request body of each checkpoint, in checklist order."""
        system = self.prompts.system()
        documents = self.prompts.documents(rng, submission)
        return [
            build_request(
                model=self.model,
                max_tokens=self.max_tokens,
                system=system,
                documents=documents,
                item=self.prompts.item(rng, checkpoint),
            )
            for checkpoint in rng.checkpoints
        ]

    def _cache(self) -> ResponseCache | None:
        if self.cache_dir is None:
            return None
        return ResponseCache(self.cache_dir, read=self.use_cache, write=True)

    def _plan(self, rng: Range, submission: Submission, cache: ResponseCache | None) -> list[_Item]:
        items: list[_Item] = []
        for index, (checkpoint, body) in enumerate(
            zip(rng.checkpoints, self.requests_for(rng, submission), strict=True)
        ):
            keys = [
                cache_key(
                    model=self.model, prompt_sha256=self.prompts.sha256, request=body, sample=s
                )
                for s in range(SAMPLES)
            ]
            hits: list[Verdict | None] = []
            entries: list[Mapping[str, Any] | None] = []
            for key in keys:
                entry = cache.get(key) if cache is not None else None
                verdict = None
                if entry is not None:
                    try:
                        verdict = parse_verdict(checkpoint, entry.response)
                    except InvalidAnswer:
                        verdict = None  # unusable under today's rules: ask again
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
        return prefix_tokens(items[0].body) >= min_cacheable_tokens(self.model)

    def preflight(self, rng: Range, submission: Submission) -> int:
        """How many (item, sample) answers must come from the API; no network.

        Raises JudgeError when some must and ``ANTHROPIC_API_KEY`` is not set, so a CLI
        can fail before starting anything. :meth:`judge` makes the same check.
        """
        items = self._plan(rng, submission, self._cache())
        pending = sum(1 for item in items for hit in item.hits if hit is None)
        self._require_key(needs_api=pending > 0)
        return pending

    def _require_key(self, *, needs_api: bool) -> None:
        if needs_api and self._client is None and not os.environ.get(API_KEY_ENV, "").strip():
            raise JudgeError(
                f"{API_KEY_ENV} is not set: export it to judge with Claude "
                "(only a fully cached re-run works without it)"
            )

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
        verdicts: dict[str, Verdict] = {}
        tasks: list[asyncio.Task[None]] = []
        client: Any = None
        owned = False
        try:
            if needs_api:
                client, owned = self._open_client()
            run = _Run(
                client=client,
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
                log.warning("claude judge: %s", run.price_note)
            tasks = [
                asyncio.create_task(self._judge_item(run, item, verdicts, on_item_done))
                for item in items
            ]
            if tasks:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            # On the first failure (a 401/403/404, a failing progress callback), on any error
            # above, or when judge() itself is cancelled, nothing else may keep running or
            # spending, and the client is closed only once nothing uses it.
            for task in tasks:
                if not task.done():
                    task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if owned:
                await client.close()
        failures = [
            t.exception()
            for t in tasks
            if not t.cancelled() and t.exception() and not isinstance(t.exception(), _Stopped)
        ]
        for failure in failures:
            if isinstance(failure, _RunStopped):
                raise JudgeError(str(failure)) from None
        if failures:
            raise failures[0]
        records = sorted(
            run.records, key=lambda r: (r["_index"], r["sample"], r["attempt"], r["_seq"])
        )
        usage_by_item: dict[str, Usage] = {item.checkpoint.id: Usage() for item in items}
        for record in records:
            usage_by_item[record["chk_id"]] += _usage_from_record(record)
            del record["_index"], record["_seq"]
        total = Usage()
        for usage in usage_by_item.values():
            total += usage
        return JudgeResult(
            verdicts=tuple(verdicts[item.checkpoint.id] for item in items),
            usage=total,
            usage_by_item=usage_by_item,
            records=tuple(records),
        )

    def _open_client(self) -> tuple[Any, bool]:
        if self._client is not None:
            # A copy with this judge's retries, timeout and HTTP observer (appended after the
            # caller's own middleware). It shares the caller's connection pool: not ours to close.
            client = self._client.with_options(max_retries=self.max_retries, timeout=self.timeout_s)
            return client.with_middleware(_observe_http), False
        from anthropic import AsyncAnthropic

        # No api_key argument: the SDK reads ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL when
        # base_url is None) itself, so the key never passes through evalkit.
        client = AsyncAnthropic(
            base_url=self.base_url,
            max_retries=self.max_retries,
            timeout=self.timeout_s,
            middleware=[_observe_http],
        )
        return client, True

    async def _judge_item(
        self,
        run: _Run,
        item: _Item,
        verdicts: dict[str, Verdict],
        on_item_done: ProgressCallback | None,
    ) -> None:
        verdict = await self._judge_sample(run, item, 0)
        verdicts[item.checkpoint.id] = verdict
        if on_item_done is not None:
            on_item_done(item.checkpoint.id)

    async def _judge_sample(self, run: _Run, item: _Item, sample: int) -> Verdict:
        checkpoint = item.checkpoint
        cached = item.hits[sample]
        if cached is not None:
            entry = item.hit_entries[sample] or {}
            self._record(
                run,
                item,
                sample,
                turn=int(entry.get("turns", 1)),
                cached=True,
                request=entry.get("final_request", item.body),
                response=entry.get("response"),
                error=None,
                latency=0.0,
                http=[],
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
                f"claude judge: timed out: the judging time budget (total_timeout_s="
                f"{self.total_timeout_s:g}) ran out before this item was scored",
            )
        finally:
            if owner:
                run.warm.set()

    async def _ask(self, run: _Run, item: _Item, sample: int, owner: bool) -> Verdict:
        checkpoint = item.checkpoint
        body = item.body
        previous: list[Mapping[str, Any]] = []
        problem: str | None = None
        for turn in (1, 2):
            if turn == 2:
                assert problem is not None
                last = previous[-1]
                max_tokens = body["max_tokens"]
                if last.get("stop_reason") == "max_tokens":  # more room, within reason
                    max_tokens = min(2 * max_tokens, max(max_tokens, RETRY_MAX_TOKENS_CAP))
                body = correction_request(
                    item.body,
                    answer_text(last),
                    self.prompts.retry(problem),
                    max_tokens=max_tokens,
                )
            try:
                raw = await self._call(run, item, sample, turn, body)
            except _CallFailed as exc:
                return Verdict.failed(checkpoint.id, f"claude judge: {exc}")
            finally:
                if owner:
                    run.warm.set()
            try:
                verdict = parse_verdict(checkpoint, raw)
            except InvalidAnswer as exc:
                previous.append(raw)
                self._annotate_last(run, item, sample, f"invalid answer: {exc.problem}")
                if not exc.retryable:
                    return Verdict.failed(checkpoint.id, f"claude judge: {exc.problem}")
                if turn == 2:
                    return Verdict.failed(
                        checkpoint.id,
                        f"claude judge: no usable answer after one retry: {exc.problem}",
                    )
                problem = exc.problem
                continue
            self._store(run, item, sample, turn, body, raw, previous)
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
        entry = {
            "model": self.model,
            "prompt_sha256": self.prompts.sha256,
            "prompt_version": self.prompts.version,
            "sample": sample,
            "chk_id": item.checkpoint.id,
            "request": item.body,
            "final_request": final_request,
            "turns": turn,
            "previous_responses": previous,
            "response": response,
        }
        try:
            run.cache.put(item.keys[sample], entry)
        except (OSError, SecretInCacheError) as exc:
            log.warning("claude judge: response not cached: %s", redact(str(exc)))

    async def _call(
        self, run: _Run, item: _Item, sample: int, turn: int, body: dict[str, Any]
    ) -> Mapping[str, Any]:
        """One judge call, retried on transient failures; the raw response JSON."""
        from anthropic import (
            APIConnectionError,
            APIResponseValidationError,
            APIStatusError,
            AuthenticationError,
            NotFoundError,
            PermissionDeniedError,
        )

        loop = asyncio.get_running_loop()
        failures = 0
        while True:
            http: list[dict[str, Any]] = []
            token = _HTTP_LOG.set(http)
            sent = False
            response: dict[str, Any] | None = None
            answered: float | None = None
            # What the record says unless the call ends otherwise: only a cancellation (time
            # budget, run stop) leaves a sent request without an outcome.
            error: str | None = "cancelled before the response arrived (time budget or run stop)"
            retry_after: float | None = None
            try:
                async with run.semaphore:
                    if run.stopped:
                        raise _Stopped()
                    started = time.monotonic()
                    sent = True
                    message = await run.client.messages.create(**body)
                answered = time.monotonic()
                # A 200 whose JSON is null, a list or a scalar is not parsed into a Message.
                if not hasattr(message, "to_dict"):
                    raise _Malformed(f"unreadable response body ({type(message).__name__})")
                response, error = message.to_dict(mode="json"), None
                return response
            except _Stopped:
                raise
            except (AuthenticationError, PermissionDeniedError, NotFoundError) as exc:
                run.stopped = True
                error = redact(f"HTTP {exc.status_code}: {exc.api_message or exc.message}")
                raise _RunStopped(stop_message(exc, self.model)) from None
            except APIStatusError as exc:
                error = redact(_describe_status(exc))
                retryable = exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
                retry_after = retry_after_seconds(exc.response.headers)
            except APIConnectionError as exc:  # APITimeoutError included
                error = redact(f"{type(exc).__name__}: {exc.message}")
                retryable = True
            except (APIResponseValidationError, *_UNREADABLE) as exc:
                error = redact(f"malformed response: {_clip(str(exc), 200)}")
                retryable = True
            except Exception as exc:  # anything else fails this item, never the run
                error = redact(f"{type(exc).__name__}: {_clip(str(exc), 300)}")
                retryable = False
            finally:
                _HTTP_LOG.reset(token)
                if sent:  # one record per request sent: it may have been billed
                    self._record(
                        run,
                        item,
                        sample,
                        turn=turn,
                        cached=False,
                        request=body,
                        response=response,
                        error=error,
                        latency=(answered or time.monotonic()) - started,
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

    def _backoff(self, failures: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter, never shorter than what the server asked."""
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (failures - 1))
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
        response: Mapping[str, Any] | None,
        error: str | None,
        latency: float,
        http: list[dict[str, Any]],
    ) -> None:
        if cached:  # served from disk: nothing was spent by this run
            tokens, cost, requests = _usage_of(None), 0.0, 0
        else:
            tokens = _usage_of(response)
            cost = cost_usd(self.model, (response or {}).get("usage") or {})
            requests = max(1, len(http))
        record = {
            "chk_id": item.checkpoint.id,
            "sample": sample,
            "attempt": 1 if cached else run.next_attempt(item.checkpoint.id, sample),
            "turn": turn,
            "cache_key": item.keys[sample],
            "cached": cached,
            "request": request,
            "response": response,
            "error": error,
            "usage": {
                "requests": requests,
                **tokens,
                "cost_usd": round(cost, 8) if cost is not None else None,
                "latency_s": round(latency, 4),
                "cached_responses": 1 if cached else 0,
            },
            "latency_s": round(latency, 4),
            "cost_usd": round(cost, 8) if cost is not None else None,
            "http_attempts": list(http),
            "warning": None if cached else run.price_note,
            "_index": item.index,
            "_seq": len(run.records),
        }
        run.records.append(record)

    def _annotate_last(self, run: _Run, item: _Item, sample: int, error: str) -> None:
        """Mark the latest record of (item, sample) as an unusable answer."""
        for record in reversed(run.records):
            if record["chk_id"] == item.checkpoint.id and record["sample"] == sample:
                record["error"] = redact(error)
                return


class _Malformed(Exception):
    """The HTTP response was a success but not a readable message."""


# A 200 whose body is not JSON (raised by the SDK's parser) or not a message.
_UNREADABLE: tuple[type[BaseException], ...] = (_Malformed, json.JSONDecodeError, UnicodeError)


def stop_message(exc: Any, model: str) -> str:
    """Why a 401, 403 or 404 from the API stops the run (shared with :mod:`.estimate`)."""
    detail = redact(_clip(str(exc.api_message or exc.message), 300))
    if exc.status_code == 404:
        return f"model {model!r} not found: check --model (HTTP 404: {detail})"
    if exc.status_code == 403:
        return f"permission denied (HTTP 403): {detail}"
    return f"authentication failed: check {API_KEY_ENV} (HTTP {exc.status_code}: {detail})"


def _describe_status(exc: Any) -> str:
    kind = exc.type or type(exc).__name__
    detail = exc.api_message or exc.message
    return f"HTTP {exc.status_code} {kind}: {_clip(str(detail), 300)}"


__all__ = [
    "DEFAULT_MODEL",
    "VERDICT_SCHEMA",
    "ClaudeJudge",
    "InvalidAnswer",
    "PromptSet",
    "build_request",
    "correction_request",
    "estimate_tokens",
    "parse_verdict",
    "prefix_tokens",
    "redact",
    "retry_after_seconds",
    "stop_message",
]
