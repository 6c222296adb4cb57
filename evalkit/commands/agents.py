"""``evalkit agents RUN_A RUN_B``: A/B test of two agents' runs on the same ranges.

    evalkit agents RUN_A RUN_B [--judge J] [--ranges NAME ...] [--out DIR]
                   [--runs-dir DIR] [--seed N] [--bootstrap N]

Reads the existing evaluation records, ``runs/<run>/<range>/evaluations/<judge>/
scores.json`` (nothing is judged), and writes ``agents.json`` and
``agents-report.md`` into ``--out`` (default ``agents``): each run's detection and
plan percentages, never merged, and their paired differences with bootstrap
intervals over checkpoints, overall and per CAP, per range and pooled. A missing
evaluation is one line, exit 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ..arguments import add_workspace_arguments

    parser = commands.add_parser(
        "agents",
        help="A/B test two agents' runs on the same ranges (from their evaluation records)",
        description=(
            "Set two runs' evaluations by one judge side by side: detection and plan "
            "percentages per range and pooled, overall and per CAP, with the paired "
            "difference, a bootstrap interval over checkpoints and McNemar's exact test."
        ),
    )
    parser.add_argument("run_a", metavar="RUN_A", help="the baseline run")
    parser.add_argument("run_b", metavar="RUN_B", help="the run compared with it")
    parser.add_argument("--judge", default="rules", help="whose evaluations (default: rules)")
    parser.add_argument(
        "--ranges",
        nargs="+",
        metavar="NAME",
        help="ranges to compare (default: every range both runs have a folder for)",
    )
    parser.add_argument("--out", type=Path, metavar="DIR", help="default: agents/ in the workspace")
    add_workspace_arguments(parser, ranges=False)
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples"
    )
    parser.set_defaults(handler=cmd_agents)


def _range_folders(run_dir: Path) -> list[str]:
    return sorted(
        path.name for path in run_dir.iterdir() if path.is_dir() and not path.name.startswith(".")
    )


def cmd_agents(args: argparse.Namespace) -> int:
    from ..bounded import check_name
    from ..errors import EvalkitError
    from ..fileio import safe_name
    from ..research import agents
    from ..workspace import POINT_ELSEWHERE, Workspace

    if args.bootstrap < 0:
        raise EvalkitError("--bootstrap must be 0 or more")
    if args.run_a == args.run_b:
        raise EvalkitError("give two different runs")
    workspace = Workspace.from_args(args, args.out)
    names = (agents.JSON_NAME, agents.REPORT_NAME)
    out = workspace.check_out(args.out or workspace.root / "agents", names)
    runs_dir = workspace.runs_dir
    for run in (args.run_a, args.run_b):
        # A run is a folder of the runs folder: never "../other" or an absolute path.
        if not (runs_dir / check_name(run, "run id")).is_dir():
            raise EvalkitError(f"run folder is missing ({POINT_ELSEWHERE})", path=runs_dir / run)
    ranges = [r for part in (args.ranges or []) for r in part.split(",") if r.strip()]
    if not ranges:
        shared = set(_range_folders(runs_dir / args.run_b))
        ranges = [r for r in _range_folders(runs_dir / args.run_a) if r in shared]
    if not ranges:
        raise EvalkitError(f"{args.run_a} and {args.run_b} have no range folder in common")
    judge = safe_name(args.judge)
    # The records this reads are made by evaluating first: name every one missing, and the
    # one command that makes them all, before reading any.
    missing = [
        f"{run}/{r}"
        for run in (args.run_a, args.run_b)
        for r in ranges
        if not (runs_dir / run / r / "evaluations" / judge / "scores.json").is_file()
    ]
    if missing:
        from ..judges.registry import judge_names

        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        batch = f"evalkit batch --runs {args.run_a} {args.run_b}"
        how = (
            f"`{batch} --judge {judge}`"
            if judge in judge_names()
            else f"`{batch}` and the judge whose folder is {judge}"
        )
        raise EvalkitError(
            f"no {judge} evaluation of {missing[0]}{more}: evaluate both runs first, with"
            f" {how}, then run this again"
        )
    first = [agents.load_range_scores(runs_dir, args.run_a, r, judge) for r in ranges]
    second = [agents.load_range_scores(runs_dir, args.run_b, r, judge) for r in ranges]
    result = agents.compare_agents(
        first, second, judge=args.judge, resamples=args.bootstrap, seed=args.seed
    )
    paths = agents.write_outputs(result, workspace.make_out(out, names))
    for line in result.headline():
        print(line)
    for row in result.rows:
        if row.scope != "pooled" and row.group == "overall":
            print(f"  {row.verdict}")
    print(f"  report: {paths['report']}")
    print(f"  json:   {paths['json']}")
    return 0
