"""``evalkit ab A B``: A/B test of two judges against the same labels.

    evalkit ab A B [--pairs SELECTION] [--out DIR] [--name NAME --name NAME]
                   [--runs-dir DIR] [--ranges-dir DIR] [--seed N] [--bootstrap N] [--quiet]

Each of A and B is an ``evalkit calibrate`` folder, or a judge configuration file
(YAML: ``judge`` and any setting the judge's registry entry declares, by name, as
:meth:`~evalkit.judges.config.JudgeConfig.from_mapping` reads it; relative paths are
relative to the file), which
is calibrated first, on the same pairs, into ``<out>/<name>/``. Then
``ab.json`` and ``ab-report.md`` are written into ``--out`` (default ``ab``).
Two calibrations over different pairs, items or labels are refused (exit 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ..arguments import add_workspace_arguments
from ..judges.config import JudgeConfig
from .calibrate import check_calibration, run_calibration, summary_line

if TYPE_CHECKING:
    from ..workspace import Workspace


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "ab",
        help="A/B test two judges (calibration folders or judge config files) against the labels",
        description=(
            "Compare two judges' agreement with the gold labels on the same pairs: each "
            "judge's kappa, the paired difference with a bootstrap interval over the same "
            "checkpoints, McNemar's exact test and one verdict per sub-score, penalty rule "
            "and pooled. A and B are calibration folders or judge configuration files "
            "(YAML), which are calibrated first on the same pairs."
        ),
    )
    parser.add_argument("a", type=Path, metavar="A", help="calibration folder or config file")
    parser.add_argument("b", type=Path, metavar="B", help="calibration folder or config file")
    parser.add_argument(
        "--pairs",
        metavar="SELECTION",
        help="pairs to calibrate config files on: all | tune | holdout | fresh | run/range "
        "globs (default: the calibration folder's pairs, else all)",
    )
    parser.add_argument(
        "--name",
        dest="names",
        action="append",
        default=[],
        metavar="NAME",
        help="a short name for A, then for B (repeatable)",
    )
    parser.add_argument("--out", type=Path, metavar="DIR", help="default: ab/ in the workspace")
    add_workspace_arguments(parser)
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    parser.add_argument(
        "--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.set_defaults(handler=cmd_ab)


def load_config(path: Path, workspace: Workspace | None = None) -> JudgeConfig:
    """A judge configuration file, checked against the judge registry (exit 2 on a problem).

    A folder or file it names (relative to it) must lie in the workspace (default: the
    one found from the working directory), reached without a link out of it: a path
    in a file is not a flag the user typed. A cache folder is checked as an output.
    """
    from ..bounded import parse_yaml
    from ..errors import EvalkitError
    from ..fileio import read_confined
    from ..workspace import Workspace, absolute, within

    workspace = workspace or Workspace.find()
    try:
        text = read_confined(path, path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalkitError(f"cannot read the judge configuration: {exc}", path=path) from exc
    data = parse_yaml(text, path=path, what="judge configuration")
    if not isinstance(data, dict):
        raise EvalkitError("a judge configuration is a YAML mapping with a judge name", path=path)
    config = JudgeConfig.from_mapping(data, base=path.parent, path=path, workspace=workspace.root)
    for name, value in config.settings.items():
        if not isinstance(value, Path) or name not in data:
            continue  # a default (the response cache) lies in the workspace already
        folder = absolute(value)
        if not within(folder, workspace.root):
            raise EvalkitError(
                f"{name} {data[name]} lies outside the workspace {workspace.root}: a"
                " configuration file names folders inside it",
                path=path,
            )
        if name == "cache_dir":
            workspace.check_out(folder)  # written to: no link on its way, nor below it
        else:
            workspace.confined(folder)  # read: never through a link out of the workspace
    return config


def _names(args: argparse.Namespace) -> tuple[str, str]:
    from ..bounded import check_name
    from ..errors import EvalkitError

    if len(args.names) > 2:
        raise EvalkitError("at most two --name, one for A and one for B")
    defaults = [path.stem if path.is_file() else path.name for path in (args.a, args.b)]
    chosen = [*args.names, *defaults[len(args.names) :]]
    if chosen[0] == chosen[1]:
        chosen = [f"{chosen[0]}-a", f"{chosen[1]}-b"]
    for name in chosen:
        # Each name is a folder of --out.
        check_name(name, "name (give --name)")
        if name.startswith("."):
            raise EvalkitError(f"not a usable name: {name!r} (give --name)")
    return chosen[0], chosen[1]


def cmd_ab(args: argparse.Namespace) -> int:
    from ..errors import EvalkitError
    from ..research import ab
    from ..workspace import Workspace

    if args.bootstrap < 0:
        raise EvalkitError("--bootstrap must be 0 or more")
    workspace = Workspace.from_args(args, args.out, args.a, args.b)
    runs_dir, ranges_dir = workspace.runs_dir, workspace.ranges_dir
    names = _names(args)
    out = workspace.check_out(args.out or workspace.root / "ab", (ab.JSON_NAME, ab.REPORT_NAME))
    for name in names:
        workspace.check_out(out / name)  # a side calibrated here goes into its own folder
    sides: list[ab.SavedCalibration | JudgeConfig] = []
    for path, name in zip((args.a, args.b), names, strict=True):
        if path.is_dir():
            sides.append(ab.load_calibration(path, name))
        elif path.is_file():
            sides.append(load_config(path, workspace))
        else:
            raise EvalkitError("neither a calibration folder nor a judge configuration", path=path)
    saved = [side for side in sides if isinstance(side, ab.SavedCalibration)]
    selection = args.pairs or (",".join(sorted(saved[0].pairs)) if saved else "all")
    # Every input is checked before anything runs, so bad input costs nothing.
    for side in sides:
        if isinstance(side, JudgeConfig):
            check_calibration(side, selection, runs_dir, ranges_dir)
    if args.pairs and saved:
        from ..research.pairs import select_pairs

        expected = {"/".join(pair) for pair in select_pairs(runs_dir, args.pairs)}
        for side in saved:
            if set(side.pairs) != expected:
                raise EvalkitError(
                    f"refusing the A/B: {side.name} calibrated other pairs than "
                    f"--pairs {args.pairs} selects"
                )
    if len(saved) == 2:
        ab.pair_up(saved[0], saved[1])
    calibrations: list[ab.SavedCalibration] = []
    for index, side in enumerate(sides):
        if isinstance(side, ab.SavedCalibration):
            calibrations.append(side)
            continue
        folder = out / names[index]
        if not args.quiet:
            print(f"calibrating {names[index]} ({side.judge}) into {folder}")
        data = run_calibration(
            side,
            selection=selection,
            runs_dir=runs_dir,
            ranges_dir=ranges_dir,
            out=folder,
            root=out,
            seed=args.seed,
            bootstrap=args.bootstrap,
            quiet=args.quiet,
        )
        print(f"{names[index]}: {summary_line(data)}")
        calibrations.append(ab.load_calibration(folder, names[index]))
    result = ab.ab_test(calibrations[0], calibrations[1], resamples=args.bootstrap, seed=args.seed)
    paths = ab.write_outputs(result, workspace.make_out(out, (ab.JSON_NAME, ab.REPORT_NAME)))
    print(result.headline())
    for target in result.targets:
        print(f"  {target.verdict}")
    if max(result.repeats) > 1:
        from ..research.items import ALL_SUBSCORES
        from ..research.report_format import fmt

        pooled = next(t for t in result.targets if t.target == ALL_SUBSCORES)
        print(
            f"  flip rate over all sub-scores: {result.a} {fmt(pooled.flip_a)}, "
            f"{result.b} {fmt(pooled.flip_b)}"
        )
    print(f"  report: {paths['report']}")
    print(f"  json:   {paths['json']}")
    return 0
