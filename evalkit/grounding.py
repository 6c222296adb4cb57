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

Both sides are folded first (:func:`evalkit.text.fold.fold`: NFKC, zero-width
characters removed, Unicode dashes, spaces and quotes, and Cyrillic/Greek
look-alikes of Latin letters). Quotes are looked for only in what a reader of
the rendered document sees: the Markdown reader's hidden content and the
lines screening set apart are blanked, and :meth:`Sources.why_not` says which
of them held a quote that was not found.

Case, punctuation and every word must match: there is no fuzzy matching, so
a paraphrase is never accepted. Pure functions, no I/O.
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property

from .markdown import MarkdownDocument, blank_spans
from .markdown import parse as parse_markdown
from .model import (
    GroundedPenalty,
    GroundedSubScore,
    GroundedVerdict,
    JudgeKind,
    QuoteCheck,
    ReportedPassage,
    SourceName,
    Submission,
    SubScoreVerdict,
    Verdict,
)
from .penalties import PENALTY_SOURCES
from .screening import PENALTIES_READ, Mask, Screening
from .text.fold import fold

_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…)\s*")
# Underscores count as emphasis only at word edges, so snake_case names survive.
_EDGE_UNDERSCORE = re.compile(r"(?<!\w)_+|_+(?!\w)")
# Asterisks are emphasis only where they open (after whitespace) or close (after a word,
# before whitespace or punctuation), so the glob in `rm -rf /var/tmp/*` is kept.
_EDGE_ASTERISK = re.compile(r"(?:(?<=\s)|^)\*+(?=\S)|(?<=[\w`'\")\]])\*+(?=[\s.,;:!?)]|\Z)")
# A fragment this short proves nothing ("a", "to"); it is not a quote.
MIN_FRAGMENT_CHARS = 3


def _strip_markers(line: str) -> str:
    """One line without backticks and emphasis markers."""
    line = line.replace("`", "")
    if "_" not in line and "*" not in line:
        return line
    spans = sorted(
        match.span()
        for pattern in (_EDGE_UNDERSCORE, _EDGE_ASTERISK)
        for match in pattern.finditer(line)
    )
    parts: list[str] = []
    at = 0
    for start, end in spans:
        if start > at:
            parts.append(line[at:start])
        at = max(at, end)
    parts.append(line[at:])
    return "".join(parts)


def _normalize_lines(text: str) -> tuple[str, array[int]]:
    """Normalised ``text`` and, per source line, the offset where its text starts in it.

    Lines are normalised one at a time (markers never span a line break, and a line
    break is whitespace), so the work is linear and a match maps back to its line.
    """
    parts: list[str] = []
    starts: array[int] = array("q")
    size = 0
    for line in fold(text).split("\n"):
        clean = " ".join(_strip_markers(line).split())
        starts.append(size + 1 if parts else size)
        if clean:
            if parts:
                parts.append(" ")
                size += 1
            parts.append(clean)
            size += len(clean)
    return "".join(parts), starts


def normalize(text: str) -> str:
    """The form in which quotes and documents are compared."""
    return _normalize_lines(text)[0]


