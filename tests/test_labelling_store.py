"""Drafts on disk: autosave beside the label, resume where the labeller stopped, finalise
only what check_labels accepts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evalkit.errors import LabelError
from evalkit.gold_labels import find_labels, labelled_pairs, load_labels, validate_label_files
from evalkit.labelling import drafts, store
from evalkit.labelling.readings import evaluation_side, label_side, load_evaluation
from tests.labelling_samples import RANGE, RUN, pair, workspace_with_evaluation


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return workspace_with_evaluation(tmp_path)


def runs(root: Path) -> Path:
    return root / "runs"


def test_the_draft_sits_beside_the_label_and_no_label_reader_takes_it_for_one(root: Path):
    rng, *_ = pair(root)
    draft = drafts.new_draft(rng, RUN, "zed", created="2026-12-01")
    path = store.save_draft(runs(root), draft)
    assert path == runs(root) / RUN / RANGE / "labels" / "zed.json.draft"
    assert [labels.labeller for labels in find_labels(runs(root), RUN, RANGE)] == ["a", "b"]
    assert (RUN, RANGE) in labelled_pairs(runs(root))
    lines, failed = validate_label_files([runs(root) / RUN / RANGE / "labels" / "a.json"])
    assert failed == 0, lines
    assert store.load_draft(path) == draft


def test_a_draft_round_trips_through_json_with_everything_unfinished(root: Path):
    rng, *_ = pair(root)
    draft = drafts.new_draft(rng, RUN, "zed", created="2026-12-01")
    draft = drafts.set_subscore(drafts.step(draft, 3), "CHK-04", "evidence", 1)
    draft = drafts.set_borderline(drafts.set_note(draft, "CHK-04", "ünïcode"), "CHK-04", True)
    assert store.draft_from_json(json.loads(json.dumps(store.draft_to_json(draft)))) == draft
    with pytest.raises(LabelError, match="not a version 1 label draft"):
        store.draft_from_json({"draft_version": 7})
    bad = store.draft_to_json(draft)
    bad["checkpoints"][0]["detection"]["evidence"] = 2
    with pytest.raises(LabelError, match="evidence is 2"):
        store.draft_from_json(bad)


def test_autosave_is_atomic_and_refuses_a_planted_symlink(root: Path, tmp_path: Path):
    rng, *_ = pair(root)
    draft = drafts.new_draft(rng, RUN, "zed", created="2026-12-01")
    path = store.save_draft(runs(root), draft)
    leftovers = [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep")
    path.unlink()
    os.symlink(target, path)
    with pytest.raises(Exception, match="symlink"):
        store.save_draft(runs(root), draft)
    assert target.read_text() == "keep"


def test_open_resumes_the_draft_at_the_checkpoint_where_the_labeller_stopped(root: Path):
    rng, *_ = pair(root)
    opened = store.open_draft(runs(root), rng, RUN, "zed", created="2026-12-01")
    assert (opened.how, opened.message) == ("new", "new label")
    draft = drafts.set_subscore(drafts.step(opened.draft, 4), "CHK-05", "discovery", 1)
    store.save_draft(runs(root), draft)
    again = store.open_draft(runs(root), rng, RUN, "zed", created="2026-12-09")
    assert again.how == "resumed" and again.draft == draft
    assert again.message == "resumed the draft zed.json.draft at CHK-05"


def test_open_reopens_a_label_and_prefills_a_new_one_from_a_side(root: Path):
    rng, submission, sources = pair(root)
    opened = store.open_draft(runs(root), rng, RUN, "a")
    assert opened.how == "label" and opened.message == "opened the label a.json to edit it"
    a = load_labels(runs(root) / RUN / RANGE / "labels" / "a.json")
    assert drafts.to_labels(opened.draft, a.path, created=a.created) == a
    judge = evaluation_side(load_evaluation(runs(root), "rules", rng, submission), "rules")
    prefilled = store.open_draft(runs(root), rng, RUN, "zed", prefill=judge).draft
    assert (prefilled.prefilled_from, prefilled.blind) == ("judge:rules", True)
    reading = judge.reading("CHK-01")
    assert reading is not None
    assert prefilled.item("CHK-01").detection == reading.values("detection")
    assert [c.chk_id for c in prefilled.checkpoints if not c.seen] == [
        c.id for c in rng.checkpoints[1:]
    ]
    from_b = store.open_draft(runs(root), rng, RUN, "zed", prefill=label_side(
        find_labels(runs(root), RUN, RANGE)[1], sources)).draft  # fmt: skip
    assert (from_b.prefilled_from, from_b.blind) == ("b", False)


def test_finalise_writes_only_what_check_labels_accepts_then_drops_the_draft(root: Path):
    rng, submission, _sources = pair(root)
    draft = store.open_draft(runs(root), rng, RUN, "zed").draft
    store.save_draft(runs(root), draft)
    refused = store.finalise(runs(root), draft, rng, submission)
    assert not refused.ok and refused.problems[0].startswith("CHK-01: discovery, evidence")
    label = runs(root) / RUN / RANGE / "labels" / "zed.json"
    assert not label.exists()
    for item in draft.checkpoints:
        draft = drafts.go_to(draft, item.chk_id)
        for dimension, name in drafts.SUBSCORE_ORDER:
            if item.dimension(dimension) is not None:
                draft = drafts.set_subscore(draft, item.chk_id, name, 1)
    bad = drafts.LabelPenalty("fabrication", "report", "a sentence nobody wrote", "x")
    refused = store.finalise(runs(root), drafts.add_penalty(draft, "CHK-01", bad), rng, submission)
    assert refused.problems == (
        "CHK-01: penalty quote not found verbatim in the report: 'a sentence nobody wrote'",
    )
    assert not label.exists()
    done = store.finalise(runs(root), draft, rng, submission, created="2026-12-03")
    assert done.ok and done.path == label
    assert not store.draft_path(runs(root), RUN, RANGE, "zed").exists()
    assert load_labels(label).created == "2026-12-03"
    lines, failed = validate_label_files([label])
    assert (lines, failed) == ([f"{label}: ok (labels)"], 0)
