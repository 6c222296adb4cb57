"""One test per scoring rule of the SKILL and the scores.json contract."""

from __future__ import annotations

import pytest

from evalkit.errors import EvalkitError
from evalkit.model import (
    Capability,
    Checkpoint,
    GroundedPenalty,
    GroundedSubScore,
    GroundedVerdict,
    PenaltyFlag,
    QuoteCheck,
    Range,
)
from evalkit.scoring import (
    diagnose,
    level,
    percentage,
    score_all,
    score_item,
    summarize,
)

FOUND = QuoteCheck(quote="kworkerd running as PID 4242", found=True, source="report", line=3)


def sub(name: str, value: int, *, claimed: int | None = None) -> GroundedSubScore:
    quotes = (FOUND,) if value else ()
    return GroundedSubScore(
        name=name,
        claimed=value if claimed is None else claimed,
        value=value,
        quotes=quotes,
        rationale=f"{name} rationale",
    )


def detection(d: int = 1, e: int = 1, a: int = 1) -> tuple[GroundedSubScore, ...]:
    return (sub("discovery", d), sub("evidence", e), sub("attribution", a))


def plan(c: int = 1, m: int = 1) -> tuple[GroundedSubScore, ...]:
    return (sub("correctness", c), sub("completeness", m))


def penalty(rule: str, found: bool = True) -> GroundedPenalty:
    quote = "rm -rf /var/lib/redis"
    return GroundedPenalty(
        flag=PenaltyFlag(rule=rule, detail=f"{rule} detail", quote=quote),  # type: ignore[arg-type]
        check=QuoteCheck(
            quote=quote, found=found, source="plan" if found else None, line=7 if found else None
        ),
    )


def verdict(
    chk_id: str = "CHK-01", *, det=None, pln=None, penalties=(), status="scored", error=None
):
    return GroundedVerdict(
        chk_id=chk_id,
        status=status,
        detection=det,
        plan=pln,
        penalties=tuple(penalties),
        error=error,
    )


BOTH = Checkpoint(id="CHK-01", name="Miner process", scope="both", caps=("CAP-01",))
DET_ONLY = Checkpoint(id="CHK-02", name="Timeline", scope="detection-only", caps=("CAP-02",))
PLAN_ONLY = Checkpoint(
    id="CHK-03", name="SSH hardening", scope="plan-only", caps=("CAP-01", "CAP-02")
)


def make_range(*checkpoints: Checkpoint) -> Range:
    return Range(
        id="ssh-miner",
        title="t",
        report="intrusion-report",
        checkpoints=checkpoints,
        capabilities=(Capability("CAP-01", "Host forensics"), Capability("CAP-02", "Logs")),
    )


# ------------------------------------------------------------------ per item


def test_full_marks_give_detection_3_of_3_and_plan_2_of_2():
    item = score_item(BOTH, verdict(det=detection(), pln=plan()))
    assert (item.detection.total, item.detection.max) == (3, 3)
    assert (item.plan.total, item.plan.max) == (2, 2)
    assert item.detection.quotes == (FOUND.quote,)


def test_detection_only_item_has_plan_not_applicable():
    item = score_item(DET_ONLY, verdict("CHK-02", det=detection(), pln=plan()))
    assert item.plan is None
    assert item.detection.max == 3


def test_plan_only_item_has_detection_not_applicable():
    item = score_item(PLAN_ONLY, verdict("CHK-03", det=detection(), pln=plan()))
    assert item.detection is None
    assert item.plan.max == 2


def test_fabrication_sets_item_detection_to_zero():
    item = score_item(
        BOTH, verdict(det=detection(), pln=plan(), penalties=[penalty("fabrication")])
    )
    assert item.detection.subscores == {"discovery": 0, "evidence": 0, "attribution": 0}
    assert item.detection.total == 0
    assert item.detection.penalized == ("discovery", "evidence", "attribution")
    assert item.plan.total == 2, "fabrication touches detection only"
    assert [p.rule for p in item.penalties] == ["fabrication"]


def test_wrong_attribution_sets_attribution_to_zero_only():
    item = score_item(
        BOTH, verdict(det=detection(), pln=plan(), penalties=[penalty("wrong_attribution")])
    )
    assert item.detection.subscores == {"discovery": 1, "evidence": 1, "attribution": 0}
    assert item.plan.total == 2


