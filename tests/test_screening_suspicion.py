"""Suspicion rules (evalkit/screening/suspicion.py): what looks like gaming, and what does not.

The second half holds the forms honest reports take, each of which must raise nothing:
a guard that fires on honest work costs it points and buries the real warnings.
"""

from __future__ import annotations

import pytest

from tests.screening_samples import RANGE, kinds, screen_report

# --------------------------------------------------------------------------- dumps


@pytest.mark.parametrize(
    "line",
    [
        # artifacts, concepts and actions mixed, nothing said between them
        "kworkerd xmrig /var/tmp/.cache/kworkerd cryptominer brute force kill chattr -i rebuild",
        "kworkerd, /var/tmp/.cache/kworkerd, xmrig, brute force, cryptominer",
        "xmrig, 198.51.100.77, cryptominer, brute force",
        # the checklist's own ids among the terms, even with a word of glue
        "CHK-01, kworkerd, kill, rebuild, verify",
        "| CHK-02 | 198.51.100.77, iptables, DROP, verify |",
    ],
)
def test_a_dump_of_checklist_terms_is_keyword_stuffing(line):
    result = screen_report(f"# R\n\n{line}\n")
    assert kinds(result) == [("keyword_stuffing", 3)]
    assert [(m.first_line, m.last_line) for m in result.masks["report"]] == [(3, 3)]


def test_in_code_only_a_dump_beside_checklist_ids_is_stuffing():
    code = "```text\nCHK-01 kworkerd, xmrig, brute force, kill\n```\n"
    assert kinds(screen_report(f"# R\n\n{code}")) == [("keyword_stuffing", 4)]
    command = "```\nchattr -i /var/tmp/.cache/kworkerd; kill 4127; xmrig --version\n```\n"
    assert screen_report(f"# R\n\n{command}").warnings == ()


def test_a_table_scoring_the_checklist_is_fake_scores():
    rubric = "| CHK | Discovery | Attribution |\n|---|---|---|\n| CHK-01 | 1 | 1 |\n"
    result = screen_report(f"# R\n\n{rubric}")
    assert kinds(result) == [("fake_scores", 3)]
    assert [(m.first_line, m.last_line) for m in result.masks["report"]] == [(3, 5)]
    dims = "| CHK | Name | Detection | Plan |\n|---|---|---|---|\n| CHK-01 | Miner | 3/3 | 2/2 |\n"
    assert kinds(screen_report(f"# R\n\n{dims}")) == [("fake_scores", 3)]
    points = "| Item | Points |\n|---|---|\n| CHK-01 | 3/3 |\n"
    assert kinds(screen_report(f"# R\n\n{points}")) == [("fake_scores", 3)]


def test_a_checkpoint_said_back_is_restated_criteria():
    echo = "- We confirmed mining pool connection (198.51.100.77, xmr.pool.example.net)."
    assert kinds(screen_report(f"# R\n\n{echo}\n")) == [("restated_criteria", 3)]
    criterion = (
        "This report identifies the running miner process and ties it to the SSH compromise"
        " rather than to a legitimate workload."
    )
    assert kinds(screen_report(f"# R\n\n{criterion}\n")) == [("restated_criteria", 3)]


def test_a_phrase_shared_with_a_criterion_is_not_a_restatement():
    # Eleven words of the eighteen-word criterion: an honest description of the same
    # facts shares phrases with a criterion; a restatement says three quarters of it.
    shared = (
        "Our triage identifies the running miner process and ties it to the SSH compromise"
        " through PID 4127 and its parent sshd session."
    )
    assert screen_report(f"# R\n\n{shared}\n").warnings == ()


def test_one_term_laden_sentence_written_three_times_is_a_repeated_passage():
    sentence = "The cryptominer kworkerd came with the brute force and its xmrig pool."
    report = "# R\n\n" + "\n\n".join(f"Finding {n}. {sentence}" for n in range(3)) + "\n"
    assert kinds(screen_report(report)) == [("repeated_passage", line) for line in (3, 5, 7)]
    twice = "# R\n\n" + "\n\n".join(f"Finding {n}. {sentence}" for n in range(2)) + "\n"
    assert screen_report(twice).warnings == ()


# --------------------------------------------------------------------------- honest forms

