"""Replay recorded verdicts: re-derive an evaluation without calling the judge again.

``verdicts.json`` (see :mod:`evalkit.render.verdicts_json`) holds one verdict per
checkpoint in the LLM judge's answer shape. :func:`load_verdicts` reads it (a JSON
object keyed by checkpoint id, a JSON list, or JSONL lines carrying ``chk_id``) and
:class:`ReplayJudge` serves the verdicts through the :class:`~evalkit.judges.Judge`
protocol, under the identity (judge, model, prompt hash), usage and timestamp of the
evaluation that recorded them, so a replayed record matches the original.

This is the replay side of the ``file`` judge (``--judge file --verdicts PATH``):
where that judge exists, it reads the same files.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import RunError
from .judges.base import JudgeResult, ProgressCallback
from .model import (
    DETECTION_SUBSCORES,
    PENALTY_RULES,
    PLAN_SUBSCORES,
    Checkpoint,
    JudgeInfo,
    PenaltyFlag,
    Range,
    Submission,
    SubScoreVerdict,
    Usage,
    Verdict,
)
from .render import SCORES_FILENAME
from .render.verdicts_json import VERDICTS_FILENAME


def _read_objects(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RunError(f"cannot read the recorded verdicts: {exc.strerror}", path=path) from exc
    try:
        data = json.loads(text)
    except ValueError:
        return _read_jsonl(text, path)
    if isinstance(data, list):
        if not all(isinstance(entry, dict) and "chk_id" in entry for entry in data):
            raise RunError("every verdict of a JSON list needs a chk_id", path=path)
        return {str(entry["chk_id"]): entry for entry in data}
    if isinstance(data, dict):
        return {str(key): value for key, value in data.items()}
    raise RunError("expected a JSON object keyed by checkpoint id", path=path)


def _read_jsonl(text: str, path: Path) -> dict[str, Any]:
    objects: dict[str, Any] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise RunError("not JSON or JSONL", path=path, line=number) from exc
        if not isinstance(entry, dict) or "chk_id" not in entry:
            raise RunError("a JSONL verdict needs a chk_id", path=path, line=number)
        objects[str(entry["chk_id"])] = entry
    return objects


def _claims(
    checkpoint: Checkpoint, answer: Mapping[str, Any], dimension: str, names: tuple[str, ...]
) -> dict[str, SubScoreVerdict] | None:
    value = answer.get(dimension)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"{dimension} must be an object or null")
    claims = {}
    for name in names:
        sub = value.get(name)
        if not isinstance(sub, Mapping) or sub.get("score") not in (0, 1):
            raise ValueError(f"{dimension}/{name} needs a score of 0 or 1")
        claims[name] = SubScoreVerdict(
            value=int(sub["score"]),
            quotes=tuple(str(quote) for quote in sub.get("quotes") or ()),
            rationale=str(sub.get("rationale") or ""),
        )
    return claims


def verdict_from_answer(checkpoint: Checkpoint, answer: Mapping[str, Any]) -> Verdict:
    """One recorded answer as a Verdict; a malformed one is an errored verdict, never a crash."""
    if "error" in answer and answer.get("detection") is None and answer.get("plan") is None:
        return Verdict.failed(checkpoint.id, str(answer["error"]))
    try:
        detection = _claims(checkpoint, answer, "detection", DETECTION_SUBSCORES)
        plan = _claims(checkpoint, answer, "plan", PLAN_SUBSCORES)
        penalties = tuple(
            PenaltyFlag(rule=flag["rule"], detail=str(flag["detail"]), quote=str(flag["quote"]))
            for flag in answer.get("penalties") or ()
            if flag["rule"] in PENALTY_RULES
        )
    except (KeyError, TypeError, ValueError) as exc:
        return Verdict.failed(checkpoint.id, f"recorded verdict unusable: {exc}")
    return Verdict(chk_id=checkpoint.id, detection=detection, plan=plan, penalties=penalties)


def load_verdicts(path: str | Path, rng: Range) -> tuple[Verdict, ...]:
    """The recorded verdicts for every checkpoint of ``rng``, in checklist order.

    A checkpoint with no recorded verdict is an errored verdict saying so.
    """
    objects = _read_objects(Path(path))
    return tuple(
        verdict_from_answer(checkpoint, objects[checkpoint.id])
        if isinstance(objects.get(checkpoint.id), Mapping)
        else Verdict.failed(checkpoint.id, "no recorded verdict")
        for checkpoint in rng.checkpoints
    )


class ReplayJudge:
    """Serves recorded verdicts through the Judge protocol; calls nothing."""

    def __init__(
        self,
        verdicts: tuple[Verdict, ...],
        info: JudgeInfo,
        *,
        usage: Usage | None = None,
        timestamp: str | None = None,
    ) -> None:
        self._verdicts = verdicts
        self._info = info
        self.usage = usage or Usage()
        self.timestamp = timestamp

    @property
    def info(self) -> JudgeInfo:
        return self._info

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        return self._verdicts

    async def judge(
        self,
        rng: Range,
        submission: Submission,
        *,
        on_item_done: ProgressCallback | None = None,
    ) -> JudgeResult:
        if on_item_done is not None:
            for verdict in self._verdicts:
                on_item_done(verdict.chk_id)
        return JudgeResult(verdicts=self._verdicts, usage=self.usage)


def read_scores(folder: str | Path) -> dict[str, Any]:
    path = Path(folder) / SCORES_FILENAME
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunError(f"cannot read the recorded scores: {exc}", path=path) from exc
    return data


def recorded_judge(folder: str | Path, rng: Range, fallback: Any = None) -> ReplayJudge:
    """A judge replaying the evaluation recorded in ``folder`` (verdicts.json + scores.json)."""
    folder = Path(folder)
    meta = read_scores(folder).get("meta", {})
    info = JudgeInfo(
        name=str(meta.get("judge") or getattr(getattr(fallback, "info", None), "name", "file")),
        evaluator_model=str(meta.get("evaluator_model") or ""),
        prompt_version=meta.get("prompt_version"),
        prompt_sha256=meta.get("prompt_sha256"),
    )
    recorded = meta.get("usage") or {}
    usage = Usage(**{key: recorded[key] for key in recorded if key in Usage.__dataclass_fields__})
    return ReplayJudge(
        load_verdicts(folder / VERDICTS_FILENAME, rng),
        info,
        usage=usage,
        timestamp=meta.get("timestamp"),
    )


def record_notebook(
    folder: str | Path,
    *,
    ranges_dir: Path,
    runs_dir: Path,
    workspace: Path | None = None,
    notebook: Path | None = None,
    cell_timeout: float | None = None,
) -> Path:
    """Execute the evaluation notebook for the evaluation recorded in ``folder``, replaying
    its verdicts (nothing is judged again); returns the executed notebook's path.

    The notebook rewrites ``scores.json`` and the report from the same verdicts, timestamp
    and usage, so they come out as they were.
    """
    from .notebook import execute

    folder = Path(folder).resolve()
    meta = read_scores(folder).get("meta", {})
    judge = str(meta.get("judge") or "rules")
    parameters: dict[str, Any] = dict(
        range_id=str(meta.get("range")),
        run_id=str(meta.get("run_id")),
        judge=judge,
        ranges_dir=str(ranges_dir.resolve()),
        runs_dir=str(runs_dir.resolve()),
        model_under_test=str(meta.get("model_under_test") or ""),
        replay_from=str(folder),
    )
    if judge != "rules":
        parameters["model"] = str(meta.get("evaluator_model") or "")
    result = execute(
        parameters,
        folder,
        notebook=notebook,
        progress=False,
        cell_timeout=cell_timeout,
        workspace=workspace,
    )
    return result.notebook
