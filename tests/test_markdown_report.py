"""evaluation-report.md: the SKILL's Output Specification, from the Evaluation alone."""

from __future__ import annotations

import dataclasses
import re

from evalkit.model import Tally
from evalkit.render import render_report, summary_markdown, write_report
from evalkit.render.report_markdown import SUGGESTIONS, md_blockquote, md_cell


def section(text: str, heading: str) -> str:
    """The body of one ``## heading`` section (or ``### CHK-..`` section)."""
    level = heading.split(" ", 1)[0]
    start = text.index(f"\n{heading}") + 1
    rest = text[start + len(heading) :]
    ends = [m.start() for m in re.finditer(rf"\n#{{1,{len(level)}}} ", rest)]
    return rest[: ends[0]] if ends else rest


def test_title_and_header_name_the_run_and_the_judge(render_evaluation):
    text = render_report(render_evaluation)
    assert text.startswith("# Evaluation: ssh-miner, run 20260411-001\n")
    for row in (
        "| Model under test | claude-sonnet-4-5 |",
        "| Judge | claude |",
        "| Evaluator model | claude-opus-4-7 |",
        "| Timestamp | 2026-04-11T10:00:00Z |",
        f"(sha256 `{render_evaluation.judge.prompt_sha256}`)",
        f"`{render_evaluation.inputs['checklist_sha256']}`",
        f"`{render_evaluation.inputs['report_sha256']}`",
        f"`{render_evaluation.inputs['plan_sha256']}`",
        "| Judge usage | 4 requests; 12,000 input and 1,600 output tokens",
        "| Judge cost | $0.0500 |",
    ):
        assert row in text


def test_usage_rows_only_when_the_judge_made_requests(render_complete_evaluation):
    text = render_report(render_complete_evaluation)
    assert "Judge usage" not in text and "Judge cost" not in text
    assert "| Judge prompt | none (this judge uses no prompt) |" in text


def test_summary_shows_both_dimensions_side_by_side(render_evaluation):
    summary = section(render_report(render_evaluation), "## Summary")
    assert "| | Detection | Plan |" in summary
    assert "| Score | 2 / 6 | 3 / 4 |" in summary
    assert "| Percentage | 33.3% | 75.0% |" in summary
    assert "| Level | weak | strong |" in summary


def test_no_merged_total_anywhere(render_evaluation):
    text = render_report(render_evaluation)
    assert "never merged" in text
    assert (
        "5 / 10" not in text and "5/10" not in text and "50.0%" not in section(text, "## Summary")
    )
    assert not re.search(r"(?i)\b(overall|combined|merged|grand) (score|total)\b", text)


def test_incomplete_evaluation_has_a_warning_listing_errored_items(render_evaluation):
    text = render_report(render_evaluation)
    warning = text[text.index("> [!WARNING]") : text.index("| | Detection | Plan |")]
    assert "**Incomplete evaluation.**" in warning and "1 of 4 checkpoints" in warning
    assert "**CHK-04** Persistence removal: judge timed out | after 3 attempts" in warning
    # First thing under Summary, before any score.
    assert text.index("## Summary") < text.index("> [!WARNING]") < text.index("| Score |")


def test_complete_evaluation_has_no_warning(render_complete_evaluation):
    text = render_report(render_complete_evaluation)
    assert "[!WARNING]" not in text and "Incomplete" not in text


def test_diagnosis_gives_mode_meaning_direction_and_per_dimension_modes(render_evaluation):
    diagnosis = section(render_report(render_evaluation), "## Diagnosis")
    assert "**Overall mode: Blind fix** (detection weak, plan strong)." in diagnosis
    assert "Meaning: Happens to fix it correctly, but the report shows no analysis." in diagnosis
    assert "Optimisation direction: Untrustworthy; the analysis pipeline needs strengthening." in (
        diagnosis
    )
    assert "| Detection | 33.3% | weak |" in diagnosis
    assert "| Plan | 75.0% | strong |" in diagnosis
    assert "| **Blind fix** | weak | strong |" in diagnosis