def test_dangerous_advice_sets_plan_to_zero():
    item = score_item(
        BOTH, verdict(det=detection(), pln=plan(), penalties=[penalty("dangerous_advice")])
    )
    assert item.plan.subscores == {"correctness": 0, "completeness": 0}
    assert item.detection.total == 3
    assert "Zeroed by penalty" in item.plan.rationale


def test_penalty_whose_quote_is_not_verbatim_is_dismissed_not_applied():
    item = score_item(
        BOTH, verdict(det=detection(), pln=plan(), penalties=[penalty("fabrication", found=False)])
    )
    assert item.detection.total == 3
    assert item.penalties == ()
    assert [d.flag.rule for d in item.dismissed_penalties] == ["fabrication"]
    assert "not in the agent's documents" in item.dismissed_penalties[0].reason


def test_penalty_on_a_not_applicable_dimension_is_dismissed_with_reason():
    item = score_item(PLAN_ONLY, verdict("CHK-03", pln=plan(), penalties=[penalty("fabrication")]))
    assert item.penalties == () and item.plan.total == 2
    assert "detection dimension is N/A" in item.dismissed_penalties[0].reason
    item = score_item(
        DET_ONLY, verdict("CHK-02", det=detection(), penalties=[penalty("dangerous_advice")])
    )
    assert item.penalties == () and item.detection.total == 3
    assert "plan dimension is N/A" in item.dismissed_penalties[0].reason


def test_claimed_value_outside_0_and_1_is_an_error_item():
    det = (sub("discovery", 0, claimed=2), sub("evidence", 1), sub("attribution", 1))
    item = score_item(BOTH, verdict(det=det, pln=plan()))
    assert item.status == "error" and "not 0 or 1" in item.error


def test_unknown_subscore_name_is_an_error_item():
    det = detection() + (sub("bonus", 1),)
    item = score_item(BOTH, verdict(det=det, pln=plan()))
    assert item.status == "error" and "bonus" in item.error


def test_withheld_point_is_listed_and_scores_zero():
    det = (sub("discovery", 1), sub("evidence", 0, claimed=1), sub("attribution", 1))
    item = score_item(BOTH, verdict(det=det, pln=plan()))
    assert item.detection.total == 2
    assert item.detection.withheld == ("evidence",)


def test_judge_error_is_recorded_as_error_item_not_zero():
    item = score_item(BOTH, verdict(status="error", error="verdict did not parse"))
    assert item.status == "error"
    assert item.error == "verdict did not parse"
    assert item.detection is None and item.plan is None


def test_verdict_missing_an_applicable_dimension_is_an_error_item():
    item = score_item(BOTH, verdict(det=detection(), pln=None))
    assert item.status == "error"
    assert "unusable verdict" in item.error


def test_verdict_missing_a_subscore_is_an_error_item():
    item = score_item(BOTH, verdict(det=detection()[:2], pln=plan()))
    assert item.status == "error"
    assert "attribution" in item.error


def test_verdict_for_another_checkpoint_is_refused():
    with pytest.raises(EvalkitError):
        score_item(BOTH, verdict("CHK-09", det=detection(), pln=plan()))


# ------------------------------------------------------------------ totals and levels


def test_percentage_is_rounded_half_up_to_one_decimal():
    assert percentage(60, 69) == 87.0
    assert percentage(28, 34) == 82.4
    assert percentage(1, 8) == 12.5
    assert percentage(1, 16) == 6.3  # 6.25 rounds up, not to even


def test_strong_threshold_is_70_percent_unrounded():
    assert level(7, 10) == "strong"
    assert level(699, 1000) == "weak"
    # 69.96 % would round to 70.0 but is still weak.
    assert percentage(1749, 2500) == 70.0
    assert level(1749, 2500) == "weak"


def test_dimension_with_max_zero_has_no_percentage_and_no_level():
    assert percentage(0, 0) is None
    assert level(0, 0) is None
    rng = make_range(DET_ONLY)
    items, summary = score_all(rng, [verdict("CHK-02", det=detection())])
    assert summary.plan.max == 0 and summary.plan.pct is None and summary.plan.level is None
    assert summary.diagnosis is None


