"""Grounding: is a judge's quote really in the agent's documents?

A sub-score of 1 counts only when it rests on at least one passage found
verbatim in the documents it may come from: the analysis report for
detection, the plan or the report for the plan dimension. The comparison
forgives what Markdown and line wrapping change and nothing else:

* runs of whitespace, including line breaks, compare equal to one space;
* emphasis and code markers (backticks; ``*``, ``**`` and ``_`` where they
  open or close emphasis, not inside a word or a glob) are ignored on both sides;
* a quote may join passages with an ellipsis (``...`` or ``…``); then every
  passage must be found, in order, in the same document, each within
  ``MAX_ELLIPSIS_GAP`` characters of the one before (a literal "..." in the
  document is tried first).

A passage must start and end on word edges: "203.0.113.4" is not found in
"203.0.113.45".

Case, punctuation and every word must match: there is no fuzzy matching, so
a paraphrase is never accepted. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from .model import (
    GroundedPenalty,
    GroundedSubScore,
    GroundedVerdict,
    QuoteCheck,
    SourceName,
    Submission,
    SubScoreVerdict,
    Verdict,
)
from .penalties import PENALTY_SOURCES

_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…)\s*")
# Underscores count as emphasis only at word edges, so snake_case names survive.
_EDGE_UNDERSCORE = re.compile(r"(?<!\w)_+|_+(?!\w)")
# Asterisks are emphasis only where they open (after whitespace) or close (after a word,
# before whitespace or punctuation), so the glob in `rm -rf /var/tmp/*` is kept.
_EDGE_ASTERISK = re.compile(r"(?:(?<=\s)|^)\*+(?=\S)|(?<=[\w`'\")\]])\*+(?=[\s.,;:!?)]|\Z)")
_MARKERS = set("`")
# Typographic variants an LLM may emit for what the author typed in ASCII.
_FOLD = {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u00a0": " "}
# A fragment this short proves nothing ("a", "to"); it is not a quote.
MIN_FRAGMENT_CHARS = 3


def _normalize_with_map(text: str) -> tuple[str, list[int]]:
    """Normalise ``text``; return it with, per output char, its offset in ``text``."""
    edge_markers = {
        index
        for pattern in (_EDGE_UNDERSCORE, _EDGE_ASTERISK)
        for match in pattern.finditer(text)
        for index in range(*match.span())
    }
    out: list[str] = []
    offsets: list[int] = []
    pending_space = False
    for index, char in enumerate(text):
        if char in _MARKERS or index in edge_markers:
            continue
        if char.isspace():
            pending_space = bool(out)
            continue
        if pending_space:
            out.append(" ")
            offsets.append(index - 1)
            pending_space = False
        out.append(_FOLD.get(char, char))
        offsets.append(index)
    return "".join(out), offsets


def normalize(text: str) -> str:
    """The form in which quotes and documents are compared."""
    return _normalize_with_map(text)[0]


@dataclass(frozen=True)
class SearchableDocument:
    """A document prepared once for many quote look-ups."""

    kind: SourceName
    text: str

    @cached_property
    def _normalized(self) -> tuple[str, list[int]]:
        return _normalize_with_map(self.text)

    def find(self, quote: str) -> int | None:
        """1-based line where ``quote`` starts, or None when it is not verbatim here."""
        haystack, offsets = self._normalized
        whole = normalize(quote)
        # A document may hold a literal "..." (a log line, a shortened hash): the quote as
        # written is tried before it is read as passages joined by an ellipsis.
        if len(whole) >= MIN_FRAGMENT_CHARS:
            for at in _occurrences(haystack, whole, 0, len(haystack)):
                return self.text.count("\n", 0, offsets[at]) + 1
        fragments = [normalize(part) for part in _ELLIPSIS.split(quote)]
        fragments = [fragment for fragment in fragments if fragment]
        if len(fragments) < 2 or any(len(f) < MIN_FRAGMENT_CHARS for f in fragments):
            return None
        for first_at in _occurrences(haystack, fragments[0], 0, len(haystack)):
            if _chain(haystack, fragments[1:], first_at + len(fragments[0])):
                return self.text.count("\n", 0, offsets[first_at]) + 1
        return None


# An ellipsis joins passages of one stretch of text, not two ends of a document.
MAX_ELLIPSIS_GAP = 300


def _occurrences(haystack: str, needle: str, start: int, stop: int) -> Iterator[int]:
    """Where ``needle`` starts in ``haystack[start:stop]``, on whole-word edges only.

    A quote that begins or ends inside a word ("203.0.113.4" in "203.0.113.45")
    is not the passage the document wrote.
    """
    at = haystack.find(needle, start, stop)
    while at >= 0:
        end = at + len(needle)
        clean_start = not (needle[0].isalnum() and at > 0 and haystack[at - 1].isalnum())
        clean_end = not (needle[-1].isalnum() and end < len(haystack) and haystack[end].isalnum())
        if clean_start and clean_end:
            yield at
        at = haystack.find(needle, at + 1, stop)


def _chain(haystack: str, fragments: list[str], after: int) -> bool:
    """Whether ``fragments`` follow in order from ``after``, each within the gap limit."""
    if not fragments:
        return True
    stop = min(len(haystack), after + MAX_ELLIPSIS_GAP + len(fragments[0]))
    return any(
        _chain(haystack, fragments[1:], at + len(fragments[0]))
        for at in _occurrences(haystack, fragments[0], after, stop)
    )


class Sources:
    """The documents quotes are checked against, by kind."""

    def __init__(self, report: str, plan: str) -> None:
        self.report = SearchableDocument("report", report)
        self.plan = SearchableDocument("plan", plan)

    @classmethod
    def of(cls, submission: Submission) -> Sources:
        return cls(submission.report.text, submission.plan.text)

    def check(self, quote: str, allowed: tuple[SourceName, ...]) -> QuoteCheck:
        for kind in allowed:
            line = (self.report if kind == "report" else self.plan).find(quote)
            if line is not None:
                return QuoteCheck(quote=quote, found=True, source=kind, line=line)
        return QuoteCheck(quote=quote, found=False)


DETECTION_SOURCES: tuple[SourceName, ...] = ("report",)
PLAN_SOURCES: tuple[SourceName, ...] = ("plan", "report")


def ground_subscore(
    name: str, claim: SubScoreVerdict, sources: Sources, allowed: tuple[SourceName, ...]
) -> GroundedSubScore:
    checks = tuple(sources.check(quote, allowed) for quote in claim.quotes)
    value = 1 if claim.value == 1 and any(check.found for check in checks) else 0
    rationale = claim.rationale.strip()
    if claim.value == 1:
        missing = [check.quote for check in checks if not check.found]
        where = " or ".join(allowed)
        if value == 0 and not checks:
            rationale = _append(
                rationale, f"Point withheld: no quote from the {where} supports it."
            )
        elif value == 0:
            rationale = _append(
                rationale, f"Point withheld: quote not found verbatim in the {where}."
            )
        elif missing:
            rationale = _append(
                rationale, f"{len(missing)} of {len(checks)} quotes not found verbatim; ignored."
            )
    return GroundedSubScore(
        name=name, claimed=claim.value, value=value, quotes=checks, rationale=rationale
    )


def _append(rationale: str, note: str) -> str:
    return f"{rationale} {note}".strip()


def ground_verdict(verdict: Verdict, sources: Sources) -> GroundedVerdict:
    """Check every quote of ``verdict``; withhold points and penalties that lack one."""
    if verdict.status == "error":
        return GroundedVerdict(
            chk_id=verdict.chk_id,
            status="error",
            detection=None,
            plan=None,
            penalties=(),
            error=verdict.error,
        )
    detection = (
        tuple(
            ground_subscore(name, claim, sources, DETECTION_SOURCES)
            for name, claim in verdict.detection.items()
        )
        if verdict.detection is not None
        else None
    )
    plan = (
        tuple(
            ground_subscore(name, claim, sources, PLAN_SOURCES)
            for name, claim in verdict.plan.items()
        )
        if verdict.plan is not None
        else None
    )
    penalties = tuple(
        GroundedPenalty(flag=flag, check=sources.check(flag.quote, PENALTY_SOURCES[flag.rule]))
        for flag in verdict.penalties
    )
    return GroundedVerdict(
        chk_id=verdict.chk_id,
        status="scored",
        detection=detection,
        plan=plan,
        penalties=penalties,
    )
