"""Screening: what in the agent's documents is not evidence, and for which judge.

A pure step the pipeline runs once per evaluation, before any verdict counts. It
applies the policy table :data:`~evalkit.screening.policy.SCREEN_RULES`: each
rule sets lines apart as :class:`~evalkit.model.Mask` es of its own kind, says
for which kind of judge they earn nothing (admissibility: every judge;
suspicion: only a keyword judge, which cannot read context) and whether it
reports a :class:`~evalkit.model.DocumentWarning` for ``summary.warnings``.
Grounding reads :meth:`Screening.masks_for` the judge's kind; nothing else
decides what is withheld.

The keyword judge's own scope reading (sections headed "Not examined",
illustrations, reference lines: :mod:`evalkit.text.scope`) is not screening,
since a reader sees such headings itself; :meth:`Screening.masks_for` adds it for
keyword judges only, so the offline judge and grounding read the same lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from ..markdown import MarkdownDocument, parse
from ..model import (
    DocumentWarning,
    JudgeKind,
    Mask,
    Range,
    ReportedPassage,
    SourceName,
    Submission,
    WarningKind,
)
from ..text.scope import PENALTIES_READ as SCOPE_PENALTIES_READ
from ..text.scope import not_examined_heading, scope_masks
from .detectors import ScreenContext
from .policy import SCREEN_RULES, WARNING_RULES, ScreenRule, rule
from .suspicion import TermIndex, TermsKey, index_of, terms_key

__all__ = [
    "PENALTIES_READ",
    "REPORTED_KIND",
    "SCREEN_RULES",
    "WARNING_RULES",
    "Mask",
    "ScreenRule",
    "Screening",
    "not_examined_heading",
    "screen",
    "screen_document",
]

EXCERPT_LIMIT = 120
# Mask kinds whose lines a penalty may still quote: the scopes whoever follows the
# document reads anyway, and the rules that say so.
PENALTIES_READ = SCOPE_PENALTIES_READ | frozenset(
    row.name for row in SCREEN_RULES if row.penalties_read
)
_SCOPE_KINDS = frozenset({"not_examined", "illustration", "reference"})


@dataclass(frozen=True)
class Screening:
    """Every mask of both documents (by rule or scope kind), and the warnings."""

    masks: dict[SourceName, tuple[Mask, ...]] = field(default_factory=dict)
    warnings: tuple[DocumentWarning, ...] = ()

    def masks_for(self, judge_kind: JudgeKind) -> dict[SourceName, tuple[Mask, ...]]:
        """The masks that withhold points from a judge of ``judge_kind``."""
        return {
            source: tuple(mask for mask in masks if _withholds(mask.kind, judge_kind))
            for source, masks in self.masks.items()
        }

    def with_reported(
        self, passages: Sequence[ReportedPassage], submission: Submission
    ) -> Screening:
        """This screening plus what the judge reported as addressed to the evaluator.

        Each grounded passage sets apart the blocks holding it for every judge, as the
        instruction rule sets apart its block, and raises one ``instruction`` warning
        ``found_by: "judge"``. A passage not found verbatim raises nothing.
        """
        found = [
            (passage, passage.first_line, passage.last_line)
            for passage in passages
            if passage.found and passage.first_line is not None and passage.last_line is not None
        ]
        if not found:
            return self
        masks = {source: list(masks) for source, masks in self.masks.items()}
        warnings = list(self.warnings)
        parsed: dict[SourceName, MarkdownDocument] = {}
        for passage, first_line, last_line in sorted(
            found, key=lambda found: (found[0].source != "report", found[1])
        ):
            source: SourceName = "report" if passage.source == "report" else "plan"
            if source not in parsed:
                parsed[source] = parse(submission.document(source).text)
            first, last = _holding_blocks(parsed[source], first_line, last_line)
            masks.setdefault(source, []).append(Mask(first, last, REPORTED_REASON, REPORTED_KIND))
            warnings.append(
                DocumentWarning(
                    kind="instruction",
                    source=source,
                    line=first_line,
                    excerpt=_excerpt(passage.quote),
                    message=REPORTED_MESSAGE,
                    found_by="judge",
                )
            )
        return replace(
            self,
            masks={
                source: tuple(sorted(kept, key=lambda m: (m.first_line, m.last_line)))
                for source, kept in masks.items()
            },
            warnings=tuple(warnings),
        )

    def masked_lines(self, kind: SourceName) -> frozenset[int]:
        return frozenset(
            line
            for mask in self.masks.get(kind, ())
            for line in range(mask.first_line, mask.last_line + 1)
        )


# The mask kind of a passage the judge reported: withheld from every judge, as the
# instruction rule's blocks are, and told apart from screening's own in the measures.
REPORTED_KIND = "judge_reported"
REPORTED_REASON = "it is in a passage the judge reported as addressed to the evaluator"
REPORTED_MESSAGE = "a passage the judge reported as addressed to whoever evaluates the documents"


def _holding_blocks(md: MarkdownDocument, first: int, last: int) -> tuple[int, int]:
    """The lines of the blocks holding lines ``first`` to ``last`` (the lines themselves
    when no block holds them: hidden content outside any block)."""
    holding = [block for block in md.blocks if block.start <= last and block.end >= first]
    if not holding:
        return first, last
    return min(first, *(b.start for b in holding)), max(last, *(b.end for b in holding))


def _withholds(mask_kind: str, judge_kind: JudgeKind) -> bool:
    if mask_kind == REPORTED_KIND:
        return True
    if mask_kind in _SCOPE_KINDS:
        return judge_kind == "keyword"
    return rule(mask_kind).withholds(judge_kind)


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_LIMIT else text[: EXCERPT_LIMIT - 1] + "…"


def _warning_kind(name: str) -> WarningKind:
    kind: WarningKind = name  # type: ignore[assignment]  # a warning rule's name is a kind
    return kind


def screen_document(
    source: SourceName, md: MarkdownDocument, terms: TermIndex | None = None
) -> tuple[tuple[Mask, ...], tuple[DocumentWarning, ...]]:
    """The masks (every rule's, and the keyword judge's scope) and warnings of one document.

    Runs the detector of every row of :data:`SCREEN_RULES`, in the table's order (a later
    rule may read what an earlier one found); rules on the checklist's terms run only when
    ``terms`` is given.
    """
    context = ScreenContext(source=source, md=md, terms=terms)
    lines = md.text.split("\n")
    masks: list[Mask] = []
    warnings: list[DocumentWarning] = []
    for row in SCREEN_RULES:
        if row.detector is None:
            continue
        findings = list(row.detector(context))
        context.found[row.name] = findings
        for found in findings:
            masks.append(
                Mask(
                    found.first_line,
                    found.last_line,
                    f"it is in a passage flagged as {found.why}",
                    row.name,
                )
            )
            if row.warns:
                warnings.append(
                    DocumentWarning(
                        kind=_warning_kind(row.name),
                        source=source,
                        line=found.line,
                        excerpt=_excerpt(found.excerpt or lines[found.line - 1]),
                        message=found.why,
                    )
                )
    ordered = sorted((*masks, *scope_masks(md)), key=lambda mask: (mask.first_line, mask.last_line))
    return tuple(ordered), tuple(sorted(warnings, key=lambda warning: warning.line))


@lru_cache(maxsize=4)
def _screen_text(
    source: SourceName, text: str, key: TermsKey
) -> tuple[tuple[Mask, ...], tuple[DocumentWarning, ...]]:
    # Cached: the pipeline and the rules judge screen the same documents in one evaluation.
    return screen_document(source, parse(text), index_of(key))


def screen(rng: Range, submission: Submission) -> Screening:
    """Screen both documents of ``submission`` against the checklist ``rng``."""
    key = terms_key(rng)
    masks: dict[SourceName, tuple[Mask, ...]] = {}
    warnings: list[DocumentWarning] = []
    for source in ("report", "plan"):
        kind: SourceName = "report" if source == "report" else "plan"
        doc_masks, doc_warnings = _screen_text(kind, submission.document(kind).text, key)
        masks[kind] = doc_masks
        warnings.extend(doc_warnings)
    return Screening(masks=masks, warnings=tuple(warnings))
