"""Gold labels: a careful human's sub-scores for one (run, range) pair.

A label file lives beside the documents it judges,
``runs/<run>/<range>/labels/<labeller>.json`` (format: ``docs/labels.md``,
schema: ``evalkit/schemas/labels.schema.json``). It records every checkpoint's
sub-scores *before* penalties, the penalties with their verbatim quotes, and a
short note; ``evalkit calibrate`` measures judges against these files.

:func:`load_labels` checks a file against the schema; :func:`check_labels`
checks it against its checklist and documents (coverage, N/A scopes, quotes,
checklist hash, folder, and for an adjudicated label the labels it resolves);
:func:`validate_label_files` is what ``evalkit validate`` runs on them. They
are the one home of these checks: the labelling notebook
(:mod:`evalkit.labelling`) calls them before it writes a label, never a copy.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from jsonschema import Draft202012Validator

from .bounded import check_name, parse_json
from .checklist import load_range
from .errors import EvalkitError, LabelError, RunError
from .fileio import read_confined
from .grounding import Sources
from .model import Range, SourceName, Submission
from .penalties import PENALTY_SOURCES, penalty_rule
from .runs import load_submission

if TYPE_CHECKING:
    from .workspace import Workspace

__all__ = [
    "JUDGE_SIDE_PREFIX",
    "LABELS_DIRNAME",
    "RESOLUTION_AGREED",
    "RESOLUTION_EDITED",
    "ItemLabel",
    "LabelHeader",
    "LabelPenalty",
    "LabelSet",
    "LabelledCheckpoint",
    "check_labels",
    "check_penalty",
    "find_label_files",
    "find_labels",
    "label_data",
    "label_json",
    "label_from_data",
    "labelled_pairs",
    "load_labels",
    "penalty_problems",
    "validate_label_files",
]

LABELS_DIRNAME = "labels"
SCHEMA_RESOURCE = "schemas/labels.schema.json"
# A side of an adjudication is a labeller's name or "judge:<evaluation folder>".
JUDGE_SIDE_PREFIX = "judge:"
# An adjudicated checkpoint's resolution: every side agreed, the adjudicator edited it,
# or the name of the side taken.
RESOLUTION_AGREED = "agreed"
RESOLUTION_EDITED = "edited"


@dataclass(frozen=True)
class LabelPenalty:
    """A penalty the labeller applies: its rule, document, verbatim quote and why."""

    rule: str
    source: str
    quote: str
    detail: str


@dataclass(frozen=True)
class ItemLabel:
    """One checkpoint as labelled; sub-scores are before penalties, None where N/A."""

    chk_id: str
    detection: Mapping[str, int] | None
    plan: Mapping[str, int] | None
    penalties: tuple[LabelPenalty, ...]
    note: str
    borderline: bool = False  # a careful reader could score it differently
    resolution: str | None = None  # adjudicated labels: agreed, edited or the side taken


@dataclass(frozen=True)
class LabelSet:
    """One label file: one labeller's reading of one (run, range) pair."""

    labeller: str
    range_id: str
    run_id: str
    checklist_sha256: str
    blind: bool
    items: tuple[ItemLabel, ...]
    path: Path
    created: str = ""
    # Where the labelling notebook's pre-filled values came from (a labeller, or
    # "judge:<folder>" for an evaluation's verdicts); None when labelled from scratch.
    prefilled_from: str | None = None
    # An adjudicated label: the sides (labellers, "judge:<folder>") whose disagreements
    # it resolves; () for an ordinary label.
    resolves: tuple[str, ...] = ()

    def item(self, chk_id: str) -> ItemLabel:
        for item in self.items:
            if item.chk_id == chk_id:
                return item
        raise LabelError(f"no label for {chk_id}", path=self.path, item=chk_id)


# --------------------------------------------------------------------------- reading


