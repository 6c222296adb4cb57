"""A batch's plan: what every evaluation shares (:class:`Settings`), which (run, range)
pairs it takes (:func:`select_pairs`), and which of them are already done (:func:`plan_batch`).

An evaluation is skipped when its outputs are all there, its summary is complete and its
recorded input hashes, judge, judge model and prompt hash match today's. Every pair's
inputs are read as ``evalkit run`` reads them (:mod:`evalkit.prepare`: the
same confinement), so an unreadable pair fails here, before any work.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..checklist import list_ranges
from ..errors import EvalkitError
from ..judges.config import JudgeConfig
from ..model import JudgeInfo, Range, Submission
from ..notebook import HTML_NAME, NOTEBOOK_NAME
from ..prepare import load_range_of, load_submission_of
from ..render import JUDGMENTS_FILENAME, REPORT_FILENAME, SCORES_FILENAME
from ..render.verdicts_json import VERDICTS_FILENAME
from ..runplan import RunPlan
from ..runs import list_runs
from ..workspace import Workspace, read_json

# What an evaluation without a notebook writes into its folder (render.write_outputs).
IN_PROCESS_OUTPUTS = (SCORES_FILENAME, REPORT_FILENAME, VERDICTS_FILENAME, JUDGMENTS_FILENAME)


@dataclass(frozen=True)
class Settings:
    """What every evaluation of a batch shares."""

    ranges_dir: Path
    runs_dir: Path
    # The one judge configuration every evaluation of the batch shares (absolute paths).
    judge: JudgeConfig = field(default_factory=JudgeConfig)
    notebook: Path | None = None
    cell_timeout: float | None = None
    with_notebook: bool = True
    workspace: Path = field(default_factory=Path.cwd)
    # Run every pair, done or not, and replace a record even with a less complete one.
    force: bool = False
    # A new kernel process per notebook, as before warm kernels (evalkit.kernels).
    fresh_kernels: bool = False

    def plan(self, run: str, range_id: str, out_dir: Path | None = None) -> RunPlan:
        """The one evaluation's plan, exactly as ``evalkit run`` would build it."""
        return RunPlan.build(
            range_id=range_id,
            run_id=run,
            judge=self.judge,
            ranges_dir=self.ranges_dir,
            runs_dir=self.runs_dir,
            out_dir=out_dir,
            notebook=self.notebook,
            base=self.workspace,
        )


@dataclass(frozen=True)
class Task:
    run: str
    range: str
    out_dir: Path
    settings: Settings

    @property
    def label(self) -> str:
        return f"{self.run}/{self.range}"


@dataclass(frozen=True)
class Outcome:
    run: str
    range: str
    status: str  # done | skipped | failed
    reason: str = ""
    seconds: float = 0.0


@dataclass
class BatchPlan:
    todo: list[Task]
    skipped: list[Task]
    failed: list[Outcome]  # pairs whose inputs could not even be read


def _matches(name: str, patterns: Sequence[str] | None) -> bool:
    return not patterns or any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)


def select_pairs(
    runs_dir: Path,
    ranges_dir: Path,
    runs: Sequence[str] | None = None,
    ranges: Sequence[str] | None = None,
) -> list[tuple[str, str]]:
    """(run, range) pairs: the runs and ranges matching the globs, where the run has documents."""
    if not runs_dir.is_dir():
        raise EvalkitError("runs folder is missing", path=runs_dir)
    if not ranges_dir.is_dir():
        raise EvalkitError("ranges folder is missing", path=ranges_dir)
    run_names = [name for name in list_runs(runs_dir) if _matches(name, runs)]
    range_names = [name for name in list_ranges(ranges_dir) if _matches(name, ranges)]
    pairs = [
        (run, range_id)
        for run in run_names
        for range_id in range_names
        if (runs_dir / run / range_id).is_dir()
    ]
    if not pairs:
        raise EvalkitError(
            "no run has documents for a selected range"
            f" (runs: {', '.join(runs or ['*'])}; ranges: {', '.join(ranges or ['*'])})",
            path=runs_dir,
        )
    return pairs


