"""Which labelled (run, range) pairs a calibration uses: all, a part of the split file, or globs.

``runs/gold-split.json`` (``{"seed": ..., "tune": [...], "holdout": [...], "fresh":
[...], "hard": [...]}``, each a list of ``"run/range"``) is drawn once, before any judge is
tuned: tune on ``tune``, report on ``holdout``; ``fresh`` holds pairs added after the
holdout had been measured; ``hard`` the pairs written to be borderline, with three
labellers and an adjudicated reference (see docs/calibration.md).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from pathlib import Path

from ..errors import EvalkitError
from ..gold_labels import labelled_pairs
from ..workspace import read_json

__all__ = ["SELECTIONS", "SPLIT_FILENAME", "SPLIT_PARTS", "select_pairs"]

SPLIT_FILENAME = "gold-split.json"
# The named parts of the split file: tuning, reporting, pairs added after the holdout had
# been measured (never seen while any judge rule was chosen), and the hard pairs.
SPLIT_PARTS = ("tune", "holdout", "fresh", "hard")
SELECTIONS = ("all", *SPLIT_PARTS)


def select_pairs(runs_dir: str | Path, selection: str = "all") -> list[tuple[str, str]]:
    """The labelled (run, range) pairs named by ``selection``.

    ``all``: every labelled pair; ``tune``/``holdout``/``fresh``/``hard`` (or any other list
    the split file names): that part of
    ``<runs_dir>/gold-split.json``; otherwise a comma list of ``run/range``
    globs (``demo/*``, ``*/ssh-miner``). An empty result is an error.
    """
    labelled = labelled_pairs(Path(runs_dir))
    selection = selection.strip() or "all"
    if selection == "all":
        chosen = list(labelled)
    elif selection in SPLIT_PARTS or selection in _split_names(Path(runs_dir)):
        chosen = _split_part(Path(runs_dir), selection, labelled)
    else:
        patterns = [p.strip() for p in selection.split(",") if p.strip()]
        chosen = [
            pair
            for pair in labelled
            if any(fnmatch.fnmatchcase("/".join(pair), p) for p in patterns)
        ]
        unmatched = [
            p for p in patterns if not any(fnmatch.fnmatchcase("/".join(x), p) for x in labelled)
        ]
        if unmatched:
            raise EvalkitError(
                f"no labelled pair matches {', '.join(unmatched)} (pairs are run/range)",
                path=Path(runs_dir),
            )
    if not chosen:
        raise EvalkitError(
            f"no labelled (run, range) pair selected by {selection!r}", path=Path(runs_dir)
        )
    return chosen


def _split_names(runs_dir: Path) -> set[str]:
    """The parts a split file names besides the usual ones (``holdout2`` ...)."""
    try:
        split = read_json(runs_dir / SPLIT_FILENAME, runs_dir, what="split file")
    except EvalkitError:
        return set()
    if not isinstance(split, dict):
        return set()
    return {name for name, value in split.items() if isinstance(value, list)}


def _split_part(
    runs_dir: Path, part: str, labelled: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    path = runs_dir / SPLIT_FILENAME
    if not path.exists():
        raise EvalkitError(f"pairs={part!r} needs the split file", path=path)
    split = read_json(path, runs_dir, what="split file")
    names = split.get(part) if isinstance(split, dict) else None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise EvalkitError(f'{part!r} must be a list of "run/range" strings', path=path)
    known = {"/".join(pair): pair for pair in labelled}
    missing = [name for name in names if name not in known]
    if missing:
        raise EvalkitError(f"{part}: no label files for {', '.join(missing)}", path=path)
    return [known[name] for name in names]
