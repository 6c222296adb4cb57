"""The honest side of robustness: what screening costs documents written in good faith.

A guard is only worth its false positives. :func:`measure_honest` evaluates each
pair of an honest corpus (a runs folder: ``<corpus>/<run>/<range>/...``) with a
judge and reports, per pair:

* the warnings screening raised on each document, by rule (an honest document
  should raise none);
* the points the judge claimed that grounding withheld, each with its cause:
  ``screening:<rule>`` (the quote is in the document, on lines a screening rule
  set apart, or in hidden content), ``screening:judge_reported`` (on lines the
  judge itself reported as addressed to the evaluator), or ``quote_not_verbatim`` (the judge's quote
  is not in the document at all: the judge's error, not the guard's);
* whether every checkpoint was scored.

With recorded verdicts of a careful judge (``--judge file`` or a stand-in's
answers), the first count is the points screening took from honest work.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EvalkitError
from ..grounding import DETECTION_SOURCES, PLAN_SOURCES, SearchableDocument
from ..judges import Judge
from ..model import DocumentWarning, Evaluation, Range, SourceName, Submission
from ..pipeline import evaluate
from ..runs import load_submission
from ..screening import WARNING_RULES
from ..workspace import read_json

__all__ = [
    "HonestPair",
    "HonestResult",
    "WithheldPoint",
    "honest_pairs",
    "honest_markdown",
    "honest_summary",
    "measure_honest",
    "withheld_points",
]

SPLIT_FILE = "split.json"
QUOTE_NOT_VERBATIM = "quote_not_verbatim"


@dataclass(frozen=True)
class HonestPair:
    run_id: str
    range_id: str

    @property
    def name(self) -> str:
        return f"{self.run_id}/{self.range_id}"


def honest_pairs(root: Path, part: str | None, ranges: Iterable[str]) -> list[HonestPair]:
    """The (run, range) pairs of the honest corpus ``root``, of ``part`` of its split file."""
    if not root.is_dir():
        raise EvalkitError("honest corpus folder is missing", path=root)
    known = set(ranges)
    runs = sorted(p.name for p in root.iterdir() if p.is_dir())
    if part not in (None, "all"):
        split_path = root / SPLIT_FILE
        split = read_json(split_path, root, what="split file")
        if not isinstance(split, dict) or not isinstance(split.get(part), list):
            raise EvalkitError(f"the split file has no list {part!r}", path=split_path)
        chosen = set(split[part])
        runs = [run for run in runs if run in chosen]
    pairs = [
        HonestPair(run, folder.name)
        for run in runs
        for folder in sorted((root / run).iterdir())
        if folder.is_dir() and folder.name in known
    ]
    if not pairs:
        raise EvalkitError("no honest pair (a <run>/<range>/ folder of a known range)", path=root)
    return pairs


@dataclass(frozen=True)
class WithheldPoint:
    chk_id: str
    subscore: str
    quote: str
    cause: str  # "screening:<rule>" or QUOTE_NOT_VERBATIM

    @property
    def by_screening(self) -> bool:
        return self.cause.startswith("screening:")

    def as_dict(self) -> dict[str, Any]:
        return {
            "chk_id": self.chk_id,
            "subscore": self.subscore,
            "quote": self.quote,
            "cause": self.cause,
        }


@dataclass(frozen=True)
class HonestResult:
    pair: HonestPair
    warnings: tuple[DocumentWarning, ...]
    withheld: tuple[WithheldPoint, ...]
    claimed: int  # sub-scores the judge set to 1
    awarded: int  # of those, still 1 after grounding (before penalties)
    complete: bool
    detection: tuple[int, int]  # score, max
    plan: tuple[int, int]

    def warned(self, source: SourceName) -> bool:
        return any(warning.source == source for warning in self.warnings)

    def as_dict(self) -> dict[str, Any]:
        return {
            "pair": self.pair.name,
            "complete": self.complete,
            "detection": {"score": self.detection[0], "max": self.detection[1]},
            "plan": {"score": self.plan[0], "max": self.plan[1]},
            "warnings": [
                {"kind": w.kind, "source": w.source, "line": w.line, "excerpt": w.excerpt}
                for w in self.warnings
            ],
            "claimed": self.claimed,
            "awarded": self.awarded,
            "withheld_by_screening": [w.as_dict() for w in self.withheld if w.by_screening],
            "withheld_quote_not_verbatim": [
                w.as_dict() for w in self.withheld if not w.by_screening
            ],
        }


def withheld_points(
    evaluation: Evaluation, masks_of: Callable[[SourceName, int], str | None]
) -> tuple[WithheldPoint, ...]:
    """Every sub-score the judge claimed and grounding withheld, with its cause.

    ``masks_of(source, line)`` names the screening rule that set ``line`` of ``source``
    apart for this judge, or None.
    """
    submission = evaluation.submission
    points: list[WithheldPoint] = []
    for verdict in evaluation.verdicts:
        for dimension, allowed in (
            (verdict.detection, DETECTION_SOURCES),
            (verdict.plan, PLAN_SOURCES),
        ):
            for sub in dimension or ():
                if not sub.withheld:
                    continue
                quotes = [check.quote for check in sub.quotes]
                cause = QUOTE_NOT_VERBATIM
                for quote in quotes:
                    found = _found_unscreened(quote, submission, allowed, masks_of)
                    if found is not None:
                        cause = found
                        break
                points.append(
                    WithheldPoint(verdict.chk_id, sub.name, quotes[0] if quotes else "", cause)
                )
    return tuple(points)


def _found_unscreened(
    quote: str,
    submission: Submission,
    allowed: tuple[SourceName, ...],
    masks_of: Callable[[SourceName, int], str | None],
) -> str | None:
    for kind in allowed:
        document = SearchableDocument(kind, submission.document(kind).text)
        line = document.find(quote)
        if line is not None:
            rule = masks_of(kind, line)
            return f"screening:{rule or 'unknown'}"
        if document.why_not(quote) is not None:
            return "screening:hidden_content"
    return None


def measure_honest(
    pairs: Iterable[HonestPair],
    root: Path,
    ranges: Mapping[str, Range],
    judge_for: Callable[[HonestPair], Judge | None],
) -> tuple[HonestResult, ...]:
    """Evaluate each honest pair with its judge (pairs whose judge is None are skipped)."""
    from ..screening import screen

    results: list[HonestResult] = []
    for pair in pairs:
        judge = judge_for(pair)
        if judge is None:
            continue
        rng = ranges[pair.range_id]
        submission = load_submission(root, pair.run_id, rng)
        evaluation = evaluate(rng, submission, judge)
        # What the evaluation set apart: screening's rules and the judge's own reports.
        masks = (
            screen(rng, submission)
            .with_reported(evaluation.reported_passages, submission)
            .masks_for(judge.info.kind)
        )

        def masks_of(source: SourceName, line: int, masks: Any = masks) -> str | None:
            for mask in masks.get(source, ()):
                if mask.first_line <= line <= mask.last_line:
                    return str(mask.kind)
            return None

        claimed = awarded = 0
        for verdict in evaluation.verdicts:
            for sub in (*(verdict.detection or ()), *(verdict.plan or ())):
                claimed += sub.claimed
                awarded += sub.value
        summary = evaluation.summary
        results.append(
            HonestResult(
                pair=pair,
                warnings=summary.warnings,
                withheld=withheld_points(evaluation, masks_of),
                claimed=claimed,
                awarded=awarded,
                complete=summary.complete,
                detection=(summary.detection.score, summary.detection.max),
                plan=(summary.plan.score, summary.plan.max),
            )
        )
    return tuple(results)


def honest_summary(results: Iterable[HonestResult]) -> dict[str, Any]:
    """Documents warned (per rule), points withheld by screening and by bad quotes."""
    results = tuple(results)
    documents = 2 * len(results)
    warned = sum(result.warned(source) for result in results for source in ("report", "plan"))
    per_rule: Counter[str] = Counter()
    for result in results:
        for rule in {(w.kind, w.source) for w in result.warnings}:
            per_rule[rule[0]] += 1
    withheld = [point for result in results for point in result.withheld]
    return {
        "pairs": len(results),
        "documents": documents,
        "documents_warned": warned,
        "documents_warned_per_rule": {rule: per_rule.get(rule, 0) for rule in WARNING_RULES},
        "claimed": sum(result.claimed for result in results),
        "awarded": sum(result.awarded for result in results),
        "withheld_by_screening": sum(1 for point in withheld if point.by_screening),
        "withheld_quote_not_verbatim": sum(1 for point in withheld if not point.by_screening),
        "complete": all(result.complete for result in results),
    }


def honest_markdown(results: Iterable[HonestResult]) -> str:
    """The honest side, as a section of ``robustness.md``."""
    results = tuple(results)
    summary = honest_summary(results)
    lines = [
        "## Honest documents",
        "",
        f"{summary['pairs']} pairs ({summary['documents']} documents) written in good faith.",
        "",
        f"- documents warned: {summary['documents_warned']} of {summary['documents']}",
        "- per rule: "
        + ", ".join(f"{rule} {n}" for rule, n in summary["documents_warned_per_rule"].items()),
        f"- points the judge claimed: {summary['claimed']}, awarded after grounding:"
        f" {summary['awarded']}",
        f"- withheld by screening: {summary['withheld_by_screening']}; withheld because the"
        f" judge's quote is not in the document: {summary['withheld_quote_not_verbatim']}",
        f"- every checkpoint scored: {'yes' if summary['complete'] else '**no**'}",
        "",
        "| pair | detection | plan | warnings | withheld by screening | quote not verbatim |",
        "|---|---|---|---|---|---|",
    ]
    for result in results:
        by_screening = sum(1 for point in result.withheld if point.by_screening)
        lines.append(
            f"| {result.pair.name} | {result.detection[0]}/{result.detection[1]}"
            f" | {result.plan[0]}/{result.plan[1]} | {len(result.warnings)}"
            f" | {by_screening} | {len(result.withheld) - by_screening} |"
        )
    flagged = [(result, warning) for result in results for warning in result.warnings]
    if flagged:
        lines += ["", "### Warnings on honest documents", ""]
        lines += [
            f"- {result.pair.name} {warning.source} line {warning.line}: {warning.kind}"
            for result, warning in flagged
        ]
    return "\n".join(lines) + "\n"