class SearchableDocument:
    """A document prepared once for many quote look-ups.

    Quotes are looked for in what a reader of the rendered document sees: the
    Markdown reader's hidden content (comments, link targets, reference
    definitions, alt text, collapsed ``<details>``) and the ``masks`` (lines
    screening set apart) are blanked first. :meth:`why_not` says which of them
    held a quote that was not found.
    """

    def __init__(
        self,
        kind: SourceName,
        text: str | MarkdownDocument,
        masks: Sequence[Mask] = (),
    ) -> None:
        self.kind = kind
        self.md = text if isinstance(text, MarkdownDocument) else parse_markdown(text)
        self.masks = tuple(masks)
        self.text = self.md.text

    @cached_property
    def _normalized(self) -> tuple[str, array[int]]:
        source = self.md.visible_source
        if self.masks:
            starts = self.md.line_starts
            source = blank_spans(
                source,
                (
                    (starts[mask.first_line - 1], _line_end(starts, len(source), mask.last_line))
                    for mask in self.masks
                ),
            )
        return _normalize_lines(source)

    @cached_property
    def _normalized_for_penalties(self) -> tuple[str, array[int]]:
        """Like ``_normalized``, with the masks penalties still read left in."""
        kept = [mask for mask in self.masks if mask.kind not in PENALTIES_READ]
        if len(kept) == len(self.masks):
            return self._normalized
        source = self.md.visible_source
        if kept:
            starts = self.md.line_starts
            source = blank_spans(
                source,
                (
                    (starts[mask.first_line - 1], _line_end(starts, len(source), mask.last_line))
                    for mask in kept
                ),
            )
        return _normalize_lines(source)

    @cached_property
    def _unmasked(self) -> tuple[str, array[int]]:
        return _normalize_lines(self.md.text)

    def find(
        self, quote: str, near_line: int | None = None, *, penalty: bool = False
    ) -> int | None:
        """1-based line where ``quote`` starts, or None when it is not verbatim here.

        ``near_line`` limits the search to the quote's length around that line (a
        caller who knows where its quote came from need not rescan the document).
        ``penalty``: the quote backs a penalty, which masks in ``PENALTIES_READ`` do
        not hide.
        """
        normalized = self._normalized_for_penalties if penalty else self._normalized
        return _find(*normalized, quote, near_line)

    def locate(self, quote: str) -> tuple[int, int] | None:
        """The first and last line of ``quote`` anywhere in the source, hidden content and
        masked lines included (what the judge read), or None when it is not verbatim."""
        haystack, starts = self._unmasked
        span = _find_span(haystack, starts, quote, None)
        if span is None:
            return None
        return bisect.bisect_right(starts, span[0]), bisect.bisect_right(starts, span[1] - 1)

    def why_not(self, quote: str) -> str | None:
        """Why ``quote`` is not evidence although the source holds it, or None."""
        line = _find(*self._unmasked, quote, None)
        if line is None:
            return None
        for mask in self.masks:
            if mask.first_line <= line <= mask.last_line:
                return f"{mask.reason} ({self.kind} line {line})"
        start = self.md.line_starts[line - 1]
        span = self.md.hidden_at(start, _line_end(self.md.line_starts, len(self.md.text), line))
        if span is not None:
            return (
                f"it is only in hidden content of the {self.kind} ({span.kind}, line "
                f"{span.line}), which a reader of the rendered document does not see"
            )
        return None


def _line_end(starts: Sequence[int], size: int, line: int) -> int:
    return starts[line] if line < len(starts) else size


def _find(haystack: str, starts: array[int], quote: str, near_line: int | None) -> int | None:
    span = _find_span(haystack, starts, quote, near_line)
    return None if span is None else bisect.bisect_right(starts, span[0])


def _find_span(
    haystack: str, starts: array[int], quote: str, near_line: int | None
) -> tuple[int, int] | None:
    """Where ``quote`` starts and ends in ``haystack`` (normalised offsets), or None."""
    lo, hi = 0, len(haystack)
    whole = normalize(quote)
    if near_line is not None:
        first = max(0, near_line - 1)
        lo = max(0, starts[min(first, len(starts) - 1)] - len(whole) - 1)
        hi = min(len(haystack), _line_end(starts, len(haystack), near_line + 1) + len(whole) + 1)

    # A document may hold a literal "..." (a log line, a shortened hash): the quote as
    # written is tried before it is read as passages joined by an ellipsis.
    if len(whole) >= MIN_FRAGMENT_CHARS:
        for at in _occurrences(haystack, whole, lo, hi):
            return at, at + len(whole)
    fragments = [normalize(part) for part in _ELLIPSIS.split(quote)]
    fragments = [fragment for fragment in fragments if fragment]
    if len(fragments) < 2 or any(len(f) < MIN_FRAGMENT_CHARS for f in fragments):
        return None
    for first_at in _occurrences(haystack, fragments[0], lo, hi):
        end = _chain(haystack, fragments[1:], first_at + len(fragments[0]))
        if end is not None:
            return first_at, end
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


def _chain(haystack: str, fragments: list[str], after: int) -> int | None:
    """Where the chain ends when ``fragments`` follow in order from ``after``, each within the
    gap limit; None when they do not."""
    if not fragments:
        return after
    stop = min(len(haystack), after + MAX_ELLIPSIS_GAP + len(fragments[0]))
    for at in _occurrences(haystack, fragments[0], after, stop):
        end = _chain(haystack, fragments[1:], at + len(fragments[0]))
        if end is not None:
            return end
    return None


