"""Adjudication: one label that resolves the disagreements of two or more sides.

:func:`start_adjudication` makes a draft (:mod:`evalkit.labelling.drafts`) of
the adjudicated label: every checkpoint the sides read alike is taken as they
read it (``resolution: agreed``); every disagreement is left open, unset, for
the researcher to resolve by taking a side (:func:`take_side`) or editing
(the draft's own setters). :func:`settle` names what each resolved checkpoint
finally is (the side taken, if the reading is still that side's; ``agreed``;
else ``edited``) before :func:`evalkit.labelling.store.finalise` writes it as
``labels/<name>.json`` with ``resolves`` listing the sides; ``evalkit
validate`` holds it to the labels it names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..errors import LabelError
from ..gold_labels import RESOLUTION_AGREED, RESOLUTION_EDITED, LabelPenalty
from ..model import Checkpoint, Range
from .disagreements import Disagreement, find_disagreements, reading_targets
from .drafts import CheckpointDraft, LabelDraft, go_to, new_draft
from .readings import Reading, Side, SubReading

__all__ = [
    "ADJUDICATED",
    "apply_reading",
    "draft_targets",
    "resolution_of",
    "settle",
    "start_adjudication",
    "take_side",
]

ADJUDICATED = "adjudicated"


def _values(reading: Reading, dimension: str) -> dict[str, int | None] | None:
    return reading.values(dimension)


def apply_reading(item: CheckpointDraft, reading: Reading) -> CheckpointDraft:
    """``item`` holding ``reading``'s sub-scores, penalties, note and borderline flag."""
    detection = _values(reading, "detection") if item.detection is not None else None
    plan = _values(reading, "plan") if item.plan is not None else None
    return dataclasses.replace(
        item,
        detection=detection if detection is not None else item.detection,
        plan=plan if plan is not None else item.plan,
        penalties=reading.penalties,
        note=reading.note,
        borderline=reading.borderline,
    )


def start_adjudication(
    rng: Range,
    run_id: str,
    sides: Sequence[Side],
    *,
    created: str,
    name: str = ADJUDICATED,
) -> tuple[LabelDraft, tuple[Disagreement, ...]]:
    """The draft of the adjudicated label ``name`` and the disagreements it must resolve."""
    if len(sides) < 2:
        raise LabelError("adjudication needs two or more sides (labels, or a judge and a label)")
    if name in {side.name for side in sides}:
        raise LabelError(f"the adjudicated label cannot be named after a side ({name!r})")
    disagreements = find_disagreements(rng, sides)
    open_ids = {d.chk_id for d in disagreements}
    draft = new_draft(rng, run_id, name, created=created, blind=False)
    # Agreed checkpoints read as a label side reads them (a label's quotes and note first).
    ordered = sorted(sides, key=lambda side: side.kind != "label")
    items = []
    for item in draft.checkpoints:
        if item.chk_id in open_ids:
            items.append(dataclasses.replace(item, seen=False))
            continue
        reading = next(r for side in ordered if (r := side.reading(item.chk_id)) is not None)
        items.append(
            dataclasses.replace(
                apply_reading(item, reading), seen=True, resolution=RESOLUTION_AGREED
            )
        )
    first = disagreements[0].chk_id if disagreements else draft.checkpoints[0].chk_id
    draft = dataclasses.replace(
        draft,
        checkpoints=tuple(items),
        resolves=tuple(side.name for side in sides),
        position=first,
    )
    return go_to(draft, first), disagreements


def take_side(draft: LabelDraft, chk_id: str, reading: Reading) -> LabelDraft:
    """Resolve ``chk_id`` by ``reading``'s side: its sub-scores, penalties and note."""
    if reading.error is not None:
        raise LabelError(f"{reading.side} has no reading of it ({reading.error})", item=chk_id)
    if reading.side not in draft.resolves:
        raise LabelError(f"{reading.side} is not a side of this adjudication", item=chk_id)
    item = apply_reading(draft.item(chk_id), reading)
    item = dataclasses.replace(item, resolution=reading.side, seen=True)
    return dataclasses.replace(
        draft,
        checkpoints=tuple(item if i.chk_id == chk_id else i for i in draft.checkpoints),
    )


def _as_reading(item: CheckpointDraft, side: str) -> Reading:
    def subs(values: object) -> dict[str, SubReading] | None:
        if not isinstance(values, dict):
            return None
        return {name: SubReading(value=value) for name, value in values.items()}

    return Reading(
        side=side,
        chk_id=item.chk_id,
        detection=subs(dict(item.detection) if item.detection is not None else None),
        plan=subs(dict(item.plan) if item.plan is not None else None),
        penalties=tuple(LabelPenalty(p.rule, p.source, p.quote, p.detail) for p in item.penalties),
    )


def draft_targets(item: CheckpointDraft, checkpoint: Checkpoint) -> dict[str, int | None]:
    """``target -> value`` of the adjudicated reading, as :func:`reading_targets` gives a
    side's: what a disagreement compares."""
    return reading_targets(_as_reading(item, ""), checkpoint)


def resolution_of(item: CheckpointDraft, rng: Range, sides: Sequence[Side]) -> str | None:
    """What ``item`` resolves to now: None while untouched (open, with sub-scores
    unset); the side it was taken from while it still reads as that side;
    ``agreed`` while it reads as every side; else ``edited``."""
    if item.resolution is None:
        values = [*(item.detection or {}).values(), *(item.plan or {}).values()]
        if all(value is None for value in values):
            return None
    checkpoint = rng.checkpoint(item.chk_id)
    mine = draft_targets(item, checkpoint)
    matching = [
        side.name
        for side in sides
        if (r := side.reading(item.chk_id)) is not None
        and r.error is None
        and reading_targets(r, checkpoint) == mine
    ]
    if item.resolution == RESOLUTION_AGREED and len(matching) == len(sides):
        return RESOLUTION_AGREED
    if item.resolution in matching:
        return item.resolution
    return RESOLUTION_EDITED


def settle(draft: LabelDraft, rng: Range, sides: Sequence[Side]) -> LabelDraft:
    """Every checkpoint's resolution as :func:`resolution_of` names it now."""
    return dataclasses.replace(
        draft,
        checkpoints=tuple(
            dataclasses.replace(item, resolution=resolution_of(item, rng, sides))
            for item in draft.checkpoints
        ),
    )
