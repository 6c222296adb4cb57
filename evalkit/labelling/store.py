"""Drafts and labels on disk: autosave, resume, finalise.

Beside the label ``runs/<run>/<range>/labels/<labeller>.json`` its draft is
``<labeller>.json.draft``: a name no label reader globs (``*.json``), so a
draft is never taken for a label. Every change is saved at once, atomically,
through :func:`evalkit.fileio.write_text_atomic`. :func:`open_draft` resumes
the draft where the labeller stopped, else reopens their label, else starts a
new one (pre-filled from a side when asked). :func:`finalise` writes the label
only when the draft is finished and :func:`evalkit.gold_labels.check_labels` finds
no problem in it; it then removes the draft.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from ..bounded import parse_json
from ..errors import LabelError, OutputError, RunError
from ..fileio import read_confined, write_text_atomic
from ..gold_labels import LABELS_DIRNAME, LabelPenalty, check_labels, label_data, load_labels
from ..model import Range, Submission
from .drafts import CheckpointDraft, LabelDraft, draft_from_labels, go_to, new_draft, rebase
from .drafts import to_labels as draft_to_labels
from .readings import Side

__all__ = [
    "DRAFT_SUFFIX",
    "DRAFT_VERSION",
    "Finalised",
    "Opened",
    "discard_draft",
    "draft_from_json",
    "draft_path",
    "draft_to_json",
    "finalise",
    "label_path",
    "load_draft",
    "open_draft",
    "prefilled_draft",
    "save_draft",
]

DRAFT_SUFFIX = ".json.draft"
DRAFT_VERSION = 1


def label_path(runs_dir: str | Path, run_id: str, range_id: str, labeller: str) -> Path:
    return Path(runs_dir) / run_id / range_id / LABELS_DIRNAME / f"{labeller}.json"


def draft_path(runs_dir: str | Path, run_id: str, range_id: str, labeller: str) -> Path:
    return Path(runs_dir) / run_id / range_id / LABELS_DIRNAME / f"{labeller}{DRAFT_SUFFIX}"


def today() -> str:
    return date.today().isoformat()


# --------------------------------------------------------------------------- JSON


def draft_to_json(draft: LabelDraft) -> dict[str, Any]:
    def dimension(values: Mapping[str, int | None] | None) -> dict[str, int | None] | None:
        return dict(values) if values is not None else None

    return {
        "draft_version": DRAFT_VERSION,
        "labeller": draft.labeller,
        "range": draft.range_id,
        "run_id": draft.run_id,
        "checklist_sha256": draft.checklist_sha256,
        "created": draft.created,
        "blind": draft.blind,
        "prefilled_from": draft.prefilled_from,
        "resolves": list(draft.resolves),
        "position": draft.position,
        "checkpoints": [
            {
                "chk_id": item.chk_id,
                "detection": dimension(item.detection),
                "plan": dimension(item.plan),
                "penalties": [
                    {"rule": p.rule, "source": p.source, "quote": p.quote, "detail": p.detail}
                    for p in item.penalties
                ],
                "note": item.note,
                "borderline": item.borderline,
                "seen": item.seen,
                "resolution": item.resolution,
            }
            for item in draft.checkpoints
        ],
    }


def draft_from_json(data: Any, path: Path | None = None) -> LabelDraft:
    """A draft from its JSON; anything else is a LabelError naming the file."""
    try:
        if data.get("draft_version") != DRAFT_VERSION:
            raise LabelError(f"not a version {DRAFT_VERSION} label draft", path=path)
        return LabelDraft(
            labeller=str(data["labeller"]),
            run_id=str(data["run_id"]),
            range_id=str(data["range"]),
            checklist_sha256=str(data["checklist_sha256"]),
            created=str(data["created"]),
            blind=bool(data["blind"]),
            prefilled_from=data.get("prefilled_from"),
            resolves=tuple(data.get("resolves") or ()),
            position=str(data["position"]),
            checkpoints=tuple(
                CheckpointDraft(
                    chk_id=str(raw["chk_id"]),
                    detection=_scores(raw["detection"]),
                    plan=_scores(raw["plan"]),
                    penalties=tuple(
                        LabelPenalty(
                            rule=str(p["rule"]),
                            source=str(p["source"]),
                            quote=str(p["quote"]),
                            detail=str(p["detail"]),
                        )
                        for p in raw["penalties"]
                    ),  # fmt: skip
                    note=str(raw.get("note", "")),
                    borderline=bool(raw.get("borderline", False)),
                    seen=bool(raw.get("seen", False)),
                    resolution=raw.get("resolution"),
                )
                for raw in data["checkpoints"]
            ),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise LabelError(f"not a label draft ({type(exc).__name__}: {exc})", path=path) from None


def _scores(raw: Any) -> dict[str, int | None] | None:
    if raw is None:
        return None
    scores: dict[str, int | None] = {}
    for name, value in dict(raw).items():
        if value not in (0, 1, None) or isinstance(value, bool):
            raise ValueError(f"{name} is {value!r}, not 0, 1 or null")
        scores[str(name)] = value
    return scores


# --------------------------------------------------------------------------- files


def save_draft(runs_dir: str | Path, draft: LabelDraft) -> Path:
    """Write the draft beside its label, atomically; return its path."""
    path = draft_path(runs_dir, draft.run_id, draft.range_id, draft.labeller)
    text = json.dumps(draft_to_json(draft), indent=2, ensure_ascii=False) + "\n"
    return write_text_atomic(path, text, root=runs_dir)


def load_draft(path: Path, *, root: str | Path | None = None) -> LabelDraft | None:
    """The draft at ``path``, or None when there is none; read without following a link
    out of ``root`` (default: the path itself) and parsed within the bounds."""
    try:
        raw = read_confined(path, root if root is not None else path)
    except FileNotFoundError:
        return None
    except (OSError, RunError) as exc:
        raise LabelError(f"cannot read the draft: {exc}", path=path) from exc
    return draft_from_json(parse_json(raw, path=path, error=LabelError), Path(path))


def discard_draft(runs_dir: str | Path, draft: LabelDraft) -> bool:
    """Remove the draft file (True when there was one)."""
    path = draft_path(runs_dir, draft.run_id, draft.range_id, draft.labeller)
    try:
        if path.is_symlink() or not path.is_file():
            return False
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


@dataclass(frozen=True)
class Opened:
    draft: LabelDraft
    how: str  # "resumed", "label" or "new"
    message: str  # one line for the labeller


def prefilled_draft(
    rng: Range, run_id: str, labeller: str, side: Side, *, created: str
) -> LabelDraft:
    """A new draft holding ``side``'s reading of every checkpoint it read (pre-fill).

    It records ``prefilled_from``; a label side makes it not blind. Every checkpoint
    is still to be seen, so nothing is finalised unread.
    """
    from .adjudication import apply_reading

    draft = new_draft(rng, run_id, labeller, created=created, blind=side.kind != "label")
    items = []
    for item in draft.checkpoints:
        reading = side.reading(item.chk_id)
        if reading is not None and reading.error is None:
            item = apply_reading(item, reading)
        items.append(dataclasses.replace(item, seen=False))
    filled = dataclasses.replace(draft, checkpoints=tuple(items), prefilled_from=side.name)
    return go_to(filled, filled.position)


def open_draft(
    runs_dir: str | Path,
    rng: Range,
    run_id: str,
    labeller: str,
    *,
    prefill: Side | None = None,
    created: str | None = None,
) -> Opened:
    """Resume ``labeller``'s draft of the pair, else reopen their label, else start one.

    A draft or label is fitted to today's checklist (:func:`~.drafts.rebase`), and
    the message says what changed. ``prefill`` applies only to a new draft.
    """
    created = created or today()
    draft_file = draft_path(runs_dir, run_id, rng.id, labeller)
    draft = load_draft(draft_file, root=Path(runs_dir))
    if draft is not None:
        draft, changes = rebase(draft, rng)
        message = f"resumed the draft {draft_file.name} at {draft.position}"
        if prefill is not None:
            message += f" (a draft exists, so it was not pre-filled from {prefill.name})"
        return Opened(go_to(draft, draft.position), "resumed", "; ".join([message, *changes]))
    label_file = label_path(runs_dir, run_id, rng.id, labeller)
    if label_file.is_file():
        labels = load_labels(label_file, root=Path(runs_dir))
        draft = draft_from_labels(labels, rng, labeller, created=created)
        return Opened(draft, "label", f"opened the label {label_file.name} to edit it")
    if prefill is not None:
        draft = prefilled_draft(rng, run_id, labeller, prefill, created=created)
        return Opened(draft, "new", f"new label, pre-filled from {prefill.name}")
    draft = new_draft(rng, run_id, labeller, created=created)
    return Opened(draft, "new", "new label")


@dataclass(frozen=True)
class Finalised:
    path: Path | None  # the label written, or None when it was refused
    problems: tuple[str, ...]  # why it was refused: unfinished, or check_labels' problems

    @property
    def ok(self) -> bool:
        return self.path is not None


def finalise(
    runs_dir: str | Path,
    draft: LabelDraft,
    rng: Range,
    submission: Submission,
    *,
    created: str | None = None,
) -> Finalised:
    """Write ``labels/<labeller>.json`` when the draft is finished and
    :func:`~evalkit.gold_labels.check_labels` finds no problem; then remove the draft.

    Otherwise nothing is written and the problems are returned; the draft keeps
    what is unfinished.
    """
    path = label_path(runs_dir, draft.run_id, draft.range_id, draft.labeller)
    try:
        labels = draft_to_labels(draft, path, created=created or today())
    except LabelError as exc:
        return Finalised(None, tuple(exc.problems))
    problems = check_labels(labels, rng, submission)
    if problems:
        return Finalised(None, tuple(problems))
    text = json.dumps(label_data(labels), indent=2, ensure_ascii=False) + "\n"
    try:
        write_text_atomic(path, text, root=runs_dir)
    except OutputError as exc:
        return Finalised(None, (str(exc),))
    discard_draft(runs_dir, draft)
    return Finalised(path, ())
