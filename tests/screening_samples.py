"""A small checklist and a screen() helper shared by the screening tests."""

from __future__ import annotations

from evalkit.model import Checkpoint, Document, Range, Submission
from evalkit.screening import Screening, screen

RANGE = Range(
    id="r",
    title="t",
    report="intrusion-report",
    checkpoints=(
        Checkpoint(
            id="CHK-01",
            name="Miner process",
            scope="both",
            caps=(),
            detection_criteria="Identifies the running miner process and ties it to the SSH"
            " compromise rather than to a legitimate workload.",
            plan_criteria="p",
            indicators=("kworkerd", "/var/tmp/.cache/kworkerd", "xmrig"),
            attribution_terms=("cryptominer", "brute force"),
            remediation_terms=("kill", "chattr -i", "rebuild"),
        ),
        Checkpoint(
            id="CHK-02",
            name="Mining pool connection",
            indicators=("198.51.100.77", "xmr.pool.example.net", "3333"),
            attribution_terms=("xmrig",),
            remediation_terms=("iptables", "DROP"),
        ),
    ),
)


def screen_report(report: str, plan: str = "# Plan\n\nNothing.\n", rng: Range = RANGE) -> Screening:
    sub = Submission(
        run_id="x",
        range_id=rng.id,
        report=Document("report", "intrusion-report.md", report),
        plan=Document("plan", "remediation-plan.md", plan),
    )
    return screen(rng, sub)


def kinds(result: Screening) -> list[tuple[str, int]]:
    return [(w.kind, w.line) for w in result.warnings]
