"""Tests for evalkit.checklist: both checkpoint forms, every rule, exact error lines."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from evalkit.checklist import list_ranges, load_range, natural_key, parse_checklist
from evalkit.errors import ChecklistError, ChecklistErrors
from evalkit.model import Capability, Checkpoint

# Five lines, so checklist bodies appended to it start at line 6.
FRONT = """\
---
range: ssh-miner
title: SSH brute force leading to a cryptominer
report: intrusion-report
---
"""

ITEM = """\
### CHK-01 Mining process
- Detection: finds it
- Plan: kills it
"""


def _parse(body: str, front: str = FRONT, **kwargs) -> object:
    return parse_checklist(front + body, "ranges/ssh-miner/checklist.md", **kwargs)


def _errors(text: str, **kwargs) -> list[ChecklistError]:
    with pytest.raises(ChecklistErrors) as info:
        parse_checklist(text, "ranges/ssh-miner/checklist.md", **kwargs)
    return info.value.errors


def _where(errors: list[ChecklistError]) -> list[tuple[int | None, str | None]]:
    return [(e.line, e.item) for e in errors]


def _no_line(checkpoints: tuple[Checkpoint, ...]) -> tuple[Checkpoint, ...]:
    return tuple(dataclasses.replace(c, line=None) for c in checkpoints)


# --------------------------------------------------------------------------- happy paths

SPEC_FORM_A = (
    FRONT
    + """\

## Capabilities
| CAP | Name |
|-----|------|
| CAP-01 | Process and host forensics |
| CAP-02 | Log analysis |

## Facts
- Attacker source IP: 203.0.113.45
- Miner binary: /var/tmp/.cache/kworkerd (xmrig 6.21)
- No CVE is involved in the initial access.

## Checkpoints

### CHK-01 Mining process detection
- CAP: CAP-01
- Scope: both
- Detection: Identifies the running miner process (name, PID or path) and ties it to the compromise.
- Plan: Kill the process, remove the binary and its persistence; verify with ps and netstat.
- Indicators: `kworkerd`, `/var/tmp/.cache`, `xmrig`
- Attribution: `SSH`, `brute force`
- Remediation: `kill`, `rm`, `chattr`
"""
)


def test_form_a_parses_every_field_of_the_spec_example():
    rng = parse_checklist(SPEC_FORM_A, "ranges/ssh-miner/checklist.md")
    assert (rng.id, rng.report) == ("ssh-miner", "intrusion-report")
    assert rng.title == "SSH brute force leading to a cryptominer"
    assert rng.capabilities == (
        Capability("CAP-01", "Process and host forensics"),
        Capability("CAP-02", "Log analysis"),
    )
    assert rng.facts == (
        "Attacker source IP: 203.0.113.45",
        "Miner binary: /var/tmp/.cache/kworkerd (xmrig 6.21)",
        "No CVE is involved in the initial access.",
    )
    assert rng.checkpoints == (
        Checkpoint(
            id="CHK-01",
            name="Mining process detection",
            scope="both",
            caps=("CAP-01",),
            detection_criteria="Identifies the running miner process (name, PID or path) "
            "and ties it to the compromise.",
            plan_criteria="Kill the process, remove the binary and its persistence; "
            "verify with ps and netstat.",
            indicators=("kworkerd", "/var/tmp/.cache", "xmrig"),
            attribution_terms=("SSH", "brute force"),
            remediation_terms=("kill", "rm", "chattr"),
            line=20,
        ),
    )


def test_form_b_table_parses_every_column():
    rng = _parse(
        """\
## Checkpoints
| CHK | Name | CAP | Scope | Detection criteria | Plan criteria | Indicators |
|-----|------|-----|-------|--------------------|---------------|------------|
| CHK-01 | Miner detection | CAP-01, CAP-02 | both | Identifies it | Kill it | `kworkerd`, `xmrig` |
"""
    )
    (chk,) = rng.checkpoints
    assert chk == Checkpoint(
        id="CHK-01",
        name="Miner detection",
        caps=("CAP-01", "CAP-02"),
        detection_criteria="Identifies it",
        plan_criteria="Kill it",
        indicators=("kworkerd", "xmrig"),
        line=9,
    )


def test_both_forms_yield_equal_checkpoints():
    form_a = _parse(
        """\
