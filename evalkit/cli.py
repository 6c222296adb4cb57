"""The ``evalkit`` command line.

    evalkit run --range NAME --run RUN_ID [--ranges-dir DIR] [--runs-dir DIR]
                [--judge rules|claude] [--model M] [--out DIR] ...
    evalkit validate PATH...
    evalkit ranges [--ranges-dir DIR]

Every failure is one line on stderr. Exit codes: 0 when every item was scored;
3 when the evaluation is complete on disk but some items errored (0 with
--allow-incomplete); 1 for a failure (judge, notebook, output); 2 for bad input
(checklist, run folder, arguments).
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import __version__
from .arguments import (
    add_judge_arguments,
    add_workspace_arguments,
    check_writable_folder,
    given_paths,
    judge_config,
    prompt_dir_arg,
)
from .bounded import check_name
from .checklist import CHECKLIST_FILENAME, list_ranges, load_checklist, load_range
from .errors import (
    ChecklistError,
    ChecklistErrors,
    EvalkitError,
    JudgeError,
    JudgeInputError,
    NotebookError,
    OutputError,
    one_line,
)
from .judges import DEFAULT_CLAUDE_MODEL
from .runs import load_submission
from .signals import exit_code, terminate_as_interrupt
from .workspace import POINT_ELSEWHERE, Workspace, absolute

if TYPE_CHECKING:
    from .model import Tally
    from .render.scores_json import ScoresSummary

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INCOMPLETE = 0, 1, 2, 3
DEFAULT_MODEL = DEFAULT_CLAUDE_MODEL


def _add_run_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = commands.add_parser(
        "run",
        help="evaluate a run on one or more ranges (executes the notebook with papermill)",
        description="Evaluate the detection agent's documents of a run against range checklists.",
    )
    run.add_argument(
        "--range",
        dest="ranges",
        action="append",
        metavar="NAME",
        help="range to evaluate (repeatable)",
    )
    run.add_argument(
        "--all-ranges", action="store_true", help="evaluate every range the run has documents for"
    )
    run.add_argument(
        "--run", required=True, metavar="RUN_ID", help="the run folder under --runs-dir"
    )
    add_workspace_arguments(run)
    add_judge_arguments(run)
    run.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="output folder (default: runs/<run>/<range>/evaluations/<judge>)",
    )
    run.add_argument(
        "--model-under-test",
        default="",
        metavar="MODEL",
        help="the detection agent's model (default: from run.yaml)",
    )
    run.add_argument(
        "--notebook",
        type=Path,
        metavar="PATH",
        help="a modified evaluation notebook to execute (default: notebooks/evaluate.ipynb)",
    )
    run.add_argument(
        "--allow-outside-inputs",
        action="store_true",
        help="read inputs that resolve (through symlinks) outside --ranges-dir/--runs-dir;"
        " scores.json records it as meta.inputs_outside",
    )
    run.add_argument(
        "--force",
        action="store_true",
        help="replace the evaluation even with a less complete one (more items errored);"
        " without it, such a run is kept aside and exits 1",
    )
    run.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="exit 0, not 3, when the evaluation was written but some items errored",
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.set_defaults(handler=cmd_run)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="evalkit",
        description="Score a detection agent's report and remediation plan against a range"
        " checklist, item by item, with a judge whose every point rests on a verbatim quote.",
    )
    parser.add_argument("--version", action="version", version=f"evalkit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run_parser(commands)

    validate = commands.add_parser(
        "validate", help="check checklists and gold label files; print every error as file:line"
    )
    validate.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="PATH",
        help="a checklist.md, a range folder, a folder of ranges, a label file, a labels"
        " folder, or a folder with labels/*.json below it",
    )
    validate.set_defaults(handler=cmd_validate)

    estimate = commands.add_parser(
        "estimate",
        help="the expected tokens and cost of judging a run with Claude, before running it",
    )
    estimate.add_argument("--range", dest="ranges", action="append", metavar="NAME")
    estimate.add_argument("--all-ranges", action="store_true")
    estimate.add_argument("--run", required=True, metavar="RUN_ID")
    add_workspace_arguments(estimate)
    estimate.add_argument("--model", default=DEFAULT_MODEL)
    estimate.add_argument("--prompt-dir", type=prompt_dir_arg, metavar="DIR")
    estimate.add_argument(
        "--repeats", type=int, default=1, metavar="K", help="samples per item (default: 1)"
    )
    estimate.add_argument(
        "--count-tokens",
        action="store_true",
        help="count input tokens with the API's free counting endpoint (needs ANTHROPIC_API_KEY);"
        " default: a local estimate, no network",
    )
    estimate.add_argument("--json", action="store_true", help="machine-readable output")
    estimate.set_defaults(handler=cmd_estimate)

    ranges = commands.add_parser("ranges", help="list the ranges")
    add_workspace_arguments(ranges, runs=False)
    ranges.add_argument("--json", action="store_true", help="machine-readable output")
    ranges.set_defaults(handler=cmd_ranges)
    _add_command_modules(commands)
    return parser


def _add_command_modules(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Subcommands that live in their own module under :mod:`evalkit.commands`.

    Each module defines ``register(commands)``, which adds its parser and sets
    ``handler``; a new command is a new module, with no edit here.
    """
    import importlib
    import pkgutil

    from . import commands as command_package

    for info in sorted(pkgutil.iter_modules(command_package.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{command_package.__name__}.{info.name}")
        module.register(commands)


# --------------------------------------------------------------------------- run


def _ranges_of_run(args: argparse.Namespace, workspace: Workspace) -> list[str]:
    if args.all_ranges and args.ranges:
        raise EvalkitError("give --range or --all-ranges, not both")
    check_name(args.run, "run id")
    if args.all_ranges:
        run_dir = workspace.runs_dir / args.run
        if not run_dir.is_dir():
            raise EvalkitError(f"run folder is missing ({POINT_ELSEWHERE})", path=run_dir)
        names = [name for name in list_ranges(workspace.ranges_dir) if (run_dir / name).is_dir()]
        if not names:
            raise EvalkitError(
                f"no range of {workspace.ranges_dir} has documents in this run", path=run_dir
            )
        return names
    if not args.ranges:
        raise EvalkitError("give --range NAME (repeatable) or --all-ranges")
    return list(args.ranges)


def cmd_run(args: argparse.Namespace) -> int:
    from .notebook import execute
    from .prepare import build_judge, check_out_dir, load_inputs
    from .render.scores_json import read_scores_summary
    from .runplan import RunPlan

    workspace = Workspace.from_args(args, args.out, args.notebook, *given_paths(args))
    names = _ranges_of_run(args, workspace)
    # One judge configuration, built once from the flags, for every range of the run.
    config = judge_config(args, workspace)
    # Check every input before executing anything, so bad input overwrites nothing.
    plans: list[RunPlan] = []
    for name in names:
        out = absolute(args.out) if args.out and len(names) == 1 else None
        if args.out and len(names) > 1:
            out = absolute(args.out) / name
        plan = RunPlan.build(
            range_id=name,
            run_id=args.run,
            judge=config,
            ranges_dir=workspace.ranges_dir,
            runs_dir=workspace.runs_dir,
            out_dir=out,
            model_under_test=args.model_under_test,
            allow_outside_inputs=args.allow_outside_inputs,
            notebook=args.notebook,
            base=workspace.root,
        )
        rng, submission = load_inputs(plan)
        # What `evalkit validate` warns about, said before the run too: a misspelt field
        # ("Indicatrs") silently takes its terms away from the checkpoint.
        for warning in rng.warnings:
            print(f"warning: {one_line(warning)}", file=sys.stderr)
        # The evaluation and cache folders: no link planted on their way, before anything.
        check_out_dir(plan, workspace)
        check_writable_folder(plan.out_dir)
        judge = build_judge(plan)
        # A backend that can tell, without calling out, that it cannot run (no API key for
        # answers the cache lacks) says so here, before any notebook starts.
        judge.preflight(rng, submission)
        plans.append(plan)

    incomplete = False
    for plan in plans:
        # The record names paths relative to the workspace.
        result = execute(plan, progress=not args.quiet, workspace=workspace.root, force=args.force)
        summary = read_scores_summary(result.scores)
        incomplete = incomplete or not summary.complete
        print(_one_line_summary(plan.range_id, summary))
        print(f"  notebook: {result.notebook}")
        print(f"  report:   {result.report}")
        print(f"  scores:   {result.scores}")
    return EXIT_INCOMPLETE if incomplete and not args.allow_incomplete else EXIT_OK


def _one_line_summary(name: str, summary: ScoresSummary) -> str:
    def part(label: str, tally: Tally) -> str:
        pct = "n/a" if tally.pct is None else f"{tally.pct:.1f}%"
        return f"{label} {tally.score}/{tally.max} ({pct}, {tally.level or 'n/a'})"

    incomplete = "" if summary.complete else f"  INCOMPLETE: {len(summary.errored)} item(s) errored"
    return (
        f"{name}: {part('detection', summary.detection)}, {part('plan', summary.plan)}"
        f" -> {summary.diagnosis or 'no diagnosis'}{incomplete}"
    )


# --------------------------------------------------------------------------- estimate


def cmd_estimate(args: argparse.Namespace) -> int:
    from .judges.llm.estimate import estimate
    from .pipeline import run_sync

    workspace = Workspace.from_args(args, args.prompt_dir)
    rows = []
    for name in _ranges_of_run(args, workspace):
        rng = load_range(workspace.ranges_dir, name)
        submission = load_submission(workspace.runs_dir, args.run, rng)
        result = run_sync(
            functools.partial(
                estimate,
                rng,
                submission,
                model=args.model,
                prompt_dir=args.prompt_dir,
                use_count_tokens=args.count_tokens,
                repeats=args.repeats,
            )
        )
        rows.append((name, result))
    if args.json:
        print(json.dumps({name: result.as_dict() for name, result in rows}, indent=2))
        return EXIT_OK
    for name, result in rows:
        cost = "unknown" if result.cost_usd is None else f"${result.cost_usd:.4f}"
        uncached = (
            "unknown"
            if result.cost_without_cache_usd is None
            else f"${result.cost_without_cache_usd:.4f}"
        )
        print(f"{name}: {result.requests} requests to {result.model} ({result.method})")
        print(
            f"  input tokens: {result.total_input_tokens:,} (prefix {result.prefix_tokens:,}"
            f" {'cached' if result.cached_prefix else 'not cacheable'};"
            f" cache write {result.cache_creation_input_tokens:,},"
            f" cache read {result.cache_read_input_tokens:,}, uncached {result.input_tokens:,})"
        )
        print(
            f"  output tokens: {result.output_tokens:,}"
            f" (assumed {result.output_tokens_per_item} per item)"
        )
        print(f"  expected cost: {cost} (without prompt caching: {uncached})")
        if result.warning:
            print(f"  note: {result.warning}")
    return EXIT_OK


# --------------------------------------------------------------------------- validate, ranges


def _checklists_under(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if (path / "checklist.md").is_file():
        return [path / "checklist.md"]
    if path.is_dir():
        found = sorted(path.glob("*/checklist.md"))
        if found:
            return found
    raise EvalkitError("no checklist.md here", path=path)


def cmd_validate(args: argparse.Namespace) -> int:
    # Findings are this command's output, so they go to stdout, one file:line each, as
    # linters print theirs; the exit code says whether there were any.
    from .gold_labels import find_label_files, validate_label_files

    workspace = Workspace.from_args(args, *args.paths)
    failures = 0
    for given in args.paths:  # as typed: the findings name them so
        # Gold label files (runs/<run>/<range>/labels/*.json) under the path are checked too.
        label_files = find_label_files(given)
        if label_files:
            lines, failed = validate_label_files(label_files, workspace)
            print("\n".join(lines))
            failures += failed
        try:
            files = [] if label_files and given.is_file() else _checklists_under(given)
        except EvalkitError as exc:
            if not label_files:
                print(str(exc))
                failures += 1
            continue
        for file in files:
            expected = file.parent.name if file.name == CHECKLIST_FILENAME else None
            try:
                # Never through a link out of its root (the ranges folder, or the folder
                # named): a linked checklist is not read, nor quoted in an error.
                rng = load_checklist(file, expected_range=expected, root=workspace.read_root(file))
            except ChecklistErrors as exc:
                for error in exc.errors:
                    print(str(error))
                failures += 1
            except ChecklistError as exc:
                print(str(exc))
                failures += 1
            else:
                for warning in rng.warnings:
                    print(f"{warning} (warning)")
                print(f"{file}: ok ({len(rng.checkpoints)} checkpoints)")
    return EXIT_BAD_INPUT if failures else EXIT_OK


def cmd_ranges(args: argparse.Namespace) -> int:
    workspace = Workspace.from_args(args)
    ranges_dir = workspace.require(workspace.ranges_dir, "ranges")
    rows: list[dict[str, Any]] = []
    invalid = 0
    for name in list_ranges(ranges_dir):
        try:
            rng = load_range(ranges_dir, name)
        except ChecklistError as exc:
            # One broken checklist must not hide the others.
            print(f"error: {exc}", file=sys.stderr)
            invalid += 1
            continue
        rows.append(
            dict(
                range=rng.id,
                report=rng.report,
                checkpoints=len(rng.checkpoints),
                detection_only=sum(1 for c in rng.checkpoints if c.scope == "detection-only"),
                plan_only=sum(1 for c in rng.checkpoints if c.scope == "plan-only"),
                title=rng.title,
            )
        )
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not rows:
        print(f"no valid ranges under {ranges_dir}")
    else:
        width = max(len(row["range"]) for row in rows)
        for row in rows:
            print(
                f"{row['range']:<{width}}  {row['report']:<16}  {row['checkpoints']:>3} checkpoints"
                f" ({row['detection_only']} detection-only, {row['plan_only']} plan-only)"
                f"  {row['title']}"
            )
    return EXIT_BAD_INPUT if invalid else EXIT_OK


# --------------------------------------------------------------------------- entry point


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        # SIGTERM unwinds as a Ctrl-C does: kernel, staging folder and lock cleaned up.
        with terminate_as_interrupt():
            code: int = args.handler(args)
        return code
    except JudgeInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (NotebookError, JudgeError, OutputError) as exc:
        # The input was fine; the judge or writing the outputs failed.
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except EvalkitError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        # The last line of defence: an environment failure is still one line, never a
        # traceback (bad input is refused before, with exit 2).
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt as exc:
        print("interrupted", file=sys.stderr)
        return exit_code(exc)


if __name__ == "__main__":
    sys.exit(main())
