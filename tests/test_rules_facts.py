"""Rules judge: fabrication, a mention the range's Facts contradict
(evalkit/judges/rules/facts.py)."""

from __future__ import annotations

import pytest

from tests.rules_cases import chk, judge, make_range, submission

FINDINGS = "# Report\n\n## Miner\n\nkworkerd runs.\n{line}\n\n## Other\n\nnothing here.\n"


def test_fabrication_of_a_cve_when_facts_say_no_cve():
    report = FINDINGS.format(line="It exploits CVE-2021-4034 to get root.")
    rng = make_range(chk("CHK-01"), facts=("No CVE is involved in the initial access.",))
    verdict = judge(rng, submission(report))["CHK-01"]
    (flag,) = verdict.penalties
    assert flag.rule == "fabrication"
    assert flag.quote == "It exploits CVE-2021-4034 to get root."
    assert "CVE-2021-4034" in flag.detail and "No CVE is involved" in flag.detail


def test_fabrication_applies_only_to_checkpoints_with_an_indicator_in_that_section():
    report = FINDINGS.format(line="It exploits CVE-2021-4034.")
    rng = make_range(
        chk("CHK-01"),
        chk("CHK-02", indicators=("nothing here",)),
        chk("CHK-03", scope="plan-only"),
        facts=("No CVE is involved.",),
    )
    verdicts = judge(rng, submission(report))
    assert len(verdicts["CHK-01"].penalties) == 1
    assert verdicts["CHK-02"].penalties == ()
    assert verdicts["CHK-03"].penalties == ()  # detection does not apply


def test_fabrication_of_a_cve_not_listed_in_the_facts():
    report = FINDINGS.format(line="Exploited CVE-2021-41773, then cve-2099-0001 for root.")
    rng = make_range(chk(), facts=("Initial access: CVE-2021-41773 in Apache 2.4.49.",))
    (flag,) = judge(rng, submission(report))["CHK-01"].penalties
    assert "CVE-2099-0001" in flag.detail and "CVE-2021-41773" in flag.detail


def test_a_cve_listed_in_the_facts_is_not_fabrication():
    report = FINDINGS.format(line="Exploited CVE-2021-41773.")
    rng = make_range(chk(), facts=("Initial access: CVE-2021-41773.",))
    assert judge(rng, submission(report))["CHK-01"].penalties == ()


def test_cves_without_cve_facts_are_not_judged():
    report = FINDINGS.format(line="Exploited CVE-2099-0001.")
    assert judge(make_range(chk()), submission(report))["CHK-01"].penalties == ()


@pytest.mark.parametrize(
    "cve",
    [
        "CVE-2024-6387",
        "CVE 2024-6387",
        "CVE\u20102024\u20106387",
        "\u0421VE-2024-6387",
        "CVE-2024\u200b-6387",
    ],
)
def test_a_cve_is_matched_after_normalisation(cve):
    rng = make_range(chk(), facts=("Initial access: CVE-2021-41773 in Apache 2.4.49.",))
    report = FINDINGS.format(line=f"Root came from {cve}.")
    (flag,) = judge(rng, submission(report))["CHK-01"].penalties
    assert flag.rule == "fabrication" and "CVE-2024-6387" in flag.detail
    listed = FINDINGS.format(
        line=f"Entry came from {cve.replace('2024', '2021').replace('6387', '41773')}."
    )
    assert judge(rng, submission(listed))["CHK-01"].penalties == ()


def test_a_fabricated_cve_is_a_claim_about_the_item_named_in_its_block():
    report = (
        "# Report\n\n## SSH\n\n`PermitRootLogin yes` at /etc/ssh/sshd_config line 3.\n\n"
        "`PasswordAuthentication yes` at /etc/ssh/sshd_config line 4.\n\n"
        "With `PermitRootLogin yes`, CVE-2023-38408 gives remote root.\n"
    )
    root = chk("CHK-01", indicators=("PermitRootLogin yes",))
    password = chk("CHK-02", indicators=("PasswordAuthentication yes",))
    rng = make_range(root, password, facts=("No CVE applies to this review.",))
    verdicts = judge(rng, submission(report))
    assert [p.rule for p in verdicts["CHK-01"].penalties] == ["fabrication"]
    assert verdicts["CHK-02"].penalties == ()