## Checkpoints

### CHK-02 Persistence
- CAP: CAP-01
- Scope: detection-only
- Detection criteria: Finds cron.
- Indicators: `/etc/cron.d/x`, `sh`
- Owner: blue

### CHK-01 Mining process
- Detection: Finds the miner.
- Plan: Kills it.
- Attribution: `SSH`
- Remediation: `kill`, `rm`

### CHK-10 Hardening
- Scope: plan-only
- Plan criteria: No passwords.
- Remediation: `PasswordAuthentication no`
"""
    )
    form_b = _parse(
        """\
## Checkpoints

| ID | Name | CAP | Scope | Detection | Plan | Indicators | Attribution | Remediation | Owner |
|----|------|-----|-------|-----------|------|------------|-------------|-------------|-------|
| CHK-01 | Mining process | | | Finds the miner. | Kills it. | | `SSH` | `kill`, `rm` | |
| CHK-10 | Hardening | | plan-only | | No passwords. | | | `PasswordAuthentication no` | |
| CHK-02 | Persistence | CAP-01 | Detection-only | Finds cron. | | `/etc/cron.d/x`,`sh` | | | blue |
"""
    )
    assert [c.id for c in form_a.checkpoints] == ["CHK-01", "CHK-02", "CHK-10"]
    assert _no_line(form_a.checkpoints) == _no_line(form_b.checkpoints)
    assert form_a.checkpoint("CHK-02").extra == {"Owner": "blue"}


def test_checkpoints_are_sorted_naturally_by_id():
    body = "## Checkpoints\n" + "".join(
        ITEM.replace("CHK-01", chk) for chk in ("CHK-10", "CHK-2", "CHK-1")
    )
    assert [c.id for c in _parse(body).checkpoints] == ["CHK-1", "CHK-2", "CHK-10"]


def test_natural_key_orders_digit_runs_by_value():
    ids = ["CHK-10", "CHK-2", "CHK-01", "CHK-1", "chk-3"]
    assert sorted(ids, key=natural_key) == ["CHK-01", "CHK-1", "CHK-2", "chk-3", "CHK-10"]


@pytest.mark.parametrize(
    "heading",
    [
        "CHK-07 Lateral movement",
        "CHK-07: Lateral movement",
        "CHK-07 — Lateral movement",
        "CHK-07 - Lateral movement",
        "CHK-07 Lateral movement ##",
    ],
)
def test_form_a_heading_accepts_space_colon_and_dash_separators(heading):
    rng = _parse(f"## Checkpoints\n### {heading}\n- Detection: d\n- Plan: p\n")
    assert (rng.checkpoints[0].id, rng.checkpoints[0].name) == ("CHK-07", "Lateral movement")


def test_field_names_are_case_insensitive_and_criteria_aliases_accepted():
    rng = _parse(
        """\
## Checkpoints
### CHK-01 Miner
- SCOPE: Detection-Only
- detection CRITERIA: finds it
- INDICATORS: `a`
- **Remediation:** `kill`
"""
    )
    chk = rng.checkpoints[0]
    assert (chk.scope, chk.detection_criteria, chk.indicators) == (
        "detection-only",
        "finds it",
        ("a",),
    )
    assert chk.remediation_terms == ("kill",)
    assert chk.extra == {}


def test_plan_criteria_alias_accepted():
    rng = _parse("## Checkpoints\n### CHK-01 Miner\n- Detection: d\n- Plan Criteria: p\n")
    assert rng.checkpoints[0].plan_criteria == "p"


def test_indented_continuation_lines_join_with_single_spaces():
    rng = _parse(
        """\
## Checkpoints
### CHK-01 Miner
- Detection: Identifies the miner
    process and its PID,
  and ties it to the compromise.
- Plan:
    Kill it.
