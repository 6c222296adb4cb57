"""Label drafts: a label being written, one checkpoint at a time.

A :class:`LabelDraft` holds what a label file holds, and what is not finished
yet: a sub-score may be unset (``None``), a checkpoint may not have been shown
to the labeller yet (``seen``), and an adjudicated checkpoint may be
unresolved. It also remembers the checkpoint the labeller is at, so reopening
continues there. Every change is a pure function returning a new draft;
:mod:`evalkit.labelling.store` saves them, and :func:`to_labels` turns a
finished one into a :class:`~evalkit.gold_labels.LabelSet`, through the label
format's own schema check (:func:`evalkit.gold_labels.label_from_data`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import LabelError
from ..gold_labels import JUDGE_SIDE_PREFIX, LabelPenalty, LabelSet, label_from_data, label_json
from ..model import DETECTION_SUBSCORES, PLAN_SUBSCORES, Checkpoint, Range

__all__ = [
    "SUBSCORE_ORDER",
    "CheckpointDraft",
    "LabelDraft",
    "add_penalty",
    "draft_from_labels",
    "go_to",
    "new_draft",
    "rebase",
    "remove_penalty",
    "set_borderline",
    "set_note",
    "set_resolution",
    "set_subscore",
    "side_is_judge",
    "step",
    "to_label_data",
    "to_labels",
    "toggle_subscore",
    "unfinished",
]

# The sub-scores in the order the notebook shows them, and the keys 1-5 toggle them.
SUBSCORE_ORDER: tuple[tuple[str, str], ...] = (
    *(("detection", name) for name in DETECTION_SUBSCORES),
    *(("plan", name) for name in PLAN_SUBSCORES),
)


@dataclass(frozen=True)
class CheckpointDraft:
    """One checkpoint as drafted; a dimension is None where the scope makes it N/A."""

    chk_id: str
    detection: Mapping[str, int | None] | None
    plan: Mapping[str, int | None] | None
    penalties: tuple[LabelPenalty, ...] = ()
    note: str = ""
    borderline: bool = False
    seen: bool = False  # shown to the labeller at least once
    resolution: str | None = None  # adjudication: agreed, edited, the side taken; None: open

    def dimension(self, name: str) -> Mapping[str, int | None] | None:
        return self.detection if name == "detection" else self.plan


@dataclass(frozen=True)
class LabelDraft:
    """A label being written (see the module docstring)."""

    labeller: str
    run_id: str
    range_id: str
    checklist_sha256: str
    created: str
    blind: bool
    checkpoints: tuple[CheckpointDraft, ...]
    position: str  # the checkpoint the labeller is at
    prefilled_from: str | None = None
    resolves: tuple[str, ...] = ()

    def item(self, chk_id: str) -> CheckpointDraft:
        for item in self.checkpoints:
            if item.chk_id == chk_id:
                return item
        raise LabelError("not a checkpoint of the draft", item=chk_id)

    @property
    def current(self) -> CheckpointDraft:
        return self.item(self.position)

    @property
    def index(self) -> int:
        return [item.chk_id for item in self.checkpoints].index(self.position)


def _blank(checkpoint: Checkpoint) -> CheckpointDraft:
    return CheckpointDraft(
        chk_id=checkpoint.id,
        detection=dict.fromkeys(DETECTION_SUBSCORES) if checkpoint.has_detection else None,
        plan=dict.fromkeys(PLAN_SUBSCORES) if checkpoint.has_plan else None,
    )


def new_draft(
    rng: Range, run_id: str, labeller: str, *, created: str, blind: bool = True
) -> LabelDraft:
    """An empty draft of every checkpoint of ``rng``, at the first one (seen)."""
    if not rng.checkpoints:
        raise LabelError(f"the {rng.id} checklist has no checkpoint to label")
    draft = LabelDraft(
        labeller=labeller,
        run_id=run_id,
        range_id=rng.id,
        checklist_sha256=rng.sha256 or "",
        created=created,
        blind=blind,
        checkpoints=tuple(_blank(checkpoint) for checkpoint in rng.checkpoints),
        position=rng.checkpoints[0].id,
    )
    return go_to(draft, draft.position)


def draft_from_labels(labels: LabelSet, rng: Range, labeller: str, *, created: str) -> LabelDraft:
    """A draft holding ``labels``' reading, to be finished by ``labeller``.

    The labeller's own label is reopened as it was (every checkpoint seen). Another
    labeller's label is a pre-fill: recorded as ``prefilled_from``, not blind, and
    every checkpoint still to be seen. The draft follows today's checklist
    (:func:`rebase`).
    """
    own = labels.labeller == labeller
    items = {item.chk_id: item for item in labels.items}
    checkpoints = []
    for checkpoint in rng.checkpoints:
        item = items.get(checkpoint.id)
        blank = _blank(checkpoint)
        if item is None:
            checkpoints.append(blank)
            continue
        checkpoints.append(
            dataclasses.replace(
                blank,
                detection=_fill(blank.detection, item.detection),
                plan=_fill(blank.plan, item.plan),
                penalties=item.penalties,
                note=item.note,
                borderline=item.borderline,
                seen=own,
                resolution=item.resolution if own else None,
            )
        )
    draft = LabelDraft(
        labeller=labeller,
        run_id=labels.run_id,
        range_id=labels.range_id,
        checklist_sha256=labels.checklist_sha256 if own else rng.sha256 or "",
        created=labels.created if own and labels.created else created,
        blind=labels.blind if own else False,
        checkpoints=tuple(checkpoints),
        position=rng.checkpoints[0].id,
        prefilled_from=labels.prefilled_from if own else labels.labeller,
        resolves=labels.resolves if own else (),
    )
    return go_to(rebase(draft, rng)[0], draft.position)


def _fill(
    blank: Mapping[str, int | None] | None, values: Mapping[str, int] | None
) -> dict[str, int | None] | None:
    """``blank``'s sub-scores, with the values ``values`` has for them."""
    if blank is None:
        return None
    return {name: (values or {}).get(name) for name in blank}


