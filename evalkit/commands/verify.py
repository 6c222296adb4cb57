"""``evalkit verify FOLDER``: audit a shared evaluation record without calling the judge."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(commands: Any) -> None:
    verify = commands.add_parser(
        "verify",
        help="re-derive an evaluation from its recorded verdicts and inputs; report differences",
        description=(
            "Check an evaluation folder: scores.json against its schema, the input hashes,"
            " every quote against the documents, and the checkpoints and summary re-derived"
            " from verdicts.json. Exit 0 when all holds, 1 with every difference otherwise."
        ),
    )
    verify.add_argument("folder", type=Path, metavar="FOLDER", help="an evaluation folder")
    verify.add_argument(
        "--ranges-dir", type=Path, metavar="DIR", help="default: the workspace's ranges/"
    )
    verify.add_argument(
        "--runs-dir", type=Path, metavar="DIR", help="default: the workspace's runs/"
    )
    verify.set_defaults(handler=cmd_verify)


def cmd_verify(args: argparse.Namespace) -> int:
    from ..verify import verify
    from ..workspace import absolute

    result = verify(
        args.folder,
        ranges_dir=absolute(args.ranges_dir) if args.ranges_dir else None,
        runs_dir=absolute(args.runs_dir) if args.runs_dir else None,
    )
    if result.ok:
        print(
            f"{args.folder}: ok (inputs unchanged, {result.checked_quotes} quotes found verbatim,"
            " scores re-derived identically)"
        )
        return 0
    for difference in result.differences:
        print(f"{args.folder}: {difference}")
    print(f"{len(result.differences)} difference(s)")
    return 1
