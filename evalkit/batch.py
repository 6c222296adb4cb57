"""Evaluate many (run, range) pairs at once: selection, workers, resume, failures, index.

:func:`plan_batch` picks the pairs (globs over runs and ranges; by default every
run x every range it has documents for) and decides which are already done: an
evaluation is skipped when its outputs are all there, its summary is complete and
its recorded input hashes, judge, judge model and prompt hash match today's. The
rest run through :func:`run_task`, which executes the evaluation notebook through
:func:`evalkit.notebook.execute` (the path ``evalkit run`` takes), one task per
worker process (``concurrent.futures``) or per Dask task (``--scheduler``), each in a
kernel forked for it from its worker's warm template (:mod:`evalkit.kernels`; with
``fresh_kernels``, a new kernel process per notebook, as ``evalkit run`` starts). A task
never raises: a failing cell, a cell timeout or a dead kernel comes back as a
failed :class:`Outcome` with its reason, and the batch goes on. With
``notebook=False`` the same evaluation runs in-process through the Python API.

:func:`write_index` then writes ``index.csv``, ``index.json``, ``leaderboard.md``
and ``index.html`` into the runs folder, from every ``scores.json`` under it.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checklist import list_ranges, load_range
from .errors import EvalkitError, OutputError
from .judges import Judge
from .judges.config import JudgeConfig
from .model import JudgeInfo, Range, Submission
from .notebook import HTML_NAME, NOTEBOOK_NAME
from .render import JUDGMENTS_FILENAME, REPORT_FILENAME, SCORES_FILENAME
from .render.mdcell import md_cell
from .render.verdicts_json import VERDICTS_FILENAME
from .runplan import RunPlan
from .runs import list_runs, load_submission
from .workspace import Workspace, read_json

INDEX_COLUMNS: tuple[str, ...] = (
    "run",
    "range",
    "judge",
    "model",
    "prompt_version",
    "detection_pct",
    "plan_pct",
    "mode",
    "complete",
    "errored_items",
    "cost_usd",
    "path",
    "model_under_test",
)
LEADERBOARD_RESAMPLES = 1000
# What an evaluation without a notebook writes into its folder (render.write_outputs).
IN_PROCESS_OUTPUTS = (SCORES_FILENAME, REPORT_FILENAME, VERDICTS_FILENAME, JUDGMENTS_FILENAME)
INDEX_CSV, INDEX_JSON, LEADERBOARD_MD, INDEX_HTML = (
    "index.csv",
    "index.json",
    "leaderboard.md",
    "index.html",
)


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
    # Replace a record even with a less complete one (more items errored).
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

    def make_judge(self) -> Judge:
        return self.judge.build()


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


def out_dir_for(settings: Settings, run: str, range_id: str) -> Path:
    return settings.plan(run, range_id).out_dir


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


def plan_batch(
    settings: Settings, pairs: Iterable[tuple[str, str]], *, force: bool = False
) -> BatchPlan:
    """Check every pair's inputs and sort the pairs into to-do, already done, and unreadable.

    A judge that can tell it cannot run at all (``preflight``) stops the batch here,
    before anything is executed.
    """
    judge = settings.make_judge()
    info: JudgeInfo = judge.info
    workspace = Workspace.find(
        ranges_dir=settings.ranges_dir, runs_dir=settings.runs_dir, start=settings.workspace
    )
    cache = settings.judge.settings.get("cache_dir")
    if isinstance(cache, Path):
        workspace.check_out(cache)  # one cache for every pair: a link there stops the batch
    plan = BatchPlan(todo=[], skipped=[], failed=[])
    ranges: dict[str, Range | EvalkitError] = {}
    for run, range_id in pairs:
        try:
            if range_id not in ranges:
                try:
                    ranges[range_id] = load_range(settings.ranges_dir, range_id)
                except EvalkitError as exc:
                    ranges[range_id] = exc
            rng = ranges[range_id]
            if isinstance(rng, EvalkitError):
                raise rng
            submission = load_submission(settings.runs_dir, run, rng)
            # Lexically, never resolved: a link planted in the run folder must not move it.
            # Written in place without a notebook, each output is checked before; with one,
            # the folder is swapped in whole.
            names = () if settings.with_notebook else IN_PROCESS_OUTPUTS
            out_dir = workspace.check_out(out_dir_for(settings, run, range_id), names)
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
        if not force and _recorded_matches(
            task.out_dir, settings.runs_dir, expected, settings.with_notebook
        ):
            plan.skipped.append(task)
        else:
            plan.todo.append(task)
    return plan


def inputs_of(settings: Settings, tasks: Iterable[Task]) -> Iterator[tuple[Range, Submission]]:
    """Each task's range and documents, read as its evaluation reads them."""
    for task in tasks:
        rng = load_range(settings.ranges_dir, task.range)
        yield rng, load_submission(settings.runs_dir, task.run, rng)


