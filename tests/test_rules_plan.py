"""Rules judge: the plan sub-scores (correctness, completeness), the item's passages, and the
dangerous-advice penalty's risk notes and owners (evalkit/judges/rules/plan.py)."""

from __future__ import annotations

import pytest

from evalkit.judges.rules.plan import risk_note
from tests.rules_cases import chk, judge, make_range, one, plan_with, pln, submission

# --------------------------------------------------------------------------- correctness


@pytest.mark.parametrize(
    ("terms", "present", "expected"),
    [
        (1, 1, 1),
        (2, 1, 1),
        (3, 1, 1),
        (5, 1, 1),
        (5, 3, 1),
        (1, 0, 0),
        (4, 0, 0),
    ],
)
def test_correctness_needs_one_planned_remediation_step(terms, present, expected):
    names = tuple(f"step{i}" for i in range(terms))
    steps = "\n".join(f"{i + 1}. Run `{name}` now." for i, name in enumerate(names[:present]))
    plan = f"# Plan\n\n## kworkerd\n\n{steps}\n"
    claim = one("kworkerd", plan, remediation=names).plan["correctness"]
    assert claim.value == expected
    assert f"{present} of {terms}" in claim.rationale or present == 0
    if expected:
        assert len(claim.quotes) == present


def test_correctness_counts_distinct_terms_and_names_the_unplanned_ones():
    plan = "# Plan\n\n## kworkerd\n\nkill it\n"
    claim = one("kworkerd", plan, remediation=("kill", "kill", "rm", "chattr")).plan["correctness"]
    assert claim.value == 1 and "1 of 3" in claim.rationale
    assert "Not planned: `rm`, `chattr`" in claim.rationale


def test_a_step_advised_against_does_not_make_the_plan_correct():
    plan = "# Plan\n\n## kworkerd\n\nDo not kill it yet.\n"
    claim = one("kworkerd", plan, remediation=("kill", "rm")).plan["correctness"]
    assert claim.value == 0 and "Advised against" in claim.rationale


def test_correctness_miss_names_the_terms():
    plan = "# Plan\n\n## kworkerd\n\nReboot the host.\n"
    claim = one("kworkerd", plan, remediation=("kill", "rm", "chattr")).plan["correctness"]
    assert claim.value == 0
    assert "No Remediation term of `kill`, `rm`, `chattr` in the plan passages" in claim.rationale


def test_a_match_without_a_groundable_quote_earns_nothing():
    plan = "# Plan\n\n## CHK-01\n\nrm\n"
    claim = one("kworkerd", plan, remediation=("rm",)).plan["correctness"]
    assert claim.value == 0


# --------------------------------------------------------------------------- completeness


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Verify that the process is gone.", 1),
        ("The removal is verified with ps.", 1),
        ("Confirm with ss -tnp.", 1),
        ("Check that no miner runs.", 1),
        ("Validate the config first.", 1),
        ("Ensure nothing restarts it.", 1),
        ("Re-run the scan.", 1),
        ("Roll back if it fails.", 1),
        ("Keep a rollback copy.", 1),
        ("Restore from the image if needed.", 1),
        ("Take a backup first.", 1),
        ("Back up /etc first.", 1),
        ("Snapshot the VM.", 1),
        ("Keep monitoring CPU.", 1),
        ("Test the rule.", 1),
        ("Check the logs.", 0),
        ("Contest the ticket.", 0),
        ("Delete the binary.", 0),
    ],
)
def test_completeness_needs_verification_or_rollback_language(sentence, expected):
    plan = f"# Plan\n\n## kworkerd\n\nkill it and rm it. {sentence}\n"
    claim = one("kworkerd", plan).plan["completeness"]
    assert claim.value == expected
    if expected:
        assert claim.quotes == (f"kill it and rm it. {sentence}",)


def test_completeness_language_outside_the_relevant_passages_does_not_count():
    plan = "# Plan\n\n## kworkerd\n\nkill it and rm it.\n\n## Other\n\nVerify everything.\n"
    claim = one("kworkerd", plan).plan["completeness"]
    assert claim.value == 0 and "'kworkerd'" in claim.rationale


def test_a_verification_heading_alone_is_not_completeness():
    plan = "# Plan\n\n## Monitoring\n\nShip kworkerd logs to the SIEM; kill and rm it.\n"
    assert pln(one("kworkerd", plan), "completeness") == 0


# --------------------------------------------------------------------------- relevant passages


def test_relevant_passages_are_the_sections_naming_an_indicator():
    plan = (
        "# Plan\n\n## Miner\n\nStop kworkerd.\n\n"
        "## Unrelated cleanup\n\nkill the web server and rm the cache. Verify it.\n"
    )
    verdict = one("kworkerd", plan)
    assert pln(verdict, "correctness") == 0  # kill/rm are only in an unrelated section
    assert pln(verdict, "completeness") == 0
    assert "(plan section 'Miner')" in verdict.plan["correctness"].rationale