def _recorded_matches(
    out_dir: Path, runs_dir: Path, expected: dict[str, Any], with_notebook: bool
) -> bool:
    needed = [SCORES_FILENAME, REPORT_FILENAME, VERDICTS_FILENAME]
    if with_notebook:
        needed += [NOTEBOOK_NAME, HTML_NAME]
    if not all((out_dir / name).is_file() for name in needed):
        return False
    try:
        # Never through a link out of the runs folder: a planted scores.json is not "done".
        scores = read_json(out_dir / SCORES_FILENAME, runs_dir, what=SCORES_FILENAME)
        meta, summary = scores["meta"], scores["summary"]
        return bool(
            {
                "inputs": meta.get("inputs"),
                "judge": meta.get("judge"),
                "evaluator_model": meta.get("evaluator_model"),
                "prompt_sha256": meta.get("prompt_sha256"),
            }
            == expected
            and summary.get("complete") is True
        )
    except (EvalkitError, KeyError, TypeError, AttributeError):
        return False


def plan_batch(settings: Settings, pairs: Iterable[tuple[str, str]]) -> BatchPlan:
    """Check every pair's inputs and sort the pairs into to-do, already done, and unreadable.

    A judge that can tell it cannot run at all (``preflight``) stops the batch here,
    before anything is executed.
    """
    judge = settings.judge.build()  # once per batch: its identity and preflight
    info: JudgeInfo = judge.info
    workspace = Workspace.find(
        ranges_dir=settings.ranges_dir, runs_dir=settings.runs_dir, start=settings.workspace
    )
    cache = settings.judge.settings.get("cache_dir")
    if isinstance(cache, Path):
        workspace.check_out(cache)  # one cache for every pair: a link there stops the batch
    plan = BatchPlan(todo=[], skipped=[], failed=[])
    ranges = _Ranges()
    for run, range_id in pairs:
        try:
            # As the evaluation will read them (evalkit.prepare: the same confinement).
            pair = settings.plan(run, range_id)
            rng = ranges.of(pair)
            submission = load_submission_of(pair, rng)
            # Lexically, never resolved: a link planted in the run folder must not move it.
            # Written in place without a notebook, each output is checked before; with one,
            # the folder is swapped in whole.
            names = () if settings.with_notebook else IN_PROCESS_OUTPUTS
            out_dir = workspace.check_out(pair.out_dir, names)
        except EvalkitError as exc:
            plan.failed.append(Outcome(run, range_id, "failed", f"bad input: {exc}"))
            continue
        judge.preflight(rng, submission)
        task = Task(run, range_id, out_dir, settings)
        expected = {
            "inputs": {
                "checklist_sha256": rng.sha256,
                "report_sha256": submission.report.sha256,
                "plan_sha256": submission.plan.sha256,
            },
            "judge": info.name,
            "evaluator_model": info.evaluator_model,
            "prompt_sha256": info.prompt_sha256,
        }
        if not settings.force and _recorded_matches(
            task.out_dir, settings.runs_dir, expected, settings.with_notebook
        ):
            plan.skipped.append(task)
        else:
            plan.todo.append(task)
    return plan


def inputs_of(settings: Settings, tasks: Iterable[Task]) -> Iterator[tuple[Range, Submission]]:
    """Each task's range and documents, read as its evaluation reads them."""
    ranges = _Ranges()
    for task in tasks:
        plan = settings.plan(task.run, task.range, task.out_dir)
        rng = ranges.of(plan)
        yield rng, load_submission_of(plan, rng)


class _Ranges:
    """Each range read once for every run of a batch (as prepare reads it), a range that
    cannot be read failing every pair that names it."""

    def __init__(self) -> None:
        self._read: dict[str, Range | EvalkitError] = {}

    def of(self, plan: RunPlan) -> Range:
        if plan.range_id not in self._read:
            try:
                self._read[plan.range_id] = load_range_of(plan)
            except EvalkitError as exc:
                self._read[plan.range_id] = exc
        found = self._read[plan.range_id]
        if isinstance(found, EvalkitError):
            raise found
        return found
