"""``evalkit batch``: evaluate many runs x ranges, resumably, on workers or a Dask cluster."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..arguments import add_judge_arguments, add_workspace_arguments


def _globs(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [part for value in values for part in value.split(",") if part]


def register(commands: Any) -> None:
    batch = commands.add_parser(
        "batch",
        help="evaluate many runs x ranges: parallel, resumable, with an index of the results",
        description=(
            "Evaluate every selected (run, range) pair with the evaluation notebook, on N"
            " worker processes or an existing Dask cluster. Evaluations already done with the"
            " same inputs, judge, model and prompt are skipped (unless --force); failures are"
            " isolated and listed at the end (exit 1). Writes runs/index.csv, index.json,"
            " leaderboard.md and index.html."
        ),
    )
    batch.add_argument(
        "--runs",
        nargs="+",
        metavar="GLOB",
        help="runs to evaluate (globs, space- or comma-separated; default: every run)",
    )
    batch.add_argument(
        "--ranges",
        nargs="+",
        metavar="GLOB",
        help="ranges to evaluate (globs; default: every range a run has documents for)",
    )
    add_workspace_arguments(batch)
    batch.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="parallel worker processes, each running its own kernel (default: the cores)",
    )
    batch.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="run each evaluation as a task on this Dask cluster (shared storage; evalkit[dask])",
    )
    batch.add_argument(
        "--force",
        action="store_true",
        help="re-run evaluations already done, and replace a record even with a less complete"
        " one (more items errored)",
    )
    batch.add_argument(
        "--batch-api",
        action="store_true",
        help="with --judge claude: first ask every uncached judge request of the batch through"
        " the Message Batches API (half price, answered within 24 h) into the response cache,"
        " then run the evaluations from the cache",
    )
    batch.add_argument(
        "--batch-poll-interval",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="with --batch-api: seconds between two status checks of the batches (default 30)",
    )
    batch.add_argument(
        "--no-notebook",
        action="store_true",
        help="judge, score and write scores.json + report in-process, without notebooks"
        " (`evalkit record FOLDER` executes the notebook later from the recorded verdicts)",
    )
    batch.add_argument(
        "--fresh-kernels",
        action="store_true",
        help="start a new kernel process for every notebook, as before warm kernels"
        " (default: every record's kernel is forked from the batch's warm template)",
    )
    batch.add_argument(
        "--cell-timeout",
        type=float,
        metavar="SECONDS",
        help="fail an evaluation whose notebook cell runs longer than this (default: no limit)",
    )
    # --judge and every judge's settings, from the registry, as `evalkit run` has them.
    add_judge_arguments(batch)
    batch.add_argument(
        "--notebook", type=Path, metavar="PATH", help="a modified evaluation notebook to execute"
    )
    batch.add_argument("--quiet", action="store_true", help="no progress bar")
    batch.set_defaults(handler=cmd_batch)


def cmd_batch(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from .. import batch
    from ..arguments import given_paths, judge_config
    from ..errors import EvalkitError
    from ..workspace import Workspace, absolute

    if args.workers < 1:
        raise EvalkitError("--workers must be at least 1")
    if args.cell_timeout is not None and args.cell_timeout <= 0:
        raise EvalkitError("--cell-timeout must be positive")
    workspace = Workspace.from_args(args, args.notebook, *given_paths(args))
    if args.notebook is not None and not args.notebook.is_file():
        raise EvalkitError("notebook not found", path=args.notebook)
    workspace.require(workspace.runs_dir, "runs")
    workspace.require(workspace.ranges_dir, "ranges")
    # Absolute paths: a task may run in another process or on a Dask worker whose working
    # directory is not ours (the record still shows them relative to the workspace).
    settings = batch.Settings(
        ranges_dir=workspace.ranges_dir,
        runs_dir=workspace.runs_dir,
        judge=judge_config(args, workspace),
        notebook=absolute(args.notebook) if args.notebook else None,
        cell_timeout=args.cell_timeout,
        with_notebook=not args.no_notebook,
        workspace=workspace.root,
        force=args.force,
        fresh_kernels=args.fresh_kernels,
    )
    if args.batch_api:
        from ..judges.llm import anthropic_batches

        if args.batch_poll_interval < 0:
            raise EvalkitError("--batch-poll-interval must be >= 0")
        anthropic_batches.batch_judge(settings.judge)  # refuses any other judge before any work
    pairs = batch.select_pairs(
        workspace.runs_dir, workspace.ranges_dir, _globs(args.runs), _globs(args.ranges)
    )
    plan = batch.plan_batch(settings, pairs)
    if args.batch_api and plan.todo:
        judge = anthropic_batches.batch_judge(settings.judge)
        requests = anthropic_batches.collect_requests(judge, batch.inputs_of(settings, plan.todo))
        summary = anthropic_batches.fill_cache(
            judge,
            requests,
            poll_interval_s=args.batch_poll_interval,
            progress=not args.quiet,
        )
        print(summary.line())

    # The bar counts the evaluations that run, so its rate is theirs: what was skipped or
    # failed before any work is in its counts only.
    bar = tqdm(
        total=len(plan.todo),
        desc="batch",
        unit="eval",
        file=sys.stderr,
        disable=args.quiet,
        dynamic_ncols=True,
    )
    counts = {"done": 0, "skipped": len(plan.skipped), "failed": len(plan.failed)}
    bar.set_postfix(counts, refresh=True)

    finished: list[batch.Outcome] = []

    def on_outcome(outcome: batch.Outcome) -> None:
        finished.append(outcome)
        counts[outcome.status] += 1
        bar.set_postfix(counts, refresh=False)
        bar.update(1)

    # SIGINT or SIGTERM stops the evaluations in flight and starts no other; the index of
    # what is done is still written, then the interrupt ends the command (exit 130/143).
    interrupted: KeyboardInterrupt | None = None
    try:
        if args.scheduler:
            batch.run_dask(plan.todo, args.scheduler, on_outcome)
        else:
            batch.run_local(plan.todo, args.workers, on_outcome)
    except KeyboardInterrupt as exc:
        interrupted = exc
    finally:
        bar.close()
    outcomes = [*plan.failed, *finished]
    written = batch.write_index(workspace.runs_dir, settings.workspace)

    stopped = len(plan.todo) - len(finished)
    print(
        f"{len(pairs)} evaluations: {counts['done']} done, {counts['skipped']} skipped"
        f" (already up to date), {counts['failed']} failed"
        + (f", {stopped} stopped or not started" if interrupted is not None else "")
    )
    for name in ("csv", "json", "leaderboard", "html"):
        print(f"  {name}: {written[name]}")
    if interrupted is not None:
        raise interrupted
    table = batch.failure_table(outcomes)
    if table:
        print("failed evaluations:", file=sys.stderr)
        print(table, file=sys.stderr)
        return 1
    return 0
