"""Rules judge: the detection sub-scores, discovery, evidence and attribution
(evalkit/judges/rules/detection.py)."""

from __future__ import annotations

import pytest

from tests.rules_cases import chk, det, judge, make_range, one, submission

# --------------------------------------------------------------------------- discovery


def test_discovery_hit_quotes_the_clean_line_and_names_section_and_line():
    report = "# Report\n\n## Findings\n\n### Miner process\n\n- Process `kworkerd` uses 390% CPU.\n"
    verdict = one(report)
    claim = verdict.detection["discovery"]
    assert claim.value == 1
    assert claim.quotes == ("Process `kworkerd` uses 390% CPU.",)
    assert "`kworkerd`" in claim.rationale
    assert "'Findings / Miner process'" in claim.rationale
    assert "line 7" in claim.rationale


def test_discovery_miss_names_the_indicators():
    verdict = one("# Report\n\nNothing to see.\n", indicators=("kworkerd", "xmrig"))
    claim = verdict.detection["discovery"]
    assert claim.value == 0 and claim.quotes == ()
    assert "`kworkerd`, `xmrig`" in claim.rationale


def test_discovery_quotes_each_indicator_found_at_most_three():
    report = "a kworkerd\n\nb xmrig\n\nc /var/tmp/.cache\n\nd 4127\n"
    verdict = one(report, indicators=("kworkerd", "xmrig", "/var/tmp/.cache", "4127"))
    assert verdict.detection["discovery"].quotes == ("a kworkerd", "b xmrig", "c /var/tmp/.cache")


def test_discovery_in_a_table_row_heading_and_code_block():
    for report, quote in [
        ("| Process | kworkerd |\n|---|---|\n", "Process | kworkerd"),
        ("# Findings\n\n## kworkerd miner\n", "kworkerd miner"),
        ("```\n$ ps aux | grep kworkerd\n```\n", "$ ps aux | grep kworkerd"),
        ("> kworkerd seen by EDR\n", "kworkerd seen by EDR"),
    ]:
        verdict = one(report)
        assert verdict.detection["discovery"].quotes == (quote,)


# --------------------------------------------------------------------------- evidence


def test_evidence_needs_an_artifact_in_the_block():
    report = "# R\n\nThe process kworkerd is a miner.\n\nIt is bad.\n\nSee /var/tmp/.cache/x.\n"
    verdict = one(report)
    assert det(verdict, "discovery") == 1
    claim = verdict.detection["evidence"]
    assert claim.value == 0 and claim.quotes == ()
    assert "line 3" in claim.rationale


def test_evidence_artifact_in_the_same_block():
    report = "# R\n\n- The miner kworkerd\n  runs as PID 4127.\n"
    claim = one(report).detection["evidence"]
    assert claim.value == 1
    assert claim.quotes == ("The miner kworkerd", "runs as PID 4127.")
    assert "a PID" in claim.rationale and "line 4" in claim.rationale


def test_evidence_artifact_in_the_block_right_after():
    report = "# R\n\nThe miner kworkerd was running:\n\n```\nroot 4127 390 kworkerd\n```\n"
    claim = one(report).detection["evidence"]
    assert claim.value == 1
    assert claim.quotes == ("The miner kworkerd was running:", "root 4127 390 kworkerd")
    assert "the block right after it" in claim.rationale


def test_evidence_quotes_the_artifact_nearest_to_the_indicator():
    report = (
        "# R\n\nSeen from 203.0.113.45 first.\nThen nothing.\n"
        "Then kworkerd at /var/tmp/.cache/kworkerd.\n"
    )
    claim = one(report).detection["evidence"]
    assert claim.quotes == ("Then kworkerd at /var/tmp/.cache/kworkerd.",)
    assert "an absolute path" in claim.rationale


def test_evidence_when_the_indicator_is_itself_an_artifact():
    verdict = one(
        "# R\n\nFound /var/tmp/.cache/kworkerd.\n", indicators=("/var/tmp/.cache/kworkerd",)
    )
    assert verdict.detection["evidence"].quotes == ("Found /var/tmp/.cache/kworkerd.",)


def test_no_evidence_without_discovery():
    claim = one("# R\n\n/var/tmp/x\n").detection["evidence"]
    assert claim.value == 0 and "No Indicator" in claim.rationale


# --------------------------------------------------------------------------- attribution


def test_attribution_anywhere_in_the_findings_section_counts():
    report = "# R\n\n## Miner\n\nkworkerd runs.\n\nIt uses all CPUs.\n\nIt came in over SSH.\n"
    claim = one(report).detection["attribution"]
    assert claim.value == 1 and claim.quotes == ("It came in over SSH.", "kworkerd runs.")
    assert "in the same section as Indicator `kworkerd` (line 5)" in claim.rationale


def test_a_subsection_belongs_to_its_section():
    report = "# R\n\n## Miner\n\nkworkerd runs.\n\n### Cause\n\nSSH brute force.\n"
    assert det(one(report), "attribution") == 1


def test_attribution_in_another_section_does_not_count():
    report = "# R\n\n## Miner\n\nkworkerd runs.\n\nIt uses all CPUs.\n\n## Access\n\nSSH.\n"
    claim = one(report).detection["attribution"]
    assert claim.value == 0 and claim.quotes == ()
    assert "nor in its section (line 5)" in claim.rationale


@pytest.mark.parametrize(
    ("report", "where"),
    [
        ("# R\n\nkworkerd runs.\n\nIt came in over SSH.\n", "the block after"),
        ("# R\n\nIt came in over SSH:\n\n- kworkerd runs.\n", "the block before"),
        ("# R\n\n## Came in over SSH\n\nkworkerd runs.\n", "the block before"),
    ],
)
def test_attribution_in_the_block_before_or_after_quotes_both_lines(report, where):
    claim = one(report).detection["attribution"]
    assert claim.value == 1
    assert set(claim.quotes) == {
        next(line.strip("#- ") for line in report.splitlines() if "SSH" in line),
        next(line.strip("#- ") for line in report.splitlines() if "kworkerd" in line),
    }
    assert "`SSH`" in claim.rationale and "`kworkerd`" in claim.rationale
    assert where in claim.rationale


def test_an_executive_summary_attributes_only_what_it_names_with_the_chain():
    report = (
        "# Report\n\n## Executive summary\n\n"
        "- Initial access: SSH brute force from 203.0.113.45.\n"
        "- Miner: kworkerd under /var/tmp/.cache.\n\n"
        "## Network\n\n- Pool: xmr.pool.example.net:3333.\n"
    )
    rng = make_range(chk("CHK-01"), chk("CHK-03", indicators=("xmr.pool.example.net",)))
    verdicts = judge(rng, submission(report))
    assert det(verdicts["CHK-01"], "attribution") == 1  # its section tells the chain
    assert det(verdicts["CHK-03"], "attribution") == 0  # its section does not


def test_attribution_on_the_indicator_line_is_one_quote():
    claim = one("kworkerd dropped after a brute force\n").detection["attribution"]
    assert claim.value == 1 and claim.quotes == ("kworkerd dropped after a brute force",)


def test_no_attribution_terms_gives_zero_with_the_reason():
    claim = one("kworkerd over SSH\n", attribution=()).detection["attribution"]
    assert claim.value == 0
    assert "no Attribution terms" in claim.rationale
