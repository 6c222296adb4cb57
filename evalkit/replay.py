"""A recorded evaluation, read back, so it can be replayed without calling the judge.

An evaluation folder keeps ``scores.json`` and ``verdicts.json``
(:mod:`evalkit.render.verdicts_json`). :func:`read_scores` reads the first;
:meth:`evalkit.judges.file.FileJudge.from_record` is the judge replaying the second
under the identity (judge, model, prompt hash), usage and timestamp the first
recorded, so a replayed record matches the original. ``evalkit record`` executes
the notebook with it; ``evalkit verify`` re-derives the scores with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .bounded import parse_json
from .errors import RunError
from .fileio import read_confined
from .render import SCORES_FILENAME


def read_scores(folder: str | Path, *, root: str | Path | None = None) -> dict[str, Any]:
    """The ``scores.json`` recorded in ``folder``, as JSON; RunError when it cannot be read,
    leads out of ``root`` (default: the folder) through a link, or is not a record (an
    object whose ``meta`` is an object)."""
    path = Path(folder) / SCORES_FILENAME
    try:
        raw = read_confined(path, root if root is not None else folder)
    except OSError as exc:
        raise RunError(
            f"cannot read the recorded scores: {exc.strerror or exc}", path=path
        ) from exc
    data = parse_json(raw, path=path, what="scores.json", error=RunError)
    if not isinstance(data, dict) or not isinstance(data.get("meta", {}), dict):
        raise RunError("not an evaluation record: a JSON object with a meta object", path=path)
    return data
