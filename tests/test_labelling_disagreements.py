"""Disagreements: only the checkpoints the sides read differently, as calibration compares."""

from __future__ import annotations

import dataclasses

from evalkit.gold_labels import LabelPenalty, find_labels
from evalkit.labelling.disagreements import find_disagreements, reading_targets, same_reading
from evalkit.labelling.readings import Reading, Side, SubReading, label_side
from tests.labelling_samples import RANGE, RUN, pair
from tests.samples import REPO

RNG, SUBMISSION, SOURCES = pair(REPO)
A, B = (label_side(labels, SOURCES) for labels in find_labels(REPO / "runs", RUN, RANGE))


def differs(first: Reading, second: Reading) -> list[str]:
    checkpoint = RNG.checkpoint(first.chk_id)
    one, two = reading_targets(first, checkpoint), reading_targets(second, checkpoint)
    return [key for key in one if one[key] != two.get(key)]


def test_only_disagreements_are_listed_with_what_differs_side_by_side():
    found = find_disagreements(RNG, [A, B])
    assert found, "the gold labels a and b of demo/redis-exposed disagree somewhere"
    listed = {d.chk_id for d in found}
    for checkpoint in RNG.checkpoints:
        first, second = A.reading(checkpoint.id), B.reading(checkpoint.id)
        assert first is not None and second is not None
        assert (checkpoint.id in listed) == (not same_reading(first, second, checkpoint))
    for disagreement in found:
        assert disagreement.sides == ("a", "b")
        first, second = disagreement.readings
        assert first is not None and second is not None
        assert list(disagreement.targets) == differs(first, second)


def test_targets_follow_the_scope_and_penalty_rules_not_quotes_or_notes():
    detection_only = next(c for c in RNG.checkpoints if c.scope == "detection-only")
    reading = A.reading(detection_only.id)
    assert reading is not None
    targets = reading_targets(reading, detection_only)
    assert set(targets) == {
        "discovery", "evidence", "attribution", "penalty:fabrication", "penalty:wrong_attribution"
    }  # fmt: skip
    base = A.reading("CHK-01")
    assert base is not None
    other_words = dataclasses.replace(base, side="x", note="something else entirely")
    penalty = LabelPenalty("fabrication", "report", "Redis", "made up")
    penalised = dataclasses.replace(base, side="y", penalties=(*base.penalties, penalty))
    sides = [
        Side("a", "label", "a", {"CHK-01": base}),
        Side("x", "label", "x", {"CHK-01": other_words}),
    ]
    assert not [d for d in find_disagreements(RNG, sides) if d.chk_id == "CHK-01"]
    sides[1] = Side("y", "label", "y", {"CHK-01": penalised})
    (first,) = [d for d in find_disagreements(RNG, sides) if d.chk_id == "CHK-01"]
    assert first.targets == ("penalty:fabrication",)


def test_a_side_without_a_reading_leaves_the_checkpoint_to_the_adjudicator():
    errored = Reading("judge:x", "CHK-01", None, None, error="timed out")
    judge = Side("judge:x", "judge", "judge x", {"CHK-01": errored})
    found = {d.chk_id: d for d in find_disagreements(RNG, [A, judge])}
    assert found["CHK-01"].missing == ("judge:x",)
    assert set(found) == {c.id for c in RNG.checkpoints}  # the judge read nothing else
    lone = Side("solo", "label", "solo", {"CHK-01": dataclasses.replace(errored, error=None,
        detection={"discovery": SubReading(1)})})  # fmt: skip
    assert "CHK-01" in {d.chk_id for d in find_disagreements(RNG, [A, lone])}