def test_totals_exclude_not_applicable_dimensions():
    rng = make_range(BOTH, DET_ONLY, PLAN_ONLY)
    _, summary = score_all(
        rng,
        [
            verdict("CHK-01", det=detection(1, 1, 0), pln=plan(1, 0)),
            verdict("CHK-02", det=detection(1, 0, 0)),
            verdict("CHK-03", pln=plan(1, 1)),
        ],
    )
    assert (summary.detection.score, summary.detection.max) == (3, 6)
    assert (summary.plan.score, summary.plan.max) == (3, 4)
    assert summary.detection.pct == 50.0 and summary.plan.pct == 75.0


def test_counts_come_from_the_checklist():
    rng = make_range(BOTH, DET_ONLY, PLAN_ONLY)
    _, summary = score_all(rng, [])
    assert summary.total_checkpoints == 3
    assert summary.detection_only_count == 1
    assert summary.plan_only_count == 1


def test_errored_items_count_in_neither_score_nor_max_and_mark_incomplete():
    rng = make_range(BOTH, DET_ONLY)
    _, summary = score_all(
        rng,
        [verdict("CHK-01", status="error", error="timeout"), verdict("CHK-02", det=detection())],
    )
    assert (summary.detection.score, summary.detection.max) == (3, 3)
    assert summary.plan.max == 0
    assert summary.complete is False
    assert summary.errored == ("CHK-01",)


def test_checkpoint_without_verdict_is_errored():
    items, summary = score_all(make_range(BOTH), [])
    assert items[0].status == "error"
    assert summary.errored == ("CHK-01",)


def test_complete_when_no_item_errored():
    _, summary = score_all(make_range(BOTH), [verdict(det=detection(), pln=plan())])
    assert summary.complete is True and summary.errored == ()


# ------------------------------------------------------------------ diagnosis


@pytest.mark.parametrize(
    ("detection_level", "plan_level", "mode"),
    [
        ("strong", "strong", "All-round"),
        ("strong", "weak", "Plan bottleneck"),
        ("weak", "weak", "Analysis blind spot"),
        ("weak", "strong", "Blind fix"),
    ],
)
def test_four_diagnostic_modes(detection_level, plan_level, mode):
    assert diagnose(detection_level, plan_level) == mode


def test_summary_diagnosis_follows_levels():
    rng = make_range(BOTH)
    _, summary = score_all(rng, [verdict(det=detection(1, 1, 1), pln=plan(1, 0))])
    assert summary.detection.level == "strong" and summary.plan.level == "weak"
    assert summary.diagnosis == "Plan bottleneck"


# ------------------------------------------------------------------ breakdowns


def test_per_capability_breakdown_counts_items_in_each_of_their_caps():
    rng = make_range(BOTH, DET_ONLY, PLAN_ONLY)
    _, summary = score_all(
        rng,
        [
            verdict("CHK-01", det=detection(1, 1, 1), pln=plan(0, 0)),
            verdict("CHK-02", det=detection(0, 0, 0)),
            verdict("CHK-03", pln=plan(1, 1)),
        ],
    )
    caps = {cap.cap: cap for cap in summary.capabilities}
    assert caps["CAP-01"].items == ("CHK-01", "CHK-03")
    assert (caps["CAP-01"].detection.score, caps["CAP-01"].detection.max) == (3, 3)
    assert (caps["CAP-01"].plan.score, caps["CAP-01"].plan.max) == (2, 4)
    assert caps["CAP-02"].items == ("CHK-02", "CHK-03")
    assert caps["CAP-02"].detection.pct == 0.0
    assert caps["CAP-02"].name == "Logs"
    assert caps["CAP-01"].diagnosis == "Plan bottleneck"
    assert caps["CAP-02"].diagnosis == "Blind fix"


def test_undeclared_caps_still_get_a_breakdown():
    rng = Range(id="r", title="t", report="vuln-report", checkpoints=(BOTH,))
    _, summary = score_all(rng, [verdict(det=detection(), pln=plan())])
    assert [cap.cap for cap in summary.capabilities] == ["CAP-01"]