def rebase(draft: LabelDraft, rng: Range) -> tuple[LabelDraft, list[str]]:
    """``draft`` fitted to today's checklist, and what changed, one line each.

    A checkpoint new to the checklist is added unset, one gone from it is
    dropped, a dimension whose scope changed is reset. When the checklist's hash
    differs from the draft's, the criteria may have changed under the labeller's
    feet: the hash is renewed and every checkpoint must be seen again.
    """
    changes: list[str] = []
    current = rng.sha256 or ""
    stale = draft.checklist_sha256 != current
    if stale:
        changes.append(
            f"the {rng.id} checklist changed since this draft began: every checkpoint is to be"
            " seen again before the label can be finalised"
        )
    items = {item.chk_id: item for item in draft.checkpoints}
    fitted: list[CheckpointDraft] = []
    for checkpoint in rng.checkpoints:
        blank = _blank(checkpoint)
        item = items.pop(checkpoint.id, None)
        if item is None:
            changes.append(f"{checkpoint.id}: new in the checklist, added unset")
            fitted.append(blank)
            continue
        detection, plan = item.detection, item.plan
        if (detection is None) != (blank.detection is None) or (plan is None) != (
            blank.plan is None
        ):
            changes.append(
                f"{checkpoint.id}: its scope is now {checkpoint.scope}; sub-scores reset"
            )
            detection, plan = blank.detection, blank.plan
        fitted.append(
            dataclasses.replace(item, detection=detection, plan=plan, seen=item.seen and not stale)
        )
    changes += [f"{chk_id}: no longer in the checklist, dropped" for chk_id in items]
    position = draft.position if draft.position in {c.id for c in rng.checkpoints} else ""
    rebased = dataclasses.replace(
        draft,
        checklist_sha256=current,
        checkpoints=tuple(fitted),
        position=position or rng.checkpoints[0].id,
    )
    return rebased, changes


# --------------------------------------------------------------------------- changes


def _update(draft: LabelDraft, chk_id: str, **changes: object) -> LabelDraft:
    draft.item(chk_id)  # an unknown checkpoint is a LabelError
    return dataclasses.replace(
        draft,
        checkpoints=tuple(
            dataclasses.replace(item, **changes) if item.chk_id == chk_id else item  # type: ignore[arg-type]
            for item in draft.checkpoints
        ),
    )


def _dimension_of(name: str) -> str:
    for dimension, sub in SUBSCORE_ORDER:
        if sub == name:
            return dimension
    raise LabelError(f"unknown sub-score {name!r}")


