"""Negation, supposition, advice against and floated steps (evalkit/text/negation.py):
as the rules judge applies them, and read directly."""

from __future__ import annotations

import pytest

from evalkit.model import Checkpoint
from evalkit.text.negation import (
    advised_against_at,
    clause_ends,
    denied_at,
    hedged_at,
    negated_at,
    supposed_at,
)
from tests.rules_cases import det, judge, make_range, one, pln, submission

# --------------------------------------------------------------------------- findings, judged


def test_a_negated_indicator_is_not_a_discovery():
    report = "# R\n\nWe found no trace of xmrig on the host (/var/tmp was clean).\n"
    verdict = one(report, indicators=("xmrig",))
    for name in ("discovery", "evidence", "attribution"):
        assert det(verdict, name) == 0, name
    claim = verdict.detection["discovery"]
    assert "appear only where the report negates them (line 3)" in claim.rationale


def test_a_negated_attribution_term_does_not_attribute():
    report = "# R\n\nkworkerd runs from /var/tmp/.cache; this was not a brute force attack.\n"
    claim = one(report, attribution=("brute force",)).detection["attribution"]
    assert claim.value == 0


@pytest.mark.parametrize(
    ("report", "stated"),
    [
        ("No kworkerd process was found.", False),
        ("We did not see kworkerd running.", False),
        ("There is no evidence that the attacker started kworkerd.", False),
        ("Earlier reports of kworkerd were ruled out.", False),
        ("A miner rather than kworkerd.", False),
        ("kworkerd was started without a terminal.", True),  # the negation follows the term
        ("No shell history survived, but kworkerd runs.", True),  # cut at the comma
        ("Nothing in the logs or on disk explains kworkerd.", True),  # too far before
        ("The unit never started (the running kworkerd came from nohup).", True),
        ("Missing: kworkerd in the inventory.", True),
    ],
)
def test_negation_is_scoped_to_the_term(report, stated):
    assert det(one(f"# R\n\n{report}\n"), "discovery") == int(stated)


def test_a_negation_the_items_criterion_states_is_the_finding():
    checkpoint = Checkpoint(
        id="CHK-01",
        name="Rate limiting",
        detection_criteria="Notes that nothing throttled the attempts (no fail2ban).",
        indicators=("fail2ban",),
        attribution_terms=("brute force",),
        remediation_terms=("fail2ban",),
    )
    report = "# R\n\nThere is no fail2ban, so the brute force ran for 12 minutes.\n"
    verdict = judge(make_range(checkpoint), submission(report))["CHK-01"]
    assert det(verdict, "discovery") == 1 and det(verdict, "attribution") == 1
    # Another item's criterion does not make the same words a finding.
    assert det(one(report, indicators=("fail2ban",)), "discovery") == 0


@pytest.mark.parametrize(
    ("report", "stated"),
    [
        # A negation governs the whole list it stands before or after.
        ("xmrig, kworkerd, a cron entry is not present.", False),
        ("A cron entry, a dropper, kworkerd and xmrig were not found.", False),
        ("No xmrig, kworkerd or cron entries were found.", False),
        ("No xmrig binary, cron entry, kworkerd or dropper was ruled in.", False),
        # A piece with a verb is a clause of its own, not a list item.
        ("There was no xmrig, kworkerd was running from /tmp.", True),
        ("kworkerd was running, and auditd is not present.", True),
        ("kworkerd ran from /tmp, auditd is absent.", True),
        ("We found xmrig, kworkerd and a cron job.", True),
    ],
)
def test_a_negation_covers_its_list(report, stated):
    assert det(one(f"# R\n\n{report}\n"), "discovery") == int(stated)


def test_a_supposition_earns_nothing_even_where_the_criterion_negates_the_term():
    checkpoint = Checkpoint(
        id="CHK-01",
        name="Rate limiting",
        detection_criteria="Notes that nothing throttled the attempts (no fail2ban).",
        indicators=("fail2ban",),
        attribution_terms=("brute force",),
        remediation_terms=("fail2ban",),
    )
    report = "# R\n\nIf we had looked, we might have found fail2ban and MaxAuthTries unset.\n"
    verdict = judge(make_range(checkpoint), submission(report))["CHK-01"]
    assert det(verdict, "discovery") == 0


# --------------------------------------------------------------------------- plan steps, judged


def test_remediation_advised_against_does_not_count():
    plan = (
        "# Plan\n\n## kworkerd\n\nDo not kill kworkerd yet. Never rm the binary before imaging.\n"
    )
    claim = one("kworkerd", plan).plan["correctness"]
    assert claim.value == 0
    assert "Advised against, so not counted: line 5." in claim.rationale