# --------------------------------------------------------------------------- one task


def run_task(task: Task) -> Outcome:
    """Evaluate one (run, range); never raises, so one failure cannot stop the batch."""
    started = time.perf_counter()
    try:
        if task.settings.with_notebook:
            _execute_notebook(task)
        else:
            evaluate_in_process(task)
    except EvalkitError as exc:
        return Outcome(task.run, task.range, "failed", str(exc), time.perf_counter() - started)
    except Exception as exc:  # a bug or an environment failure: still only this task's
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
        return Outcome(task.run, task.range, "failed", reason, time.perf_counter() - started)
    return Outcome(task.run, task.range, "done", "", time.perf_counter() - started)


def _execute_notebook(task: Task) -> None:
    from .kernels import worker_pool
    from .notebook import execute

    settings = task.settings
    execute(
        settings.plan(task.run, task.range, task.out_dir),
        progress=False,
        cell_timeout=settings.cell_timeout,
        workspace=settings.workspace,
        force=settings.force,
        # This worker's warm kernels, on a local worker and on a Dask worker alike.
        kernels=None if settings.fresh_kernels else worker_pool(),
    )


def evaluate_in_process(task: Task) -> None:
    """The fast path: judge, ground, score and write scores.json + report, no notebook.

    Under the folder's lock, created without following a link below the runs folder;
    an evaluation less complete than the record there is written aside, not over it.
    """
    from .fileio import evaluation_lock, make_folder
    from .notebook import aside_folder, errored_items, less_complete
    from .pipeline import evaluate
    from .render import write_outputs

    settings = task.settings
    rng = load_range(settings.ranges_dir, task.range)
    submission = load_submission(settings.runs_dir, task.run, rng)
    judge = settings.make_judge()
    evaluation = evaluate(rng, submission, judge)
    runs_dir = settings.runs_dir
    with evaluation_lock(task.out_dir, root=runs_dir):
        old = errored_items(task.out_dir, runs_dir)
        reason = not settings.force and less_complete(len(evaluation.summary.errored), old)
        folder = aside_folder(task.out_dir, runs_dir) if reason else task.out_dir
        write_outputs(evaluation, make_folder(folder, root=runs_dir))
    if reason:
        raise OutputError(f"{reason}: the new one is kept in {folder} (--force replaces)")


# --------------------------------------------------------------------------- engines

OnOutcome = Callable[[Outcome], None]


def run_local(tasks: Sequence[Task], workers: int, on_outcome: OnOutcome) -> list[Outcome]:
    """Run ``tasks`` on ``workers`` processes (in this process for the no-notebook path).

    A ``KeyboardInterrupt`` (SIGINT, or SIGTERM as :class:`evalkit.signals.Terminated`)
    stops the batch within the evaluations in flight: no queued task starts, every
    worker stops its evaluation (its kernel shut down) and ends, then it is re-raised.
    """
    if not tasks:
        return []
    if not tasks[0].settings.with_notebook:
        outcomes = []
        for task in tasks:
            outcome = run_task(task)
            on_outcome(outcome)
            outcomes.append(outcome)
        return outcomes
    from .kernels.workers import local_workers, run

    outcomes = []
    # Each worker is a process of its own (and each notebook a kernel of its own), so the
    # batch survives whatever one evaluation does. Workers ignore Ctrl-C: on an interrupt,
    # this process cancels what has not started and stops them (evalkit.kernels.workers).
    fresh = tasks[0].settings.fresh_kernels
    with local_workers(max(1, workers), fresh_kernels=fresh) as (pool, interrupt):
        futures: dict[Future[Outcome], Task] = {
            pool.submit(run, run_task, task): task for task in tasks
        }
        try:
            for future in as_completed(futures):
                outcome = _result(future, futures[future])
                on_outcome(outcome)
                outcomes.append(outcome)
        except KeyboardInterrupt:
            interrupt()
            raise
    return outcomes


