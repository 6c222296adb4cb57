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

from ..markdown import Block, MarkdownDocument, parse
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
from .instructions import find_instructions
from .language import find_other_language
from .obfuscation import find_disguises
from .policy import SCREEN_RULES, WARNING_RULES, ScreenRule, rule
from .suspicion import TermIndex, TermsKey, fake_score_table, index_of, repeated_passages, terms_key

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


class _Findings:
    """Masks and warnings of one document, each through its policy row."""

    def __init__(self, source: SourceName, md: MarkdownDocument) -> None:
        self.source = source
        self.lines = md.text.split("\n")
        self.masks: list[Mask] = []
        self.warnings: list[DocumentWarning] = []

    def add(self, name: str, first: int, last: int, line: int, excerpt: str, why: str) -> None:
        row = rule(name)
        self.masks.append(Mask(first, last, f"it is in a passage flagged as {why}", name))
        if row.warns:
            kind: WarningKind = name  # type: ignore[assignment]  # WARNING_RULES are kinds
            self.warnings.append(
                DocumentWarning(
                    kind=kind,
                    source=self.source,
                    line=line,
                    excerpt=_excerpt(excerpt or self.lines[line - 1]),
                    message=why,
                )
            )


def screen_document(
    source: SourceName, md: MarkdownDocument, terms: TermIndex | None = None
) -> tuple[tuple[Mask, ...], tuple[DocumentWarning, ...]]:
    """The masks (every rule's, and the keyword judge's scope) and warnings of one document."""
    found = _Findings(source, md)
    for instruction in find_instructions(md):
        found.add(
            "instruction",
            instruction.first_line,
            instruction.last_line,
            instruction.line,
            "",
            f"a suspected instruction to the evaluator ({instruction.what})",
        )
    for disguise in find_disguises(md):
        found.add(
            "obfuscation",
            disguise.line,
            disguise.line,
            disguise.line,
            "",
            f"a disguised word ({disguise.what}: {disguise.word!r})",
        )
    for passage in find_other_language(md):
        found.add(
            "other_language",
            passage.first_line,
            passage.last_line,
            passage.line,
            "",
            f"a passage in another language ({passage.what}): the screening reads English only",
        )
    if terms is not None:
        _suspicions(md, terms, found)
    masks = sorted(
        (*found.masks, *scope_masks(md)), key=lambda mask: (mask.first_line, mask.last_line)
    )
    warnings = sorted(found.warnings, key=lambda warning: warning.line)
    return tuple(masks), tuple(warnings)


def _suspicions(md: MarkdownDocument, terms: TermIndex, found: _Findings) -> None:
    table: list[Block] = []
    prose: list[tuple[int, str]] = []
    for block in (*md.blocks, None):
        if block is not None and block.kind == "table_row":
            if table and block.index != table[-1].index + 1:
                _table(table, found)
                table = []
            table.append(block)
        elif table:
            _table(table, found)
            table = []
        if block is None or block.kind == "heading":
            continue
        code = block.kind == "code"
        for line in block.lines:
            if block.kind not in ("table_row", "code"):
                prose.append((line.number, line.text))
            if terms.dumped(line.text, code=code):
                found.add(
                    "keyword_stuffing",
                    line.number,
                    line.number,
                    line.number,
                    line.text,
                    "keyword stuffing (checklist terms with no sentence around them)",
                )
            elif not code and (
                terms.restates(line.text)
                # In a plan, an item's name over its commands is a step, not a claim.
                or (found.source == "report" and terms.echoes(line.text))
            ):
                found.add(
                    "restated_criteria",
                    line.number,
                    line.number,
                    line.number,
                    line.text,
                    "a checkpoint said back (its name and terms with nothing else, or its"
                    " criterion nearly whole)",
                )
    texts = dict(prose)
    for number in repeated_passages(prose, terms):
        found.add(
            "repeated_passage",
            number,
            number,
            number,
            texts[number],
            "a repeated passage (one term-laden sentence written three or more times)",
        )


def _table(rows: list[Block], found: _Findings) -> None:
    if fake_score_table(rows):
        found.add(
            "fake_scores",
            rows[0].start,
            rows[-1].end,
            rows[0].start,
            rows[0].text,
            "a fake scores table (a table of scores or rubric sub-scores)",
        )


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
