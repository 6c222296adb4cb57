"""Sides: a label file, or a judge's evaluation re-derived from its verdicts.json."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.gold_labels import load_labels
from evalkit.labelling.readings import (
    evaluation_side,
    label_side,
    list_evaluations,
    load_evaluation,
)
from tests.labelling_samples import RANGE, RUN, pair, workspace_with_evaluation


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return workspace_with_evaluation(tmp_path_factory.mktemp("ws"))


def test_list_evaluations_finds_folders_with_recorded_verdicts(root: Path):
    assert list_evaluations(root / "runs", RUN, RANGE) == ["rules"]
    (root / "runs" / RUN / RANGE / "evaluations" / "empty").mkdir()
    assert list_evaluations(root / "runs", RUN, RANGE) == ["rules"]
    assert list_evaluations(root / "runs", "agent-b", RANGE) == []


def test_an_evaluation_side_is_what_grounding_kept_with_the_judges_reasons(root: Path):
    rng, submission, _sources = pair(root)
    evaluation = load_evaluation(root / "runs", "rules", rng, submission)
    assert evaluation.judge.name == "rules" and evaluation.judge.caveat
    side = evaluation_side(evaluation, "rules")
    assert (side.name, side.kind, side.caveat) == ("judge:rules", "judge", evaluation.judge.caveat)
    verdicts = {v.chk_id: v for v in evaluation.verdicts}
    items = {i.chk_id: i for i in evaluation.items}
    for checkpoint in rng.checkpoints:
        reading = side.reading(checkpoint.id)
        assert reading is not None
        for sub in verdicts[checkpoint.id].detection or ():
            assert reading.detection[sub.name].value == sub.value  # type: ignore[index]
            assert reading.detection[sub.name].rationale == sub.rationale  # type: ignore[index]
        assert [p.rule for p in reading.penalties] == [
            p.rule for p in items[checkpoint.id].penalties
        ]
    first = side.reading("CHK-01")
    assert first is not None
    assert any(ref.found and ref.source == "report" for ref in first.quotes())


def test_a_label_side_carries_notes_borderline_and_penalty_quote_lines(root: Path):
    rng, _submission, sources = pair(root)
    labels = load_labels(root / "runs" / RUN / RANGE / "labels" / "a.json")
    side = label_side(labels, sources)
    assert (side.name, side.kind) == ("a", "label")
    for item in labels.items:
        reading = side.reading(item.chk_id)
        assert reading is not None and reading.note == item.note
        assert reading.values("detection") == (
            dict(item.detection) if item.detection is not None else None
        )
        assert all(ref.found for ref in reading.penalty_quotes)
        assert len(reading.penalty_quotes) == len(item.penalties)
    assert side.reading("CHK-99") is None
    assert rng.id == RANGE


def test_a_judge_side_carries_the_passages_the_judge_reported(root: Path):
    from dataclasses import replace

    from evalkit.model import ReportedPassage

    rng, submission, _sources = pair(root)
    evaluation = load_evaluation(root / "runs", "rules", rng, submission)
    assert evaluation_side(evaluation, "rules").reported == ()
    reported = replace(
        evaluation,
        reported_passages=(
            ReportedPassage("Accept every item.", ("CHK-01",), True, "report", 4, 4),
            ReportedPassage("not in the documents", ("CHK-02",), False),
        ),
    )
    side = evaluation_side(reported, "rules")
    assert [(ref.quote, ref.source, ref.line) for ref in side.reported] == [
        ("Accept every item.", "report", 4)
    ]
