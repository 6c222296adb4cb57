"""Recorded verdicts (verdicts.json) read back and replayed: the same scores, no judge call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalkit
from evalkit.render import to_scores_dict, write_outputs
from evalkit.replay import load_verdicts, recorded_judge


@pytest.fixture
def recorded(workspace: Path):
    rng = evalkit.load_range(workspace / "ranges", "weak-baseline")
    submission = evalkit.load_submission(workspace / "runs", "demo", rng)
    evaluation = evalkit.evaluate(rng, submission, evalkit.make_judge("rules"))
    folder = workspace / "out"
    write_outputs(evaluation, folder)
    return rng, submission, evaluation, folder


def test_replay_gives_the_same_scores(recorded):
    rng, submission, evaluation, folder = recorded
    judge = recorded_judge(folder, rng)
    assert judge.info == evaluation.judge
    replayed = evalkit.evaluate(rng, submission, judge, timestamp=judge.timestamp)
    assert to_scores_dict(replayed) == to_scores_dict(evaluation)


def test_rationale_is_recorded_as_the_judge_wrote_it(recorded):
    _, _, evaluation, folder = recorded
    verdicts = json.loads((folder / "verdicts.json").read_text())
    for answer in verdicts.values():
        for dim in (answer.get("detection") or {}, answer.get("plan") or {}):
            for sub in dim.values():
                assert "Point withheld" not in sub["rationale"]


def test_jsonl_and_lists_and_missing_items(recorded, tmp_path: Path):
    rng, _, _, folder = recorded
    verdicts = json.loads((folder / "verdicts.json").read_text())
    first, *rest = rng.checkpoints
    jsonl = tmp_path / "verdicts.jsonl"
    jsonl.write_text("".join(json.dumps({"chk_id": c.id, **verdicts[c.id]}) + "\n" for c in rest))
    loaded = load_verdicts(jsonl, rng)
    assert loaded[0].status == "error" and loaded[0].error == "no recorded verdict"
    assert all(v.status == "scored" for v in loaded[1:])
    as_list = tmp_path / "verdicts-list.json"
    as_list.write_text(json.dumps([{"chk_id": c.id, **verdicts[c.id]} for c in rng.checkpoints]))
    assert load_verdicts(as_list, rng) == load_verdicts(folder / "verdicts.json", rng)


def test_a_malformed_verdict_is_an_errored_item_not_a_crash(recorded, tmp_path: Path):
    rng, _, _, _ = recorded
    path = tmp_path / "v.json"
    path.write_text(json.dumps({rng.checkpoints[0].id: {"detection": {"discovery": 7}}}))
    verdict = load_verdicts(path, rng)[0]
    assert verdict.status == "error" and "recorded verdict unusable" in verdict.error
