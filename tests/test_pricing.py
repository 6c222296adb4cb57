"""The price table (evalkit/data/prices.json) and cost computation."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from evalkit.judges.llm.pricing import (
    cost_usd,
    load_prices,
    min_cacheable_tokens,
    price_for,
    price_warning,
)


def test_the_table_is_a_dated_sourced_data_file_with_every_rate() -> None:
    raw = json.loads(resources.files("evalkit").joinpath("data", "prices.json").read_text())
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw["as_of"])
    assert "pricing" in raw["source"]
    assert raw["models"]
    for model, row in raw["models"].items():
        assert model.startswith("claude-")
        assert {"input", "output", "cache_write", "cache_read"} <= set(row)
        assert all(isinstance(v, (int, float)) and v > 0 for v in row.values())
        # The published multipliers: 5-minute writes 1.25x input, output 5x input.
        assert row["cache_write"] == pytest.approx(row["input"] * 1.25)
        assert row["output"] == pytest.approx(row["input"] * 5)
        assert row["cache_read"] < row["input"]


@pytest.mark.parametrize(
    ("model", "rates"),
    [
        ("claude-opus-4", (15, 75, 18.75, 1.5)),
        ("claude-opus-4-1", (15, 75, 18.75, 1.5)),
        ("claude-opus-4-5", (5, 25, 6.25, 0.5)),
        ("claude-opus-4-7", (5, 25, 6.25, 0.5)),
        ("claude-sonnet-4-5", (3, 15, 3.75, 0.3)),
        ("claude-sonnet-4-6", (3, 15, 3.75, 0.3)),
        ("claude-haiku-4-5", (1, 5, 1.25, 0.1)),
        ("claude-3-5-haiku", (0.8, 4, 1, 0.08)),
    ],
)
def test_current_models_are_priced(model: str, rates: tuple[float, ...]) -> None:
    price = price_for(model)
    assert price is not None
    assert (price.input, price.output, price.cache_write, price.cache_read) == rates


def test_dated_ids_match_their_alias_by_longest_prefix() -> None:
    table = load_prices()
    assert table.lookup("claude-sonnet-4-5-20250929")[0] == "claude-sonnet-4-5"
    assert table.lookup("claude-opus-4-1-20250805")[0] == "claude-opus-4-1"
    assert table.lookup("claude-opus-4-20250514")[0] == "claude-opus-4"
    assert table.lookup("claude-haiku-4-5-20251001")[0] == "claude-haiku-4-5"
    assert table.lookup("claude-3-5-haiku-20241022")[0] == "claude-3-5-haiku"
    assert table.lookup("claude-sonnet-4-5-latest")[0] == "claude-sonnet-4-5"


def test_a_prefix_alone_does_not_price_a_different_model() -> None:
    # claude-opus-4-9 is not claude-opus-4; guessing would under- or over-report.
    assert price_for("claude-opus-4-9") is None
    assert price_for("claude-sonnet-4-5x") is None
    assert price_for("gpt-4o") is None


def test_unknown_model_costs_none_with_a_warning_never_a_crash() -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100}
    assert cost_usd("claude-imaginary-9", usage) is None
    warning = price_warning("claude-imaginary-9")
    assert warning and "claude-imaginary-9" in warning and "null" in warning
    assert price_warning("claude-sonnet-4-6") is None


def test_cost_adds_every_token_kind_at_its_rate() -> None:
    usage = {
        "input_tokens": 1_000,
        "output_tokens": 2_000,
        "cache_creation_input_tokens": 10_000,
        "cache_read_input_tokens": 100_000,
    }
    expected = (1_000 * 3 + 2_000 * 15 + 10_000 * 3.75 + 100_000 * 0.30) / 1e6
    assert cost_usd("claude-sonnet-4-6", usage) == pytest.approx(expected)
    assert cost_usd("claude-opus-4-1-20250805", {"output_tokens": 1_000_000}) == pytest.approx(75)


def test_cost_reads_sdk_usage_objects_and_null_cache_fields() -> None:
    from anthropic.types import Usage

    usage = Usage(
        input_tokens=100,
        output_tokens=10,
        cache_creation_input_tokens=None,
        cache_read_input_tokens=None,
    )
    assert cost_usd("claude-haiku-4-5", usage) == pytest.approx((100 * 1 + 10 * 5) / 1e6)


def test_one_hour_cache_writes_use_their_own_rate() -> None:
    usage = {
        "cache_creation_input_tokens": 3_000,
        "cache_creation": {"ephemeral_5m_input_tokens": 1_000, "ephemeral_1h_input_tokens": 2_000},
    }
    expected = (1_000 * 3.75 + 2_000 * 6.0) / 1e6
    assert cost_usd("claude-sonnet-4-5", usage) == pytest.approx(expected)


def test_minimum_cacheable_prefix_per_model_with_a_default() -> None:
    assert min_cacheable_tokens("claude-sonnet-4-5-20250929") == 1024
    assert min_cacheable_tokens("claude-haiku-4-5") == 4096
    assert min_cacheable_tokens("claude-opus-4-5") == 4096
    assert min_cacheable_tokens("claude-3-5-haiku") == 2048
    assert min_cacheable_tokens("claude-imaginary-9") == 1024