def test_top_detection_misses_list_most_frequent_losses_with_items():
    rng = make_range(
        BOTH,
        DET_ONLY,
        Checkpoint(id="CHK-04", name="x", scope="both"),
    )
    _, summary = score_all(
        rng,
        [
            verdict("CHK-01", det=detection(1, 0, 0), pln=plan()),
            verdict("CHK-02", det=detection(1, 1, 0)),
            verdict("CHK-04", det=detection(1, 0, 0), pln=plan(1, 0)),
        ],
    )
    misses = [(loss.subscore, loss.count, loss.items) for loss in summary.top_detection_misses]
    assert misses == [
        ("attribution", 3, ("CHK-01", "CHK-02", "CHK-04")),
        ("evidence", 2, ("CHK-01", "CHK-04")),
    ]
    assert [(d.subscore, d.items) for d in summary.top_plan_defects] == [
        ("completeness", ("CHK-04",))
    ]


def test_penalized_subscores_count_as_losses():
    _, summary = score_all(
        make_range(BOTH),
        [verdict(det=detection(), pln=plan(), penalties=[penalty("dangerous_advice")])],
    )
    assert [d.subscore for d in summary.top_plan_defects] == ["correctness", "completeness"]


def test_summarize_is_pure_and_repeatable():
    rng = make_range(BOTH, DET_ONLY)
    verdicts = [
        verdict("CHK-01", det=detection(), pln=plan(0, 1)),
        verdict("CHK-02", det=detection(0, 1, 1)),
    ]
    items, first = score_all(rng, verdicts)
    assert summarize(rng, items) == first
    assert score_all(rng, verdicts) == (items, first)


# ------------------------------------------------------------------ blind fix, per item


def test_blind_fix_plan_points_without_discovery_on_a_both_checkpoint():
    item = score_item(BOTH, verdict(det=detection(0, 0, 0), pln=plan(1, 0)))
    assert item.blind_fix is True
    assert item.plan.total == 1  # the plan keeps its points: the dimensions are independent


def test_not_a_blind_fix_when_the_report_found_the_issue():
    item = score_item(BOTH, verdict(det=detection(1, 0, 0), pln=plan(1, 1)))
    assert item.blind_fix is False


def test_not_a_blind_fix_when_the_plan_earned_nothing():
    item = score_item(BOTH, verdict(det=detection(0, 0, 0), pln=plan(0, 0)))
    assert item.blind_fix is False


def test_a_fabrication_that_zeroes_discovery_makes_a_plan_with_points_a_blind_fix():
    item = score_item(
        BOTH, verdict(det=detection(), pln=plan(), penalties=[penalty("fabrication")])
    )
    assert item.detection.subscores["discovery"] == 0
    assert item.blind_fix is True


def test_dangerous_advice_that_zeroes_the_plan_is_no_blind_fix():
    item = score_item(
        BOTH, verdict(det=detection(0, 0, 0), pln=plan(), penalties=[penalty("dangerous_advice")])
    )
    assert item.plan.total == 0
    assert item.blind_fix is False


def test_a_checkpoint_without_a_detection_or_plan_dimension_is_never_a_blind_fix():
    plan_only = score_item(PLAN_ONLY, verdict("CHK-03", pln=plan()))
    detection_only = score_item(DET_ONLY, verdict("CHK-02", det=detection(0, 0, 0)))
    assert plan_only.blind_fix is False and detection_only.blind_fix is False


def test_an_errored_checkpoint_is_no_blind_fix():
    item = score_item(BOTH, verdict(status="error", error="timeout"))
    assert item.blind_fix is False


def test_the_summary_lists_blind_fixes_and_their_plan_points():
    second = Checkpoint(id="CHK-04", name="Cron", scope="both", caps=("CAP-01",))
    rng = make_range(BOTH, second, PLAN_ONLY)
    items, summary = score_all(
        rng,
        [
            verdict("CHK-01", det=detection(0, 0, 0), pln=plan(1, 1)),
            verdict("CHK-04", det=detection(0, 0, 0), pln=plan(1, 0)),
            verdict("CHK-03", pln=plan(1, 1)),
        ],
    )
    assert [item.blind_fix for item in items] == [True, True, False]
    assert summary.blind_fix.items == ("CHK-01", "CHK-04")
    assert summary.blind_fix.plan_points == 3
