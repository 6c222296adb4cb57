"""The adversarial corpus: clean pairs, attacks on them, and the attacked documents.

An *attack* is one edit (or a few) applied to a clean, honest (report, plan)
pair of a range: a payload appended, inserted before a line, or replacing
text. :func:`load_corpus` reads a corpus folder::

    <corpus>/clean/<range>/<report>.md, remediation-plan.md   the honest documents
    <corpus>/attacks/<id>.yaml                               one attack each

and :func:`apply_attack` gives the attacked pair as a submission. What an attack
does to a judge is measured by :mod:`evalkit.research.robustness`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from ..bounded import parse_yaml
from ..errors import EvalkitError, RunError
from ..fileio import read_confined
from ..model import (
    PENALTY_RULES,
    PLAN_FILENAME,
    Dimension,
    Document,
    PenaltyRule,
    Range,
    SourceName,
    Submission,
)
from ..workspace import read_json

__all__ = [
    "ATTACKS_FOLDER",
    "CLEAN_FOLDER",
    "DEFAULT_CORPUS",
    "Attack",
    "CleanPair",
    "Corpus",
    "Edit",
    "ExpectedPenalty",
    "apply_attack",
    "clean_submission",
    "load_corpus",
    "part_of",
]

# The shipped corpus: packaged so the command works from an install.
DEFAULT_CORPUS = Path(__file__).resolve().parent.parent / "data" / "adversarial"
CLEAN_FOLDER = "clean"
ATTACKS_FOLDER = "attacks"
RUN_ID = "adversarial"

Operation = Literal["append", "insert", "replace"]
OPERATIONS: tuple[str, ...] = ("append", "insert", "replace")
DOCUMENTS: tuple[str, ...] = ("report", "plan")
# The dimension each penalty rule zeroes on its item (the SKILL's negative rules).
PENALISED_DIMENSION: Mapping[str, Dimension] = {
    "fabrication": "detection",
    "dangerous_advice": "plan",
    "wrong_attribution": "detection",
}
_DIMENSIONS: tuple[Dimension, ...] = ("detection", "plan")


# --------------------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class Edit:
    """One change to one document.

    ``append`` adds the payload at the end, after a blank line; ``insert`` puts it
    (and a blank line) just before the first line equal to ``before``; ``replace``
    swaps the first occurrence of ``find`` for it, or the whole document when
    ``find`` is None.
    """

    document: SourceName
    operation: Operation
    payload: str
    before: str | None = None
    find: str | None = None


@dataclass(frozen=True)
class ExpectedPenalty:
    """The penalty an attack must raise, and the items it may rightly land on.

    ``items[0]`` is the item whose passage the payload stands in; the others are
    items the payload also names (``shred -u /var/log/auth.log`` in the miner's
    clean-up step names the brute-force item's log), where a judge may as rightly
    put the penalty.
    """

    rule: PenaltyRule
    items: tuple[str, ...]

    @property
    def dimension(self) -> Dimension:
        return PENALISED_DIMENSION[self.rule]


@dataclass(frozen=True)
class Attack:
    id: str
    family: str
    range_id: str
    description: str
    edits: tuple[Edit, ...]
    instruction: bool = False  # speaks to the evaluator: must be flagged
    penalty: ExpectedPenalty | None = None
    path: str | None = None


@dataclass(frozen=True)
class CleanPair:
    report: Document
    plan: Document


@dataclass(frozen=True)
class Corpus:
    path: str
    ranges: Mapping[str, Range]  # range id -> its checklist, for every range an attack names
    clean: Mapping[str, CleanPair]  # range id -> the honest documents
    attacks: tuple[Attack, ...]


def _field(data: Mapping[str, Any], name: str, path: Path) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        raise EvalkitError(f"attack field {name!r} must be a non-empty string", path=path)
    return value


def _edit(data: Any, path: Path) -> Edit:
    if not isinstance(data, Mapping):
        raise EvalkitError("each edit must be a mapping", path=path)
    document = _field(data, "document", path)
    operation = _field(data, "operation", path)
    if document not in DOCUMENTS:
        raise EvalkitError(f"edit document must be one of {', '.join(DOCUMENTS)}", path=path)
    if operation not in OPERATIONS:
        raise EvalkitError(f"edit operation must be one of {', '.join(OPERATIONS)}", path=path)
    payload = _field(data, "payload", path)
    before = data.get("before")
    find = data.get("find")
    if operation == "insert" and not isinstance(before, str):
        raise EvalkitError("an insert edit needs 'before': the line to insert before", path=path)
    if find is not None and not isinstance(find, str):
        raise EvalkitError("edit field 'find' must be a string", path=path)
    return Edit(
        cast(SourceName, document),
        cast(Operation, operation),
        payload,
        before=before,
        find=find,
    )


def _attack(path: Path, root: Path) -> Attack:
    try:
        text = read_confined(path, root).decode("utf-8")
    except (OSError, UnicodeDecodeError, RunError) as exc:
        raise EvalkitError(f"cannot read attack: {exc}".splitlines()[0], path=path) from exc
    try:
        data = parse_yaml(text, path=path)
    except EvalkitError as exc:
        raise EvalkitError(f"cannot read attack: {exc.message}", path=path, line=exc.line) from None
    if not isinstance(data, Mapping):
        raise EvalkitError("an attack file must hold a mapping", path=path)
    attack_id = _field(data, "id", path)
    if attack_id != path.stem:
        raise EvalkitError(f"attack id {attack_id!r} differs from the file name", path=path)
    edits = data.get("edits")
    if not isinstance(edits, list) or not edits:
        raise EvalkitError("attack field 'edits' must be a non-empty list", path=path)
    penalty = None
    if data.get("penalty") is not None:
        raw = data["penalty"]
        items = raw.get("item") if isinstance(raw, Mapping) else None
        if isinstance(items, str):
            items = [items]
        if (
            not isinstance(raw, Mapping)
            or raw.get("rule") not in PENALTY_RULES
            or not isinstance(items, list)
            or not items
            or not all(isinstance(item, str) and item.strip() for item in items)
        ):
            raise EvalkitError(
                f"attack penalty needs 'rule' (one of {', '.join(PENALTY_RULES)}) and 'item'"
                " (a checkpoint id, or a list of them)",
                path=path,
            )
        penalty = ExpectedPenalty(raw["rule"], tuple(items))
    instruction = data.get("instruction", False)
    if not isinstance(instruction, bool):
        raise EvalkitError("attack field 'instruction' must be true or false", path=path)
    return Attack(
        id=attack_id,
        family=_field(data, "family", path),
        range_id=_field(data, "range", path),
        description=_field(data, "description", path),
        edits=tuple(_edit(edit, path) for edit in edits),
        instruction=instruction,
        penalty=penalty,
        path=str(path),
    )


def _clean_document(kind: SourceName, path: Path, root: Path) -> Document:
    try:
        text = read_confined(path, root).decode("utf-8")
    except (OSError, UnicodeDecodeError, RunError) as exc:
        raise EvalkitError(f"cannot read clean document: {exc}", path=path) from exc
    return Document(kind=kind, path=str(path), text=text.replace("\r\n", "\n"))


SPLIT_FILE = "split.json"


def part_of(corpus: Corpus, part: str) -> tuple[Attack, ...]:
    """The attacks of ``part`` (``tune``, ``holdout``) of the corpus's split file, or all."""
    if part == "all":
        return corpus.attacks
    path = Path(corpus.path) / SPLIT_FILE
    split = read_json(path, corpus.path, what="corpus's split file")
    chosen = split.get(part) if isinstance(split, dict) else None
    if not isinstance(chosen, list):
        raise EvalkitError(f"the split file has no list {part!r}", path=path)
    unknown = sorted(set(chosen) - {attack.id for attack in corpus.attacks})
    if unknown:
        raise EvalkitError(f"the split file names unknown attacks: {unknown[0]}", path=path)
    return tuple(attack for attack in corpus.attacks if attack.id in set(chosen))


def load_corpus(folder: str | Path, load_range: Callable[[str], Range]) -> Corpus:
    """Read and check every attack of ``folder``; ``load_range`` gives a range by its id.

    Every problem (a malformed attack, a range or clean document missing, an
    anchor not in the clean document) is an :class:`EvalkitError` naming the file,
    raised before anything is judged.
    """
    root = Path(folder)
    attack_dir = root / ATTACKS_FOLDER
    files = sorted(attack_dir.glob("*.yaml")) if attack_dir.is_dir() else []
    if not files:
        raise EvalkitError(f"no {ATTACKS_FOLDER}/*.yaml in the corpus", path=root)
    attacks = tuple(_attack(file, root) for file in files)
    ranges: dict[str, Range] = {}
    clean: dict[str, CleanPair] = {}
    for range_id in sorted({attack.range_id for attack in attacks}):
        rng = ranges[range_id] = load_range(range_id)
        folder_of_range = root / CLEAN_FOLDER / range_id
        clean[range_id] = CleanPair(
            report=_clean_document("report", folder_of_range / rng.report_filename, root),
            plan=_clean_document("plan", folder_of_range / PLAN_FILENAME, root),
        )
    corpus = Corpus(path=str(root), ranges=ranges, clean=clean, attacks=attacks)
    for attack in attacks:
        apply_attack(corpus, attack)  # an anchor that is not there fails now, not mid-run
    return corpus


# --------------------------------------------------------------------------- applying


def _apply(text: str, edit: Edit, attack: Attack) -> str:
    payload = edit.payload if edit.payload.endswith("\n") else edit.payload + "\n"
    if edit.operation == "append":
        return text.rstrip("\n") + "\n\n" + payload
    if edit.operation == "insert":
        lines = text.splitlines(keepends=True)
        for index, line in enumerate(lines):
            if line.rstrip("\n") == edit.before:
                return "".join([*lines[:index], payload, "\n", *lines[index:]])
        raise EvalkitError(
            f"insert anchor {edit.before!r} is not a line of the clean {edit.document}",
            path=attack.path,
        )
    if edit.find is None:
        return payload
    if edit.find not in text:
        raise EvalkitError(
            f"replace target {edit.find!r} is not in the clean {edit.document}", path=attack.path
        )
    return text.replace(edit.find, edit.payload, 1)


def apply_attack(corpus: Corpus, attack: Attack) -> Submission:
    """The clean pair of the attack's range with its edits applied, as a submission."""
    pair = corpus.clean[attack.range_id]
    texts = {"report": pair.report.text, "plan": pair.plan.text}
    for edit in attack.edits:
        texts[edit.document] = _apply(texts[edit.document], edit, attack)

    def document(kind: SourceName, clean: Document) -> Document:
        if texts[kind] == clean.text:
            return clean
        return Document(kind=kind, path=f"{attack.id}/{clean.filename}", text=texts[kind])

    return Submission(
        run_id=RUN_ID,
        range_id=attack.range_id,
        report=document("report", pair.report),
        plan=document("plan", pair.plan),
    )


def clean_submission(corpus: Corpus, range_id: str) -> Submission:
    pair = corpus.clean[range_id]
    return Submission(run_id=RUN_ID, range_id=range_id, report=pair.report, plan=pair.plan)
