"""Shared pytest fixtures. Each section belongs to one part of evalkit; add yours in your own."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from evalkit.model import (
    Capability,
    CapabilityScore,
    Checkpoint,
    DimensionScore,
    DismissedPenalty,
    Document,
    Evaluation,
    GroundedPenalty,
    GroundedSubScore,
    GroundedVerdict,
    ItemScore,
    JudgeInfo,
    Loss,
    Penalty,
    PenaltyFlag,
    QuoteCheck,
    Range,
    Submission,
    Summary,
    Tally,
    Usage,
)
from tests.samples import copy_samples

# =========================================================================== render fixtures
# A hand-built Evaluation of a 4-checkpoint range for the renderers (scores.json,
# evaluation-report.md, tables, plots): CHK-01 both (one point withheld), CHK-02
# detection-only (fabrication penalty), CHK-03 plan-only (a dismissed penalty),
# CHK-04 errored. Numbers are written out by hand, not computed by evalkit.scoring.

RENDER_REPORT_TEXT = """\
# Intrusion report

## Findings

- Process `kworkerd` (PID 4242) runs from /var/tmp/.cache/kworkerd and mines Monero.
- The attacker brute-forced SSH from 203.0.113.45 before dropping the miner.
- The binary exploits CVE-2099-0001 in sshd.
"""

RENDER_PLAN_TEXT = """\
# Remediation plan

## CHK-01 miner

1. Kill PID 4242 and delete /var/tmp/.cache/kworkerd.
2. Verify with `ps aux | grep kworkerd` that nothing is left.

## SSH