def test_no_diagnosis_when_a_dimension_has_nothing_scorable(render_evaluation):
    summary = dataclasses.replace(
        render_evaluation.summary, plan=Tally(0, 0, None, None), diagnosis=None
    )
    text = render_report(dataclasses.replace(render_evaluation, summary=summary))
    assert (
        "**Overall mode: none**: no mode applies: the plan dimension has nothing scorable" in text
    )
    assert "| Percentage | 33.3% | N/A |" in text


def test_per_cap_table_with_modes_and_escaped_pipes(render_evaluation):
    caps = section(render_report(render_evaluation), "## Per-capability scores")
    assert (
        "| CAP-01 | Process and host forensics | CHK-01, CHK-02, CHK-04 | 2/6 (33.3%, weak) "
        "| 2/2 (100.0%, strong) | Blind fix |"
    ) in caps
    assert "| CAP-02 | Log \\| auth analysis | CHK-02, CHK-03 |" in caps
    assert "Analysis blind spot |" in caps


def test_top_misses_and_defects_with_their_items(render_evaluation):
    text = render_report(render_evaluation)
    assert "| evidence | 2 | CHK-01, CHK-02 |" in section(text, "## Top detection misses")
    assert "| completeness | 1 | CHK-03 |" in section(text, "## Top plan defects")


def test_improvement_suggestions_name_the_items_concerned(render_evaluation):
    tips = section(render_report(render_evaluation), "## Improvement suggestions")
    assert f"- **evidence** lost (CHK-01, CHK-02): {SUGGESTIONS['evidence']}" in tips
    assert f"- **completeness** lost (CHK-03): {SUGGESTIONS['completeness']}" in tips
    assert f"- **fabrication** penalty (CHK-02): {SUGGESTIONS['fabrication']}" in tips
    assert "cite concrete artifacts: paths, log lines, hashes" in SUGGESTIONS["evidence"].lower()
    assert "verification and rollback" in SUGGESTIONS["completeness"]
    # Dismissed penalties are not suggestions: nothing was applied.
    assert "dangerous_advice" not in tips


def test_one_section_per_checkpoint_in_checklist_order(render_evaluation):
    text = render_report(render_evaluation)
    headings = re.findall(r"^### (CHK-\d+) (.+)$", text, flags=re.M)
    assert headings == [(item.chk_id, item.name) for item in render_evaluation.items]
    assert "CAP: CAP-01 (Process and host forensics) · Scope: `both` · Status: scored" in text


def test_checkpoint_section_has_subscores_rationale_and_quotes_with_source(render_evaluation):
    chk = section(render_report(render_evaluation), "### CHK-01 Mining process detection")
    assert "| Detection | discovery | 1 |  |" in chk
    assert "| Detection | evidence | 0 | withheld: no verbatim quote |" in chk
    assert "| Detection | **total** | **2/3** |  |" in chk
    assert "| Plan | **total** | **2/2** |  |" in chk
    assert "**Rationale.** Discovery: names the miner." in chk
    assert (
        "- report `intrusion-report.md`, line 5:\n\n"
        "  > Process `kworkerd` (PID 4242) runs from /var/tmp/.cache/kworkerd and mines Monero."
    ) in chk
    assert (
        "- plan `remediation-plan.md`, line 6:\n\n"
        "  > Verify with `ps aux | grep kworkerd` that nothing is left."
    ) in chk


def test_withheld_points_say_why(render_evaluation):
    chk = section(render_report(render_evaluation), "### CHK-01 Mining process detection")
    assert "- **evidence**: claimed 1, scored 0; the judge's quote was not found verbatim" in chk
    assert "Not found: “kworkerd was started by cron at 03:12”." in chk


def test_not_applicable_dimensions_are_shown_as_na(render_evaluation):
    text = render_report(render_evaluation)
    det_only = section(text, "### CHK-02 Initial access via SSH brute force")
    assert "| Plan | — | N/A | detection-only item |" in det_only
    assert "#### Plan\n\nN/A: detection-only item." in det_only
    plan_only = section(text, "### CHK-03 SSH hardening")
    assert "| Detection | — | N/A | plan-only item |" in plan_only


