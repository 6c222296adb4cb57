"""The ``file`` judge: precomputed verdicts, read from a file instead of asked for.

Verdicts from another system, a model run elsewhere, or a human review go through
the same grounding, scoring and reports. The file holds the LLM judge's own answer
shape, one object per checkpoint, each with a ``chk_id``; it is either a JSON list
of such objects, a single such object, or JSONL (one object per line)::

    {"chk_id": "CHK-01", "detection": {...}, "plan": null, "penalties": []}

``verdicts`` may also be a folder of such files, one per (run, range) pair:
``<folder>/<run>/<range>.jsonl`` (or ``.json``), else ``<folder>/<run>.jsonl`` (or
``.json``): so one judge replays a stand-in's answers for many pairs (calibration
over several ranges, ``evalkit ab``).

Each object is read by the LLM judge's verdict parser; an object ``{"chk_id",
"error": reason}`` records a checkpoint its judge could not score, and stays an
error. A checkpoint without an object is that item's ``status: error``; an
object for an unknown checkpoint, a second object for one checkpoint, or an
object the parser refuses is a JudgeError naming the file and line.

:meth:`FileJudge.from_record` replays an evaluation folder (see :mod:`evalkit.replay`):
its ``verdicts.json`` under the identity (judge, model, prompt hash), usage and
timestamp its ``scores.json`` recorded, so a replayed record matches the original.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..bounded import check_json, json_decoder
from ..errors import JudgeInputError, RunError
from ..fileio import read_confined
from ..model import JudgeInfo, Range, Submission, Usage, Verdict
from ..render.verdicts_json import VERDICTS_FILENAME
from ..replay import read_scores
from .base import JudgeBase, JudgeResult, ProgressCallback
from .llm.verdict import InvalidAnswer, verdict_from_json


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _list_items(text: str, path: Path) -> Iterator[tuple[int, Any]]:
    """(line, value) of each element of the top-level JSON list in ``text``."""
    decoder = json_decoder()
    index = text.index("[") + 1
    while True:
        while index < len(text) and text[index] in " \t\r\n,":
            index += 1
        if index >= len(text) or text[index] == "]":
            return
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError as exc:
            raise JudgeInputError(f"not valid JSON: {exc}", path=path) from None
        yield _line_of(text, index), value
        index = end


def read_objects(path: Path, root: Path | None = None) -> list[tuple[int, Any]]:
    """Every (line, object) of a verdicts file: a JSON list, one JSON object, or JSONL.

    The file is read only if it resolves inside ``root`` (default: the path itself,
    which the user named), and parsed within :mod:`evalkit.bounded`'s bounds; an
    empty file is refused, not read as no verdict at all.
    """
    try:
        text = read_confined(path, root or path).decode("utf-8")
    except RunError as exc:
        raise JudgeInputError(exc.message, path=path) from None
    except FileNotFoundError:
        raise JudgeInputError("verdicts file not found", path=path) from None
    except UnicodeDecodeError as exc:
        raise JudgeInputError(
            f"verdicts file is not UTF-8 text ({exc.reason})", path=path
        ) from None
    except OSError as exc:
        raise JudgeInputError(f"cannot read the verdicts file: {exc.strerror}", path=path) from None
    if not text.strip():
        raise JudgeInputError("verdicts file is empty", path=path)
    check_json(text, path=path, what="verdicts file", error=JudgeInputError)
    decoder = json_decoder()
    try:
        whole = decoder.decode(text)
    except ValueError:
        whole = None
    else:
        if isinstance(whole, list):
            return list(_list_items(text, path))
        start = len(text) - len(text.lstrip())
        return [(_line_of(text, start), whole)]
    objects: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            objects.append((number, decoder.decode(line)))
        except ValueError as exc:
            raise JudgeInputError(
                f"not valid JSON or JSONL: {exc}", path=path, line=number
            ) from None
    return objects


class FileJudge(JudgeBase):
    """Verdicts read from ``verdicts`` (see the module docstring)."""

    def __init__(
        self,
        verdicts: str | Path | None = None,
        *,
        info: JudgeInfo | None = None,
        usage: Usage | None = None,
        timestamp: str | None = None,
        root: str | Path | None = None,
    ) -> None:
        """``info``, ``usage`` and ``timestamp``, when given, are those of the evaluation that
        recorded the verdicts (see :meth:`from_record`), so a replay reproduces it exactly.
        ``root``: the folder the file must resolve inside (default: the file itself)."""
        if verdicts is None or str(verdicts) == "":
            raise JudgeInputError("file judge: --verdicts PATH is required")
        self.path = Path(verdicts)
        self.root = Path(root) if root is not None else None
        self._info = info or JudgeInfo(name="file", evaluator_model=self.path.name)
        self._usage = usage or Usage()
        self._timestamp = timestamp

    @classmethod
    def from_record(cls, folder: str | Path, *, root: str | Path | None = None) -> FileJudge:
        """The judge replaying the evaluation recorded in ``folder`` (verdicts.json, under
        what scores.json says of the judge, its usage and its timestamp), both read without
        following a link out of ``root`` (default: the folder)."""
        folder = Path(folder)
        root = root if root is not None else folder
        meta = read_scores(folder, root=root).get("meta", {})
        info = JudgeInfo(
            name=str(meta.get("judge") or "file"),
            evaluator_model=str(meta.get("evaluator_model") or ""),
            prompt_version=meta.get("prompt_version"),
            prompt_sha256=meta.get("prompt_sha256"),
            caveat=meta.get("judge_caveat"),
            kind="keyword" if meta.get("judge_kind") == "keyword" else "reader",
        )
        recorded = meta.get("usage") or {}
        usage = Usage(
            **{key: recorded[key] for key in recorded if key in Usage.__dataclass_fields__}
        )
        return cls(
            folder / VERDICTS_FILENAME,
            info=info,
            usage=usage,
            timestamp=meta.get("timestamp"),
            root=root,
        )

    @property
    def info(self) -> JudgeInfo:
        return self._info

    def file_for(self, rng: Range, submission: Submission | None = None) -> Path:
        """The verdicts file of the pair: the file given, or the pair's file in a folder."""
        if not self.path.is_dir():
            return self.path
        if submission is None:
            raise JudgeInputError(
                "a verdicts folder needs the run to find the pair's file", path=self.path
            )
        run = submission.run_id
        candidates = [self.path / run / f"{rng.id}{suffix}" for suffix in (".jsonl", ".json")] + [
            self.path / f"{run}{suffix}" for suffix in (".jsonl", ".json")
        ]
        found = next((path for path in candidates if path.is_file()), None)
        if found is None:
            raise JudgeInputError(
                f"no verdicts for {run}/{rng.id} in the folder (looked for {run}/{rng.id}.jsonl"
                f" and {run}.jsonl)",
                path=self.path,
            )
        return found

    def _read(self, rng: Range, submission: Submission | None = None) -> dict[str, Verdict]:
        checkpoints = {checkpoint.id: checkpoint for checkpoint in rng.checkpoints}
        found: dict[str, Verdict] = {}
        path = self.file_for(rng, submission)
        for line, data in read_objects(path, self.root):
            if not isinstance(data, dict) or not isinstance(data.get("chk_id"), str):
                raise JudgeInputError(
                    "each verdict must be a JSON object with a chk_id", path=path, line=line
                )
            answer = dict(data)
            chk_id = answer.pop("chk_id")
            checkpoint = checkpoints.get(chk_id)
            if checkpoint is None:
                raise JudgeInputError(
                    f"verdict for {chk_id}, which the {rng.id} checklist does not have",
                    path=path,
                    line=line,
                )
            if chk_id in found:
                raise JudgeInputError(f"a second verdict for {chk_id}", path=path, line=line)
            if "error" in answer and set(answer) <= {"error"}:
                found[chk_id] = Verdict.failed(chk_id, str(answer["error"]))
                continue
            try:
                found[chk_id] = verdict_from_json(checkpoint, answer)
            except InvalidAnswer as exc:
                raise JudgeInputError(f"{chk_id}: {exc.problem}", path=path, line=line) from None
        return found

    def preflight(self, rng: Range, submission: Submission) -> int:
        self._read(rng, submission)
        return 0

    def verdicts_for(self, rng: Range, submission: Submission | None = None) -> tuple[Verdict, ...]:
        """One verdict per checkpoint of ``rng``, in checklist order."""
        found = self._read(rng, submission)
        name = self.file_for(rng, submission).name
        return tuple(
            found.get(checkpoint.id)
            or Verdict.failed(checkpoint.id, f"no verdict for {checkpoint.id} in {name}")
            for checkpoint in rng.checkpoints
        )

    async def judge(
        self,
        rng: Range,
        submission: Submission,
        *,
        on_item_done: ProgressCallback | None = None,
    ) -> JudgeResult:
        verdicts = self.verdicts_for(rng, submission)
        if on_item_done is not None:
            for verdict in verdicts:
                on_item_done(verdict.chk_id)
        return JudgeResult(verdicts=verdicts, usage=self._usage, timestamp=self._timestamp)
