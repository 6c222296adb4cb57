"""What a judge call cost, from the price table in ``evalkit/data/prices.json``.

The table maps a model id to USD per million tokens for ``input``, ``output``,
``cache_write`` (5-minute prompt-cache write), ``cache_read`` (cache hit) and,
optionally, ``cache_write_1h``; and, where known, ``min_cacheable_tokens``, the
shortest prompt prefix the model caches (the judge and the estimate use it to
decide whether the shared prefix will be cached at all). It is a data file so
that a price change is a one-line edit; it records the date it was checked
(``as_of``) and its source.

A model id is found exactly, or else by the longest table key that it extends
with a date or ``-latest`` suffix: ``claude-sonnet-4-5-20250929`` is priced as
``claude-sonnet-4-5``, but ``claude-opus-4-9`` is *not* priced as
``claude-opus-4``. A model the table does not know has no cost (``None``) and
a warning (:func:`price_warning`): evalkit never guesses a price, and never
fails a run over one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

PER_MILLION = 1_000_000
# The shortest prefix most models cache; used for models whose entry does not say.
DEFAULT_MIN_CACHEABLE_TOKENS = 1024
# The Message Batches API bills every token (input, output, cache writes and reads) at half the
# standard price.
BATCH_DISCOUNT = 0.5
# What may follow a table key in a model id it prices: a release date, or an alias suffix.
_VERSION_SUFFIX = re.compile(r"-(?:\d{8}|latest)")


@dataclass(frozen=True)
class Price:
    """USD per million tokens for one model."""

    input: float
    output: float
    cache_write: float
    cache_read: float
    cache_write_1h: float | None = None  # 1-hour cache writes; 2x input when not listed
    min_cacheable_tokens: int | None = None  # shortest prompt prefix the model caches

    @property
    def cache_write_1h_rate(self) -> float:
        return self.cache_write_1h if self.cache_write_1h is not None else 2 * self.input


@dataclass(frozen=True)
class PriceTable:
    as_of: str
    source: str
    models: Mapping[str, Price]

    def lookup(self, model: str) -> tuple[str, Price] | None:
        """``(table key, price)`` for ``model``, or None when it is not priced."""
        if model in self.models:
            return model, self.models[model]
        best: str | None = None
        for key in self.models:
            if model.startswith(key) and _VERSION_SUFFIX.fullmatch(model[len(key) :]):
                if best is None or len(key) > len(best):
                    best = key
        return (best, self.models[best]) if best is not None else None


def _read_table(text: str) -> PriceTable:
    data = json.loads(text)
    models = {
        str(name): Price(
            input=float(row["input"]),
            output=float(row["output"]),
            cache_write=float(row["cache_write"]),
            cache_read=float(row["cache_read"]),
            cache_write_1h=float(row["cache_write_1h"]) if "cache_write_1h" in row else None,
            min_cacheable_tokens=(
                int(row["min_cacheable_tokens"]) if "min_cacheable_tokens" in row else None
            ),
        )
        for name, row in data["models"].items()
    }
    return PriceTable(as_of=str(data["as_of"]), source=str(data.get("source", "")), models=models)


@lru_cache(maxsize=8)
def load_prices(path: str | None = None) -> PriceTable:
    """The packaged price table, or the one at ``path``."""
    if path is not None:
        return _read_table(Path(path).read_text(encoding="utf-8"))
    text = resources.files("evalkit").joinpath("data", "prices.json").read_text(encoding="utf-8")
    return _read_table(text)


def price_for(model: str, table: PriceTable | None = None) -> Price | None:
    found = (table or load_prices()).lookup(model)
    return found[1] if found is not None else None


def price_warning(model: str, table: PriceTable | None = None) -> str | None:
    """A one-line warning when ``model`` has no price, else None."""
    table = table or load_prices()
    if table.lookup(model) is not None:
        return None
    return (
        f"no price for model {model!r} in evalkit/data/prices.json (as of {table.as_of}); "
        "its cost is reported as null"
    )


def min_cacheable_tokens(model: str, table: PriceTable | None = None) -> int:
    """The shortest prefix ``model`` stores in the prompt cache (1,024 when not listed)."""
    price = price_for(model, table)
    if price is None or price.min_cacheable_tokens is None:
        return DEFAULT_MIN_CACHEABLE_TOKENS
    return price.min_cacheable_tokens


def _get(usage: Any, name: str) -> Any:
    if isinstance(usage, Mapping):
        return usage.get(name)
    return getattr(usage, name, None)


def _tokens(usage: Any, name: str) -> int:
    value = _get(usage, name)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def cost_usd(
    model: str, usage: Any, table: PriceTable | None = None, *, batch: bool = False
) -> float | None:
    """USD for one response's ``usage`` (an SDK ``Usage``, or its dict), or None if unpriced.

    ``batch``: the answer came through the Message Batches API, billed at
    :data:`BATCH_DISCOUNT` times every standard rate.

    ``input_tokens`` are the uncached input, billed at ``input``;
    ``cache_creation_input_tokens`` at ``cache_write`` (or ``cache_write_1h`` for the part the
    ``cache_creation`` breakdown puts in 1-hour entries); ``cache_read_input_tokens`` at
    ``cache_read``; ``output_tokens`` at ``output``.
    """
    price = price_for(model, table)
    if price is None:
        return None
    written = _tokens(usage, "cache_creation_input_tokens")
    breakdown = _get(usage, "cache_creation")
    written_1h = min(_tokens(breakdown, "ephemeral_1h_input_tokens"), written) if breakdown else 0
    total = (
        _tokens(usage, "input_tokens") * price.input
        + _tokens(usage, "output_tokens") * price.output
        + (written - written_1h) * price.cache_write
        + written_1h * price.cache_write_1h_rate
        + _tokens(usage, "cache_read_input_tokens") * price.cache_read
    )
    return total / PER_MILLION * (BATCH_DISCOUNT if batch else 1.0)


__all__ = [
    "BATCH_DISCOUNT",
    "DEFAULT_MIN_CACHEABLE_TOKENS",
    "Price",
    "PriceTable",
    "cost_usd",
    "load_prices",
    "min_cacheable_tokens",
    "price_for",
    "price_warning",
]
