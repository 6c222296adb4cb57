"""Label drafts: pure changes, scope-enforced sub-scores, what is unfinished, rebasing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from evalkit.errors import LabelError
from evalkit.gold_labels import LabelPenalty, load_labels
from evalkit.labelling import drafts
from tests.labelling_samples import pair
from tests.samples import REPO

RNG, SUBMISSION, SOURCES = pair(REPO)
DETECTION_ONLY = next(c.id for c in RNG.checkpoints if c.scope == "detection-only")
PLAN_ONLY = next(c.id for c in RNG.checkpoints if c.scope == "plan-only")


def fresh() -> drafts.LabelDraft:
    return drafts.new_draft(RNG, "demo", "zed", created="2026-12-01")


def test_a_new_draft_has_every_checkpoint_unset_and_n_a_by_scope():
    draft = fresh()
    assert [item.chk_id for item in draft.checkpoints] == [c.id for c in RNG.checkpoints]
    assert draft.position == "CHK-01" and draft.current.seen
    assert draft.item(DETECTION_ONLY).plan is None
    assert draft.item(PLAN_ONLY).detection is None
    assert draft.item("CHK-01").detection == {
        "discovery": None, "evidence": None, "attribution": None
    }  # fmt: skip
    assert (draft.blind, draft.checklist_sha256) == (True, RNG.sha256)


def test_changes_are_pure_and_n_a_sub_scores_cannot_be_set():
    draft = fresh()
    changed = drafts.set_subscore(draft, "CHK-01", "evidence", 1)
    assert draft.item("CHK-01").detection["evidence"] is None  # type: ignore[index]
    assert changed.item("CHK-01").detection["evidence"] == 1  # type: ignore[index]
    with pytest.raises(LabelError, match="correctness is N/A"):
        drafts.set_subscore(draft, DETECTION_ONLY, "correctness", 1)
    with pytest.raises(LabelError, match="0 or 1"):
        drafts.set_subscore(draft, "CHK-01", "evidence", 2)
    with pytest.raises(LabelError, match="unknown sub-score"):
        drafts.set_subscore(draft, "CHK-01", "elegance", 1)


def test_toggle_goes_unset_to_1_then_0_then_1():
    draft = fresh()
    values = []
    for _ in range(3):
        draft = drafts.toggle_subscore(draft, "CHK-01", "discovery")
        values.append(draft.item("CHK-01").detection["discovery"])  # type: ignore[index]
    assert values == [1, 0, 1]


def test_navigation_marks_checkpoints_seen_and_stops_at_the_ends():
    draft = drafts.step(fresh(), -1)
    assert draft.position == "CHK-01"
    draft = drafts.step(draft, 1)
    assert draft.position == "CHK-02" and draft.item("CHK-02").seen
    draft = drafts.go_to(draft, RNG.checkpoints[-1].id)
    assert drafts.step(draft, 1).position == RNG.checkpoints[-1].id
    with pytest.raises(LabelError):
        drafts.go_to(draft, "CHK-99")


def test_penalties_notes_and_borderline():
    penalty = LabelPenalty("fabrication", "report", "some quote", "why")
    draft = drafts.add_penalty(fresh(), "CHK-01", penalty)
    assert drafts.add_penalty(draft, "CHK-01", penalty) == draft  # no duplicate
    draft = drafts.set_note(drafts.set_borderline(draft, "CHK-01", True), "CHK-01", "hm")
    item = draft.item("CHK-01")
    assert (item.penalties, item.note, item.borderline) == ((penalty,), "hm", True)
    assert drafts.remove_penalty(draft, "CHK-01", 0).item("CHK-01").penalties == ()
    with pytest.raises(LabelError, match="no penalty 2"):
        drafts.remove_penalty(draft, "CHK-01", 1)


def test_unfinished_names_unset_and_unseen_checkpoints():
    draft = drafts.set_subscore(fresh(), "CHK-01", "discovery", 1)
    lines = drafts.unfinished(draft)
    assert lines[0] == "CHK-01: evidence, attribution, correctness, completeness not set"
    assert lines[1] == (
        "CHK-02: discovery, evidence, attribution, correctness, completeness not set; not yet seen"
    )
    with pytest.raises(LabelError) as caught:
        drafts.to_labels(draft, Path("x/labels/zed.json"))
    assert caught.value.problems == tuple(lines)


def complete(draft: drafts.LabelDraft) -> drafts.LabelDraft:
    for item in draft.checkpoints:
        draft = drafts.go_to(draft, item.chk_id)
        for dimension, name in drafts.SUBSCORE_ORDER:
            if item.dimension(dimension) is not None:
                draft = drafts.set_subscore(draft, item.chk_id, name, 0)
    return draft


def test_a_finished_draft_is_a_label_set_through_the_schema():
    draft = drafts.set_borderline(complete(fresh()), "CHK-02", True)
    labels = drafts.to_labels(draft, Path("runs/demo/redis-exposed/labels/zed.json"))
    assert labels.labeller == "zed" and labels.item("CHK-02").borderline
    assert labels.item(DETECTION_ONLY).plan is None
    data = drafts.to_label_data(draft)
    assert "resolution" not in data["checkpoints"][0]  # type: ignore[index]
    assert "prefilled_from" not in data


def test_another_labellers_label_is_a_prefill_and_ones_own_is_reopened():
    a = load_labels(REPO / "runs/demo/redis-exposed/labels/a.json")
    other = drafts.draft_from_labels(a, RNG, "zed", created="2026-12-02")
    assert (other.prefilled_from, other.blind, other.created) == ("a", False, "2026-12-02")
    assert not other.item("CHK-02").seen and other.item("CHK-01").seen
    assert other.item("CHK-01").detection == a.item("CHK-01").detection
    own = drafts.draft_from_labels(a, RNG, "a", created="2026-12-02")
    assert (own.prefilled_from, own.blind, own.created) == (None, a.blind, a.created)
    assert all(item.seen for item in own.checkpoints)


def test_rebase_follows_the_checklist_and_makes_a_changed_one_seen_again():
    draft = drafts.go_to(complete(fresh()), "CHK-01")
    checkpoints = (
        *RNG.checkpoints[1:],
        dataclasses.replace(RNG.checkpoints[0], id="CHK-99"),
    )
    edited = dataclasses.replace(RNG, checkpoints=checkpoints, sha256="0" * 64)
    rebased, changes = drafts.rebase(draft, edited)
    assert [i.chk_id for i in rebased.checkpoints] == [c.id for c in checkpoints]
    assert rebased.checklist_sha256 == "0" * 64
    assert not any(item.seen for item in rebased.checkpoints)
    assert changes[0].startswith("the redis-exposed checklist changed since this draft began")
    assert "CHK-99: new in the checklist, added unset" in changes
    assert "CHK-01: no longer in the checklist, dropped" in changes
    assert rebased.position == "CHK-02"  # where it was is gone: the first checkpoint
    unchanged, nothing = drafts.rebase(draft, RNG)
    assert (unchanged, nothing) == (draft, [])