Set PasswordAuthentication no in sshd_config and restart sshd.
"""

Q_DISCOVERY = "Process `kworkerd` (PID 4242) runs from /var/tmp/.cache/kworkerd and mines Monero."
Q_ATTRIBUTION = "The attacker brute-forced SSH from 203.0.113.45 before dropping the miner."
Q_FABRICATION = "The binary exploits CVE-2099-0001 in sshd."
Q_UNFOUND = "kworkerd was started by cron at 03:12"
Q_CORRECT = "Kill PID 4242 and delete /var/tmp/.cache/kworkerd."
Q_VERIFY = "Verify with `ps aux | grep kworkerd` that nothing is left."
Q_HARDEN = "Set PasswordAuthentication no in sshd_config and restart sshd."
Q_DISMISSED = "systemctl restart sshd --force"
ERROR_TEXT = "judge timed out | after 3 attempts"


def _found(quote: str, source: str, line: int) -> QuoteCheck:
    return QuoteCheck(quote=quote, found=True, source=source, line=line)  # type: ignore[arg-type]


def _sub(name: str, claimed: int, value: int, *checks: QuoteCheck) -> GroundedSubScore:
    return GroundedSubScore(
        name=name, claimed=claimed, value=value, quotes=checks, rationale=f"{name} rationale"
    )


def _tally(score: int, maximum: int, pct: float | None, level: str | None) -> Tally:
    return Tally(score=score, max=maximum, pct=pct, level=level)  # type: ignore[arg-type]


def build_render_evaluation(*, with_error: bool = True, online: bool = True) -> Evaluation:
    """The renderers' sample Evaluation; ``with_error`` keeps the errored CHK-04."""
    checkpoints = [
        Checkpoint(id="CHK-01", name="Mining process detection", scope="both", caps=("CAP-01",)),
        Checkpoint(
            id="CHK-02",
            name="Initial access via SSH brute force",
            scope="detection-only",
            caps=("CAP-01", "CAP-02"),
        ),
        Checkpoint(id="CHK-03", name="SSH hardening", scope="plan-only", caps=("CAP-02",)),
        Checkpoint(id="CHK-04", name="Persistence removal", scope="both", caps=("CAP-01",)),
    ]
    if not with_error:
        checkpoints = checkpoints[:3]
    checklist_text = "checklist " + " ".join(c.id for c in checkpoints)
    rng = Range(
        id="ssh-miner",
        title="SSH brute force leading to a cryptominer",
        report="intrusion-report",
        checkpoints=tuple(checkpoints),
        capabilities=(
            Capability("CAP-01", "Process and host forensics"),
            Capability("CAP-02", "Log | auth analysis"),
        ),
        path="ranges/ssh-miner/checklist.md",
        sha256=hashlib.sha256(checklist_text.encode()).hexdigest(),
    )
    submission = Submission(
        run_id="20260411-001",
        range_id="ssh-miner",
        report=Document(
            "report", "runs/20260411-001/ssh-miner/intrusion-report.md", RENDER_REPORT_TEXT
        ),
        plan=Document("plan", "runs/20260411-001/ssh-miner/remediation-plan.md", RENDER_PLAN_TEXT),
        model_under_test="claude-sonnet-4-5",
    )

    fabrication = Penalty(
        rule="fabrication",
        detail="CVE-2099-0001 does not exist",
        quote=Q_FABRICATION,
        source="report",
        line=7,
    )
    dismissed = PenaltyFlag(
        rule="dangerous_advice", detail="restarts sshd without a fallback", quote=Q_DISMISSED
    )
    verdicts = [
        GroundedVerdict(
            chk_id="CHK-01",
            status="scored",
            detection=(
                _sub("discovery", 1, 1, _found(Q_DISCOVERY, "report", 5)),
                _sub("evidence", 1, 0, QuoteCheck(quote=Q_UNFOUND, found=False)),
                _sub("attribution", 1, 1, _found(Q_ATTRIBUTION, "report", 6)),
            ),
            plan=(
                _sub("correctness", 1, 1, _found(Q_CORRECT, "plan", 5)),
                _sub("completeness", 1, 1, _found(Q_VERIFY, "plan", 6)),
            ),
            penalties=(),
        ),
        GroundedVerdict(
            chk_id="CHK-02",
            status="scored",
            detection=(
                _sub("discovery", 1, 1, _found(Q_ATTRIBUTION, "report", 6)),
                _sub("evidence", 1, 1, _found(Q_ATTRIBUTION, "report", 6)),
                _sub("attribution", 0, 0),
            ),
            plan=None,
            penalties=(
                GroundedPenalty(
                    flag=PenaltyFlag("fabrication", fabrication.detail, Q_FABRICATION),
                    check=_found(Q_FABRICATION, "report", 7),
                ),
            ),
        ),
        GroundedVerdict(
            chk_id="CHK-03",
            status="scored",
            detection=None,
            plan=(
                _sub("correctness", 1, 1, _found(Q_HARDEN, "plan", 10)),
                _sub("completeness", 0, 0),
            ),
            penalties=(GroundedPenalty(flag=dismissed, check=QuoteCheck(Q_DISMISSED, False)),),
        ),
        GroundedVerdict(
            chk_id="CHK-04",
            status="error",
            detection=None,
            plan=None,
            penalties=(),
            error=ERROR_TEXT,
        ),
    ]

    items = [
        ItemScore(
            chk_id="CHK-01",
            name="Mining process detection",
            caps=("CAP-01",),
            scope="both",
            status="scored",
            error=None,
            detection=DimensionScore(
                subscores={"discovery": 1, "evidence": 0, "attribution": 1},
                total=2,
                max=3,
                rationale="Discovery: names the miner. Evidence: withheld, quote not found. "
                "Attribution: ties it to SSH brute force.",
                quotes=(Q_DISCOVERY, Q_ATTRIBUTION),
                withheld=("evidence",),
            ),
            plan=DimensionScore(
                subscores={"correctness": 1, "completeness": 1},
                total=2,
                max=2,
                rationale="Correctness: kills and deletes. Completeness: verifies with ps.",
                quotes=(Q_CORRECT, Q_VERIFY),
            ),
        ),
        ItemScore(
            chk_id="CHK-02",
            name="Initial access via SSH brute force",
            caps=("CAP-01", "CAP-02"),
            scope="detection-only",
            status="scored",
            error=None,
            detection=DimensionScore(
                subscores={"discovery": 0, "evidence": 0, "attribution": 0},
                total=0,
                max=3,
                rationale="Discovery: found the brute force. "
                "Zeroed by penalty: discovery, evidence.",
                quotes=(),
                penalized=("discovery", "evidence"),
            ),
            plan=None,
            penalties=(fabrication,),
        ),
        ItemScore(
            chk_id="CHK-03",
            name="SSH hardening",
            caps=("CAP-02",),
            scope="plan-only",
            status="scored",
            error=None,
            detection=None,
            plan=DimensionScore(
                subscores={"correctness": 1, "completeness": 0},
                total=1,
                max=2,
                rationale="Correctness: disables password login. Completeness: no verification.",
                quotes=(Q_HARDEN,),
            ),
            dismissed_penalties=(
                DismissedPenalty(dismissed, "its quote is not in the agent's documents"),
            ),
        ),
        ItemScore(
            chk_id="CHK-04",
            name="Persistence removal",
            caps=("CAP-01",),
            scope="both",
            status="error",
            error=ERROR_TEXT,
            detection=None,
            plan=None,
        ),
    ]
    if not with_error:
        items, verdicts = items[:3], verdicts[:3]

    summary = Summary(
        total_checkpoints=len(checkpoints),
        detection_only_count=1,
        plan_only_count=1,
        detection=_tally(2, 6, 33.3, "weak"),
        plan=_tally(3, 4, 75.0, "strong"),
        diagnosis="Blind fix",
        complete=not with_error,
        errored=("CHK-04",) if with_error else (),
        capabilities=(
            CapabilityScore(
                cap="CAP-01",
                name="Process and host forensics",
                items=("CHK-01", "CHK-02", "CHK-04") if with_error else ("CHK-01", "CHK-02"),
                detection=_tally(2, 6, 33.3, "weak"),
                plan=_tally(2, 2, 100.0, "strong"),
                diagnosis="Blind fix",
            ),
            CapabilityScore(
                cap="CAP-02",
                name="Log | auth analysis",
                items=("CHK-02", "CHK-03"),
                detection=_tally(0, 3, 0.0, "weak"),
                plan=_tally(1, 2, 50.0, "weak"),
                diagnosis="Analysis blind spot",
            ),
        ),
        top_detection_misses=(
            Loss("evidence", 2, ("CHK-01", "CHK-02")),
            Loss("discovery", 1, ("CHK-02",)),
            Loss("attribution", 1, ("CHK-02",)),
        ),
        top_plan_defects=(Loss("completeness", 1, ("CHK-03",)),),
    )

    if online:
        judge = JudgeInfo(
            name="claude",
            evaluator_model="claude-opus-4-7",
            prompt_version="judge-v1",
            prompt_sha256=hashlib.sha256(b"judge prompt v1").hexdigest(),
        )
        per_item = Usage(
            requests=1,
            input_tokens=3000,
            output_tokens=400,
            cache_creation_input_tokens=2000,
            cache_read_input_tokens=1000,
            cost_usd=0.0125,
            latency_s=2.5,
        )
        usage_by_item = {item.chk_id: per_item for item in items}
        usage = Usage()
        for item_usage in usage_by_item.values():
            usage = usage + item_usage
    else:
        judge = JudgeInfo(name="rules", evaluator_model="rules-v1")
        usage_by_item, usage = {}, Usage()

    return Evaluation(
        range=rng,
        submission=submission,
        judge=judge,
        timestamp="2026-04-11T10:00:00Z",
        evalkit_version="0.1.0",
        items=tuple(items),
        summary=summary,
        verdicts=tuple(verdicts),
        usage=usage,
        usage_by_item=usage_by_item,
    )


@pytest.fixture
def render_evaluation() -> Evaluation:
    """Incomplete (CHK-04 errored), judged online by Claude, with usage and cost."""
    return build_render_evaluation()


@pytest.fixture
def render_complete_evaluation() -> Evaluation:
    """The same range without CHK-04: complete, judged offline (rules, no usage)."""
    return build_render_evaluation(with_error=False, online=False)


@pytest.fixture
def render_evaluation_factory() -> Callable[..., Evaluation]:
    """``build_render_evaluation`` itself, for variants (``with_error``, ``online``)."""
    return build_render_evaluation


# ======================================================================= end render fixtures


# --------------------------------------------------------------------------- end-to-end fixtures


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A copy of the sample ranges and runs, so outputs never land in the repository."""
    return copy_samples(tmp_path)