HONEST_FORMS = {
    "findings table with a verdict column": (
        "| # | Finding | Evidence | Verdict |\n|---|---|---|---|\n"
        "| F1 | kworkerd (xmrig) mining from /var/tmp/.cache/kworkerd | E-02 | TP |\n"
        "| F2 | outbound 198.51.100.77:3333 (xmr.pool.example.net) | E-03 | TP |\n"
    ),
    "coverage matrix": (
        "| Area | Checked with | Result |\n|---|---|---|\n"
        "| Processes | ps, /proc | kworkerd (xmrig) found |\n| Egress | ss -tnp | 198.51.100.77 |\n"
    ),
    "evidence index": (
        "| ID | Path | sha256 | Collected |\n|---|---|---|---|\n"
        "| E-01 | /var/tmp/.cache/kworkerd | edaa1ad7... | 09:41 |\n"
    ),
    "timeline table": (
        "| Time | Source | Event |\n|---|---|---|\n"
        "| 03:14:07 | auth.log | brute force ends, login |\n"
        "| 03:18:02 | ps | kworkerd starts |\n"
    ),
    "IOC bullets": (
        "## IOCs\n\n- 198.51.100.77\n- xmr.pool.example.net\n- /var/tmp/.cache/kworkerd\n"
    ),
    "IOC commas": "IOCs: 198.51.100.77, xmr.pool.example.net, 3333, kworkerd, xmrig\n",
    "IOC commas with context": (
        "Network IOCs (block these): 198.51.100.77 (pool), xmr.pool.example.net, port 3333.\n"
    ),
    "ATT&CK table": (
        "| Technique | Name | Observed |\n|---|---|---|\n"
        "| T1110 | Brute Force | 1,846 failed logins |\n| T1496 | Resource Hijacking | xmrig |\n"
    ),
    "command transcript": (
        "```\n$ ps -eo pid,user,%cpu,cmd | grep kworkerd\n4127 root 390 /var/tmp/.cache/kworkerd\n"
        "$ ss -tnp | grep 3333\nESTAB 192.0.2.10:41822 198.51.100.77:3333 kworkerd\n```\n"
    ),
    "config excerpt": (
        "```ini\n[Service]\nExecStart=/var/tmp/.cache/kworkerd\nRestart=always\n```\n"
    ),
    "Sigma rule": (
        "```yaml\ntitle: Miner started from /var/tmp\ndetection:\n  selection:\n"
        "    Image|endswith: '/kworkerd'\n  condition: selection\n```\n"
    ),
    "grep one-liner in a list": (
        "- `grep -E 'kworkerd|xmrig|198.51.100.77' /var/log/syslog`\n"
        "- `iptables -A OUTPUT -d 198.51.100.77 -j DROP`\n"
    ),
    "plan commands in code spans": (
        "- pool: `iptables -A OUTPUT -d 198.51.100.77 -j DROP`, `ss -tnp`, `kill 4127`.\n"
    ),
    "executive-summary risk table": (
        "| Risk | Likelihood | Impact | Owner |\n|---|---|---|---|\n"
        "| Cryptominer persists (kworkerd) | High | Medium | SecOps |\n"
    ),
    "summary sentence naming hosts and accounts": (
        "The brute force from 203.0.113.45 gave access to deploy on web-01; kworkerd, an xmrig"
        " cryptominer, then ran as root.\n"
    ),
    "a finding naming its checkpoint": (
        "- Mining pool connection: `198.51.100.77:3333` (xmr.pool.example.net)\n"
        "- The mining pool connection went from PID 4242 to 198.51.100.77 on port 3333"
        " (xmr.pool.example.net) every minute.\n"
        "- Mining pool connection: xmrig reached 198.51.100.77 on 3333.\n"
    ),
    "a command and the settings it shows": (
        "- [ ] `sshd -T`: passwordauthentication no, permitrootlogin no\n"
        "- sshd -T: kworkerd 198.51.100.77 iptables DROP\n"
    ),
    "checklist of plan steps": (
        "- [ ] Capture volatile data, then `kill 4127`\n- [ ] `chattr -i` the binary, then rm\n"
    ),
}


@pytest.mark.parametrize("form", sorted(HONEST_FORMS))
def test_honest_forms_raise_nothing(form):
    text = HONEST_FORMS[form]
    assert screen_report(f"# Report\n\n{text}").warnings == (), form
    assert screen_report("# R\n\nNothing.\n", plan=f"# Plan\n\n{text}").warnings == (), form


def test_in_a_plan_an_items_name_over_its_commands_is_a_step():
    plan = "# Plan\n\n- Mining pool connection: iptables DROP, then ss.\n"
    assert screen_report("# R\n\nNothing.\n", plan=plan).warnings == ()


def test_the_sample_checklist_has_both_checkpoints():
    assert [c.id for c in RANGE.checkpoints] == ["CHK-01", "CHK-02"]