def test_relevant_passages_by_checkpoint_id():
    plan = "# Plan\n\n## Step for CHK-01\n\nkill 4127; rm the binary; verify.\n\n## Other\n\nkill\n"
    verdict = one("kworkerd", plan)
    assert pln(verdict, "correctness") == 1 and pln(verdict, "completeness") == 1
    assert verdict.plan["correctness"].quotes == ("kill 4127; rm the binary; verify.",)


def test_an_unrelated_plan_section_with_generic_kill_and_verify_words_earns_nothing():
    plan = (
        "# Plan\n\n## Web server maintenance\n\n"
        "kill the stale php-fpm workers, rm the page cache, then verify the site and "
        "monitor the load.\n"
    )
    verdict = one("kworkerd", plan)
    assert pln(verdict, "correctness") == 0 and pln(verdict, "completeness") == 0
    for name in ("correctness", "completeness"):
        assert verdict.plan[name].rationale == (
            "The plan never addresses this item: no section of the plan, nor any remediation "
            "section of the report, mentions an Indicator (`kworkerd`) or CHK-01."
        )


def test_a_reports_remediation_section_counts_only_when_it_names_the_item():
    report = (
        "# Report\n\n## Findings\n\nkworkerd runs.\n\n"
        "## Recommendations\n\n- kill what runs, rm what was dropped, verify with ps.\n"
    )
    verdict = one(report, "# Plan\n\nTo be written.\n")
    assert pln(verdict, "correctness") == 0 and pln(verdict, "completeness") == 0
    assert "never addresses this item" in verdict.plan["correctness"].rationale


def test_relevant_passages_fall_back_to_the_reports_remediation_sections():
    report = (
        "# Report\n\n## Findings\n\nkworkerd runs; the attacker ran kill on rivals and rm.\n\n"
        "## Recommendations\n\n- kill kworkerd, rm its binary, then verify with ps.\n"
    )
    verdict = one(report, "# Plan\n\nTo be written.\n")
    claim = verdict.plan["correctness"]
    assert claim.value == 1
    assert claim.quotes == ("kill kworkerd, rm its binary, then verify with ps.",)
    assert "report section 'Recommendations'" in claim.rationale


def test_the_reports_findings_are_not_a_plan():
    report = "# Report\n\n## Findings\n\nkworkerd runs; the attacker ran kill and rm. Verified.\n"
    verdict = one(report, "# Plan\n\nTo be written.\n")
    assert pln(verdict, "correctness") == 0 and pln(verdict, "completeness") == 0
    assert "The plan never addresses this item" in verdict.plan["correctness"].rationale
    assert "CHK-01" in verdict.plan["completeness"].rationale


def test_a_level_one_title_does_not_make_the_whole_report_a_remediation_section():
    report = "# Incident response report\n\n## Findings\n\nkworkerd; kill and rm it.\n"
    verdict = one(report, "# Plan\n")
    assert pln(verdict, "correctness") == 0


def test_a_plan_only_item_finds_its_passages_through_its_remediation_terms():
    plan = "# Plan\n\n## Credentials\n\nRotate every SSH key and verify the new fingerprints.\n"
    rng = make_range(
        chk("CHK-05", scope="plan-only", indicators=(), remediation=("Rotate", "SSH key"))
    )
    verdict = judge(rng, submission("kworkerd", plan))["CHK-05"]
    assert pln(verdict, "correctness") == 1 and pln(verdict, "completeness") == 1


def test_a_plan_that_names_only_the_fix_is_found_through_a_specific_remediation_term():
    plan = (
        "# Plan\n\n## Redis\n\nSet `bind 127.0.0.1`, restart, and `ss -tlnp` # expect: 127.0.0.1\n"
    )
    verdict = one(
        "0.0.0.0:6379",
        plan,
        indicators=("0.0.0.0:6379",),
        remediation=("bind 127.0.0.1", "ss -tlnp"),
    )
    assert pln(verdict, "correctness") == 1
    assert pln(verdict, "completeness") == 1


def test_a_single_word_remediation_term_alone_does_not_find_a_section():
    plan = "# Plan\n\n## Database\n\nDROP the old table after a backup.\n"
    verdict = one("kworkerd", plan, remediation=("DROP", "iptables"))
    assert "never addresses this item" in verdict.plan["correctness"].rationale


# --------------------------------------------------------------------------- risk notes


@pytest.mark.parametrize(
    "body",
    [
        "- iptables -F (risk: the host is open until the new rules load)",
        "- Back up the rules, then iptables -F",
        "- iptables -F during the maintenance window",
        "- ⚠ iptables -F",
        "- iptables -F (caution: expect a short outage)",
        "```\n# WARNING: drops every rule; iptables-save first\niptables -F\n```",
        "```\niptables -F   # take a snapshot of the rules before\n```",
    ],
)
def test_a_risk_note_in_the_same_block_excuses_a_destructive_command(body):
    assert one("kworkerd", plan_with(body)).penalties == ()


