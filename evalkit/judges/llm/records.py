"""Typed records of judge calls: one per request sent, and one per cache hit.

Written to ``judgments.jsonl`` (as :meth:`CallRecord.to_json`) for audit: the
request body, the raw response, usage, latency and cost; never a header and
never the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...model import Usage
from .transport import USAGE_FIELDS


def coerce_usage(usage: Mapping[str, Any] | None) -> dict[str, int]:
    """Token counts as non-negative ints (a missing or odd value counts 0)."""

    def number(name: str) -> int:
        value = (usage or {}).get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return 0
        return max(0, int(value))

    return {name: number(name) for name in USAGE_FIELDS}


@dataclass(frozen=True)
class CallRecord:
    chk_id: str
    sample: int
    attempt: int
    turn: int
    cache_key: str
    cached: bool
    request: Mapping[str, Any]
    response: Mapping[str, Any] | None
    error: str | None
    requests: int
    tokens: Mapping[str, int]
    cost_usd: float | None  # None: a call to a model without a known price
    latency_s: float
    http_attempts: tuple[Mapping[str, Any], ...] = ()
    warning: str | None = None
    batch_id: str | None = None  # the answer came from this Message Batch (billed at batch rate)
    order: tuple[int, int] = field(default=(0, 0), compare=False)  # (item index, sequence)

    @property
    def usage(self) -> Usage:
        return Usage(
            requests=self.requests,
            cost_usd=self.cost_usd,
            latency_s=self.latency_s,
            cached_responses=1 if self.cached else 0,
            **self.tokens,
        )

    def with_error(self, error: str) -> CallRecord:
        from dataclasses import replace

        return replace(self, error=error)

    def to_json(self) -> dict[str, Any]:
        return {
            "chk_id": self.chk_id,
            "sample": self.sample,
            "attempt": self.attempt,
            "turn": self.turn,
            "cache_key": self.cache_key,
            "cached": self.cached,
            "request": self.request,
            "response": self.response,
            "error": self.error,
            "usage": {
                "requests": self.requests,
                **self.tokens,
                "cost_usd": self.cost_usd,
                "latency_s": self.latency_s,
                "cached_responses": 1 if self.cached else 0,
            },
            "latency_s": self.latency_s,
            "cost_usd": self.cost_usd,
            "http_attempts": [dict(entry) for entry in self.http_attempts],
            "warning": self.warning,
            "batch_id": self.batch_id,
        }
