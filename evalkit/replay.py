"""Replay recorded verdicts: re-derive an evaluation without calling the judge again.

An evaluation folder keeps ``verdicts.json`` (:mod:`evalkit.render.verdicts_json`), in
the ``file`` judge's format. :func:`recorded_judge` is that judge, reading it under the
identity (judge, model, prompt hash), usage and timestamp that ``scores.json`` recorded,
so a replayed record matches the original. ``evalkit record`` executes the notebook
with it (:func:`record_notebook`); ``evalkit verify`` re-derives the scores with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import RunError
from .judges.file import FileJudge
from .model import JudgeInfo, Range, Usage, Verdict
from .render import SCORES_FILENAME
from .render.verdicts_json import VERDICTS_FILENAME


def read_scores(folder: str | Path) -> dict[str, Any]:
    path = Path(folder) / SCORES_FILENAME
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunError(f"cannot read the recorded scores: {exc}", path=path) from exc
    return data


def recorded_judge(folder: str | Path) -> FileJudge:
    """The judge replaying the evaluation recorded in ``folder`` (verdicts.json + scores.json)."""
    folder = Path(folder)
    meta = read_scores(folder).get("meta", {})
    info = JudgeInfo(
        name=str(meta.get("judge") or "file"),
        evaluator_model=str(meta.get("evaluator_model") or ""),
        prompt_version=meta.get("prompt_version"),
        prompt_sha256=meta.get("prompt_sha256"),
        caveat=meta.get("judge_caveat"),
        kind="keyword" if meta.get("judge_kind") == "keyword" else "reader",
    )
    recorded = meta.get("usage") or {}
    usage = Usage(**{key: recorded[key] for key in recorded if key in Usage.__dataclass_fields__})
    return FileJudge(
        folder / VERDICTS_FILENAME, info=info, usage=usage, timestamp=meta.get("timestamp")
    )


def load_verdicts(path: str | Path, rng: Range) -> tuple[Verdict, ...]:
    """The verdicts in a file of the ``file`` judge's format, one per checkpoint of ``rng``."""
    return FileJudge(path).verdicts_for(rng)


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
    from .runplan import RunPlan

    folder = Path(folder).resolve()
    meta = read_scores(folder).get("meta", {})
    plan = RunPlan.build(
        range_id=str(meta.get("range")),
        run_id=str(meta.get("run_id")),
        judge=str(meta.get("judge") or "rules"),
        ranges_dir=ranges_dir.resolve(),
        runs_dir=runs_dir.resolve(),
        out_dir=folder,
        model_under_test=str(meta.get("model_under_test") or ""),
        notebook=notebook,
        replay_from=folder,
    )
    result = execute(plan, progress=False, cell_timeout=cell_timeout, workspace=workspace)
    return result.notebook
