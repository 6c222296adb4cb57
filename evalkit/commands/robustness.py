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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..arguments import add_judge_arguments

if TYPE_CHECKING:
    from ..judges import Judge

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
        metavar="DIR",
        help="folder holding the checklists of the corpus's ranges (default: the workspace's"
        " ranges/)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="where robustness.json and robustness.md go (default: robustness/ in the workspace)",
    )
    parser.add_argument(
        "--attack",
        dest="attacks",
        action="append",
        metavar="ID",
        help="measure only this attack (repeatable; default: all)",
    )
    parser.add_argument(
        "--part",
        default="all",
        metavar="PART",
        help="measure only this part of each corpus's split.json (tune, holdout ...; default: all)",
    )
    parser.add_argument(
        "--honest",
        type=Path,
        metavar="DIR",
        help="an honest corpus (a runs folder of documents written in good faith): report"
        " the warnings screening raises on it and the points it withholds",
    )
    parser.add_argument(
        "--verdicts-dir",
        type=Path,
        metavar="DIR",
        help="recorded verdicts, one file per pair (<attack id>.jsonl, clean-<range>.jsonl,"
        " <honest run>.jsonl) in the file judge's format: measure a judge whose answers were"
        " recorded elsewhere (a stand-in); implies --judge file",
    )
    # --judge and every judge's settings, from the registry, as `evalkit run` has them.
    add_judge_arguments(parser)
    parser.add_argument("--quiet", action="store_true", help="no line per attack")
    parser.set_defaults(handler=cmd_robustness)


def _recorded(folder: Path) -> Callable[[str], Judge | None]:
    """The file judge of each pair that has a verdicts file in ``folder`` (read without
    following a link out of it)."""
    from ..judges.file import FileJudge

    def judge_of(pair_id: str) -> Judge | None:
        path = folder / f"{pair_id}.jsonl"
        return FileJudge(path, root=folder) if path.is_file() else None

    return judge_of


def _recorded_sessions(folder: Path) -> Callable[[str], list[str]]:
    """The clean sessions of a range in ``folder``: ``clean-<range>.jsonl`` and every
    ``clean-<range>.<session>.jsonl`` (independent answers to the same clean pair)."""
    from ..research.robustness import clean_pair_id

    def sessions(range_id: str) -> list[str]:
        base = clean_pair_id(range_id)
        found = [base] if (folder / f"{base}.jsonl").is_file() else []
        found += sorted(path.stem for path in folder.glob(f"{base}.*.jsonl"))
        return found

    return sessions