def _result(future: Future[Outcome], task: Task) -> Outcome:
    try:
        return future.result()
    except Exception as exc:  # the worker process itself died
        reason = f"worker process died: {type(exc).__name__}: {exc}".splitlines()[0]
        return Outcome(task.run, task.range, "failed", reason)


def run_dask(tasks: Sequence[Task], scheduler: str, on_outcome: OnOutcome) -> list[Outcome]:
    """Run each task on an existing Dask cluster; workers must share this file system."""
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError as exc:
        raise EvalkitError(
            "--scheduler needs dask.distributed: pip install 'evalkit[dask]'"
        ) from exc
    if not tasks:
        return []
    outcomes = []
    try:
        client = Client(scheduler, timeout=30)  # type: ignore[no-untyped-call]
    except OSError as exc:
        raise EvalkitError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from exc
    with client:
        futures = client.map(run_task, list(tasks), pure=False, key=[_dask_key(t) for t in tasks])
        by_key = {future.key: task for future, task in zip(futures, tasks, strict=True)}
        for future in dask_completed(futures):  # type: ignore[no-untyped-call]
            task = by_key[future.key]
            try:
                outcome = future.result()
            except Exception as exc:  # the Dask worker died or the task was lost
                reason = f"Dask task failed: {type(exc).__name__}: {exc}".splitlines()[0]
                outcome = Outcome(task.run, task.range, "failed", reason)
            on_outcome(outcome)
            outcomes.append(outcome)
    return outcomes


def _dask_key(task: Task) -> str:
    return f"evalkit-{task.run}-{task.range}-{os.getpid()}-{time.monotonic_ns()}"


# --------------------------------------------------------------------------- index


def _relative(path: Path, workspace: Path) -> str:
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)


def index_rows(runs_dir: Path, workspace: Path) -> list[dict[str, Any]]:
    """One row per evaluation found under ``runs_dir`` (every judge), in run, range order."""
    rows = []
    for scores_path in sorted(runs_dir.glob(f"*/*/evaluations/*/{SCORES_FILENAME}")):
        # Hidden folders are staged, retired or kept-aside evaluations, not records; and a
        # record is read only through names that stay in the runs folder.
        if any(part.startswith(".") for part in scores_path.relative_to(runs_dir).parts):
            continue
        try:
            scores = read_json(scores_path, runs_dir, what=SCORES_FILENAME)
            meta, summary = scores["meta"], scores["summary"]
            if not isinstance(meta, dict) or not isinstance(summary, dict):
                continue
            checkpoint_scores = _checkpoint_scores(scores)
            detection_pct, plan_pct = summary["detection"]["pct"], summary["plan"]["pct"]
        except (EvalkitError, KeyError, TypeError, ValueError, AttributeError):
            continue
        folder = scores_path.parent
        html = folder / HTML_NAME
        rows.append(
            {
                "run": meta.get("run_id"),
                "range": meta.get("range"),
                "judge": meta.get("judge"),
                "model": meta.get("evaluator_model"),
                "prompt_version": meta.get("prompt_version"),
                "detection_pct": detection_pct,
                "plan_pct": plan_pct,
                "mode": summary.get("diagnosis"),
                "complete": summary.get("complete"),
                "errored_items": len(summary.get("errored") or ()),
                "cost_usd": (meta.get("usage") or {}).get("cost_usd"),
                "path": _relative(folder, workspace),
                "model_under_test": meta.get("model_under_test"),
                # Where index.html links: the HTML record, else the Markdown report.
                "html": str(html) if html.is_file() else None,
                "report": str(folder / REPORT_FILENAME),
                # Each scored checkpoint's (score, max) per dimension: the leaderboard's
                # bootstrap resamples them. Not an index column.
                "checkpoint_scores": checkpoint_scores,
            }
        )
    return rows


def _checkpoint_scores(scores: Mapping[str, Any]) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {"detection": [], "plan": []}
    for item in scores.get("checkpoints") or []:
        if not isinstance(item, dict) or item.get("status") == "error":
            continue
        for dimension, found in out.items():
            block = item.get(dimension)
            if isinstance(block, dict) and "total" in block and "max" in block:
                found.append((int(block["total"]), int(block["max"])))
    return out