def set_subscore(draft: LabelDraft, chk_id: str, name: str, value: int | None) -> LabelDraft:
    """Set one sub-score to 0 or 1 (None unsets it); N/A by scope is a LabelError."""
    if value not in (0, 1, None):
        raise LabelError(f"a sub-score is 0 or 1, not {value!r}", item=chk_id)
    dimension = _dimension_of(name)
    values = draft.item(chk_id).dimension(dimension)
    if values is None:
        raise LabelError(f"{name} is N/A for this checkpoint's scope", item=chk_id)
    return _update(draft, chk_id, **{dimension: {**values, name: value}})


def toggle_subscore(draft: LabelDraft, chk_id: str, name: str) -> LabelDraft:
    """Unset or 0 becomes 1, 1 becomes 0."""
    values = draft.item(chk_id).dimension(_dimension_of(name))
    value = values.get(name) if values is not None else None
    return set_subscore(draft, chk_id, name, 0 if value == 1 else 1)


def add_penalty(draft: LabelDraft, chk_id: str, penalty: LabelPenalty) -> LabelDraft:
    """Add a penalty (check it first: :func:`evalkit.labelling.quotes.check_penalty_quote`)."""
    penalties = draft.item(chk_id).penalties
    if penalty in penalties:
        return draft
    return _update(draft, chk_id, penalties=(*penalties, penalty))


def remove_penalty(draft: LabelDraft, chk_id: str, index: int) -> LabelDraft:
    penalties = list(draft.item(chk_id).penalties)
    if not 0 <= index < len(penalties):
        raise LabelError(f"there is no penalty {index + 1}", item=chk_id)
    del penalties[index]
    return _update(draft, chk_id, penalties=tuple(penalties))


def set_note(draft: LabelDraft, chk_id: str, note: str) -> LabelDraft:
    return _update(draft, chk_id, note=note)


def set_borderline(draft: LabelDraft, chk_id: str, borderline: bool) -> LabelDraft:
    return _update(draft, chk_id, borderline=bool(borderline))


def set_resolution(draft: LabelDraft, chk_id: str, resolution: str | None) -> LabelDraft:
    return _update(draft, chk_id, resolution=resolution)


def go_to(draft: LabelDraft, chk_id: str) -> LabelDraft:
    """Move to ``chk_id``; it is now seen."""
    return dataclasses.replace(_update(draft, chk_id, seen=True), position=chk_id)


def step(draft: LabelDraft, delta: int) -> LabelDraft:
    """Move ``delta`` checkpoints on (or back), stopping at either end."""
    index = min(max(draft.index + delta, 0), len(draft.checkpoints) - 1)
    return go_to(draft, draft.checkpoints[index].chk_id)


# --------------------------------------------------------------------------- finishing


def unfinished(draft: LabelDraft) -> list[str]:
    """What keeps the draft from being a label, one line per checkpoint: unset
    sub-scores, a checkpoint not yet seen, an adjudicated one not yet resolved."""
    lines = []
    for item in draft.checkpoints:
        missing = [
            name
            for dimension in ("detection", "plan")
            for name, value in (item.dimension(dimension) or {}).items()
            if value is None
        ]
        parts = []
        if missing:
            parts.append(f"{', '.join(missing)} not set")
        if not item.seen:
            parts.append("not yet seen")
        if draft.resolves and item.resolution is None:
            parts.append("disagreement not resolved")
        if parts:
            lines.append(f"{item.chk_id}: {'; '.join(parts)}")
    return lines


def to_label_data(draft: LabelDraft, *, created: str | None = None) -> dict[str, object]:
    """The label file's JSON object; unset sub-scores stay null (the schema refuses them)."""
    return label_json(
        draft, draft.checkpoints, created=created, open_resolutions=bool(draft.resolves)
    )


def to_labels(draft: LabelDraft, path: Path, *, created: str | None = None) -> LabelSet:
    """The finished draft as the label file ``path`` would hold it.

    An unfinished draft (:func:`unfinished`) or one the label schema refuses is a
    LabelError carrying every problem in ``problems``.
    """
    lines = unfinished(draft)
    if lines:
        raise LabelError(lines[0], path=path, problems=lines)
    return label_from_data(to_label_data(draft, created=created), path)


def side_is_judge(side: str) -> bool:
    return side.startswith(JUDGE_SIDE_PREFIX)