def test_advice_against_is_scoped_to_the_term():
    plan = "# Plan\n\n## kworkerd\n\nDon't wait: kill kworkerd and rm the binary.\n"
    assert pln(one("kworkerd", plan), "correctness") == 1


@pytest.mark.parametrize(
    "step",
    [
        "If we had time we could have run kill and rm on kworkerd, then verify.",
        "kill was not used on kworkerd; rm was not used either; verify was not run.",
    ],
)
def test_a_supposed_or_denied_step_earns_no_plan_point(step):
    verdict = one("kworkerd", f"# Plan\n\n## Miner kworkerd\n\n{step}\n")
    assert (pln(verdict, "correctness"), pln(verdict, "completeness")) == (0, 0)


def test_a_no_inside_a_config_value_does_not_deny_the_step():
    plan = "# Plan\n\n## Miner kworkerd\n\nSet `Foo no` to `Foo yes`: kill it, rm it, verify.\n"
    verdict = one("kworkerd", plan, remediation=("Foo yes", "kill"))
    assert pln(verdict, "correctness") == 1


def test_a_step_only_floated_is_not_counted_for_correctness():
    hedged = "# Plan\n\n## Miner\n\nConsider whether to kill kworkerd and rm it later.\n"
    planned = "# Plan\n\n## Miner\n\nkill kworkerd and rm it.\n"
    assert pln(one("kworkerd", hedged), "correctness") == 0
    assert pln(one("kworkerd", planned), "correctness") == 1


# --------------------------------------------------------------------------- read directly


def mention(sentence: str, word: str) -> tuple[str, int, int]:
    """``sentence`` and the offsets of the first ``word`` in it, as the predicates take them."""
    start = sentence.index(word)
    return sentence, start, start + len(word)


@pytest.mark.parametrize(
    ("sentence", "negated"),
    [
        ("No kworkerd process was found.", True),
        ("We did not see kworkerd running.", True),
        ("There is no evidence that the attacker started kworkerd.", True),
        ("Earlier reports of kworkerd were ruled out.", True),
        ("No xmrig, kworkerd or cron entries were found.", True),
        ("kworkerd was started without a terminal.", False),
        ("No shell history survived, but kworkerd runs.", False),
        ("Nothing in the logs or on disk explains kworkerd.", False),
        ("There was no xmrig, kworkerd was running from /tmp.", False),
    ],
)
def test_negated_at_reads_the_clause_around_the_mention(sentence, negated):
    text, start, end = mention(sentence, "kworkerd")
    assert negated_at(text, start, end) is negated
    # The breaks found once for a text read the same as those found per call.
    assert negated_at(text, start, end, clause_ends(text)) is negated


@pytest.mark.parametrize(
    ("sentence", "denied"),
    [
        ("kworkerd is not present.", True),
        ("kworkerd was ruled out.", True),
        ("A cron entry, a dropper, kworkerd and xmrig were not found.", True),
        ("If we had looked we might have found kworkerd.", True),
        ("No kworkerd process was found.", False),  # a negation before it is not a denial
        ("kworkerd was running, and auditd is not present.", False),
    ],
)
def test_denied_at_reads_after_the_mention_or_a_supposition(sentence, denied):
    assert denied_at(*mention(sentence, "kworkerd")) is denied


@pytest.mark.parametrize(
    ("sentence", "supposed"),
    [
        ("If we had looked we might have found kworkerd.", True),
        ("Hypothetically kworkerd could run.", True),
        ("kworkerd runs. If we had looked, more would show.", False),  # another clause
        ("kworkerd runs from /var/tmp.", False),
    ],
)
def test_supposed_at_reads_the_mentions_clause(sentence, supposed):
    assert supposed_at(*mention(sentence, "kworkerd")) is supposed


@pytest.mark.parametrize(
    ("sentence", "against"),
    [
        ("Do not kill kworkerd yet.", True),
        ("Never kill the miner before imaging.", True),
        ("Avoid kill -9 here.", True),
        ("Don't wait: kill kworkerd now.", False),  # the advice stops at the colon
        ("kill kworkerd now.", False),
    ],
)
def test_advised_against_at(sentence, against):
    assert advised_against_at(*mention(sentence, "kill")) is against


@pytest.mark.parametrize(
    ("sentence", "hedged"),
    [
        ("Consider whether to kill kworkerd later.", True),
        ("Maybe kill kworkerd.", True),
        ("kill kworkerd and rm it.", False),
    ],
)
def test_hedged_at(sentence, hedged):
    assert hedged_at(*mention(sentence, "kill")) is hedged