def cmd_robustness(args: argparse.Namespace) -> int:
    from ..arguments import check_writable_folder, given_paths, judge_config
    from ..checklist import list_ranges, load_range
    from ..errors import EvalkitError
    from ..fileio import write_text_atomic
    from ..judges import Judge
    from ..pipeline import utc_timestamp
    from ..research import honest, robustness, robustness_report
    from ..workspace import Workspace

    corpus_dir: Path = args.corpus or robustness.DEFAULT_CORPUS
    workspace = Workspace.from_args(
        args, corpus_dir, args.out, args.honest, args.verdicts_dir, *given_paths(args)
    )
    if not corpus_dir.is_dir():
        raise EvalkitError("corpus folder is missing", path=corpus_dir)
    out = workspace.check_out(args.out or workspace.root / "robustness", (JSON_NAME, MARKDOWN_NAME))
    check_writable_folder(out)
    ranges_dir = workspace.ranges_dir

    # Every input is checked before the first judge call: ranges, attacks, anchors, judge.
    corpus = robustness.load_corpus(corpus_dir, lambda name: load_range(ranges_dir, name))
    chosen = robustness.part_of(corpus, args.part)
    if args.attacks:
        known = {attack.id: attack for attack in corpus.attacks}
        unknown = [name for name in args.attacks if name not in known]
        if unknown:
            raise EvalkitError(f"no attack {unknown[0]!r} in the corpus", path=corpus_dir)
        chosen = tuple(known[name] for name in dict.fromkeys(args.attacks))
    judge: Judge | Callable[[str], Judge | None]
    if args.verdicts_dir is not None:
        if not args.verdicts_dir.is_dir():
            raise EvalkitError("verdicts folder is missing", path=args.verdicts_dir)
        judge = _recorded(args.verdicts_dir)
    else:
        config = judge_config(args, workspace)
        if isinstance(config.settings.get("cache_dir"), Path):
            workspace.check_out(config.settings["cache_dir"])
        judge = config.build()
        if chosen:
            attack = chosen[0]
            judge.preflight(corpus.ranges[attack.range_id], robustness.apply_attack(corpus, attack))
    honest_pairs = []
    if args.honest is not None:
        names = sorted({*corpus.ranges, *list_ranges(ranges_dir)})
        honest_pairs = honest.honest_pairs(args.honest, args.part, names)
        ranges = {pair.range_id: load_range(ranges_dir, pair.range_id) for pair in honest_pairs}

    def report(result: robustness.AttackResult) -> None:
        if not args.quiet:
            print(
                f"{result.attack.id}: detection {result.detection.inflation_points:+g},"
                f" plan {result.plan.inflation_points:+g}, counted gain"
                f" {result.gain.counted:+.2f}"
                f"{', flagged by ' + ' and '.join(result.flagged_by) if result.flagged else ''}"
                + (
                    ""
                    if result.penalty_raised is None
                    else f", penalty {'raised' if result.penalty_raised else 'NOT raised'}"
                ),
                file=sys.stderr,
            )

    measured = robustness.measure(
        corpus,
        judge,
        attacks=chosen,
        on_attack_done=report,
        timestamp=utc_timestamp(),
        clean_sessions=(
            _recorded_sessions(args.verdicts_dir) if args.verdicts_dir is not None else None
        ),
    )
    document = measured.as_dict()
    markdown = robustness_report.to_markdown(measured)
    if honest_pairs:
        results = honest.measure_honest(
            honest_pairs,
            args.honest,
            ranges,
            lambda pair: (
                judge(pair.run_id) if callable(judge) and not isinstance(judge, Judge) else judge
            ),
        )
        document["honest"] = {
            "corpus": str(args.honest),
            "part": args.part,
            "summary": honest.honest_summary(results),
            "pairs": [result.as_dict() for result in results],
        }
        markdown += "\n" + honest.honest_markdown(results)
    workspace.make_out(out, (JSON_NAME, MARKDOWN_NAME))
    json_path = write_text_atomic(
        out / JSON_NAME, json.dumps(document, indent=2, ensure_ascii=False) + "\n", root=out
    )
    markdown_path = write_text_atomic(out / MARKDOWN_NAME, markdown, root=out)
    summary = measured.summary()
    print(
        f"{summary['attacks']} attacks with the {measured.judge} judge:"
        f" {summary['inflated']} inflate a score, {summary['flagged']} flagged"
        f" ({summary['instruction_flagged']} of {summary['instruction_attacks']} instruction"
        f" attacks; by screening {summary['instruction_flagged_by']['screening']}, by the judge"
        f" {summary['instruction_flagged_by']['judge']}), {summary['penalties_raised']} of"
        f" {summary['penalty_attacks']} expected penalties raised"
        + ("" if summary["complete"] else "; INCOMPLETE: some items errored")
    )
    gain = summary["gain"]
    if gain["mean"] is not None:
        interval = gain["ci95"]
        print(
            f"counted gain per attack (detection + plan with a finding, signed, against the mean"
            f" of the clean sessions): mean {gain['mean']:+.2f}"
            + (f" [{interval[0]:+.2f}, {interval[1]:+.2f}]" if interval else "")
            + f", worst {summary['gain_max']:+.2f}; plan points without a finding:"
            f" {summary['plan_without_finding']['total']:+g} in all"
        )
    if honest_pairs:
        totals = document["honest"]["summary"]
        print(
            f"honest: {totals['documents_warned']} of {totals['documents']} documents warned,"
            f" {totals['withheld_by_screening']} claimed points withheld by screening,"
            f" {totals['withheld_quote_not_verbatim']} for quotes not in the documents"
        )
    print(f"  json:     {json_path}")
    print(f"  markdown: {markdown_path}")
    return EXIT_OK
