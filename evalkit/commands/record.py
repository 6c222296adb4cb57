"""``evalkit record FOLDER``: execute the notebook record of an evaluation from its verdicts."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


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
    record.set_defaults(handler=cmd_record)


def cmd_record(args: argparse.Namespace) -> int:
    from ..replay import record_notebook
    from ..verify import locate_workspace

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
        )
        print(f"{folder}: {notebook.name} and {notebook.with_suffix('.html').name} written")
    return 0
