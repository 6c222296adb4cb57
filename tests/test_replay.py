"""Recorded verdicts (verdicts.json) read back and replayed: the same scores, no judge call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalkit
from evalkit.judges.file import FileJudge
from evalkit.render import to_scores_dict, write_outputs


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
    judge = FileJudge.from_record(folder)
    assert judge.info == evaluation.judge
    replayed = evalkit.evaluate(rng, submission, judge)
    assert to_scores_dict(replayed) == to_scores_dict(evaluation)


def test_rationale_is_recorded_as_the_judge_wrote_it(recorded):
    _, _, evaluation, folder = recorded
    verdicts = json.loads((folder / "verdicts.json").read_text())
    for answer in verdicts:
        for dim in (answer.get("detection") or {}, answer.get("plan") or {}):
            for sub in dim.values():
                assert "Point withheld" not in sub["rationale"]


def test_jsonl_and_lists_and_missing_items(recorded, tmp_path: Path):
    rng, _, _, folder = recorded
    verdicts = json.loads((folder / "verdicts.json").read_text())
    assert [answer["chk_id"] for answer in verdicts] == [c.id for c in rng.checkpoints]
    jsonl = tmp_path / "verdicts.jsonl"
    jsonl.write_text("".join(json.dumps(answer) + "\n" for answer in verdicts[1:]))
    loaded = FileJudge(jsonl).verdicts_for(rng)
    first = rng.checkpoints[0].id
    assert loaded[0].status == "error"
    assert loaded[0].error == f"no verdict for {first} in verdicts.jsonl"
    assert all(v.status == "scored" for v in loaded[1:])
    from_folder = FileJudge(folder / "verdicts.json").verdicts_for(rng)
    assert FileJudge(jsonl).verdicts_for(rng)[1:] == from_folder[1:]


def test_a_malformed_recorded_verdict_is_one_clear_error(recorded, tmp_path: Path):
    rng, _, _, _ = recorded
    path = tmp_path / "v.json"
    chk = rng.checkpoints[0].id
    path.write_text(json.dumps([{"chk_id": chk, "detection": {"discovery": 7}}]))
    with pytest.raises(evalkit.JudgeError, match=chk) as info:
        FileJudge(path).verdicts_for(rng)
    assert info.value.path == str(path) and "\n" not in str(info.value)