@cache
def _validator() -> Draft202012Validator:
    schema = json.loads(files("evalkit").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _json_path(parts: Iterable[str | int]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def load_labels(path: Path, *, root: Path | None = None) -> LabelSet:
    """Read one label file; a file that is not JSON or breaks the schema is a LabelError.

    The error names the file and carries every schema problem in ``problems``. The
    file is read only if it resolves inside ``root`` (default: the path itself), and
    parsed within :mod:`evalkit.bounded`'s bounds (depth, number size).
    """
    path = Path(path)
    try:
        raw = read_confined(path, root if root is not None else path)
    except RunError as exc:
        raise LabelError(exc.message, path=path) from None
    except OSError as exc:
        raise LabelError(f"cannot read label file: {exc.strerror}", path=path) from exc
    return label_from_data(parse_json(raw, path=path, error=LabelError), path)


def _schema_problems(data: Any, validator: Draft202012Validator) -> list[str]:
    errors = sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    return [
        f"schema: {_json_path(e.absolute_path)}: {' '.join(e.message.split())[:200]}"
        for e in errors
    ]


def label_from_data(data: Any, path: Path) -> LabelSet:
    """The :class:`LabelSet` of a label file's JSON ``data``, checked against the schema.

    ``path`` is where the file is (or will be written); a schema problem is a
    LabelError naming it, with every problem in ``problems``.
    """
    path = Path(path)
    problems = _schema_problems(data, _validator())
    if not problems:
        try:
            datetime.date.fromisoformat(data["created"])
        except ValueError:
            problems = [f"schema: $.created: {data['created']!r} is not a date (YYYY-MM-DD)"]
    if problems:
        raise LabelError(problems[0], path=path, problems=problems)
    return LabelSet(
        labeller=data["labeller"],
        range_id=data["range"],
        run_id=data["run_id"],
        checklist_sha256=data["checklist_sha256"],
        blind=data["blind"],
        items=tuple(_item(raw) for raw in data["checkpoints"]),
        path=path,
        created=data["created"],
        prefilled_from=data.get("prefilled_from"),
        resolves=tuple(data.get("resolves", ())),
    )


class LabelHeader(Protocol):
    """What a label file says of itself: a LabelSet, or a draft in the labelling notebook."""

    @property
    def labeller(self) -> str: ...
    @property
    def range_id(self) -> str: ...
    @property
    def run_id(self) -> str: ...
    @property
    def checklist_sha256(self) -> str: ...
    @property
    def created(self) -> str: ...
    @property
    def blind(self) -> bool: ...
    @property
    def prefilled_from(self) -> str | None: ...
    @property
    def resolves(self) -> tuple[str, ...]: ...


class LabelledCheckpoint(Protocol):
    """One checkpoint of a label file: an ItemLabel, or a drafted checkpoint (whose unset
    sub-scores are None, which the schema then refuses)."""

    @property
    def chk_id(self) -> str: ...
    @property
    def detection(self) -> Mapping[str, int | None] | None: ...
    @property
    def plan(self) -> Mapping[str, int | None] | None: ...
    @property
    def penalties(self) -> tuple[LabelPenalty, ...]: ...
    @property
    def note(self) -> str: ...
    @property
    def borderline(self) -> bool: ...
    @property
    def resolution(self) -> str | None: ...


def label_json(
    header: LabelHeader,
    checkpoints: Iterable[LabelledCheckpoint],
    *,
    created: str | None = None,
    open_resolutions: bool = False,
) -> dict[str, Any]:
    """The JSON object of a label file, from its header and its checkpoints.

    The optional keys (``prefilled_from``, ``resolves``, ``borderline``,
    ``resolution``) are written only when they say something, so a label without
    them reads exactly as the format always had it; with ``open_resolutions`` (an
    adjudication being drafted) every checkpoint's ``resolution`` is written, null
    while it is open, so the schema names what is left to resolve.
    """
    data: dict[str, Any] = {
        "schema_version": 1,
        "labeller": header.labeller,
        "range": header.range_id,
        "run_id": header.run_id,
        "checklist_sha256": header.checklist_sha256,
        "created": created or header.created,
        "blind": header.blind,
    }
    if header.prefilled_from is not None:
        data["prefilled_from"] = header.prefilled_from
    if header.resolves:
        data["resolves"] = list(header.resolves)
    items: list[dict[str, Any]] = []
    for item in checkpoints:
        raw: dict[str, Any] = {
            "chk_id": item.chk_id,
            "detection": dict(item.detection) if item.detection is not None else None,
            "plan": dict(item.plan) if item.plan is not None else None,
            "penalties": [
                {"rule": p.rule, "source": p.source, "quote": p.quote, "detail": p.detail}
                for p in item.penalties
            ],
            "note": item.note,
        }
        if item.borderline:
            raw["borderline"] = True
        if open_resolutions or item.resolution is not None:
            raw["resolution"] = item.resolution
        items.append(raw)
    data["checkpoints"] = items
    return data


def label_data(labels: LabelSet) -> dict[str, Any]:
    """The JSON object of a label file (the inverse of :func:`label_from_data`)."""
    return label_json(labels, labels.items)


def _item(raw: Mapping[str, Any]) -> ItemLabel:
    return ItemLabel(
        chk_id=raw["chk_id"],
        detection=dict(raw["detection"]) if raw["detection"] is not None else None,
        plan=dict(raw["plan"]) if raw["plan"] is not None else None,
        penalties=tuple(
            LabelPenalty(rule=p["rule"], source=p["source"], quote=p["quote"], detail=p["detail"])
            for p in raw["penalties"]
        ),
        note=raw["note"],
        borderline=bool(raw.get("borderline", False)),
        resolution=raw.get("resolution"),
    )


def _label_paths(pair_dir: Path) -> list[Path]:
    folder = pair_dir / LABELS_DIRNAME
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def find_labels(runs_dir: Path, run_id: str, range_id: str) -> tuple[LabelSet, ...]:
    """Every label file of one pair, loaded and sorted by labeller (``()`` when none); a
    file, or a ``labels`` folder, that leads out of ``runs_dir`` is a LabelError."""
    loaded = [
        load_labels(path, root=Path(runs_dir))
        for path in _label_paths(Path(runs_dir) / run_id / range_id)
    ]
    return tuple(sorted(loaded, key=lambda labels: labels.labeller))


def labelled_pairs(runs_dir: Path) -> list[tuple[str, str]]:
    """``(run_id, range_id)`` of every pair with at least one label file, sorted."""
    root = Path(runs_dir)
    if not root.is_dir():
        return []
    pairs = {
        (path.parents[2].name, path.parents[1].name)
        for path in root.glob(f"*/*/{LABELS_DIRNAME}/*.json")
        if not any(part.startswith(".") for part in path.relative_to(root).parts)
    }
    return sorted(pairs)


# --------------------------------------------------------------------------- checking


def check_labels(labels: LabelSet, rng: Range, submission: Submission) -> list[str]:
    """Every way ``labels`` does not fit its checklist and documents, one line each.

    Checks: the pair and folder match, the checklist hash is current (a stale
    label is refused), every CHK appears exactly once and no unknown one, the
    nulls match each checkpoint's scope, every penalty quote is verbatim in
    its document (the tolerance judge quotes get, :mod:`evalkit.grounding`),
    a label pre-filled from another label is not blind, and an adjudicated
    label (``resolves``) fits the labels it resolves (:func:`_adjudication_problems`).
    """
    problems: list[str] = []
    problems += _pair_problems(labels, rng, submission)
    current = rng.sha256 or ""
    if labels.checklist_sha256 != current:
        problems.append(
            f"stale label: checklist_sha256 {labels.checklist_sha256[:12]}... does not match"
            f" the current {rng.id} checklist ({current[:12]}...); relabel against it"
        )
    checkpoints = {checkpoint.id: checkpoint for checkpoint in rng.checkpoints}
    seen: set[str] = set()
    for item in labels.items:
        if item.chk_id in seen:
            problems.append(f"{item.chk_id}: labelled more than once")
        seen.add(item.chk_id)
    for chk_id in checkpoints:
        if chk_id not in seen:
            problems.append(f"{chk_id}: missing (every checkpoint of the checklist needs a label)")
    sources = Sources.of(submission)
    for item in labels.items:
        checkpoint = checkpoints.get(item.chk_id)
        if checkpoint is None:
            problems.append(f"{item.chk_id}: not a checkpoint of the {rng.id} checklist")
            continue
        scope = checkpoint.scope
        if (item.detection is None) != (not checkpoint.has_detection):
            expected = "null" if not checkpoint.has_detection else "the three sub-scores"
            problems.append(f"{item.chk_id}: detection must be {expected} for a {scope} checkpoint")
        if (item.plan is None) != (not checkpoint.has_plan):
            expected = "null" if not checkpoint.has_plan else "the two sub-scores"
            problems.append(f"{item.chk_id}: plan must be {expected} for a {scope} checkpoint")
        for penalty in item.penalties:
            problems += penalty_problems(item.chk_id, penalty, checkpoint.scope, sources)
    prefill = labels.prefilled_from
    if prefill is not None and not prefill.startswith(JUDGE_SIDE_PREFIX) and labels.blind:
        problems.append(f"blind is true, but the label was pre-filled from label {prefill!r}")
    problems += _adjudication_problems(labels)
    return problems


def _pair_problems(labels: LabelSet, rng: Range, submission: Submission) -> list[str]:
    problems: list[str] = []
    if labels.range_id != rng.id:
        problems.append(f"range is {labels.range_id!r} but the checklist is {rng.id!r}")
    if labels.run_id != submission.run_id or submission.range_id != rng.id:
        problems.append(
            f"run_id/range {labels.run_id}/{labels.range_id} do not match the documents"
            f" of {submission.run_id}/{submission.range_id}"
        )
    path = labels.path
    if path.parent.name != LABELS_DIRNAME or len(path.parents) < 3:
        problems.append(f"a label file belongs in <run>/<range>/{LABELS_DIRNAME}/")
    else:
        if path.parents[1].name != labels.range_id:
            problems.append(f"range {labels.range_id!r} but the file is under {path.parents[1]}")
        if path.parents[2].name != labels.run_id:
            problems.append(f"run_id {labels.run_id!r} but the file is under {path.parents[2]}")
    if path.stem != labels.labeller:
        problems.append(f"labeller {labels.labeller!r} but the file is named {path.name}")
    return problems


def penalty_problems(chk_id: str, penalty: LabelPenalty, scope: str, sources: Sources) -> list[str]:
    """Why one penalty of checkpoint ``chk_id`` (of ``scope``) cannot stand, one line each:
    a document its rule may not quote, a dimension N/A for the checkpoint, or a quote
    not verbatim in its document. ``[]`` when it stands."""
    problems: list[str] = []
    allowed = PENALTY_SOURCES[penalty.rule]
    if penalty.source not in allowed:
        problems.append(
            f"{chk_id}: a {penalty.rule} penalty quotes the {' or '.join(allowed)},"
            f" not the {penalty.source}"
        )
    dimension = penalty_rule(penalty.rule).dimension
    if (dimension == "detection" and scope == "plan-only") or (
        dimension == "plan" and scope == "detection-only"
    ):
        problems.append(
            f"{chk_id}: a {penalty.rule} penalty acts on the {dimension}, N/A for a {scope}"
            " checkpoint"
        )
    document: tuple[SourceName, ...] = ("report",) if penalty.source == "report" else ("plan",)
    if not sources.check(penalty.quote, document).found:
        problems.append(
            f"{chk_id}: penalty quote not found verbatim in the {penalty.source}: {penalty.quote!r}"
        )
    return problems


@cache
def _penalty_validator() -> Draft202012Validator:
    schema: dict[str, Any] = dict(_validator().schema)  # type: ignore[arg-type]
    return Draft202012Validator({**schema["$defs"]["penalty"], "$defs": schema["$defs"]})


def check_penalty(chk_id: str, data: Mapping[str, Any], scope: str, sources: Sources) -> list[str]:
    """One penalty as a label file would hold it (``rule``, ``source``, ``quote``,
    ``detail``), checked as :func:`check_labels` checks it inside a file: the schema's
    penalty object first, then :func:`penalty_problems`. ``[]`` when it stands."""
    problems = [
        f"{chk_id}: {problem.removeprefix('schema: ')}"
        for problem in _schema_problems(data, _penalty_validator())
    ]
    if problems:
        return problems
    penalty = LabelPenalty(
        rule=data["rule"], source=data["source"], quote=data["quote"], detail=data["detail"]
    )
    return penalty_problems(chk_id, penalty, scope, sources)


def _reading(item: ItemLabel) -> tuple[Any, ...]:
    """What an adjudication compares of a checkpoint: sub-scores and penalty rules."""
    return (
        dict(item.detection) if item.detection is not None else None,
        dict(item.plan) if item.plan is not None else None,
        sorted({penalty.rule for penalty in item.penalties}),
    )


def _adjudication_problems(labels: LabelSet) -> list[str]:
    """An adjudicated label against the labels it resolves (read from beside it).

    ``resolves`` names the sides; each labeller side's file must be beside this one,
    a label cannot resolve itself, and an adjudicator who saw the labels is not
    blind. Every checkpoint records its ``resolution``: ``agreed`` only where every
    labeller side reads it as the adjudicated label does (sub-scores and penalty
    rules), a labeller's name only where that labeller reads it so, ``judge:<folder>``
    (not checked against the evaluation, which may be gone), or ``edited``.
    """
    resolutions = [item for item in labels.items if item.resolution is not None]
    if not labels.resolves:
        return [
            f"{item.chk_id}: a resolution ({item.resolution!r}) but the label resolves nothing"
            " (no resolves)"
            for item in resolutions
        ]
    problems: list[str] = []
    if labels.blind:
        problems.append("an adjudicated label (resolves) cannot be blind")
    if labels.labeller in labels.resolves:
        problems.append(f"label {labels.labeller!r} cannot resolve itself")
    reserved = {RESOLUTION_AGREED, RESOLUTION_EDITED} & set(labels.resolves)
    if reserved:
        problems.append(f"resolves names {sorted(reserved)}, which are resolutions, not labels")
    others: dict[str, LabelSet] = {}
    for side in labels.resolves:
        if side.startswith(JUDGE_SIDE_PREFIX) or side in reserved or side == labels.labeller:
            continue
        try:
            path = labels.path.with_name(f"{check_name(side, 'label name')}.json")
        except EvalkitError as exc:
            problems.append(f"resolves {exc.message}")
            continue
        if not path.is_file():
            problems.append(f"resolves {side!r}, but there is no {path.name} beside it")
            continue
        try:
            # Beside it means beside it: a link out of its labels folder is not read.
            others[side] = load_labels(path, root=labels.path.parent)
        except LabelError as exc:
            problems.append(f"resolves {side!r}, whose {path.name} is not a label file: {exc}")
    for item in labels.items:
        resolution = item.resolution
        if resolution is None:
            problems.append(f"{item.chk_id}: no resolution (agreed, edited or the side taken)")
            continue
        if resolution == RESOLUTION_EDITED:
            continue
        if resolution != RESOLUTION_AGREED and resolution not in labels.resolves:
            problems.append(f"{item.chk_id}: resolution {resolution!r} is not a side it resolves")
            continue
        compared = list(others) if resolution == RESOLUTION_AGREED else [resolution]
        for side in compared:
            other = others.get(side)
            if other is None:
                continue
            theirs = next((i for i in other.items if i.chk_id == item.chk_id), None)
            if theirs is None or _reading(theirs) != _reading(item):
                problems.append(
                    f"{item.chk_id}: resolution {resolution!r}, but label {side!r} reads it"
                    " differently (sub-scores or penalty rules); say 'edited' or take its reading"
                )
    return problems


# --------------------------------------------------------------------------- validate


def find_label_files(path: Path) -> list[Path]:
    """The label files ``evalkit validate PATH`` checks: the file itself when it is a
    ``.json`` file, the ``*.json`` of a ``labels`` folder, else every ``*/labels/*.json``
    below the folder."""
    path = Path(path)
    if path.is_file():
        return [path] if path.suffix == ".json" else []
    if not path.is_dir():
        return []
    if path.name == LABELS_DIRNAME:
        return sorted(path.glob("*.json"))
    found = [
        label
        for label in path.rglob(f"{LABELS_DIRNAME}/*.json")
        if not any(part.startswith(".") for part in label.relative_to(path).parts)
    ]
    return sorted(found)


def _ranges_dir_for(runs_dir: Path) -> Path:
    # The sample layout keeps ranges/ beside runs/; otherwise ./ranges, as the CLI defaults.
    beside = runs_dir.parent / "ranges"
    return beside if beside.is_dir() else Path("ranges")


def _problems_of(path: Path, workspace: Workspace | None) -> list[str]:
    root = workspace.read_root(path) if workspace is not None else None
    try:
        labels = load_labels(path, root=root)
    except LabelError as exc:
        if exc.line is not None:
            return [f"line {exc.line}: {exc.message}"]
        return list(exc.problems)
    if len(path.parents) < 4 or path.parent.name != LABELS_DIRNAME:
        return [f"a label file belongs in <runs>/<run>/<range>/{LABELS_DIRNAME}/<labeller>.json"]
    runs_dir, run_id, range_id = path.parents[3], path.parents[2].name, path.parents[1].name
    ranges_dir = _ranges_dir_for(runs_dir)
    if workspace is not None and Path(os.path.abspath(runs_dir)) == workspace.runs_dir:
        ranges_dir = workspace.ranges_dir
    try:
        rng = load_range(ranges_dir, range_id)
        submission = load_submission(runs_dir, run_id, rng)
    except EvalkitError as exc:
        return [str(exc)]
    return check_labels(labels, rng, submission)


def validate_label_files(
    paths: Sequence[Path], workspace: Workspace | None = None
) -> tuple[list[str], int]:
    """Check label files; return the lines to print (``file: problem``, or ``file: ok``)
    and how many files had problems. With ``workspace``, each file is read without
    following a link out of its root there, and the workspace's ranges are used."""
    lines: list[str] = []
    failed = 0
    for path in paths:
        problems = _problems_of(path, workspace)
        if problems:
            failed += 1
            lines += [f"{path}: {problem}" for problem in problems]
        else:
            lines.append(f"{path}: ok (labels)")
    return lines, failed
