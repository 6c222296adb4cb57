"""``evalkit record FOLDER``: execute the notebook record of an evaluation from its verdicts."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..kernels import KernelPool


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
    from ..verify import locate_workspace

    # One warm template for all the folders: each record gets a kernel forked from it.
    kernels = None if args.fresh_kernels else worker_pool()
    try:
        for folder in args.folders:
            ranges_dir, runs_dir = args.ranges_dir, args.runs_dir
            if ranges_dir is None or runs_dir is None:
                found_ranges, found_runs = locate_workspace(folder)
                ranges_dir, runs_dir = ranges_dir or found_ranges, runs_dir or found_runs
            notebook = record_notebook(
                folder,
                ranges_dir=ranges_dir,
                runs_dir=runs_dir,
                workspace=runs_dir.resolve().parent,
                notebook=args.notebook,
                cell_timeout=args.cell_timeout,
                kernels=kernels,
            )
            print(f"{folder}: {notebook.name} and {notebook.with_suffix('.html').name} written")
    finally:
        close_worker_pool()
    return 0


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
    from ..replay import read_scores
    from ..runplan import RunPlan

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
    result = execute(
        plan, progress=False, cell_timeout=cell_timeout, workspace=workspace, kernels=kernels
    )
    return result.notebook