def test_one_fabrication_flag_per_fabricated_item():
    report = FINDINGS.format(line="CVE-2099-0001 here.\nAgain CVE-2099-0001.\nAnd CVE-2099-0002.")
    rng = make_range(chk(), facts=("No CVE is involved.",))
    flags = judge(rng, submission(report))["CHK-01"].penalties
    assert [f.quote for f in flags] == ["CVE-2099-0001 here.", "And CVE-2099-0002."]


# --------------------------------------------------------------------------- negated or asserted


def test_a_negated_mention_is_not_fabrication():
    report = FINDINGS.format(
        line="The host is not vulnerable to CVE-2024-6387; no exploit was used."
    )
    rng = make_range(chk(), facts=("No CVE is involved.",))
    assert judge(rng, submission(report))["CHK-01"].penalties == ()


def test_a_negation_after_the_cve_does_not_excuse_it():
    report = FINDINGS.format(
        line="xmrig was installed after exploiting CVE-2024-6387 with no authentication required."
    )
    rng = make_range(chk(), facts=("No CVE is involved.",))
    (flag,) = judge(rng, submission(report))["CHK-01"].penalties
    assert "CVE-2024-6387" in flag.detail


@pytest.mark.parametrize(
    "line",
    [
        "CVE-2024-6387 (regreSSHion) was ruled out: sshd is patched.",
        "We found no evidence of CVE-2024-6387 being used.",
        "The attacker did not need CVE-2024-6387.",
    ],
)
def test_negated_cve_forms_are_not_fabrication(line):
    rng = make_range(chk(), facts=("No CVE is involved.",))
    assert judge(rng, submission(FINDINGS.format(line=line)))["CHK-01"].penalties == ()


def test_negation_in_another_clause_does_not_excuse_a_mention():
    report = FINDINGS.format(line="Exploited CVE-2021-4034 for root; no patch was applied.")
    rng = make_range(chk(), facts=("No CVE is involved.",))
    assert len(judge(rng, submission(report))["CHK-01"].penalties) == 1


def test_the_clause_spans_a_wrapped_sentence_but_not_lines_of_code():
    rng = make_range(chk(), facts=("No CVE is involved.",))
    wrapped = FINDINGS.format(line="The host is not\nvulnerable to CVE-2024-6387.")
    assert judge(rng, submission(wrapped))["CHK-01"].penalties == ()
    code = FINDINGS.format(line="\n```\nexploit CVE-2021-4034\nnot found\n```")
    (flag,) = judge(rng, submission(code))["CHK-01"].penalties
    assert flag.quote == "exploit CVE-2021-4034"


# --------------------------------------------------------------------------- absent artifacts


def test_fabrication_of_an_absent_artifact():
    report = FINDINGS.format(line="A rootkit hides it via /etc/ld.so.preload.")
    rng = make_range(chk(), facts=("There is no `/etc/ld.so.preload` rootkit on the host.",))
    (flag,) = judge(rng, submission(report))["CHK-01"].penalties
    assert flag.rule == "fabrication"
    assert "`/etc/ld.so.preload`" in flag.detail
    assert flag.quote == "A rootkit hides it via /etc/ld.so.preload."


@pytest.mark.parametrize(
    "fact",
    [
        "No `/tmp/.x` file was dropped.",
        "There are no `/tmp/.x` files.",
        "`/tmp/.x` does not exist.",
        "The file `/tmp/.x` is not present on the host.",
    ],
)
def test_absence_fact_forms(fact):
    report = FINDINGS.format(line="Payload staged in /tmp/.x today.")
    rng = make_range(chk(), facts=(fact,))
    assert len(judge(rng, submission(report))["CHK-01"].penalties) == 1


def test_a_fact_that_is_not_about_absence_names_no_absent_artifact():
    report = FINDINGS.format(line="Payload staged in /tmp/.x today.")
    rng = make_range(chk(), facts=("Dropper saved `/tmp/.x`.",))
    assert judge(rng, submission(report))["CHK-01"].penalties == ()


def test_saying_an_absent_artifact_is_absent_is_not_fabrication():
    report = FINDINGS.format(line="There is no /etc/ld.so.preload on the host.")
    rng = make_range(chk(), facts=("There is no `/etc/ld.so.preload` rootkit on the host.",))
    assert judge(rng, submission(report))["CHK-01"].penalties == ()
