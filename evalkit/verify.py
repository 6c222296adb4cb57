"""Audit a shared evaluation record without calling the judge.

:func:`verify` takes an evaluation folder (``runs/<run>/<range>/evaluations/<judge>``)
and checks, from what it recorded and the inputs it names:

* ``scores.json`` still fits its schema;
* the checklist, report and plan still have the sha256 recorded in ``meta.inputs``;
* every quote in ``scores.json`` (sub-score quotes and penalty quotes) is found
  verbatim in the documents, under the same rules grounding applies;
* replaying ``verdicts.json`` through grounding and scoring gives exactly the
  recorded checkpoints and summary.

Every difference is reported, each as one line naming the JSON path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checklist import load_range
from .errors import EvalkitError, OutputError
from .grounding import DETECTION_SOURCES, PLAN_SOURCES, Sources
from .judges.file import FileJudge
from .model import JudgeKind, SourceName
from .penalties import PENALTY_SOURCES
from .pipeline import evaluate
from .render import SCORES_FILENAME, to_scores_dict, validate_scores
from .render.scores_json import json_path
from .render.verdicts_json import VERDICTS_FILENAME
from .replay import read_scores
from .runs import load_submission
from .screening import screen
from .workspace import absolute, within


@dataclass
class Verification:
    folder: Path
    differences: list[str] = field(default_factory=list)
    checked_quotes: int = 0

    @property
    def ok(self) -> bool:
        return not self.differences


def locate_workspace(folder: Path) -> tuple[Path, Path]:
    """``(ranges_dir, runs_dir)`` for ``runs/<run>/<range>/evaluations/<judge>``.

    Read from the path as written (made absolute, never resolved): a link planted on
    the way must not move the runs folder, which confines what is read and written.
    """
    folder = absolute(folder)
    if len(folder.parents) < 5 or folder.parent.name != "evaluations":
        raise EvalkitError(
            "not an evaluation folder (runs/<run>/<range>/evaluations/<judge>);"
            " give --ranges-dir and --runs-dir",
            path=folder,
        )
    runs_dir = folder.parents[3]
    return runs_dir.parent / "ranges", runs_dir


def _diff(recorded: Any, derived: Any, path: list[str | int]) -> Iterator[str]:
    if isinstance(recorded, dict) and isinstance(derived, dict):
        for key in list(recorded) + [k for k in derived if k not in recorded]:
            if key not in derived:
                yield f"{json_path([*path, key])}: recorded but not re-derived"
            elif key not in recorded:
                yield f"{json_path([*path, key])}: missing from the record"
            else:
                yield from _diff(recorded[key], derived[key], [*path, key])
    elif isinstance(recorded, list) and isinstance(derived, list):
        if len(recorded) != len(derived):
            yield (
                f"{json_path(path)}: recorded {len(recorded)} entries, re-derived {len(derived)}"
            )
        for index, (left, right) in enumerate(zip(recorded, derived, strict=False)):
            yield from _diff(left, right, [*path, index])
    elif recorded != derived:
        yield (
            f"{json_path(path)}: recorded {json.dumps(recorded, ensure_ascii=False)},"
            f" re-derived {json.dumps(derived, ensure_ascii=False)}"
        )


def _quotes_in(
    scores: dict[str, Any],
) -> Iterator[tuple[list[str | int], str, tuple[SourceName, ...]]]:
    for index, checkpoint in enumerate(scores.get("checkpoints") or ()):
        for dimension, allowed in (("detection", DETECTION_SOURCES), ("plan", PLAN_SOURCES)):
            dim = checkpoint.get(dimension)
            if isinstance(dim, dict):
                for q, quote in enumerate(dim.get("quotes") or ()):
                    yield ["checkpoints", index, dimension, "quotes", q], str(quote), allowed
        for p, penalty in enumerate(checkpoint.get("penalties") or ()):
            allowed = PENALTY_SOURCES.get(str(penalty.get("rule")), ("report", "plan"))
            yield (
                ["checkpoints", index, "penalties", p, "quote"],
                str(penalty.get("quote")),
                allowed,
            )


def verify(
    folder: str | Path, *, ranges_dir: Path | None = None, runs_dir: Path | None = None
) -> Verification:
    """Check the record in ``folder``; the result lists every difference found."""
    folder = absolute(folder)
    result = Verification(folder)
    scores_path = folder / SCORES_FILENAME
    if ranges_dir is None or runs_dir is None:
        found_ranges, found_runs = locate_workspace(folder)
        ranges_dir, runs_dir = ranges_dir or found_ranges, runs_dir or found_runs
    # The record is read without following a link out of the runs folder holding it (or
    # out of the folder itself, when it is not in the runs folder given).
    root = absolute(runs_dir) if within(folder, absolute(runs_dir)) else folder
    scores = read_scores(folder, root=root)
    if not (folder / VERDICTS_FILENAME).is_file():
        raise EvalkitError("no recorded verdicts to replay", path=folder / VERDICTS_FILENAME)
    try:
        validate_scores(scores, path=scores_path)
    except OutputError as exc:
        # What follows reads the record's structure; one that breaks its schema stops here.
        result.differences.append(str(exc))
        return result
    meta = scores.get("meta") or {}
    rng = load_range(ranges_dir, str(meta.get("range")))
    submission = load_submission(
        runs_dir, str(meta.get("run_id")), rng, model_under_test=meta.get("model_under_test")
    )
    now = {
        "checklist_sha256": rng.sha256,
        "report_sha256": submission.report.sha256,
        "plan_sha256": submission.plan.sha256,
    }
    recorded_inputs = meta.get("inputs") or {}
    for key, value in now.items():
        if recorded_inputs.get(key) != value:
            result.differences.append(
                f"$.meta.inputs.{key}: recorded {recorded_inputs.get(key)}, the input now has"
                f" {value} (the {key.removesuffix('_sha256')} changed)"
            )

    # The same screening the pipeline applied: a quote in a screened span is not evidence.
    kind: JudgeKind = "keyword" if meta.get("judge_kind") == "keyword" else "reader"
    sources = Sources.of(submission, screen(rng, submission), kind)
    for path, quote, allowed in _quotes_in(scores):
        result.checked_quotes += 1
        if not sources.check(quote, allowed).found:
            result.differences.append(
                f"{json_path(path)}: quote not found verbatim in the {' or '.join(allowed)}:"
                f" {json.dumps(quote[:120], ensure_ascii=False)}"
            )

    # Re-derived by the one pipeline, from the recorded verdicts instead of a judge.
    derived = to_scores_dict(evaluate(rng, submission, FileJudge.from_record(folder, root=root)))
    for key in ("checkpoints", "summary"):
        result.differences.extend(_diff(scores.get(key), derived[key], [key]))
    return result
