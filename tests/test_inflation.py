"""Signed gains against several clean sessions, the floor, and the interval of a mean."""

from __future__ import annotations

import pytest
from scipy import stats

from evalkit.model import (
    Checkpoint,
    Document,
    Evaluation,
    GroundedSubScore,
    GroundedVerdict,
    JudgeInfo,
    QuoteCheck,
    Range,
    Submission,
)
from evalkit.research.inflation import counted_points, floor_of, gain_against, mean_interval
from evalkit.scoring import score_all

RANGE = Range(
    id="r",
    title="r",
    report="intrusion-report",
    checkpoints=(
        Checkpoint(id="CHK-1", name="a"),
        Checkpoint(id="CHK-2", name="b"),
        Checkpoint(id="CHK-3", name="c", scope="plan-only"),
    ),
)
SUBMISSION = Submission(
    "run", "r", Document("report", "intrusion-report.md", "x"), Document("plan", "p.md", "y")
)
FOUND = QuoteCheck("x", True, "report", 1)


def _subs(names: tuple[str, ...], values: tuple[int, ...]) -> tuple[GroundedSubScore, ...]:
    return tuple(
        GroundedSubScore(n, v, v, (FOUND,) if v else (), "")
        for n, v in zip(names, values, strict=True)
    )


def evaluation(
    points: dict[str, tuple[tuple[int, int, int] | None, tuple[int, int]]],
) -> Evaluation:
    verdicts = []
    for checkpoint in RANGE.checkpoints:
        det, plan = points.get(checkpoint.id, ((0, 0, 0), (0, 0)))
        verdicts.append(
            GroundedVerdict(
                checkpoint.id,
                "scored",
                _subs(("discovery", "evidence", "attribution"), det)
                if checkpoint.has_detection
                else None,
                _subs(("correctness", "completeness"), plan),
                (),
            )
        )
    items, summary = score_all(RANGE, verdicts)
    return Evaluation(
        RANGE,
        SUBMISSION,
        JudgeInfo("t", "t"),
        "2026-12-06T00:00:00Z",
        "0",
        items,
        summary,
        tuple(verdicts),
    )


CLEAN_A = evaluation({"CHK-1": ((1, 1, 0), (1, 0))})
CLEAN_B = evaluation({"CHK-1": ((1, 0, 0), (1, 1))})


def test_the_gain_is_signed_per_checkpoint_against_the_mean_of_the_sessions():
    attacked = evaluation(
        {"CHK-1": ((1, 0, 0), (0, 0)), "CHK-2": ((0, 0, 0), (1, 1)), "CHK-3": (None, (1, 0))}
    )
    gain = gain_against(attacked, [CLEAN_A, CLEAN_B])
    assert gain.detection == pytest.approx(1 - 1.5)
    # CHK-1 lost 1.5 plan points; CHK-3 (plan-only, never a blind fix) gained 1.
    assert gain.plan_with_finding == pytest.approx(-1.5 + 1)
    # CHK-2 is a blind fix in the attacked evaluation: its 2 plan points stand apart.
    assert gain.plan_without_finding == 2
    assert gain.counted == pytest.approx(-1.0)


def test_an_expected_penalty_counts_the_clean_points_it_should_have_removed():
    attacked = evaluation({"CHK-1": ((1, 1, 0), (1, 0))})
    assert gain_against(attacked, [CLEAN_A]).counted == 0
    assert gain_against(attacked, [CLEAN_A], expected_zero={"CHK-1": "detection"}).detection == 2


def test_the_floor_is_each_session_against_the_others_and_every_two_sessions():
    floor = floor_of({"r": [CLEAN_A, CLEAN_B]})
    assert counted_points(CLEAN_A) == 3 and counted_points(CLEAN_B) == 3
    assert floor.pairwise == (0.0, 0.0)
    assert floor.largest == {"r": 0.0}
    third = evaluation({"CHK-1": ((1, 1, 1), (1, 1))})
    floor = floor_of({"r": [CLEAN_A, CLEAN_B, third]})
    assert floor.largest == {"r": 2.0}
    assert floor.leave_one_out.n == 3


def test_a_single_session_sets_no_floor():
    floor = floor_of({"r": [CLEAN_A]})
    assert floor.largest == {} and floor.leave_one_out.mean is None


def test_the_interval_of_a_mean_is_students_t():
    values = [0.0, 2.0, -1.0, 3.0]
    interval = mean_interval(values)
    low, high = stats.t.interval(0.95, 3, loc=1.0, scale=stats.sem(values))
    assert (interval.mean, interval.low, interval.high) == pytest.approx((1.0, low, high))
    assert interval.positive_mean == pytest.approx(5 / 4)
    assert mean_interval([]).mean is None
    assert mean_interval([2.0, 2.0]).low == 2.0
