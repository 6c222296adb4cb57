"""Fill the response cache through the Message Batches API (`evalkit batch --batch-api`).

The judge's runner asks one request per (checkpoint, sample). For a large batch
of evaluations the same requests can go through the Message Batches API at half
the price (:data:`~.pricing.BATCH_DISCOUNT`), answered within 24 hours:

1. **Collect**: every request the runner would send for every evaluation of the
   batch, from the runner's own planning (:meth:`LLMJudge.pending_requests`: the
   same bodies, the same cache keys), minus what the cache already holds.
2. **Submit**: split into batches of at most :data:`MAX_REQUESTS_PER_BATCH`
   requests and :data:`MAX_BATCH_BYTES` bytes. Each request's ``custom_id`` is
   its cache key (a sha256 hex digest: 64 characters of ``[0-9a-f]``, within the
   API's ``[a-zA-Z0-9_-]{1,64}``). Each submitted batch is journalled in the
   cache folder (``<cache>/message-batches/<batch id>.json``) before polling, so
   an interrupted run picks the same batches up again by id instead of paying
   twice.
3. **Poll** ``batches.retrieve`` until every batch has ended (a tqdm bar with the
   succeeded / errored / canceled / expired / processing counts).
4. **Collect results** (``batches.results``, JSONL): each succeeded answer is
   stored in the response cache under its key, in the entry shape a direct call
   writes (:meth:`LLMJudge.cache_entry`), marked ``source: message_batches`` with
   its ``batch_id`` so the runner costs it at the batch rate. Errored, canceled
   and expired requests are left uncached: the notebooks ask them directly.

The notebooks then run as in any batch and find every succeeded answer in the
cache.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...bounded import check_name, parse_json
from ...errors import EvalkitError, JudgeError
from ...fileio import read_confined, write_text_atomic
from .cache import ResponseCache, SecretInCacheError, canonical_json
from .runner import BATCH_SOURCE, LLMJudge, PendingRequest
from .transport import redact, redact_json

if TYPE_CHECKING:
    from ...model import Range, Submission
    from ..config import JudgeConfig

log = logging.getLogger(__name__)

# The API's limits per Message Batch (https://docs.claude.com/en/docs/build-with-claude/batch-processing).
MAX_REQUESTS_PER_BATCH = 100_000
MAX_BATCH_BYTES = 256 * 1024 * 1024
POLL_INTERVAL_S = 30.0  # the CLI default (--batch-poll-interval)
JOURNAL_FOLDER = "message-batches"
RESULT_TYPES: tuple[str, ...] = ("succeeded", "errored", "canceled", "expired")


@dataclass
class Summary:
    """What the Message Batches pass did."""

    requests: int = 0  # answers the cache did not hold
    submitted: int = 0  # sent in new batches by this run
    resumed: int = 0  # already in batches an earlier run submitted
    batch_ids: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RESULT_TYPES, 0))

    def line(self) -> str:
        left = self.counts["errored"] + self.counts["canceled"] + self.counts["expired"]
        resumed = f", {self.resumed} resumed" if self.resumed else ""
        tail = f"; {left} left uncached (asked directly by the notebooks)" if left else ""
        return (
            f"message batches: {self.requests} requests in {len(self.batch_ids)} batch(es)"
            f" ({self.submitted} submitted{resumed}): {self.counts['succeeded']} succeeded,"
            f" {self.counts['errored']} errored, {self.counts['canceled']} canceled,"
            f" {self.counts['expired']} expired{tail}"
        )


def request_size(request: PendingRequest) -> int:
    """The bytes one request adds to a batch's JSON body."""
    return len(canonical_json({"custom_id": request.key, "params": request.body})) + 1


def split_requests(
    requests: Sequence[PendingRequest],
    *,
    max_count: int = MAX_REQUESTS_PER_BATCH,
    max_bytes: int = MAX_BATCH_BYTES,
) -> list[list[PendingRequest]]:
    """``requests`` in order, cut into batches within both limits.

    A single request larger than ``max_bytes`` cannot fit any batch: it is refused.
    """
    batches: list[list[PendingRequest]] = []
    current: list[PendingRequest] = []
    size = 0
    for request in requests:
        needed = request_size(request)
        if needed > max_bytes:
            raise JudgeError(
                f"message batches: the request for {request.chk_id} is {needed} bytes,"
                f" above the {max_bytes}-byte batch limit"
            )
        if current and (len(current) >= max_count or size + needed > max_bytes):
            batches.append(current)
            current, size = [], 0
        current.append(request)
        size += needed
    if current:
        batches.append(current)
    return batches


