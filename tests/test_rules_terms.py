"""Rules judge: how a checklist term matches (evalkit/judges/rules/terms.py)."""

from __future__ import annotations

import pytest

from evalkit.judges.rules.terms import term_pattern
from tests.rules_cases import det, one, pln


@pytest.mark.parametrize(
    ("term", "text", "matches"),
    [
        ("rm", "firmware update", False),
        ("rm", "run rm -f x", True),
        ("rm", "rm_tool", False),
        ("SSH", "sshd was restarted", False),
        ("SSH", "SSH-2 session", True),
        ("ssh", "over SSH.", True),
        ("kworkerd", "KWORKERD", True),
        ("/var/tmp/.cache", "/var/tmp/.cache/kworkerd", True),
        ("203.0.113.45", "203.0.113.451", False),
        ("CHK-01", "CHK-010", False),
        ("brute force", "brute\n   force", True),
        ("brute force", "brute-force", False),
        ("-p wa", "auditctl -w /etc -p wa", True),
    ],
)
def test_term_matches_case_insensitively_at_word_boundaries(term, text, matches):
    assert bool(term_pattern(term).search(text)) is matches


def test_multi_word_term_wrapped_in_a_paragraph_matches_and_quotes_both_lines():
    report = "# R\n\nThe attacker used a brute\nforce against sshd.\n"
    verdict = one(report, indicators=("brute force",))
    assert det(verdict, "discovery") == 1
    assert verdict.detection["discovery"].quotes == (
        "The attacker used a brute force against sshd.",
    )


def test_a_remediation_command_matches_with_options_after_its_first_word():
    plan = "# Plan\n\n## Miner\n\nStop kworkerd: `chown -R root:root /opt` and `rm -f` it.\n"
    verdict = one("kworkerd", plan, remediation=("chown root:root", "rm"))
    assert pln(verdict, "correctness") == 1
    assert "`chown root:root` (line 5)" in verdict.plan["correctness"].rationale