def _with_interval(mean: float | None, runs: Sequence[dict[str, Any]], dimension: str) -> str:
    """``66.7 [55.0, 78.3]``: the mean with its 95 % bootstrap interval over checkpoints."""
    from .research.agents import mean_pct_interval

    if mean is None:
        return "N/A"
    interval = mean_pct_interval(
        [(row.get("checkpoint_scores") or {}).get(dimension) or [] for row in runs],
        resamples=LEADERBOARD_RESAMPLES,
        seed=0,
    )
    return f"{mean} [{interval[0]:.1f}, {interval[1]:.1f}]" if interval else f"{mean}"


def _csv_text(rows: Sequence[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(INDEX_COLUMNS), extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if row[key] is None else row[key] for key in INDEX_COLUMNS})
    return buffer.getvalue()


def _mean(values: Sequence[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return round(sum(known) / len(known), 1) if known else None


def leaderboard_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """Runs ranked per judge by mean detection %, then mean plan %: two columns, never merged."""
    lines = [
        "# Leaderboard",
        "",
        "Mean detection % and mean plan % over the ranges each run was evaluated on, per judge,",
        "each with a 95 % bootstrap interval (checkpoints resampled within each range,",
        f"{LEADERBOARD_RESAMPLES} resamples, seed 0). The two dimensions are never merged;",
        "runs are ordered by detection, then plan.",
        "",
    ]
    for judge in sorted({(row["judge"], row["model"]) for row in rows}, key=str):
        mine = [row for row in rows if (row["judge"], row["model"]) == judge]
        lines += [
            f"## Judge {judge[0]} ({judge[1]})",
            "",
            "| rank | run | model under test | ranges | detection % | plan % | modes | complete |",
            "|---:|---|---|---:|---:|---:|---|---|",
        ]
        by_run: dict[str, list[dict[str, Any]]] = {}
        for row in mine:
            by_run.setdefault(str(row["run"]), []).append(row)
        ranked = sorted(
            by_run.items(),
            key=lambda item: (
                -(_mean([r["detection_pct"] for r in item[1]]) or -1.0),
                -(_mean([r["plan_pct"] for r in item[1]]) or -1.0),
                item[0],
            ),
        )
        for rank, (run, runs) in enumerate(ranked, start=1):
            detection = _mean([r["detection_pct"] for r in runs])
            plan = _mean([r["plan_pct"] for r in runs])
            modes = ", ".join(f"{r['range']}: {r['mode'] or 'no diagnosis'}" for r in runs)
            complete = "yes" if all(r["complete"] for r in runs) else "no"
            model = next((r["model_under_test"] for r in runs if r["model_under_test"]), "")
            lines.append(
                f"| {md_cell(rank)} | {md_cell(run)} | {md_cell(model or 'unknown')} | "
                f"{len(runs)} | {_with_interval(detection, runs, 'detection')} | "
                f"{_with_interval(plan, runs, 'plan')} | {md_cell(modes)} | {complete} |"
            )
        lines.append("")
    return "\n".join(lines)


def write_index(runs_dir: Path, workspace: Path) -> dict[str, Path]:
    """Write index.csv, index.json, leaderboard.md and index.html into ``runs_dir``."""
    from .render import write_text_atomic
    from .render.html import write_index_html

    rows = index_rows(runs_dir, workspace)
    public = [{key: row[key] for key in INDEX_COLUMNS} for row in rows]
    return {
        "csv": write_text_atomic(runs_dir / INDEX_CSV, _csv_text(rows)),
        "json": write_text_atomic(
            runs_dir / INDEX_JSON, json.dumps(public, indent=2, ensure_ascii=False) + "\n"
        ),
        "leaderboard": write_text_atomic(runs_dir / LEADERBOARD_MD, leaderboard_markdown(rows)),
        "html": write_index_html(rows, runs_dir / INDEX_HTML, "evalkit evaluations"),
    }


def failure_table(outcomes: Iterable[Outcome]) -> str:
    failed = [outcome for outcome in outcomes if outcome.status == "failed"]
    if not failed:
        return ""
    width_run = max(len("run"), *(len(o.run) for o in failed))
    width_range = max(len("range"), *(len(o.range) for o in failed))
    lines = [f"{'run':<{width_run}}  {'range':<{width_range}}  reason"]
    lines += [f"{o.run:<{width_run}}  {o.range:<{width_range}}  {o.reason}" for o in failed]
    return "\n".join(lines)