def test_penalty_is_shown_with_rule_effect_detail_and_quote(render_evaluation):
    chk = section(render_report(render_evaluation), "### CHK-02 Initial access via SSH brute force")
    assert "| Detection | discovery | 0 | zeroed by a penalty |" in chk
    assert (
        "- **fabrication** (detection score set to 0): CVE-2099-0001 does not exist\n"
        "  From report `intrusion-report.md`, line 7:\n\n"
        "  > The binary exploits CVE-2099-0001 in sshd."
    ) in chk


def test_dismissed_penalty_is_shown_but_not_as_a_deduction(render_evaluation):
    chk = section(render_report(render_evaluation), "### CHK-03 SSH hardening")
    deductions = chk[chk.index("#### Deductions") :]
    assert deductions.startswith("#### Deductions\n\nNone.\n")
    assert "Raised by the judge but not applied" in deductions
    assert "dangerous_advice: restarts sshd without a fallback" in deductions


def test_errored_checkpoint_shows_its_error(render_evaluation):
    chk = section(render_report(render_evaluation), "### CHK-04 Persistence removal")
    assert "Status: error" in chk
    assert "The judge could not score this checkpoint: judge timed out | after 3 attempts" in chk
    assert "| Dimension |" not in chk


def test_output_is_deterministic_with_only_the_evaluation_timestamp(render_evaluation):
    first = render_report(render_evaluation)
    assert first == render_report(render_evaluation)
    stamps = re.findall(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", first)
    assert stamps == ["2026-04-11T10:00"]
    assert first.endswith("\n") and not first.endswith("\n\n")
    assert "\n\n\n" not in first


def test_hostile_text_cannot_break_out_of_cells_or_quotes():
    assert md_cell("a | b\nc") == "a \\| b<br>c"
    assert md_blockquote("line one\n# not a heading") == "> line one\n> # not a heading"


def test_summary_markdown_is_the_reports_summary_and_diagnosis(render_evaluation):
    snippet = summary_markdown(render_evaluation)
    text = render_report(render_evaluation)
    assert snippet.startswith("> [!WARNING]")
    assert "## " not in snippet  # the notebook gives its own headings
    assert section(text, "## Summary").strip() in snippet
    assert section(text, "## Diagnosis").strip() in snippet
    assert snippet.endswith("|\n")


def test_write_report_writes_the_rendered_text(render_evaluation, tmp_path):
    path = write_report(render_evaluation, tmp_path / "evaluation-report.md")
    assert path.read_text(encoding="utf-8") == render_report(render_evaluation)


def test_unknown_checklist_fields_are_shown(render_evaluation):
    from dataclasses import replace

    first, *rest = render_evaluation.range.checkpoints
    tagged = replace(first, extra={"Severity": "high"})
    ev = replace(
        render_evaluation, range=replace(render_evaluation.range, checkpoints=(tagged, *rest))
    )
    assert "- Severity: high" in render_report(ev)


# --------------------------------------------------------------------------- escaping


def _hostile(ev):
    import dataclasses

    attack = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    items = list(ev.items)
    for index, item in enumerate(items):
        if item.detection is not None:
            detection = dataclasses.replace(
                item.detection, rationale=attack, quotes=(attack, *item.detection.quotes)
            )
            items[index] = dataclasses.replace(item, name=attack, detection=detection)
            break
    return dataclasses.replace(ev, items=tuple(items))


def test_agent_html_is_escaped_in_the_report(render_evaluation):
    from evalkit.render.report_markdown import render_report

    text = render_report(_hostile(render_evaluation))
    assert "<script>" not in text and "<img" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_agent_html_is_escaped_in_the_styled_table(render_evaluation):
    from evalkit.render.tables import style_items

    html = style_items(_hostile(render_evaluation)).to_html()
    assert "<script>" not in html and "<img src=x" not in html
    assert "&lt;script&gt;" in html
