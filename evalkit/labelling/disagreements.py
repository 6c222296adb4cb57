"""Disagreements: the checkpoints two or more sides read differently.

Sides are compared as calibration compares a judge with a label: on each
sub-score the checkpoint's scope has, and on each penalty rule whose dimension
the checkpoint has (applied or not; the quotes and details may differ without
a disagreement). Notes and borderline flags are shown, never compared. A side
that has no reading of a checkpoint (a judge that errored on it) leaves that
checkpoint to the adjudicator too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Checkpoint, Range
from ..penalties import PENALTY_TABLE
from .readings import Reading, Side

__all__ = ["Disagreement", "find_disagreements", "reading_targets", "same_reading"]


@dataclass(frozen=True)
class Disagreement:
    chk_id: str
    targets: tuple[str, ...]  # sub-scores and "penalty:<rule>" on which the sides differ
    readings: tuple[Reading | None, ...]  # one per side, in the sides' order
    sides: tuple[str, ...]
    missing: tuple[str, ...] = ()  # sides with no reading of it (errored, absent)


def reading_targets(reading: Reading, checkpoint: Checkpoint) -> dict[str, int | None]:
    """``target -> value`` of one reading: the sub-scores of the checkpoint's scope, and
    ``penalty:<rule>`` (0 or 1) for every rule whose dimension the checkpoint has."""
    targets: dict[str, int | None] = {}
    for dimension, applies in (
        ("detection", checkpoint.has_detection),
        ("plan", checkpoint.has_plan),
    ):
        if applies:
            targets.update(reading.values(dimension) or {})
    rules = {penalty.rule for penalty in reading.penalties}
    for spec in PENALTY_TABLE:
        applies = checkpoint.has_detection if spec.dimension == "detection" else checkpoint.has_plan
        if applies:
            targets[f"penalty:{spec.name}"] = int(spec.name in rules)
    return targets


def same_reading(first: Reading, second: Reading, checkpoint: Checkpoint) -> bool:
    return reading_targets(first, checkpoint) == reading_targets(second, checkpoint)


def find_disagreements(rng: Range, sides: Sequence[Side]) -> tuple[Disagreement, ...]:
    """Every checkpoint of ``rng`` (checklist order) the ``sides`` do not read alike."""
    names = tuple(side.name for side in sides)
    found: list[Disagreement] = []
    for checkpoint in rng.checkpoints:
        readings = tuple(side.reading(checkpoint.id) for side in sides)
        missing = tuple(
            name
            for name, reading in zip(names, readings, strict=True)
            if reading is None or reading.error is not None
        )
        present = [r for r in readings if r is not None and r.error is None]
        values = [reading_targets(reading, checkpoint) for reading in present]
        keys = list(dict.fromkeys(key for value in values for key in value))
        targets = tuple(key for key in keys if len({value.get(key) for value in values}) > 1)
        if targets or missing:
            found.append(Disagreement(checkpoint.id, targets, readings, names, missing))
    return tuple(found)
