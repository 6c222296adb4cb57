"""Penalty quotes, checked at once: where found, why not, and what the rule may quote."""

from __future__ import annotations

import dataclasses

from evalkit.grounding import Sources
from evalkit.labelling.quotes import check_penalty_quote, locate
from tests.labelling_samples import pair
from tests.samples import REPO

RNG, SUBMISSION, SOURCES = pair(REPO)
REPORT_QUOTE = "LISTEN 0      511          0.0.0.0:6379"  # report line 38, spaces as written
PLAN_QUOTE = "replace `bind 0.0.0.0` with `bind 127.0.0.1` plus the private address"


def check(**kwargs: str):
    fields = {"rule": "fabrication", "source": "report", "quote": REPORT_QUOTE, "detail": "x"}
    fields.update(kwargs)
    scope = fields.pop("scope", "both")
    return check_penalty_quote("CHK-01", scope, sources=SOURCES, **fields)


def test_a_verbatim_quote_is_found_with_its_line():
    result = check()
    assert (result.ok, result.found, result.line) == (True, True, 38)
    assert result.message == "found verbatim in the report, line 38"
    assert result.problems == ()


def test_the_tolerance_is_groundings_whitespace_and_markers_forgiven_nothing_else():
    assert check(quote="LISTEN 0 511\n 0.0.0.0:6379").found
    assert check(quote="replace bind 0.0.0.0 with **bind 127.0.0.1**", source="plan").found
    paraphrase = check(quote="LISTEN 0 512 0.0.0.0:6379")
    assert not paraphrase.ok and not paraphrase.found
    assert paraphrase.message == "not found verbatim in the report"
    assert paraphrase.problems == (
        "CHK-01: penalty quote not found verbatim in the report: 'LISTEN 0 512 0.0.0.0:6379'",
    )


def test_a_quote_in_the_other_document_says_where_and_whether_the_rule_may_quote_it():
    result = check(rule="wrong_attribution", quote=PLAN_QUOTE)
    assert not result.ok and result.elsewhere == {"plan": 9}
    assert result.message == (
        "not found verbatim in the report; it is in the plan, line 9,"
        " which a wrong_attribution may not quote"
    )
    result = check(rule="dangerous_advice", quote=PLAN_QUOTE)
    assert result.message.endswith("it is in the plan, line 9 (choose the plan)")
    result = check(rule="wrong_attribution", source="plan", quote=PLAN_QUOTE)
    assert result.found and not result.ok
    assert result.message == (
        "found verbatim in the plan, line 9, but a wrong_attribution penalty quotes the report"
    )
    assert result.problems == (
        "CHK-01: a wrong_attribution penalty quotes the report, not the plan",
    )


def test_scope_detail_and_an_empty_quote_are_problems_too():
    assert check(rule="dangerous_advice", scope="detection-only").problems == (
        "CHK-01: a dangerous_advice penalty acts on the plan, N/A for a detection-only checkpoint",
    )
    assert not check(detail="").ok
    empty = check(quote="  ")
    assert not empty.ok and empty.message.startswith("no quote yet")


def test_hidden_content_is_not_a_quote_and_the_message_says_why():
    report = dataclasses.replace(
        SUBMISSION.report, text=SUBMISSION.report.text + "\n<!-- planted: CVE-2099-1234 -->\n"
    )
    sources = Sources.of(dataclasses.replace(SUBMISSION, report=report))
    result = check_penalty_quote(
        "CHK-01", "both", rule="fabrication", source="report", quote="planted: CVE-2099-1234",
        detail="x", sources=sources,
    )  # fmt: skip
    assert not result.found
    assert "hidden content of the report (HTML comment" in result.message


def test_locate_lists_every_document_holding_a_quote():
    assert locate("0.0.0.0", SOURCES).keys() == {"report", "plan"}
    assert locate("nowhere at all, surely", SOURCES) == {}