"""
    )
    chk = rng.checkpoints[0]
    assert (
        chk.detection_criteria
        == "Identifies the miner process and its PID, and ties it to the compromise."
    )
    assert chk.plan_criteria == "Kill it."


def test_unknown_fields_are_kept_in_extra_with_their_name_as_written():
    rng = _parse(
        "## Checkpoints\n### CHK-01 Miner\n- Detection: d\n- Plan: p\n"
        "- Severity Level: High\n- MITRE: T1496\n"
    )
    assert rng.checkpoints[0].extra == {"Severity Level": "High", "MITRE": "T1496"}


def test_a_misspelt_field_is_a_warning_naming_it_its_line_and_the_field_meant():
    rng = _parse(
        "## Checkpoints\n### CHK-01 Miner\n- Detection: d\n- Plan: p\n"
        # Owner is no field evalkit knows (Severity is documented, see the next test).
        "- Indicaters: `kworkerd`\n- Remediaton: `kill`\n- Owner: ops\n"
    )
    chk = rng.checkpoints[0]
    assert chk.indicators == () and chk.extra["Indicaters"] == "`kworkerd`"
    assert rng.warnings == (
        "ranges/ssh-miner/checklist.md:10: CHK-01: unknown field 'Indicaters', kept as written"
        " and not used for scoring; did you mean 'Indicators'?",
        "ranges/ssh-miner/checklist.md:11: CHK-01: unknown field 'Remediaton', kept as written"
        " and not used for scoring; did you mean 'Remediation'?",
        "ranges/ssh-miner/checklist.md:12: CHK-01: unknown field 'Owner', kept as written"
        " and not used for scoring",
    )


def test_an_unknown_table_column_is_a_warning_at_the_header_line():
    rng = _parse(
        "## Checkpoints\n| CHK | Name | Detection | Plan | Indicatros |\n|---|---|---|---|---|\n"
        "| CHK-01 | Miner | d | p | `x` |\n| CHK-02 | Pool | d | p | `y` |\n"
    )
    assert rng.warnings == (
        "ranges/ssh-miner/checklist.md:7: CHK-01: unknown field 'Indicatros', kept as written"
        " and not used for scoring; did you mean 'Indicators'?",
        "ranges/ssh-miner/checklist.md:7: CHK-02: unknown field 'Indicatros', kept as written"
        " and not used for scoring; did you mean 'Indicators'?",
    )


def test_known_fields_and_prose_raise_no_warning():
    rng = _parse("## Checkpoints\n### CHK-01 Miner\nSome prose.\n- detection: d\n- PLAN: p\n")
    assert rng.warnings == ()


def test_prose_lines_under_a_heading_are_kept_in_extra_notes():
    rng = _parse(
        """\
## Checkpoints
### CHK-01 Miner
The miner restarts itself
every minute.
- Detection: d
- Plan: p
- a bullet that is not a field
"""
    )
    assert rng.checkpoints[0].extra == {
        "Notes": "The miner restarts itself every minute. - a bullet that is not a field"
    }


def test_backticked_list_fields_extract_spans_in_order_stripped_and_deduplicated():
    rng = _parse(
        "## Checkpoints\n### CHK-01 Miner\n- Detection: d\n- Plan: p\n"
        "- Indicators: `xmrig`, the file ` /tmp/x `, `xmrig` and `a, b`\n"
    )
    assert rng.checkpoints[0].indicators == ("xmrig", "/tmp/x", "a, b")


def test_list_field_without_backticks_is_split_on_commas():
    rng = _parse(
        "## Checkpoints\n### CHK-01 Miner\n- Detection: d\n- Plan: p\n"
        "- Attribution: SSH,  brute force , , SSH\n"
    )
    assert rng.checkpoints[0].attribution_terms == ("SSH", "brute force")


def test_cap_is_comma_separated_and_stripped():
    rng = _parse(
        "## Checkpoints\n### CHK-01 Miner\n- CAP:  CAP-01 ,CAP-02\n- Detection: d\n- Plan: p\n"
    )
    assert rng.checkpoints[0].caps == ("CAP-01", "CAP-02")


@pytest.mark.parametrize("scope_line", ["", "- Scope:\n", "- Scope: BOTH\n"])
def test_scope_defaults_to_both_when_absent_or_empty(scope_line):
    rng = _parse(f"## Checkpoints\n### CHK-01 Miner\n{scope_line}- Detection: d\n- Plan: p\n")
    assert rng.checkpoints[0].scope == "both"


@pytest.mark.parametrize(
    ("written", "scope"),
    [("detection only", "detection-only"), ("Plan Only", "plan-only"), ("plan-only", "plan-only")],
)
def test_scope_accepts_hyphen_or_space_spelling(written, scope):
    rng = _parse(
        f"## Checkpoints\n### CHK-01 Miner\n- Scope: {written}\n- Detection: d\n- Plan: p\n"
    )
    assert rng.checkpoints[0].scope == scope


def test_plan_only_needs_no_detection_and_detection_only_needs_no_plan():
    rng = _parse(
        "## Checkpoints\n### CHK-01 A\n- Scope: plan-only\n- Plan: p\n"
        "### CHK-02 B\n- Scope: detection-only\n- Detection: d\n"
    )
    assert [(c.has_detection, c.has_plan) for c in rng.checkpoints] == [
        (False, True),
        (True, False),
    ]


def test_sections_are_matched_case_insensitively_and_other_sections_ignored():
    rng = _parse(
        """\