def collect_requests(
    judge: LLMJudge, pairs: Iterable[tuple[Range, Submission]]
) -> list[PendingRequest]:
    """Every uncached request ``judge`` would send for ``pairs`` (each a range and the
    documents evaluated against it), once each: two evaluations may share one."""
    found: dict[str, PendingRequest] = {}
    for rng, submission in pairs:
        for request in judge.pending_requests(rng, submission):
            found.setdefault(request.key, request)
    return list(found.values())


def batch_judge(config: JudgeConfig) -> LLMJudge:
    """The judge of ``config``, checked to be one the Message Batches API can serve."""
    if config.judge != "claude":
        raise EvalkitError(
            f"--batch-api needs --judge claude (the Message Batches API is Anthropic's),"
            f" not --judge {config.judge}"
        )
    judge = config.build()
    if not isinstance(judge, LLMJudge) or judge.response_cache() is None:
        raise EvalkitError("--batch-api needs the response cache (a --cache-dir)")
    if not judge.use_cache:
        raise EvalkitError("--batch-api fills the response cache: it cannot be used with it off")
    return judge


# --------------------------------------------------------------------------- journal


def _journal_dir(cache: ResponseCache) -> Path:
    return cache.root / JOURNAL_FOLDER


def _write_journal(cache: ResponseCache, batch_id: str, data: Mapping[str, Any]) -> None:
    # The one guarded writer: no link below the cache folder is followed.
    write_text_atomic(
        _journal_dir(cache) / f"{check_name(batch_id, 'batch id')}.json",
        json.dumps(data, indent=1, sort_keys=True),
        root=cache.root,
    )


def open_batches(cache: ResponseCache) -> dict[str, list[str]]:
    """Batches an earlier run submitted and did not collect: ``{batch id: custom ids}``."""
    found: dict[str, list[str]] = {}
    folder = _journal_dir(cache)
    if not folder.is_dir():
        return found
    for path in sorted(folder.glob("*.json")):
        try:
            data = parse_json(read_confined(path, cache.root), path=path)
        except (OSError, EvalkitError):
            continue
        if isinstance(data, dict) and not data.get("collected"):
            found[str(data["batch_id"])] = [str(key) for key in data.get("custom_ids", [])]
    return found


# --------------------------------------------------------------------------- the pass


def _counts(batch: Any) -> dict[str, int]:
    counts = batch.request_counts
    return {name: int(getattr(counts, name)) for name in (*RESULT_TYPES, "processing")}


def fill_cache(
    judge: LLMJudge,
    requests: Sequence[PendingRequest],
    *,
    client: Any = None,
    poll_interval_s: float = POLL_INTERVAL_S,
    max_count: int = MAX_REQUESTS_PER_BATCH,
    max_bytes: int = MAX_BATCH_BYTES,
    progress: bool = True,
    sleep: Callable[[float], None] = time.sleep,
) -> Summary:
    """Ask ``requests`` through Message Batches and store every succeeded answer in the cache.

    ``client``: an ``anthropic.Anthropic`` (default: one built from the environment,
    ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``, as the judge builds its own).
    """
    cache = judge.response_cache()
    if cache is None:
        raise EvalkitError("--batch-api needs the response cache (a --cache-dir)")
    summary = Summary(requests=len(requests))
    by_key = {request.key: request for request in requests}
    # Batches an interrupted run left open are polled again rather than paid for twice
    # (only those holding a request of this batch: another selection's are left alone).
    resumed = {
        batch_id: keys
        for batch_id, keys in open_batches(cache).items()
        if any(key in by_key for key in keys)
    }
    if not requests:
        return summary
    if client is None:
        from anthropic import Anthropic

        client = Anthropic(base_url=getattr(judge.transport, "base_url", None))
    env = judge.transport.key_env
    try:
        resumed = _still_there(client, cache, judge.model, resumed)
        in_flight = {key for keys in resumed.values() for key in keys if key in by_key}
        summary.resumed = len(in_flight)
        fresh = [request for request in requests if request.key not in in_flight]
        pending: dict[str, list[str]] = dict(resumed)
        for chunk in split_requests(fresh, max_count=max_count, max_bytes=max_bytes):
            created = client.messages.batches.create(
                requests=[{"custom_id": r.key, "params": dict(r.body)} for r in chunk]
            )
            keys = [r.key for r in chunk]
            _write_journal(
                cache,
                created.id,
                {"batch_id": created.id, "model": judge.model, "custom_ids": keys},
            )
            pending[created.id] = keys
            summary.submitted += len(chunk)
        summary.batch_ids = list(pending)
        ended = _poll(client, pending, poll_interval_s, progress, sleep)
        for batch_id, keys in pending.items():
            _collect(judge, cache, client, batch_id, by_key, summary)
            _write_journal(
                cache,
                batch_id,
                {
                    "batch_id": batch_id,
                    "model": judge.model,
                    "custom_ids": keys,
                    "collected": True,
                    "request_counts": ended[batch_id],
                },
            )
    except EvalkitError:
        raise
    except Exception as exc:  # the SDK's errors: one line, the key never in it
        raise JudgeError(
            redact(f"message batches: {type(exc).__name__}: {exc}", env).splitlines()[0]
        ) from None
    return summary


