"""``evalkit robustness``: how far the adversarial corpus moves a judge's scores.

    evalkit robustness --judge J [--corpus DIR] [--ranges-dir DIR] [--out DIR]
                       [--attack ID ...] [judge settings, as `evalkit run`] [--quiet]

Evaluates every clean/attacked pair of the corpus through the public pipeline
and writes ``robustness.json`` and ``robustness.md`` into ``--out``. It is a
measurement: exit 0 when it ran, whatever it found; 2 on bad input (a broken
corpus, an unknown range, a judge that cannot run), checked before any judging.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..judges.registry import add_judge_arguments, judge_settings_from_args, judge_spec

EXIT_OK = 0
JSON_NAME = "robustness.json"
MARKDOWN_NAME = "robustness.md"


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "robustness",
        help="score the adversarial corpus's clean/attacked pairs and report the inflation",
        description="Measure how far each attack of the adversarial corpus inflates a judge's "
        "scores, whether it is flagged, and whether expected penalties are raised.",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="corpus folder with clean/ and attacks/ (default: the corpus shipped with evalkit)",
    )
    parser.add_argument(
        "--ranges-dir",
        type=Path,
        default=Path("ranges"),
        metavar="DIR",
        help="folder holding the checklists of the corpus's ranges (default: ranges)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("robustness"),
        metavar="DIR",
        help="where robustness.json and robustness.md go (default: robustness)",
    )
    parser.add_argument(
        "--attack",
        dest="attacks",
        action="append",
        metavar="ID",
        help="measure only this attack (repeatable; default: all)",
    )
    # --judge and every judge's settings, from the registry, as `evalkit run` has them.
    add_judge_arguments(parser)
    parser.add_argument("--quiet", action="store_true", help="no line per attack")
    parser.set_defaults(handler=cmd_robustness)


def cmd_robustness(args: argparse.Namespace) -> int:
    from ..checklist import load_range
    from ..cli import _check_writable_folder
    from ..errors import EvalkitError
    from ..fileio import write_text_atomic
    from ..judges import make_judge
    from ..pipeline import utc_timestamp
    from ..research import robustness

    if args.concurrency is not None and args.concurrency < 1:
        raise EvalkitError("--concurrency must be at least 1")
    corpus_dir: Path = args.corpus or robustness.DEFAULT_CORPUS
    if not corpus_dir.is_dir():
        raise EvalkitError("corpus folder is missing", path=corpus_dir)
    _check_writable_folder(args.out)

    # Every input is checked before the first judge call: ranges, attacks, anchors, judge.
    corpus = robustness.load_corpus(corpus_dir, lambda name: load_range(args.ranges_dir, name))
    chosen = corpus.attacks
    if args.attacks:
        known = {attack.id: attack for attack in corpus.attacks}
        unknown = [name for name in args.attacks if name not in known]
        if unknown:
            raise EvalkitError(f"no attack {unknown[0]!r} in the corpus", path=corpus_dir)
        chosen = tuple(known[name] for name in dict.fromkeys(args.attacks))
    settings = {
        name: value.resolve() if isinstance(value, Path) else value
        for name, value in judge_settings_from_args(args, judge_spec(args.judge)).items()
    }
    judge = make_judge(args.judge, **settings)
    if chosen:
        attack = chosen[0]
        judge.preflight(corpus.ranges[attack.range_id], robustness.apply_attack(corpus, attack))

    def report(result: robustness.AttackResult) -> None:
        if not args.quiet:
            print(
                f"{result.attack.id}: detection {result.detection.inflation_points:+d},"
                f" plan {result.plan.inflation_points:+d}"
                f"{', flagged' if result.flagged else ''}"
                + (
                    ""
                    if result.penalty_raised is None
                    else f", penalty {'raised' if result.penalty_raised else 'NOT raised'}"
                ),
                file=sys.stderr,
            )

    measured = robustness.measure(
        corpus, judge, attacks=chosen, on_attack_done=report, timestamp=utc_timestamp()
    )
    json_path = write_text_atomic(
        args.out / JSON_NAME, json.dumps(measured.as_dict(), indent=2, ensure_ascii=False) + "\n"
    )
    markdown_path = write_text_atomic(args.out / MARKDOWN_NAME, robustness.to_markdown(measured))
    summary = measured.summary()
    print(
        f"{summary['attacks']} attacks with the {measured.judge} judge:"
        f" {summary['inflated']} inflate a score, {summary['flagged']} flagged"
        f" ({summary['instruction_flagged']} of {summary['instruction_attacks']} instruction"
        f" attacks), {summary['penalties_raised']} of {summary['penalty_attacks']} expected"
        " penalties raised" + ("" if summary["complete"] else "; INCOMPLETE: some items errored")
    )
    print(f"  json:     {json_path}")
    print(f"  markdown: {markdown_path}")
    return EXIT_OK