## Overview
Some text.
- Detection: not a checkpoint field
## FACTS
- one fact
## checkpoints
### CHK-01 Miner
- Detection: d
- Plan: p
## Appendix
### CHK-99 Not a checkpoint
"""
    )
    assert rng.facts == ("one fact",)
    assert [c.id for c in rng.checkpoints] == ["CHK-01"]


def test_fact_continuation_lines_belong_to_their_bullet():
    rng = _parse(
        "## Facts\n- The miner is\n  xmrig 6.21.\nProse is not a fact.\n* Second fact\n"
        "## Checkpoints\n" + ITEM
    )
    assert rng.facts == ("The miner is xmrig 6.21.", "Second fact")


def test_headings_inside_code_fences_are_not_structure():
    rng = _parse(
        "## Checkpoints\n### CHK-01 Miner\n- Detection: d\n- Plan: p\n"
        "```\n### CHK-02 Example only\n## Facts\n```\n"
    )
    assert [c.id for c in rng.checkpoints] == ["CHK-01"]
    assert rng.facts == ()


def test_tilde_fence_holding_a_backtick_line_is_code_not_a_checkpoint():
    # The case: the old scanner closed the ~~~ fence at the ``` line.
    rng = _parse(
        "## Checkpoints\n### CHK-01 Miner\n- Detection: d\n- Plan: p\n\n"
        "~~~\n```\n### CHK-02 Example only\n- Detection: x\n```\n~~~\n"
    )
    assert [c.id for c in rng.checkpoints] == ["CHK-01"]


def test_a_nul_byte_is_refused_with_its_line():
    errors = _errors(FRONT + "## Checkpoints\n" + ITEM.replace("finds it", "finds\x00it"))
    assert _where(errors) == [(8, None)]
    assert "NUL" in errors[0].message


def test_same_number_written_twice_is_a_duplicate_id():
    errors = _errors(FRONT + "## Checkpoints\n" + ITEM + ITEM.replace("CHK-01", "CHK-1"))
    assert _where(errors) == [(10, "CHK-1")]
    assert "duplicate checkpoint id" in errors[0].message and "CHK-01" in errors[0].message


def test_front_matter_comments_and_quotes_are_stripped():
    front = (
        "---\n# a comment line\nrange: ssh-miner   # must equal the folder\n"
        "title: 'C# service # 2'\nreport: vuln-report # kind\n---\n"
    )
    rng = _parse("## Checkpoints\n" + ITEM, front=front, expected_range="ssh-miner")
    assert (rng.id, rng.title, rng.report) == ("ssh-miner", "C# service # 2", "vuln-report")


def test_crlf_line_endings_and_bom_parse_like_lf():
    text = "\ufeff" + (FRONT + "## Checkpoints\n" + ITEM).replace("\n", "\r\n")
    rng = parse_checklist(text)
    assert rng.checkpoints[0].line == 7
    assert rng.checkpoints[0].plan_criteria == "kills it"


def test_path_and_sha256_of_the_text_are_recorded():
    text = FRONT + "## Checkpoints\n" + ITEM
    rng = parse_checklist(text, "x/checklist.md")
    assert rng.path == "x/checklist.md"
    assert rng.sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- form B details


def test_table_escaped_pipe_stays_inside_its_cell():
    rng = _parse(
        "## Checkpoints\n| CHK | Name | Detection | Plan |\n|---|---|---|---|\n"
        "| CHK-01 | Miner | finds `ps aux \\| grep x` | kill |\n"
    )
    assert rng.checkpoints[0].detection_criteria == "finds `ps aux | grep x`"


def test_table_empty_cells_are_absent_fields():
    rng = _parse(
        "## Checkpoints\n| CHK | Name | Scope | Detection | Plan | Notes |\n"
        "|---|---|---|---|---|---|\n| CHK-01 | Miner |  | d | p |  |\n"
    )
    chk = rng.checkpoints[0]
    assert (chk.scope, chk.extra) == ("both", {})


def test_table_unknown_columns_go_to_extra():
    rng = _parse(
        "## Checkpoints\n| CHK | Name | Detection | Plan | MITRE id |\n|---|---|---|---|---|\n"
        "| CHK-01 | Miner | d | p | T1496 |\n"
    )
    assert rng.checkpoints[0].extra == {"MITRE id": "T1496"}


def test_table_row_line_is_the_checkpoint_line():
    rng = _parse(
        "## Checkpoints\n\n| CHK | Name | Detection | Plan |\n|---|---|---|---|\n"
        "| CHK-01 | A | d | p |\n| CHK-02 | B | d | p |\n"
    )
    assert [c.line for c in rng.checkpoints] == [10, 11]


def test_table_row_cell_count_mismatch_reported_at_row_line():
    errors = _errors(
        FRONT + "## Checkpoints\n| CHK | Name | Detection | Plan |\n|---|---|---|---|\n"
        "| CHK-01 | A | d | p |\n| CHK-02 | B | d |\n"
    )
    assert _where(errors) == [(10, None)]
    assert "3 cells but its header has 4" in errors[0].message


def test_table_without_chk_column_reported_at_header_line():
    errors = _errors(
        FRONT + "## Checkpoints\n| Name | Detection | Plan |\n|---|---|---|\n| A | d | p |\n"
    )
    # The section then holds no checkpoint either: both are reported.
    assert _where(errors) == [(6, None), (7, None)]
    assert "no CHK column" in errors[1].message


def test_undeclared_cap_in_table_reported_at_row_line():
    errors = _errors(
        FRONT + "## Capabilities\n| CAP | Name |\n|---|---|\n| CAP-01 | Forensics |\n"
        "## Checkpoints\n| CHK | Name | CAP | Detection | Plan |\n|---|---|---|---|---|\n"
        "| CHK-01 | A | CAP-01, CAP-09 | d | p |\n"
    )
    assert _where(errors) == [(13, "CHK-01")]
    assert "CAP-09 is not declared" in errors[0].message


# --------------------------------------------------------------------------- errors


def test_duplicate_id_reports_line_of_second_occurrence():
    errors = _errors(FRONT + "## Checkpoints\n" + ITEM + ITEM)
    assert _where(errors) == [(10, "CHK-01")]
    assert "first defined at line 7" in errors[0].message


def test_duplicate_id_across_forms_is_reported():
    errors = _errors(
        FRONT + "## Checkpoints\n| CHK | Name | Detection | Plan |\n|---|---|---|---|\n"
        "| CHK-01 | A | d | p |\n\n" + ITEM
    )
    assert _where(errors) == [(11, "CHK-01")]


@pytest.mark.parametrize("bad_id", ["CHK-1a", "chk-01", "CHK01", "Setup"])
def test_invalid_id_reported_at_heading_line(bad_id):
    errors = _errors(
        FRONT + f"## Checkpoints\n{ITEM}### {bad_id} Thing\n- Detection: d\n- Plan: p\n"
    )
    assert _where(errors) == [(10, None)]
    assert f"invalid checkpoint id {bad_id!r}" in errors[0].message


def test_table_row_without_id_reported_at_row_line():
    errors = _errors(
        FRONT
        + "## Checkpoints\n| CHK | Name | Detection | Plan |\n|---|---|---|---|\n| | A | d | p |\n"
    )
    assert _where(errors) == [(9, None)]
    assert "no id" in errors[0].message


def test_missing_name_reported_at_heading_line():
    errors = _errors(FRONT + "## Checkpoints\n" + ITEM + "### CHK-02\n- Detection: d\n- Plan: p\n")
    assert _where(errors) == [(10, "CHK-02")]
    assert "no name" in errors[0].message


def test_name_bullet_names_a_checkpoint_whose_heading_has_none():
    rng = _parse("## Checkpoints\n### CHK-01\n- Name: Miner\n- Detection: d\n- Plan: p\n")
    assert rng.checkpoints[0].name == "Miner"


def test_missing_detection_criteria_reported_unless_plan_only():
    errors = _errors(FRONT + "## Checkpoints\n### CHK-01 A\n- Scope: both\n- Plan: p\n")
    assert _where(errors) == [(7, "CHK-01")]
    assert "missing Detection criteria" in errors[0].message


def test_missing_plan_criteria_reported_unless_detection_only():
    errors = _errors(FRONT + "## Checkpoints\n### CHK-01 A\n- Scope: plan-only\n- Detection: d\n")
    assert _where(errors) == [(7, "CHK-01")]
    assert "missing Plan criteria" in errors[0].message


def test_unknown_scope_reported_at_field_line():
    errors = _errors(
        FRONT + "## Checkpoints\n### CHK-01 A\n- Detection: d\n- Plan: p\n- Scope: partial\n"
    )
    assert _where(errors) == [(10, "CHK-01")]
    assert "unknown scope 'partial'" in errors[0].message


def test_duplicate_known_field_reported_at_second_line():
    errors = _errors(
        FRONT + "## Checkpoints\n### CHK-01 A\n- Detection: d\n- Plan: p\n- detection: e\n"
    )
    assert _where(errors) == [(10, "CHK-01")]
    assert "first at line 8" in errors[0].message


def test_undeclared_cap_reported_at_cap_field_line():
    errors = _errors(
        FRONT + "## Capabilities\n| CAP | Name |\n|---|---|\n| CAP-01 | Forensics |\n"
        "## Checkpoints\n### CHK-01 A\n- Detection: d\n- CAP: CAP-01, CAP-02\n- Plan: p\n"
    )
    assert _where(errors) == [(13, "CHK-01")]
    assert "CAP-02 is not declared under Capabilities" in errors[0].message


def test_caps_are_not_checked_without_a_capabilities_section():
    rng = _parse("## Checkpoints\n### CHK-01 A\n- CAP: CAP-77\n- Detection: d\n- Plan: p\n")
    assert rng.checkpoints[0].caps == ("CAP-77",)


def test_duplicate_capability_reported_at_second_row():
    errors = _errors(
        FRONT + "## Capabilities\n| CAP | Name |\n|---|---|\n| CAP-01 | A |\n| CAP-01 | B |\n"
        "## Checkpoints\n" + ITEM
    )
    assert _where(errors) == [(10, None)]
    assert "first at line 9" in errors[0].message


def test_range_not_matching_folder_reported_at_range_line():
    errors = _errors(FRONT + "## Checkpoints\n" + ITEM, expected_range="web-sqli")
    assert _where(errors) == [(2, None)]
    assert "'ssh-miner'" in errors[0].message and "'web-sqli'" in errors[0].message


def test_range_id_must_match_the_id_pattern():
    front = FRONT.replace("range: ssh-miner", "range: SSH Miner")
    errors = _errors(front + "## Checkpoints\n" + ITEM)
    assert _where(errors) == [(2, None)]
    assert "invalid range id" in errors[0].message


def test_missing_front_matter_reported_at_line_1():
    errors = _errors("## Checkpoints\n" + ITEM)
    assert _where(errors) == [(1, None)]
    assert "missing front matter" in errors[0].message


def test_unclosed_front_matter_reported_at_its_first_line():
    errors = _errors("---\nrange: ssh-miner\n## Checkpoints\n" + ITEM)
    assert _where(errors) == [(1, None)]
    assert "not closed" in errors[0].message


@pytest.mark.parametrize("key", ["range", "title", "report"])
def test_missing_required_front_matter_key_reported(key):
    front = "".join(line + "\n" for line in FRONT.splitlines() if not line.startswith(key))
    errors = _errors(front + "## Checkpoints\n" + ITEM)
    assert _where(errors) == [(1, None)]
    assert f"missing {key!r}" in errors[0].message


def test_empty_front_matter_value_counts_as_missing_at_its_line():
    errors = _errors(
        FRONT.replace("title: SSH brute force leading to a cryptominer", "title:  # todo")
        + "## Checkpoints\n"
        + ITEM
    )
    assert _where(errors) == [(3, None)]


def test_unknown_report_kind_reported_at_report_line():
    errors = _errors(
        FRONT.replace("intrusion-report", "pentest-report") + "## Checkpoints\n" + ITEM
    )
    assert _where(errors) == [(4, None)]
    assert "unknown report 'pentest-report'" in errors[0].message


def test_malformed_front_matter_line_reported():
    errors = _errors(
        FRONT.replace("---\nrange", "---\njust words\nrange") + "## Checkpoints\n" + ITEM
    )
    assert _where(errors) == [(2, None)]


def test_missing_checkpoints_section_reported_at_line_1():
    errors = _errors(FRONT + "## Facts\n- a fact\n")
    assert _where(errors) == [(1, None)]
    assert "no '## Checkpoints' section" in errors[0].message


def test_empty_checkpoints_section_reported_at_its_heading_line():
    errors = _errors(FRONT + "## Facts\n- a fact\n\n## Checkpoints\nNothing yet.\n")
    assert _where(errors) == [(9, None)]


def test_unknown_fields_are_never_errors():
    rng = _parse(
        "## Checkpoints\n### CHK-01 A\n- Detection: d\n- Plan: p\n- Whatever: x\n- Notes: y\n"
    )
    assert rng.checkpoints[0].extra == {"Whatever": "x", "Notes": "y"}


def test_all_errors_are_collected_in_one_pass_sorted_by_line():
    text = (
        FRONT.replace("intrusion-report", "bogus")
        + (
            "## Checkpoints\n"
            "### CHK-02 B\n- Scope: sometimes\n- Detection: d\n- Plan: p\n"  # lines 7-10
            "### CHK-03\n- Detection: d\n"  # lines 11-12
        )
        + ITEM
    )  # lines 13-15
    with pytest.raises(ChecklistErrors) as info:
        parse_checklist(text, "r/checklist.md", expected_range="other")
    errs = info.value.errors
    assert _where(errs) == [
        (2, None),  # range does not match the folder
        (4, None),  # unknown report
        (8, "CHK-02"),  # unknown scope
        (11, "CHK-03"),  # no name
        (11, "CHK-03"),  # no plan
    ]
    assert all(isinstance(e, ChecklistError) and e.path == "r/checklist.md" for e in errs)
    assert isinstance(info.value, ChecklistError)
    assert (info.value.line, info.value.path) == (2, "r/checklist.md")


def test_error_str_is_one_line_naming_path_and_line():
    with pytest.raises(ChecklistErrors) as info:
        parse_checklist(FRONT + "## Checkpoints\n" + ITEM + ITEM, "ranges/ssh-miner/checklist.md")
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith("ranges/ssh-miner/checklist.md:10: CHK-01: duplicate checkpoint id")
    assert str(info.value.errors[0]) == text


# ------------------------------------------------------------------------- load_range, list_ranges


def _write_range(root: Path, name: str, text: str | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    path = folder / "checklist.md"
    path.write_text(
        text if text is not None else FRONT.replace("ssh-miner", name) + "## Checkpoints\n" + ITEM,
        encoding="utf-8",
    )
    return path


def test_load_range_reads_the_folder_checklist(tmp_path):
    path = _write_range(tmp_path, "ssh-miner")
    rng = load_range(tmp_path, "ssh-miner")
    assert (rng.id, rng.path) == ("ssh-miner", str(path))
    assert [c.id for c in rng.checkpoints] == ["CHK-01"]


def test_load_range_checks_front_matter_against_the_folder_name(tmp_path):
    _write_range(tmp_path, "web-sqli", FRONT + "## Checkpoints\n" + ITEM)
    with pytest.raises(ChecklistErrors) as info:
        load_range(tmp_path, "web-sqli")
    assert (info.value.line, info.value.path) == (2, str(tmp_path / "web-sqli" / "checklist.md"))


def test_load_range_missing_names_the_path_and_lists_available_ranges(tmp_path):
    _write_range(tmp_path, "web-sqli")
    _write_range(tmp_path, "ssh-miner")
    with pytest.raises(ChecklistError) as info:
        load_range(tmp_path, "nope")
    assert info.value.path == str(tmp_path / "nope" / "checklist.md")
    assert "available ranges: ssh-miner, web-sqli" in info.value.message


def test_load_range_folder_without_checklist_is_missing(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ChecklistError, match="does not exist"):
        load_range(tmp_path, "empty")


def test_load_range_missing_ranges_dir_is_an_error(tmp_path):
    with pytest.raises(ChecklistError, match="no ranges in"):
        load_range(tmp_path / "absent", "ssh-miner")


def test_load_range_refuses_path_like_ids(tmp_path):
    _write_range(tmp_path / "ranges", "x")
    _write_range(tmp_path, "outside")
    with pytest.raises(ChecklistError, match="invalid range id"):
        load_range(tmp_path / "ranges", "../outside")


def test_load_range_invalid_utf8_names_the_path(tmp_path):
    path = _write_range(tmp_path, "bad", "")
    path.write_bytes(b"---\nrange: bad\ntitle: \xff\n")
    with pytest.raises(ChecklistError, match="not valid UTF-8") as info:
        load_range(tmp_path, "bad")
    assert info.value.path == str(path)


def test_list_ranges_natural_order_only_folders_with_a_checklist(tmp_path):
    for name in ("range-10", "range-2", "range-1"):
        _write_range(tmp_path, name)
    (tmp_path / "drafts").mkdir()
    (tmp_path / "README.md").write_text("x")
    assert list_ranges(tmp_path) == ["range-1", "range-2", "range-10"]
    assert list_ranges(tmp_path / "absent") == []


def test_nested_bullets_under_a_field_continue_that_field():
    rng = _parse(
        "## Checkpoints\n### CHK-01 A\n- Detection: d\n- Plan: p\n"
        "- Indicators:\n  - `xmrig`\n  - `kworkerd`\n"
    )
    assert rng.checkpoints[0].indicators == ("xmrig", "kworkerd")


def test_table_with_two_columns_for_one_field_reported_at_header_line():
    errors = _errors(
        FRONT + "## Checkpoints\n| CHK | Name | Detection | Detection criteria | Plan |\n"
        "|---|---|---|---|---|\n| CHK-01 | A | d | d | p |\n"
    )
    assert (7, None) in _where(errors)
    assert "'Detection' and 'Detection criteria' name the same field" in errors[-1].message


def test_load_checklist_hashes_the_file_as_stored(tmp_path):
    import hashlib

    from evalkit.checklist import load_checklist

    raw = (
        b"---\r\nrange: crlf\r\ntitle: CRLF\r\nreport: vuln-report\r\n---\r\n\r\n"
        b"## Checkpoints\r\n\r\n### CHK-01 One\r\n- Detection: d\r\n- Plan: p\r\n"
    )
    path = tmp_path / "checklist.md"
    path.write_bytes(raw)
    rng = load_checklist(path, expected_range="crlf")
    assert rng.sha256 == hashlib.sha256(raw).hexdigest()
    assert [c.id for c in rng.checkpoints] == ["CHK-01"]


def test_the_documented_severity_field_is_kept_and_not_warned_about(tmp_path):
    from evalkit.checklist import load_checklist

    rng = load_checklist(Path(__file__).resolve().parent.parent / "ranges/ssh-miner/checklist.md")
    assert rng.checkpoint("CHK-01").extra == {"Severity": "high"}
    assert not [w for w in rng.warnings if "Severity" in w]
