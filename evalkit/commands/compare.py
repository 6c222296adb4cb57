"""``evalkit compare A B [C ...]``: evaluations of the same runs side by side (compare.ipynb)."""

from __future__ import annotations

import argparse
from pathlib import Path

COMPARE_NOTEBOOK = "compare.ipynb"
RECORD_NAME = "compare.ipynb"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "compare",
        help="compare evaluations of the same runs (executes the comparison notebook)",
        description=(
            "Compare evaluation folders (each holds scores.json, or many below it) with the "
            "first one: what changed per checkpoint and sub-score, deltas per dimension, CAP "
            "and range, diagnostic modes, kappa, and a leaderboard. Evaluations of one run "
            "and range from different checklist or documents are refused."
        ),
    )
    parser.add_argument(
        "evaluations", nargs="+", type=Path, metavar="FOLDER", help="the first is the baseline"
    )
    parser.add_argument(
        "--name",
        dest="names",
        action="append",
        default=[],
        metavar="NAME",
        help="a short name per folder, in order (repeatable)",
    )
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="default: comparison/ in the workspace"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples"
    )
    parser.add_argument("--notebook", type=Path, metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--quiet", action="store_true", help="no progress output")
    parser.set_defaults(handler=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    from ..errors import EvalkitError
    from ..notebook import execute_notebook, template_path
    from ..research import compare
    from ..workspace import Workspace, absolute, read_json

    if args.bootstrap < 0:
        raise EvalkitError("--bootstrap must be 0 or more")
    if len(args.names) > len(args.evaluations):
        raise EvalkitError("more --name than evaluation folders")
    if any("," in str(path) for path in args.evaluations) or any("," in n for n in args.names):
        raise EvalkitError("evaluation folders and names may not contain a comma")
    workspace = Workspace.from_args(args, args.out, args.notebook, *args.evaluations)
    folders = [absolute(path) for path in args.evaluations]
    # Refuse bad input (missing folders, mixed inputs) before executing anything.
    compare.load_sets(folders, args.names)
    out = workspace.check_out(args.out or workspace.root / "comparison")
    parameters = dict(
        evaluations=",".join(str(path) for path in folders),
        names=",".join([*args.names, *map(str, args.evaluations[len(args.names) :])]),
        seed=args.seed,
        bootstrap=args.bootstrap,
    )
    run = execute_notebook(
        args.notebook or template_path(COMPARE_NOTEBOOK),
        parameters,
        out,
        root=out,  # a folder the user named: its lock and staging folder stay inside it
        progress=not args.quiet,
        record_name=RECORD_NAME,
    )
    data = read_json(out / compare.JSON_NAME, out)
    for line in data["summary"]:
        print(line)
    print(f"  notebook: {run.notebook}")
    print(f"  report:   {out / compare.REPORT_NAME}")
    print(f"  json:     {out / compare.JSON_NAME}")
    return 0
