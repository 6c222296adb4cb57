"""The penalty table is the one home of penalty knowledge; the copies that must
stay text (the JSON Schema, the judge prompt, the ``PenaltyRule`` Literal) agree with it."""

from __future__ import annotations

import json
import re
import typing
from importlib import resources
from pathlib import Path

import pytest

from evalkit import grounding, model, scoring
from evalkit.errors import JudgeError
from evalkit.judges.llm.prompts import PromptSet
from evalkit.penalties import (
    PENALTY_BY_NAME,
    PENALTY_RULE_NAMES,
    PENALTY_SOURCES,
    PENALTY_TABLE,
    penalty_rule,
    zeroed_subscores,
)
from evalkit.render import report_markdown as markdown


def test_every_rule_zeroes_subscores_of_its_own_dimension() -> None:
    for rule in PENALTY_TABLE:
        assert rule.zeroes, rule.name
        assert set(rule.zeroes) <= set(model.SUBSCORES[rule.dimension]), rule.name
        assert rule.quote_sources and set(rule.quote_sources) <= {"report", "plan"}


def test_rule_names_are_unique_and_match_the_literal() -> None:
    assert len(set(PENALTY_RULE_NAMES)) == len(PENALTY_RULE_NAMES)
    assert set(typing.get_args(model.PenaltyRule)) == set(PENALTY_RULE_NAMES)
    assert model.PENALTY_RULES == PENALTY_RULE_NAMES


def test_the_skill_effects() -> None:
    assert zeroed_subscores({"fabrication"}, "detection") == set(model.DETECTION_SUBSCORES)
    assert zeroed_subscores({"wrong_attribution"}, "detection") == {"attribution"}
    assert zeroed_subscores({"dangerous_advice"}, "plan") == set(model.PLAN_SUBSCORES)
    assert zeroed_subscores({"dangerous_advice"}, "detection") == set()
    with pytest.raises(JudgeError, match="known: fabrication"):
        penalty_rule("no_such_rule")


def test_grounding_scoring_and_renderers_derive_from_the_table() -> None:
    assert dict(grounding.PENALTY_SOURCES) == dict(PENALTY_SOURCES)
    assert {name: rule.quote_sources for name, rule in PENALTY_BY_NAME.items()} == dict(
        grounding.PENALTY_SOURCES
    )
    assert dict(markdown.PENALTY_EFFECTS) == {r.name: r.effect for r in PENALTY_TABLE}
    assert not hasattr(scoring, "PENALTY_DIMENSION")
    # Every rule has its piece of advice in the report.
    assert set(PENALTY_RULE_NAMES) <= set(markdown.SUGGESTIONS)


def _schema_rule_enums(node: object) -> list[list[str]]:
    found: list[list[str]] = []
    if isinstance(node, dict):
        rule = node.get("rule")
        if isinstance(rule, dict) and "enum" in rule:
            found.append(rule["enum"])
        for value in node.values():
            found.extend(_schema_rule_enums(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_schema_rule_enums(value))
    return found


def test_json_schema_enums_name_exactly_the_table_rules() -> None:
    schema = json.loads(
        resources.files("evalkit").joinpath("schemas/scores.schema.json").read_text("utf-8")
    )
    enums = _schema_rule_enums(schema)
    assert len(enums) >= 2  # applied and dismissed penalties
    for enum in enums:
        assert list(enum) == list(PENALTY_RULE_NAMES)


def _prompt_penalty_table(text: str) -> dict[str, str]:
    """``rule -> effect`` from the Markdown table whose header starts with ``| rule |``."""
    rows: dict[str, str] = {}
    in_table = False
    for line in text.splitlines():
        if line.startswith("| rule |"):
            in_table = True
            continue
        if in_table and line.startswith("|---"):
            continue
        if in_table and line.startswith("|"):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            rows[cells[0].strip("`")] = cells[-1]
        elif in_table:
            break
    return rows


def test_system_prompt_penalty_table_matches_the_table() -> None:
    prompts = resources.files("evalkit").joinpath("prompts")
    versions = [p for p in prompts.iterdir() if p.is_dir() and p.joinpath("system.md").is_file()]
    assert versions
    for version in versions:
        # The system prompt as sent: v3 renders its table from the rubric.
        text = PromptSet.load(Path(str(version))).system()
        table = _prompt_penalty_table(text)
        assert table == {rule.name: rule.effect for rule in PENALTY_TABLE}, version.name
        # The verdict format line lists every rule, and the quoting rules name each one.
        listed = re.findall(r'"rule":\s*((?:"[a-z_]+"\s*\|?\s*)+)', text)
        assert listed and set(re.findall(r"[a-z_]+", listed[0])) == set(PENALTY_RULE_NAMES)


def test_prompt_table_parser_sees_a_missing_rule() -> None:
    text = (
        "| rule | when | effect |\n|---|---|---|\n"
        "| `fabrication` | x | detection score set to 0 |\n"
    )
    assert _prompt_penalty_table(text) == {"fabrication": "detection score set to 0"}
