"""A recorded evaluation, read back, so it can be replayed without calling the judge.

An evaluation folder keeps ``scores.json`` and ``verdicts.json``
(:mod:`evalkit.render.verdicts_json`). :func:`read_scores` reads the first;
:meth:`evalkit.judges.file.FileJudge.from_record` is the judge replaying the second
under the identity (judge, model, prompt hash), usage and timestamp the first
recorded, so a replayed record matches the original. ``evalkit record`` executes
the notebook with it; ``evalkit verify`` re-derives the scores with it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import RunError
from .render import SCORES_FILENAME


def read_scores(folder: str | Path) -> dict[str, Any]:
    """The ``scores.json`` recorded in ``folder``, as JSON; RunError when it cannot be read."""
    path = Path(folder) / SCORES_FILENAME
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RunError(f"cannot read the recorded scores: {exc}", path=path) from exc
    return data