class Sources:
    """The documents quotes are checked against, by kind."""

    def __init__(
        self,
        report: str | MarkdownDocument,
        plan: str | MarkdownDocument,
        masks: Mapping[SourceName, Sequence[Mask]] | None = None,
    ) -> None:
        masks = masks or {}
        self.report = SearchableDocument("report", report, masks.get("report", ()))
        self.plan = SearchableDocument("plan", plan, masks.get("plan", ()))

    @classmethod
    def of(
        cls,
        submission: Submission,
        screening: Screening | None = None,
        judge_kind: JudgeKind = "reader",
    ) -> Sources:
        """The documents of ``submission``, less what screening withholds from the judge."""
        return cls(
            submission.report.text,
            submission.plan.text,
            screening.masks_for(judge_kind) if screening is not None else None,
        )

    def document(self, kind: SourceName) -> SearchableDocument:
        return self.report if kind == "report" else self.plan

    def check(
        self, quote: str, allowed: tuple[SourceName, ...], *, penalty: bool = False
    ) -> QuoteCheck:
        for kind in allowed:
            line = self.document(kind).find(quote, penalty=penalty)
            if line is not None:
                return QuoteCheck(quote=quote, found=True, source=kind, line=line)
        return QuoteCheck(quote=quote, found=False)

    def why_not(self, quote: str, allowed: tuple[SourceName, ...]) -> str | None:
        """Why a quote that was not found is not evidence, when a document holds it."""
        for kind in allowed:
            reason = self.document(kind).why_not(quote)
            if reason is not None:
                return reason
        return None


DETECTION_SOURCES: tuple[SourceName, ...] = ("report",)
PLAN_SOURCES: tuple[SourceName, ...] = ("plan", "report")


def ground_subscore(
    name: str, claim: SubScoreVerdict, sources: Sources, allowed: tuple[SourceName, ...]
) -> GroundedSubScore:
    checks = tuple(sources.check(quote, allowed) for quote in claim.quotes)
    value = 1 if claim.value == 1 and any(check.found for check in checks) else 0
    rationale = claim.rationale.strip()
    note = _grounding_note(claim.value, value, checks, allowed, sources)
    rationale = f"{rationale} {note}".strip()
    return GroundedSubScore(
        name=name, claimed=claim.value, value=value, quotes=checks, rationale=rationale, note=note
    )


def _grounding_note(
    claimed: int,
    value: int,
    checks: tuple[QuoteCheck, ...],
    allowed: tuple[SourceName, ...],
    sources: Sources,
) -> str:
    """What grounding adds to a rationale: why a claimed point was withheld or trimmed."""
    if claimed != 1:
        return ""
    missing = [check.quote for check in checks if not check.found]
    where = " or ".join(allowed)
    if value == 0 and not checks:
        return f"Point withheld: no quote from the {where} supports it."
    if value == 0:
        reasons = [r for check in checks if (r := sources.why_not(check.quote, allowed))]
        if reasons:
            return f"Point withheld: {reasons[0]}."
        return f"Point withheld: quote not found verbatim in the {where}."
    if missing:
        return f"{len(missing)} of {len(checks)} quotes not found verbatim; ignored."
    return ""


def judge_rationale(sub: GroundedSubScore) -> str:
    """The rationale as the judge wrote it: ``sub.rationale`` without grounding's note."""
    if sub.note and sub.rationale.endswith(sub.note):
        return sub.rationale[: -len(sub.note)].rstrip()
    return sub.rationale


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
        GroundedPenalty(
            flag=flag, check=sources.check(flag.quote, PENALTY_SOURCES[flag.rule], penalty=True)
        )
        for flag in verdict.penalties
    )
    return GroundedVerdict(
        chk_id=verdict.chk_id,
        status="scored",
        detection=detection,
        plan=plan,
        penalties=penalties,
        addressed_to_evaluator=verdict.addressed_to_evaluator,
    )


REPORTED_SOURCES: tuple[SourceName, ...] = ("report", "plan")


def ground_reported(
    verdicts: Sequence[Verdict], submission: Submission
) -> tuple[ReportedPassage, ...]:
    """The passages the judge reported as addressed to the evaluator, one per distinct quote
    (however many checkpoints' answers reported it), each looked for verbatim, with the
    tolerance of every quote, in the whole source of either document: the judge read the
    source, hidden content included."""
    items_of: dict[str, list[str]] = {}
    text_of: dict[str, str] = {}
    for verdict in verdicts:
        for quote in verdict.addressed_to_evaluator:
            key = normalize(quote)
            if not key:
                continue
            text_of.setdefault(key, quote)
            items_of.setdefault(key, [])
            if verdict.chk_id not in items_of[key]:
                items_of[key].append(verdict.chk_id)
    if not items_of:
        return ()
    documents = {
        kind: SearchableDocument(kind, submission.document(kind).text) for kind in REPORTED_SOURCES
    }
    passages = []
    for key, items in items_of.items():
        quote = text_of[key]
        found = next(
            (
                (kind, span)
                for kind in REPORTED_SOURCES
                if (span := documents[kind].locate(quote)) is not None
            ),
            None,
        )
        passages.append(
            ReportedPassage(
                quote=quote,
                items=tuple(items),
                found=found is not None,
                source=found[0] if found else None,
                first_line=found[1][0] if found else None,
                last_line=found[1][1] if found else None,
            )
        )
    return tuple(passages)
