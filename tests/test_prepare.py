"""What a planned evaluation needs before the pipeline runs (evalkit/prepare.py): its inputs,
read under the confinement rules, its judge, and its output folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.judges.file import FileJudge
from evalkit.judges.rules import RulesJudge
from evalkit.pipeline import evaluate
from evalkit.prepare import build_judge, load_inputs, prepare_out_dir
from evalkit.render import to_scores_dict, write_outputs
from evalkit.runplan import RunPlan
from tests.samples import copy_samples


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return copy_samples(tmp_path / "ws")


def test_load_inputs_refuses_a_checklist_outside_the_ranges(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (ws / "ranges/ssh-miner").rename(outside)
    (ws / "ranges/ssh-miner").symlink_to(outside, target_is_directory=True)
    plan = RunPlan.build(
        range_id="ssh-miner",
        run_id="demo",
        judge="rules",
        ranges_dir="ranges",
        runs_dir="runs",
        base=ws,
    )
    with pytest.raises(EvalkitError, match="outside"):
        load_inputs(plan)
    loosened = RunPlan.build(
        range_id="ssh-miner",
        run_id="demo",
        judge="rules",
        ranges_dir="ranges",
        runs_dir="runs",
        base=ws,
        allow_outside_inputs=True,
    )
    _, submission = load_inputs(loosened)
    assert submission.inputs_outside


def test_build_judge_is_the_plans_judge_or_the_recorded_one(ws: Path) -> None:
    plan = RunPlan.build(
        range_id="weak-baseline",
        run_id="demo",
        judge="rules",
        ranges_dir="ranges",
        runs_dir="runs",
        base=ws,
    )
    assert isinstance(build_judge(plan), RulesJudge)
    rng, submission = load_inputs(plan)
    evaluation = evaluate(rng, submission, build_judge(plan))
    write_outputs(evaluation, prepare_out_dir(plan))
    replaying = RunPlan.build(
        range_id="weak-baseline",
        run_id="demo",
        judge="rules",
        ranges_dir="ranges",
        runs_dir="runs",
        base=ws,
        replay_from=plan.out_dir,
    )
    judge = build_judge(replaying)
    assert isinstance(judge, FileJudge) and judge.info == evaluation.judge
    replayed = evaluate(rng, submission, judge)
    assert to_scores_dict(replayed) == to_scores_dict(evaluation)
