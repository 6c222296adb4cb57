"""One detector per screening rule: what in a document its policy row sets apart.

Every detector takes a :class:`ScreenContext` (the document, which one it is, the
checklist's terms, and what the rules before it found) and returns
:class:`Finding` s: the lines set apart, the line its warning names, and why.
:data:`~evalkit.screening.policy.SCREEN_RULES` pairs each rule with its detector
and :func:`~evalkit.screening.screen_document` runs the rows in table order; the
matching itself lives in the modules of one concern each (``instructions``,
``obfuscation``, ``language``, ``suspicion``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ..markdown import Block, MarkdownDocument
from ..model import SourceName
from .instructions import find_instructions
from .language import find_other_language
from .obfuscation import find_disguises
from .suspicion import TermIndex, fake_score_table, repeated_passages

__all__ = [
    "Detector",
    "Finding",
    "ScreenContext",
    "disguised_words",
    "fake_score_tables",
    "instructions",
    "other_language",
    "repeated_sentences",
    "restated_criteria",
    "stuffed_lines",
]


@dataclass(frozen=True)
class Finding:
    """Lines one rule sets apart, the line its warning names, and why (in plain words)."""

    first_line: int
    last_line: int
    line: int
    why: str
    excerpt: str = ""  # what the warning quotes; "" for the named line's own text


@dataclass
class ScreenContext:
    """What a detector reads: one document, its kind, the checklist's terms (None when the
    caller screens without a checklist) and the findings of the rules run before it."""

    source: SourceName
    md: MarkdownDocument
    terms: TermIndex | None
    found: dict[str, list[Finding]] = field(default_factory=dict)

    def lines_found_by(self, rule: str) -> frozenset[int]:
        return frozenset(
            line
            for finding in self.found.get(rule, ())
            for line in range(finding.first_line, finding.last_line + 1)
        )


Detector = Callable[[ScreenContext], Sequence[Finding]]


def instructions(context: ScreenContext) -> list[Finding]:
    return [
        Finding(
            found.first_line,
            found.last_line,
            found.line,
            f"a suspected instruction to the evaluator ({found.what})",
        )
        for found in find_instructions(context.md)
    ]


def disguised_words(context: ScreenContext) -> list[Finding]:
    return [
        Finding(
            found.line, found.line, found.line, f"a disguised word ({found.what}: {found.word!r})"
        )
        for found in find_disguises(context.md)
    ]


def other_language(context: ScreenContext) -> list[Finding]:
    return [
        Finding(
            found.first_line,
            found.last_line,
            found.line,
            f"a passage in another language ({found.what}): the screening reads English only",
        )
        for found in find_other_language(context.md)
    ]


def _read_blocks(md: MarkdownDocument) -> Iterator[Block]:
    """The blocks the suspicion rules read: every block but headings."""
    return (block for block in md.blocks if block.kind != "heading")


def stuffed_lines(context: ScreenContext) -> list[Finding]:
    terms = context.terms
    if terms is None:
        return []
    return [
        Finding(
            line.number,
            line.number,
            line.number,
            "keyword stuffing (checklist terms with no sentence around them)",
            line.text,
        )
        for block in _read_blocks(context.md)
        for line in block.lines
        if terms.dumped(line.text, code=block.kind == "code")
    ]


def restated_criteria(context: ScreenContext) -> list[Finding]:
    """Lines that say a checkpoint back; a line keyword stuffing set apart is not read again,
    and in a plan an item's name over its commands is a step, not a claim."""
    terms = context.terms
    if terms is None:
        return []
    stuffed = context.lines_found_by("keyword_stuffing")
    return [
        Finding(
            line.number,
            line.number,
            line.number,
            "a checkpoint said back (its name and terms with nothing else, or its"
            " criterion nearly whole)",
            line.text,
        )
        for block in _read_blocks(context.md)
        if block.kind != "code"
        for line in block.lines
        if line.number not in stuffed
        and (terms.restates(line.text) or (context.source == "report" and terms.echoes(line.text)))
    ]


def _tables(md: MarkdownDocument) -> Iterator[list[Block]]:
    """Runs of consecutive table rows."""
    table: list[Block] = []
    for block in md.blocks:
        if block.kind == "table_row" and (not table or block.index == table[-1].index + 1):
            table.append(block)
            continue
        if table:
            yield table
        table = [block] if block.kind == "table_row" else []
    if table:
        yield table


def fake_score_tables(context: ScreenContext) -> list[Finding]:
    return [
        Finding(
            rows[0].start,
            rows[-1].end,
            rows[0].start,
            "a fake scores table (a table of scores or rubric sub-scores)",
            rows[0].text,
        )
        for rows in _tables(context.md)
        if fake_score_table(rows)
    ]


def repeated_sentences(context: ScreenContext) -> list[Finding]:
    terms = context.terms
    if terms is None:
        return []
    prose = [
        (line.number, line.text)
        for block in _read_blocks(context.md)
        if block.kind not in ("table_row", "code")
        for line in block.lines
    ]
    texts: Mapping[int, str] = dict(prose)
    return [
        Finding(
            number,
            number,
            number,
            "a repeated passage (one term-laden sentence written three or more times)",
            texts[number],
        )
        for number in repeated_passages(prose, terms)
    ]
