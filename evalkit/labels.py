"""Gold labels: a careful human's sub-scores for one (run, range) pair.

A label file lives beside the documents it judges,
``runs/<run>/<range>/labels/<labeller>.json`` (format: ``docs/labels.md``,
schema: ``evalkit/schemas/labels.schema.json``). It records every checkpoint's
sub-scores *before* penalties, the penalties with their verbatim quotes, and a
short note; ``evalkit calibrate`` measures judges against these files.

:func:`load_labels` checks a file against the schema; :func:`check_labels`
checks it against its checklist and documents (coverage, N/A scopes, quotes,
checklist hash, folder); :func:`validate_label_files` is what ``evalkit
validate`` runs on them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from .checklist import load_range
from .errors import EvalkitError, LabelError
from .grounding import Sources
from .model import Range, SourceName, Submission
from .penalties import PENALTY_SOURCES, penalty_rule
from .runs import load_submission

__all__ = [
    "LABELS_DIRNAME",
    "ItemLabel",
    "LabelPenalty",
    "LabelSet",
    "check_labels",
    "find_label_files",
    "find_labels",
    "labelled_pairs",
    "load_labels",
    "validate_label_files",
]

LABELS_DIRNAME = "labels"
SCHEMA_RESOURCE = "schemas/labels.schema.json"


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


def load_labels(path: Path) -> LabelSet:
    """Read one label file; a file that is not JSON or breaks the schema is a LabelError.

    The error names the file and carries every schema problem in ``problems``.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise LabelError(f"cannot read label file: {exc.strerror}", path=path) from exc
    except UnicodeDecodeError as exc:
        raise LabelError(f"not valid UTF-8 (byte {exc.start})", path=path) from exc
    except json.JSONDecodeError as exc:
        raise LabelError(f"not valid JSON: {exc.msg}", path=path, line=exc.lineno) from exc
    errors = sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        problems = [
            f"schema: {_json_path(e.absolute_path)}: {' '.join(e.message.split())[:200]}"
            for e in errors
        ]
        raise LabelError(problems[0], path=path, problems=problems)
    return LabelSet(
        labeller=data["labeller"],
        range_id=data["range"],
        run_id=data["run_id"],
        checklist_sha256=data["checklist_sha256"],
        blind=data["blind"],
        items=tuple(_item(raw) for raw in data["checkpoints"]),
        path=path,
    )


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
    )


def _label_paths(pair_dir: Path) -> list[Path]:
    folder = pair_dir / LABELS_DIRNAME
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def find_labels(runs_dir: Path, run_id: str, range_id: str) -> tuple[LabelSet, ...]:
    """Every label file of one pair, loaded and sorted by labeller (``()`` when none)."""
    loaded = [load_labels(path) for path in _label_paths(Path(runs_dir) / run_id / range_id)]
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
    nulls match each checkpoint's scope, and every penalty quote is verbatim in
    its document (the tolerance judge quotes get, :mod:`evalkit.grounding`).
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
            problems += _penalty_problems(item.chk_id, penalty, checkpoint.scope, sources)
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


def _penalty_problems(
    chk_id: str, penalty: LabelPenalty, scope: str, sources: Sources
) -> list[str]:
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


# --------------------------------------------------------------------------- validate


def find_label_files(path: Path) -> list[Path]:
    """The label files ``evalkit validate PATH`` checks: the file itself when it is a
    ``.json`` file, else every ``*/labels/*.json`` below the folder."""
    path = Path(path)
    if path.is_file():
        return [path] if path.suffix == ".json" else []
    if not path.is_dir():
        return []
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


def _problems_of(path: Path) -> list[str]:
    try:
        labels = load_labels(path)
    except LabelError as exc:
        if exc.line is not None:
            return [f"line {exc.line}: {exc.message}"]
        return list(exc.problems)
    if len(path.parents) < 4 or path.parent.name != LABELS_DIRNAME:
        return [f"a label file belongs in <runs>/<run>/<range>/{LABELS_DIRNAME}/<labeller>.json"]
    runs_dir, run_id, range_id = path.parents[3], path.parents[2].name, path.parents[1].name
    try:
        rng = load_range(_ranges_dir_for(runs_dir), range_id)
        submission = load_submission(runs_dir, run_id, rng)
    except EvalkitError as exc:
        return [str(exc)]
    return check_labels(labels, rng, submission)


def validate_label_files(paths: Sequence[Path]) -> tuple[list[str], int]:
    """Check label files; return the lines to print (``file: problem``, or ``file: ok``)
    and how many files had problems."""
    lines: list[str] = []
    failed = 0
    for path in paths:
        problems = _problems_of(path)
        if problems:
            failed += 1
            lines += [f"{path}: {problem}" for problem in problems]
        else:
            lines.append(f"{path}: ok (labels)")
    return lines, failed
