"""``evalkit record FOLDER``: execute the notebook record of an evaluation from its verdicts."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..kernels import KernelPool
    from ..runplan import RunPlan
    from ..workspace import Workspace


def register(commands: Any) -> None:
    record = commands.add_parser(
        "record",
        help="execute the notebook record (and its HTML) of an evaluation from its recorded"
        " verdicts, without judging again (after `evalkit batch --no-notebook`)",
    )
    record.add_argument("folders", nargs="+", type=Path, metavar="FOLDER")
    record.add_argument("--ranges-dir", type=Path, metavar="DIR")
    record.add_argument("--runs-dir", type=Path, metavar="DIR")
    record.add_argument("--notebook", type=Path, metavar="PATH")
    record.add_argument("--cell-timeout", type=float, metavar="SECONDS")
    record.add_argument(
        "--fresh-kernels",
        action="store_true",
        help="start a new kernel process for every folder (default: fork each folder's kernel"
        " from one warm template)",
    )
    record.set_defaults(handler=cmd_record)


def cmd_record(args: argparse.Namespace) -> int:
    # Imported on use, as every command module does: each is loaded to build the parser,
    # and `evalkit --help` must not pay for the record's machinery (jsonschema included).
    from ..kernels import close_worker_pool, worker_pool
    from ..notebook import execute
    from ..verify import locate_workspace
    from ..workspace import Workspace, absolute

    # Every folder and record is checked before any notebook runs: no folder reached
    # through a link, every recorded input and verdict readable.
    plans = []
    for folder in map(absolute, args.folders):
        ranges_dir, runs_dir = args.ranges_dir, args.runs_dir
        if ranges_dir is None or runs_dir is None:
            found_ranges, found_runs = locate_workspace(folder)
            ranges_dir, runs_dir = ranges_dir or found_ranges, runs_dir or found_runs
        workspace = Workspace.find(ranges_dir=ranges_dir, runs_dir=runs_dir, named=[args.notebook])
        plans.append(record_plan(workspace.check_out(folder), workspace, notebook=args.notebook))
    # One warm template for all the folders: each record gets a kernel forked from it.
    kernels = None if args.fresh_kernels else worker_pool()
    try:
        for plan in plans:
            result = execute(
                plan,
                progress=False,
                cell_timeout=args.cell_timeout,
                workspace=plan.runs_dir.parent,
                kernels=kernels,
            )
            notebook = result.notebook
            print(
                f"{plan.out_dir}: {notebook.name} and {notebook.with_suffix('.html').name} written"
            )
    finally:
        close_worker_pool()
    return 0


def record_plan(folder: Path, workspace: Workspace, *, notebook: Path | None = None) -> RunPlan:
    """The plan replaying the evaluation recorded in ``folder``, its inputs and recorded
    verdicts checked (bad input, exit 2, before anything runs)."""
    from ..prepare import build_judge, load_inputs
    from ..replay import read_scores
    from ..runplan import RunPlan
    from ..workspace import absolute, within

    # As written, never resolved: a link planted on the way must not move the folder.
    folder, runs_dir = absolute(folder), workspace.runs_dir
    root = runs_dir if within(folder, runs_dir) else folder
    meta = read_scores(folder, root=root).get("meta", {})
    plan = RunPlan.build(
        range_id=str(meta.get("range")),
        run_id=str(meta.get("run_id")),
        judge=str(meta.get("judge") or "rules"),
        ranges_dir=workspace.ranges_dir,
        runs_dir=runs_dir,
        out_dir=folder,
        model_under_test=str(meta.get("model_under_test") or ""),
        notebook=notebook,
        replay_from=folder,
    )
    rng, submission = load_inputs(plan)
    build_judge(plan).preflight(rng, submission)
    return plan


def record_notebook(
    folder: str | Path,
    *,
    ranges_dir: Path,
    runs_dir: Path,
    workspace: Path | None = None,
    notebook: Path | None = None,
    cell_timeout: float | None = None,
    kernels: KernelPool | None = None,
) -> Path:
    """Execute the evaluation notebook for the evaluation recorded in ``folder``, replaying
    its verdicts (nothing is judged again); returns the executed notebook's path.

    The notebook rewrites ``scores.json`` and the report from the same verdicts, timestamp
    and usage, so they come out as they were (``meta.execution`` says how this notebook ran).
    With ``kernels``, its kernel is forked from that warm pool.
    """
    from ..notebook import execute
    from ..workspace import Workspace

    plan = record_plan(
        Path(folder), Workspace.find(ranges_dir=ranges_dir, runs_dir=runs_dir), notebook=notebook
    )
    result = execute(
        plan, progress=False, cell_timeout=cell_timeout, workspace=workspace, kernels=kernels
    )
    return result.notebook