def _still_there(
    client: Any, cache: ResponseCache, model: str, journalled: Mapping[str, list[str]]
) -> dict[str, list[str]]:
    """The journalled batches the API still knows; the others are closed (asked anew)."""
    from anthropic import NotFoundError

    found: dict[str, list[str]] = {}
    for batch_id, keys in journalled.items():
        try:
            client.messages.batches.retrieve(batch_id)
        except NotFoundError:
            log.warning("message batch %s is gone; its requests are submitted again", batch_id)
            _write_journal(
                cache,
                batch_id,
                {"batch_id": batch_id, "model": model, "custom_ids": keys, "collected": True},
            )
            continue
        found[batch_id] = keys
    return found


def _poll(
    client: Any,
    pending: Mapping[str, list[str]],
    poll_interval_s: float,
    progress: bool,
    sleep: Callable[[float], None],
) -> dict[str, dict[str, int]]:
    """Retrieve every batch until all have ended; their final request counts."""
    import sys

    from tqdm import tqdm

    total = sum(len(keys) for keys in pending.values())
    latest: dict[str, dict[str, int]] = {}
    ended: set[str] = set()
    with tqdm(
        total=total,
        desc="message batches",
        unit="req",
        file=sys.stderr,
        disable=not progress,
        dynamic_ncols=True,
    ) as bar:
        while True:
            for batch_id in pending:
                if batch_id in ended:
                    continue
                batch = client.messages.batches.retrieve(batch_id)
                latest[batch_id] = _counts(batch)
                if batch.processing_status == "ended":
                    ended.add(batch_id)
            summed = {
                name: sum(counts[name] for counts in latest.values())
                for name in (*RESULT_TYPES, "processing")
            }
            bar.n = total - summed["processing"]
            bar.set_postfix(summed, refresh=False)
            bar.refresh()
            if len(ended) == len(pending):
                return latest
            sleep(poll_interval_s)


def _collect(
    judge: LLMJudge,
    cache: ResponseCache,
    client: Any,
    batch_id: str,
    by_key: Mapping[str, PendingRequest],
    summary: Summary,
) -> None:
    env = judge.transport.key_env
    for line in client.messages.batches.results(batch_id):
        result = line.result
        kind = str(result.type)
        if kind in summary.counts:
            summary.counts[kind] += 1
        request = by_key.get(line.custom_id)
        if kind != "succeeded" or request is None:
            if kind != "succeeded":
                log.info("message batch %s: %s is %s", batch_id, line.custom_id, kind)
            continue
        response = redact_json(result.message.to_dict(mode="json"), env)
        entry = judge.cache_entry(
            chk_id=request.chk_id, sample=request.sample, request=request.body, response=response
        )
        entry.update(source=BATCH_SOURCE, batch_id=batch_id)
        try:
            cache.put(request.key, entry)
        except (OSError, SecretInCacheError) as exc:
            log.warning("message batches: response not cached: %s", redact(str(exc), env))


__all__ = [
    "MAX_BATCH_BYTES",
    "MAX_REQUESTS_PER_BATCH",
    "POLL_INTERVAL_S",
    "Summary",
    "batch_judge",
    "collect_requests",
    "fill_cache",
    "open_batches",
    "request_size",
    "split_requests",
]
