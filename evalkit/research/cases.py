"""The labelled pairs read, checked and judged: what a calibration measures.

:func:`load_pairs` reads every pair's checklist, documents and label files and
checks the labels (nothing is judged, so bad input costs nothing);
:func:`evaluate_pairs` then evaluates each pair with the judge through the public
pipeline (:func:`evalkit.evaluate`), giving one :class:`Case` per pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..checklist import load_range
from ..errors import EvalkitError
from ..gold_labels import LabelSet, check_labels, find_labels
from ..model import Evaluation, Range, Submission
from ..runs import load_submission

if TYPE_CHECKING:
    from ..judges import Judge

__all__ = ["Case", "evaluate_pairs", "load_pairs"]


@dataclass(frozen=True)
class Case:
    """One labelled pair: the judge's evaluation and every label file of it."""

    evaluation: Evaluation
    labels: tuple[LabelSet, ...]


def load_pairs(
    ranges_dir: str | Path, runs_dir: str | Path, pairs: Sequence[tuple[str, str]]
) -> list[tuple[Range, Submission, tuple[LabelSet, ...]]]:
    """Read and check every pair's checklist, documents and labels; nothing is judged.

    Any problem (a stale or incomplete label file, a missing document) is an
    :class:`EvalkitError` naming the file, raised before any judge call.
    """
    loaded = []
    for run_id, range_id in pairs:
        rng = load_range(ranges_dir, range_id)
        submission = load_submission(runs_dir, run_id, rng)
        labels = find_labels(Path(runs_dir), run_id, range_id)
        problems = [problem for label in labels for problem in check_labels(label, rng, submission)]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise EvalkitError(f"{run_id}/{range_id}: {problems[0]}{more}")
        loaded.append((rng, submission, labels))
    return loaded


def evaluate_pairs(
    ranges_dir: str | Path,
    runs_dir: str | Path,
    judge: Judge,
    pairs: Sequence[tuple[str, str]],
    *,
    progress: bool = False,
) -> list[Case]:
    """Evaluate every selected pair with ``judge`` through :func:`evalkit.evaluate`."""
    from ..pipeline import evaluate

    return [
        Case(evaluate(rng, submission, judge, progress=progress), labels)
        for rng, submission, labels in load_pairs(ranges_dir, runs_dir, pairs)
    ]
