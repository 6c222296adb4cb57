"""Adjudication: agreed checkpoints taken, disagreements resolved by a side or an edit,
written as a label that records what it resolved, and accepted by evalkit validate."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from evalkit.errors import LabelError
from evalkit.gold_labels import find_labels, load_labels, validate_label_files
from evalkit.labelling import drafts, store
from evalkit.labelling.adjudication import resolution_of, settle, start_adjudication, take_side
from evalkit.labelling.readings import evaluation_side, label_side, load_evaluation
from tests.labelling_samples import RANGE, RUN, pair, workspace_with_evaluation


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return workspace_with_evaluation(tmp_path)


def sides(root: Path):
    rng, submission, sources = pair(root)
    a, b = (label_side(labels, sources) for labels in find_labels(root / "runs", RUN, RANGE))
    return rng, submission, a, b


def test_agreed_checkpoints_are_taken_and_disagreements_left_open(root: Path):
    rng, _submission, a, b = sides(root)
    draft, disagreements = start_adjudication(rng, RUN, [a, b], created="2026-12-01")
    assert (draft.labeller, draft.resolves, draft.blind) == ("adjudicated", ("a", "b"), False)
    open_ids = {d.chk_id for d in disagreements}
    assert draft.position == disagreements[0].chk_id
    for item in draft.checkpoints:
        if item.chk_id in open_ids:
            assert item.resolution is None
            assert drafts.unfinished(draft)  # nothing is written while one is open
        else:
            reading = a.reading(item.chk_id)
            assert reading is not None
            assert item.resolution == "agreed" and item.note == reading.note
            assert item.detection == reading.values("detection")


def test_taking_a_side_or_editing_resolves_and_the_label_validates(root: Path):
    rng, submission, a, b = sides(root)
    draft, disagreements = start_adjudication(rng, RUN, [a, b], created="2026-12-01")
    first, *rest = disagreements
    # The first disagreement is edited: b's reading, then one sub-score changed.
    reading_b = first.readings[1]
    assert reading_b is not None
    draft = take_side(draft, first.chk_id, reading_b)
    assert resolution_of(draft.item(first.chk_id), rng, [a, b]) == "b"
    name = first.targets[0]
    if name.startswith("penalty:"):
        draft = drafts.remove_penalty(draft, first.chk_id, 0) if draft.item(
            first.chk_id).penalties else draft  # fmt: skip
    else:
        draft = drafts.toggle_subscore(draft, first.chk_id, name)
    assert resolution_of(draft.item(first.chk_id), rng, [a, b]) in ("a", "edited")
    for disagreement in rest:
        reading_a = disagreement.readings[0]
        assert reading_a is not None
        draft = take_side(draft, disagreement.chk_id, reading_a)
    draft = settle(draft, rng, [a, b])
    done = store.finalise(root / "runs", draft, rng, submission)
    assert done.problems == () and done.path is not None
    assert done.path.name == "adjudicated.json"
    written = load_labels(done.path)
    assert written.resolves == ("a", "b")
    assert {item.resolution for item in written.items} <= {"agreed", "edited", "a", "b"}
    assert written.item(rest[0].chk_id).resolution == "a" if rest else True
    lines, failed = validate_label_files([done.path])
    assert failed == 0, lines


def test_a_judge_against_a_label(root: Path):
    rng, submission, a, _b = sides(root)
    judge = evaluation_side(load_evaluation(root / "runs", "rules", rng, submission), "rules")
    draft, disagreements = start_adjudication(rng, RUN, [a, judge], created="2026-12-01")
    assert draft.resolves == ("a", "judge:rules") and disagreements
    for disagreement in disagreements:
        draft = take_side(draft, disagreement.chk_id, disagreement.readings[1])  # type: ignore[arg-type]
    done = store.finalise(root / "runs", settle(draft, rng, [a, judge]), rng, submission)
    assert done.ok, done.problems
    written = load_labels(done.path)  # type: ignore[arg-type]
    taken = {item.resolution for item in written.items}
    assert "judge:rules" in taken and taken <= {"agreed", "judge:rules"}


def test_adjudication_needs_two_sides_and_a_name_of_its_own(root: Path):
    rng, _submission, a, b = sides(root)
    with pytest.raises(LabelError, match="two or more sides"):
        start_adjudication(rng, RUN, [a], created="2026-12-01")
    with pytest.raises(LabelError, match="cannot be named after a side"):
        start_adjudication(rng, RUN, [a, b], created="2026-12-01", name="a")
    draft, _ = start_adjudication(rng, RUN, [a, b], created="2026-12-01")
    reading = a.reading("CHK-01")
    assert reading is not None
    with pytest.raises(LabelError, match="not a side"):
        take_side(draft, "CHK-01", dataclasses.replace(reading, side="zz"))
