"""``evalkit calibrate``: measure a judge against the gold labels (executes calibrate.ipynb)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..arguments import add_judge_arguments, add_workspace_arguments
from ..judges.config import JudgeConfig
from ..workspace import read_json

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
    # The judge flags `evalkit run` takes, from the registry: a vLLM or Ollama server by
    # --base-url, a cache by --cache-dir, --concurrency, recorded answers by --verdicts ...
    add_judge_arguments(parser)
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
    add_workspace_arguments(parser)
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="output folder (default: calibration/<judge> in the workspace)",
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


def check_calibration(
    config: JudgeConfig,
    selection: str,
    runs_dir: Path,
    ranges_dir: Path,
    reference: str = "",
) -> list[tuple[str, str]]:
    """Every input checked before anything runs (exit 2 on a problem): the selection, every
    label file, the documents and the judge (``preflight``). Returns the selected pairs."""
    from ..errors import EvalkitError
    from ..research import calibration

    prompt_dir = config.settings.get("prompt_dir")
    if isinstance(prompt_dir, Path) and not prompt_dir.is_dir():
        raise EvalkitError("prompt folder is missing", path=prompt_dir)
    pairs = calibration.select_pairs(runs_dir, selection)
    judge = config.build()
    for rng, submission, labels in calibration.load_pairs(ranges_dir, runs_dir, pairs):
        if reference and reference not in {label.labeller for label in labels}:
            raise EvalkitError(
                f"{submission.run_id}/{rng.id} has no label by reference labeller {reference!r}"
            )
        judge.preflight(rng, submission)
    return pairs


def run_calibration(
    config: JudgeConfig,
    *,
    selection: str,
    runs_dir: Path,
    ranges_dir: Path,
    out: Path,
    seed: int,
    bootstrap: int,
    quiet: bool,
    notebook: Path | None = None,
    reference: str = "",
    root: Path | None = None,
) -> dict[str, Any]:
    """Execute the calibration notebook into ``out``; returns its ``calibration.json``.
    The inputs must have been checked (:func:`check_calibration`). ``root``: the folder
    below which no link is followed (default: ``out`` itself, a folder the user named,
    which then holds its lock and staging folder)."""
    from ..notebook import execute_notebook, template_path
    from ..research import calibration

    parameters = dict(
        # The judge as the evaluation notebook takes it: its name and every setting.
        **config.to_parameters(),
        pairs=selection,
        runs_dir=str(runs_dir.resolve()),
        ranges_dir=str(ranges_dir.resolve()),
        seed=seed,
        bootstrap=bootstrap,
        reference=reference,
    )
    execute_notebook(
        notebook or template_path(CALIBRATION_NOTEBOOK),
        parameters,
        out,
        root=root or out,
        progress=not quiet,
        record_name=RECORD_NAME,
    )
    data: dict[str, Any] = read_json(out / calibration.JSON_NAME, out)
    return data


def summary_line(data: Mapping[str, Any]) -> str:
    """The console line of a calibration: its pooled figures, rounded."""
    from ..research import calibration
    from ..research.report_format import fmt

    pooled = data["agreement"]["pooled"][calibration.ALL_SUBSCORES]
    interval = (pooled.get("ci95") or {}).get("kappa")
    modes = sum(1 for row in data["per_pair"] if row["mode_match"])
    kappa = fmt(pooled["kappa"]) + (
        f" [{fmt(interval[0])}, {fmt(interval[1])}]" if interval else ""
    )
    return (
        f"{data['judge']['name']} on {len(data['pairs'])} pair(s): {pooled['n']} sub-scores, "
        f"accuracy {fmt(pooled['accuracy'])}, kappa {kappa}, "
        f"mode right on {modes}/{len(data['per_pair'])}"
    )


def cmd_calibrate(args: argparse.Namespace) -> int:
    from ..arguments import given_paths, judge_config
    from ..errors import EvalkitError, JudgeError
    from ..research import calibration
    from ..workspace import Workspace

    if args.bootstrap < 0:
        raise EvalkitError("--bootstrap must be 0 or more")
    workspace = Workspace.from_args(args, args.out, args.notebook, *given_paths(args))
    config = judge_config(args, workspace)
    # Check every input before executing anything, so bad input overwrites nothing.
    runs_dir, ranges_dir = workspace.runs_dir, workspace.ranges_dir
    check_calibration(config, args.pairs, runs_dir, ranges_dir, args.reference)
    # The default folder is named as an evaluation folder is: one safe name, never a path.
    out = workspace.check_out(args.out or workspace.root / "calibration" / config.folder_name())
    cache = config.settings.get("cache_dir")
    if isinstance(cache, Path):
        workspace.check_out(cache)
    data = run_calibration(
        config,
        selection=args.pairs,
        runs_dir=runs_dir,
        ranges_dir=ranges_dir,
        out=out,
        seed=args.seed,
        bootstrap=args.bootstrap,
        quiet=args.quiet,
        notebook=args.notebook,
        reference=args.reference,
    )
    print(summary_line(data))
    print(f"  notebook: {out / RECORD_NAME}")
    print(f"  report:   {out / calibration.REPORT_NAME}")
    print(f"  json:     {out / calibration.JSON_NAME}")
    pooled = data["agreement"]["pooled"][calibration.ALL_SUBSCORES]
    if not pooled["n"]:
        # Nothing was measured: a judge that answered nothing is a failure, not a result.
        errors = data.get("judge_errors") or []
        first = f" (first, {errors[0].get('chk_id')}: {errors[0].get('error')})" if errors else ""
        raise JudgeError(
            f"the judge answered nothing: {len(errors)} checkpoint(s) errored, no sub-score"
            f" to compare{first}"
        )
    return 0
