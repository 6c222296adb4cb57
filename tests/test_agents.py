"""Two agents' runs side by side (research/agents.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import evalkit
from evalkit import render
from evalkit.errors import EvalkitError
from evalkit.research.agents import (
    Checkpoint,
    RangeScores,
    compare_agents,
    load_range_scores,
    mean_pct_interval,
    report_markdown,
)

REPO = Path(__file__).resolve().parent.parent


def checkpoint(chk_id: str, detection: int, plan: int, caps=("CAP-01 Hosts",)) -> Checkpoint:
    points = {"discovery": int(detection > 0), "evidence": int(detection > 1),
              "attribution": int(detection > 2), "correctness": int(plan > 0),
              "completeness": int(plan > 1)}  # fmt: skip
    return Checkpoint(chk_id, tuple(caps), (detection, 3), (plan, 2), points)


def scores(run: str, values: list[tuple[int, int]], range_id: str = "r1") -> RangeScores:
    checkpoints = tuple(
        checkpoint(f"CHK-{i:02d}", d, p, ("CAP-01 Hosts",) if i % 2 else ("CAP-02 Logs",))
        for i, (d, p) in enumerate(values)
    )
    return RangeScores(run, range_id, "sha", checkpoints, (), Path("x"))


def test_a_better_planner_is_told_apart_and_detection_is_not_merged_with_plan():
    a = scores("a", [(3, 0)] * 20)
    b = scores("b", [(3, 2)] * 20)
    result = compare_agents([a], [b], judge="rules", resamples=300)
    rows = {(r.scope, r.group, r.dimension): r for r in result.rows}
    plan = rows[("pooled", "overall", "plan")]
    assert (plan.pct.a, plan.pct.b, plan.pct.delta) == (0.0, 100.0, 100.0)
    assert plan.better == "b" and plan.mcnemar.b_only == 40
    assert plan.verdict == "b plans better on all ranges: Δ +100.0 pp [100.0, 100.0]"
    detection = rows[("pooled", "overall", "detection")]
    assert detection.better is None and detection.pct.delta == 0.0
    assert detection.verdict.startswith("all ranges, detection: no difference beyond noise")
    assert ("r1", "CAP-02 Logs", "plan") in rows
    assert result.headline() == [detection.verdict, plan.verdict]


def test_pooled_intervals_draw_checkpoints_within_each_range():
    a = [scores("a", [(3, 2), (0, 0)] * 5, "r1"), scores("a", [(3, 2)] * 4, "r2")]
    b = [scores("b", [(3, 2), (3, 0)] * 5, "r1"), scores("b", [(3, 2)] * 4, "r2")]
    result = compare_agents(a, b, judge="rules", resamples=400, seed=1)
    pooled = next(
        r
        for r in result.rows
        if (r.scope, r.group, r.dimension) == ("pooled", "overall", "detection")
    )
    assert pooled.pct.n == 14 and pooled.better == "b"
    assert pooled.pct.delta_interval is not None and pooled.pct.delta_interval[0] > 0


def test_errored_checkpoints_are_left_out_of_both_and_other_checklists_refused():
    a = scores("a", [(3, 2)] * 4)
    b = replace(scores("b", [(3, 2)] * 4), errored=("CHK-01",))
    b = replace(b, checkpoints=tuple(c for c in b.checkpoints if c.chk_id != "CHK-01"))
    result = compare_agents([a], [b], judge="rules", resamples=50)
    assert result.left_out == ({"range": "r1", "chk_id": "CHK-01", "errored_in": "b"},)
    assert result.rows[0].pct.n == 3
    assert "## Checkpoints left out" in report_markdown(result)
    with pytest.raises(EvalkitError, match="different checklists"):
        compare_agents([a], [replace(b, checklist_sha256="other")], judge="rules")


def test_mean_pct_interval():
    assert mean_pct_interval([[(3, 3)] * 3, [(0, 3)] * 3]) == (50.0, 50.0)
    low, high = mean_pct_interval([[(3, 3), (0, 3)] * 5], resamples=500)
    assert 10.0 <= low < 50.0 < high <= 90.0
    assert mean_pct_interval([[(0, 0)]]) is None
    assert mean_pct_interval([[(1, 2)]], resamples=0) is None


def test_load_range_scores_reads_a_record_and_names_a_missing_one(tmp_path: Path):
    rng = evalkit.load_range(REPO / "ranges", "weak-baseline")
    evaluation = evalkit.evaluate(
        rng, evalkit.load_submission(REPO / "runs", "demo", rng), evalkit.make_judge("rules")
    )
    render.write_outputs(evaluation, tmp_path / "demo/weak-baseline/evaluations/rules")
    found = load_range_scores(tmp_path, "demo", "weak-baseline", "rules")
    assert len(found.checkpoints) == len(rng.checkpoints)
    total = sum(c.detection[0] for c in found.checkpoints if c.detection)
    assert total == evaluation.summary.detection.score
    with pytest.raises(EvalkitError, match="no rules evaluation of demo/ssh-miner"):
        load_range_scores(tmp_path, "demo", "ssh-miner", "rules")