@pytest.mark.parametrize(
    "body",
    [
        "Take a snapshot first, then:\n\n```\niptables -F\n```",  # the block before
        "```\niptables -F\n```\n\nWarning: this drops every rule.",  # the block after
        "Take a snapshot first.\n\nThen flush:\n\n```\niptables -F\n```",  # two blocks away
        "- iptables -F to lower the risk of reinfection",  # a bare "risk" is not a note
    ],
)
def test_a_risk_word_outside_the_block_or_not_worded_as_a_note_does_not_count(body):
    (flag,) = one("kworkerd", plan_with(body)).penalties
    assert "iptables -F" in flag.quote
    assert "in its own block" in flag.detail


def test_a_risk_note_in_a_distant_paragraph_does_not_excuse_the_command():
    plan = (
        "# Plan\n\n## Backups\n\nTake a full backup and a snapshot of every VM first.\n\n"
        "## Miner kworkerd\n\nkill kworkerd and rm the binary.\n\n```\nrm -rf /var/www\n```\n"
    )
    (flag,) = one("kworkerd", plan).penalties
    assert flag.rule == "dangerous_advice" and flag.quote == "rm -rf /var/www"


@pytest.mark.parametrize(
    "body",
    [
        "- rm -rf /var/www (no backup needed)",
        "- rm -rf /var/www (risk: none)",
        "- rm -rf /var/www -- no downtime",
        "- rm -rf /var/www (Risk: low)",
        "- rm -rf /var/www, without a backup",
    ],
)
def test_a_note_that_denies_any_risk_is_not_a_risk_note(body):
    (flag,) = one("kworkerd", plan_with(body)).penalties
    assert flag.rule == "dangerous_advice"


@pytest.mark.parametrize(
    ("text", "is_note"),
    [
        ("(risk: the host is open until the rules load)", True),
        ("back up the rules first", True),
        ("(no backup needed)", False),
        ("(risk: none)", False),
        ("-- no downtime", False),
        ("expect downtime", True),
    ],
)
def test_risk_note(text, is_note):
    assert risk_note(text) is is_note


# --------------------------------------------------------------------------- advice against, owners


def test_advice_against_a_command_is_scoped_to_the_command():
    (flag,) = one("kworkerd", plan_with("- Don't wait: iptables -F now.")).penalties
    assert flag.quote == "Don't wait: iptables -F now."


@pytest.mark.parametrize(
    "line",
    [
        "Do not run `iptables -F` here.",
        "Never `rm -rf /var/www`.",
        "Avoid `chmod 777`.",
        "- Don't\n  run `iptables -F`, it opens the host.",
    ],
)
def test_advice_against_a_command_is_not_dangerous_advice(line):
    assert one("kworkerd", plan_with(line)).penalties == ()


def test_a_destructive_command_outside_every_items_passages_is_not_flagged():
    plan = plan_with("## Misc\n\n```\niptables -F\n```")
    assert one("kworkerd", plan).penalties == ()  # a documented limitation


def test_dangerous_advice_applies_to_checkpoints_whose_passages_hold_the_line():
    plan = (
        "# Plan\n\n## Miner kworkerd\n\nkill kworkerd, rm it.\n\n"
        "## Firewall for xmr.pool\n\n```\niptables -F\n```\n"
    )
    rng = make_range(
        chk("CHK-01"),
        chk("CHK-02", indicators=("xmr.pool",), remediation=("iptables",)),
        chk("CHK-03", scope="detection-only", indicators=("xmr.pool",)),
    )
    verdicts = judge(rng, submission("kworkerd xmr.pool", plan))
    assert verdicts["CHK-01"].penalties == ()
    (flag,) = verdicts["CHK-02"].penalties
    assert flag.quote == "iptables -F" and "plan line 10" in flag.detail
    assert verdicts["CHK-03"].penalties == ()  # no plan dimension, no relevant passages


def test_one_dangerous_advice_flag_per_line():
    (flag,) = one("kworkerd", plan_with("```\niptables -F && rm -rf /var/www\n```")).penalties
    assert flag.quote == "iptables -F && rm -rf /var/www"


def test_dangerous_advice_zeroes_only_the_item_whose_remediation_holds_the_step():
    plan = (
        "# Plan\n\n## Host clean-up (kworkerd, xmr.pool)\n\n"
        "Kill kworkerd and rm its binary.\n\n```\nrm -rf /var/www\n```\n\n"
        "Block xmr.pool at the firewall with iptables.\n"
    )
    rng = make_range(
        chk("CHK-01"),
        chk("CHK-02", indicators=("xmr.pool",), remediation=("iptables",)),
    )
    verdicts = judge(rng, submission("kworkerd xmr.pool", plan))
    assert [flag.rule for flag in verdicts["CHK-01"].penalties] == ["dangerous_advice"]
    assert verdicts["CHK-02"].penalties == ()


@pytest.mark.parametrize(
    "check",
    [
        "Check: `sshd -T | grep permitrootlogin`",
        "check with `sudo -l -U deploy`",
        "Check whether kworkerd still runs with ps.",
    ],
)
def test_a_check_named_as_one_is_verification(check):
    plan = f"# Plan\n\n## Miner kworkerd\n\nkill kworkerd and rm it.\n\n{check}\n"
    assert pln(one("kworkerd", plan), "completeness") == 1
