"""``evalkit calibrate``: measure a judge against the gold labels (executes calibrate.ipynb)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

CALIBRATION_NOTEBOOK = "calibrate.ipynb"
RECORD_NAME = "calibration.ipynb"


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "calibrate",
        help="measure a judge against the gold labels (executes the calibration notebook)",
        description=(
            "Evaluate every selected labelled (run, range) pair with the judge and compare it "
            "with the labels: per sub-score and penalty rule, pooled, per range and per run, "
            "with bootstrap 95 % intervals and the human band."
        ),
    )
    parser.add_argument("--judge", default="rules", help="judge backend (default: rules)")
    parser.add_argument(
        "--model", default="claude-sonnet-4-6", help="judge model (LLM judges only)"
    )
    parser.add_argument("--prompt-dir", type=Path, metavar="DIR", help="judge prompt templates")
    parser.add_argument(
        "--repeats", type=int, default=1, metavar="K", help="verdicts per checkpoint (default 1)"
    )
    parser.add_argument(
        "--pairs",
        default="all",
        metavar="SELECTION",
        help="all | tune | holdout | fresh (runs/gold-split.json) | comma list of run/range globs",
    )
    parser.add_argument(
        "--reference",
        metavar="LABELLER",
        default="",
        help="reference labeller of every pair, e.g. adjudicated"
        " (default: the first non-blind labeller by name)",
    )
    parser.add_argument("--runs-dir", type=Path, default=Path("runs"), metavar="DIR")
    parser.add_argument("--ranges-dir", type=Path, default=Path("ranges"), metavar="DIR")
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="output folder (default: calibration/<judge>)"
    )
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="bootstrap resamples (default 1000)",
    )
    parser.add_argument("--notebook", type=Path, metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(handler=cmd_calibrate)


def default_out_dir(judge: str, model: str) -> Path:
    return Path("calibration") / (judge if judge == "rules" else f"{judge}-{model}")


def cmd_calibrate(args: argparse.Namespace) -> int:
    from ..errors import EvalkitError
    from ..notebook import execute_notebook, template_path
    from ..research import calibration

    if args.bootstrap < 0:
        raise EvalkitError("--bootstrap must be 0 or more")
    prompt_dir = str(args.prompt_dir.resolve()) if args.prompt_dir else ""
    if args.prompt_dir and not args.prompt_dir.is_dir():
        raise EvalkitError("prompt folder is missing", path=args.prompt_dir)
    # Check every input before executing anything, so bad input overwrites nothing.
    pairs = calibration.select_pairs(args.runs_dir, args.pairs)
    judge = calibration.calibration_judge(
        args.judge, model=args.model, prompt_dir=prompt_dir, repeats=args.repeats
    )
    for rng, submission, labels in calibration.load_pairs(args.ranges_dir, args.runs_dir, pairs):
        if args.reference and args.reference not in {label.labeller for label in labels}:
            raise EvalkitError(
                f"{submission.run_id}/{rng.id} has no label by reference labeller"
                f" {args.reference!r}"
            )
        judge.preflight(rng, submission)
    out = (args.out or default_out_dir(args.judge, args.model)).resolve()
    if out.exists() and not out.is_dir():
        raise EvalkitError("output folder is a file", path=out)

    parameters = dict(
        judge=args.judge,
        model=args.model,
        prompt_dir=prompt_dir,
        repeats=args.repeats,
        pairs=args.pairs,
        runs_dir=str(args.runs_dir.resolve()),
        ranges_dir=str(args.ranges_dir.resolve()),
        seed=args.seed,
        bootstrap=args.bootstrap,
        reference=args.reference,
    )
    run = execute_notebook(
        args.notebook or template_path(CALIBRATION_NOTEBOOK),
        parameters,
        out,
        progress=not args.quiet,
        record_name=RECORD_NAME,
    )
    data = json.loads((out / calibration.JSON_NAME).read_text(encoding="utf-8"))
    pooled = data["agreement"]["pooled"][calibration.ALL_SUBSCORES]

    def number(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    modes = sum(1 for row in data["per_pair"] if row["mode_match"])
    print(
        f"{data['judge']['name']} on {len(data['pairs'])} pair(s): {pooled['n']} sub-scores, "
        f"accuracy {number(pooled['accuracy'])}, kappa {number(pooled['kappa'])}, "
        f"mode right on {modes}/{len(data['per_pair'])}"
    )
    print(f"  notebook: {run.notebook}")
    print(f"  report:   {out / calibration.REPORT_NAME}")
    print(f"  json:     {out / calibration.JSON_NAME}")
    return 0
