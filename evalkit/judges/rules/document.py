"""The rules judge's view of one document: its blocks and sections, folded for matching.

A :class:`DocumentView` finds every match of a term or pattern outside the lines
screening set apart, each as a :class:`Hit` with the quote that grounds it; the
concrete artifact nearest a match; how negation reads a match where it stands; and
how many blocks separate a match from the nearest mention of other terms. Each of
those is computed once per judge() call, in one cache whose keys say what they hold.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Generic, TypeAlias, TypeVar, cast

from ...grounding import SearchableDocument
from ...markdown import Block, MarkdownDocument
from ...model import SourceName
from ...screening import PENALTIES_READ, Mask
from ...text.fold import fold
from ...text.negation import (
    ClauseBreaks,
    advised_against_at,
    clause_ends,
    denied_at,
    hedged_at,
    negated_at,
    supposed_at,
)
from .artifacts import line_artifact
from .terms import anchor_of, step_pattern, term_pattern

QUOTE_LIMIT = 300  # characters of a quote, around the match
# A document is read up to this many matches of one term (or pattern): enough for every
# rule, and it bounds the work a document that repeats a term a million times can cause.
MAX_MATCHES = 1000
ANCHOR_SLACK = 64  # characters around an anchor where the term's regex may match


@dataclass(frozen=True)
class Hit:
    """One match in a document: where it is, and the quote that grounds it."""

    doc: SourceName
    block: int
    start: int  # offsets in the block's clean text
    end: int
    line: int  # 1-based document line of the match's start
    section: int
    matched: str  # the matched text
    quote: str | None  # None when no quote of it passes grounding


def _window(text: str, start: int, end: int) -> str:
    """At most QUOTE_LIMIT characters of ``text`` around ``[start, end)``."""
    if len(text) <= QUOTE_LIMIT:
        return text.strip()
    if end - start >= QUOTE_LIMIT:
        return text[start : start + QUOTE_LIMIT].strip()
    left = max(0, min(start - (QUOTE_LIMIT - (end - start)) // 2, len(text) - QUOTE_LIMIT))
    return text[left : left + QUOTE_LIMIT].strip()


def _folded(md: MarkdownDocument) -> MarkdownDocument:
    """``md`` with every block's visible text folded for matching (see evalkit.text.fold)."""
    blocks = []
    for block in md.blocks:
        if block.text.isascii():
            blocks.append(block)
            continue
        lines = tuple(replace(line, text=fold(line.text)) for line in block.lines)
        starts: list[int] = []
        offset = 0
        for line in lines:
            starts.append(offset)
            offset += len(line.text) + 1
        blocks.append(
            replace(
                block,
                lines=lines,
                text="\n".join(line.text for line in lines),
                starts=tuple(starts),
            )
        )
    return replace(md, blocks=tuple(blocks))


def _lower_keeping_offsets(text: str) -> str | None:
    lower = text.lower()
    return lower if len(lower) == len(text) else None


def _in_context(block: Block, start: int, end: int) -> tuple[str, int, int]:
    """The text negation reads for ``[start, end)``: the block's text, in code its line."""
    if block.kind != "code":
        return block.text, start, end
    line = block.line_index(start)
    offset = block.starts[line]
    return block.lines[line].text, start - offset, end - offset


# --------------------------------------------------------------------------- the cache

_Value = TypeVar("_Value")
_Value_co = TypeVar("_Value_co", covariant=True)


class _Kind(Generic[_Value_co]):
    """One kind of value a document computes once, and its type. A cache entry's key is
    its kind and the arguments it was computed from, so two kinds of value computed from
    the same arguments never share an entry."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return f"<{self.what}>"


# Per term, pattern or Remediation step: its matches. Arguments: the term or pattern.
_TERM_HITS: _Kind[tuple[Hit, ...]] = _Kind("matches of a term")
_STEP_HITS: _Kind[tuple[Hit, ...]] = _Kind("matches of a Remediation term as a step")
_PATTERN_HITS: _Kind[tuple[Hit, ...]] = _Kind("matches of a pattern")
_PENALTY_HITS: _Kind[tuple[Hit, ...]] = _Kind("matches of a term or pattern, for a penalty")
# Arguments: the quote, its line, whether it grounds a penalty.
_GROUNDED: _Kind[bool] = _Kind("a quote grounding finds")
# Arguments: the block, the index of the line in it.
_ARTIFACT_AT: _Kind[tuple[str, Hit] | None] = _Kind("the artifact of a line")
# Arguments: the block, and in a code block the index of the line negation reads (else -1).
_BREAKS: _Kind[ClauseBreaks] = _Kind("the clause breaks of a text")
# Arguments: the block, the start and the end of the match.
_NEGATED: _Kind[bool] = _Kind("a match negated")
_DENIED: _Kind[bool] = _Kind("a match denied")
_SUPPOSED: _Kind[bool] = _Kind("a match supposed")
_ADVISED_AGAINST: _Kind[bool] = _Kind("a match advised against")


class _Cache:
    """Every value a document computes once, each under its kind and its arguments."""

    def __init__(self) -> None:
        self._values: dict[tuple[_Kind[object], tuple[Hashable, ...]], object] = {}

    def get(
        self, kind: _Kind[_Value], arguments: tuple[Hashable, ...], compute: Callable[[], _Value]
    ) -> _Value:
        key = (kind, arguments)
        if key not in self._values:
            self._values[key] = compute()
        return cast(_Value, self._values[key])


# How negation reads a match: negated_at, denied_at, supposed_at or advised_against_at.
_Reading: TypeAlias = Callable[[str, int, int, ClauseBreaks | None], bool]


# --------------------------------------------------------------------------- the document


class DocumentView:
    """One document parsed once per judge() call, with its match cache."""

    def __init__(self, kind: SourceName, md: MarkdownDocument, masks: tuple[Mask, ...]) -> None:
        self.kind = kind
        self.label = "report" if kind == "report" else "plan"
        self.md: MarkdownDocument = _folded(md)
        # Each block's text in lower case, for str.find, where that keeps every offset (else
        # None: the block is read by its regex alone). Every search reads every block.
        self._lower = tuple(_lower_keeping_offsets(block.text) for block in self.md.blocks)
        self.search = SearchableDocument(kind, md, masks)
        # Lines screening set apart (not examined, instructions, stuffing): they earn nothing.
        self.masked = frozenset(
            line for mask in masks for line in range(mask.first_line, mask.last_line + 1)
        )
        # ... and those where penalties are not read either (a reference list or an example
        # is still read by whoever follows the document: see PENALTIES_READ).
        self.masked_for_penalties = frozenset(
            line
            for mask in masks
            if mask.kind not in PENALTIES_READ
            for line in range(mask.first_line, mask.last_line + 1)
        )
        level_one = [s.path[0] for s in self.md.sections if s.level == 1]
        self._title = level_one[0] if len(level_one) == 1 else None
        self._cache = _Cache()

    # ---- quoting

    def _grounded(self, quote: str, line: int, penalty: bool = False) -> bool:
        # The quote comes from this line: grounding need only look around it.
        return self._cache.get(
            _GROUNDED,
            (quote, line, penalty),
            lambda: self.search.find(quote, near_line=line, penalty=penalty) is not None,
        )

    def quote(self, block: Block, start: int, end: int, penalty: bool = False) -> str | None:
        """The clean line(s) holding ``[start, end)``, else its own line, if grounding finds it."""
        first = block.line_index(start)
        last = block.line_index(max(start, end - 1))
        text_start = block.starts[first]
        text_end = block.starts[last] + len(block.lines[last].text)
        joined = block.text[text_start:text_end].replace("\n", " ")
        candidates = [_window(joined, start - text_start, end - text_start)]
        line_text = block.lines[first].text
        local = start - block.starts[first]
        candidates.append(_window(line_text, local, min(len(line_text), end - block.starts[first])))
        number = block.lines[first].number
        for candidate in candidates:
            if candidate and self._grounded(candidate, number, penalty):
                return candidate
        return None

    def hit_at(self, block: Block, start: int, end: int, penalty: bool = False) -> Hit:
        """The match ``[start, end)`` of ``block``, quoted (for a penalty: see PENALTIES_READ)."""
        return Hit(
            doc=self.kind,
            block=block.index,
            start=start,
            end=end,
            line=block.lines[block.line_index(start)].number,
            section=block.section,
            matched=block.text[start:end],
            quote=self.quote(block, start, end, penalty),
        )

    def lines_with(self, block: Block, words: tuple[str, ...]) -> list[int]:
        """Indices of the block's lines holding any of ``words`` (lower case), in order."""
        lower = self._lower[block.index]
        if lower is None:
            return list(range(len(block.lines)))
        found: set[int] = set()
        for word in words:
            at = lower.find(word)
            while at >= 0:
                index = block.line_index(at)
                found.add(index)
                following = index + 1
                if following >= len(block.starts):
                    break
                at = lower.find(word, block.starts[following])
        return sorted(found)

    def _finditer(
        self, pattern: re.Pattern[str], block: Block, anchor: str | None
    ) -> Iterator[re.Match[str]]:
        """The matches of ``pattern`` in ``block``; with an ``anchor`` (a lower-case piece
        every match holds), the regex only runs where ``str.find`` sees the anchor."""
        lower = self._lower[block.index] if anchor else None
        if not anchor or lower is None:
            yield from pattern.finditer(block.text)
            return
        slack = len(pattern.pattern) + ANCHOR_SLACK
        pos = 0
        while (at := lower.find(anchor, pos)) >= 0:
            match = pattern.search(block.text, max(pos, at - slack), at + len(anchor) + slack)
            if match is None or match.start() > at:
                pos = at + 1
                continue
            yield match
            pos = max(match.end(), at + 1)

    def _matches(
        self, pattern: re.Pattern[str], anchor: str | None = None, penalty: bool = False
    ) -> tuple[Hit, ...]:
        """The first MAX_MATCHES matches of ``pattern`` outside the masked lines, in order.

        With ``penalty``, outside the lines masked for penalties, and quoted from them.
        """
        masked = self.masked_for_penalties if penalty else self.masked
        hits: list[Hit] = []
        for block in self.md.blocks:
            for match in self._finditer(pattern, block, anchor):
                line = block.lines[block.line_index(match.start())].number
                if line not in masked:
                    hits.append(self.hit_at(block, match.start(), match.end(), penalty))
                    if len(hits) >= MAX_MATCHES:
                        return tuple(hits)
        return tuple(hits)

    # ---- matching

    def hits(self, term: str) -> tuple[Hit, ...]:
        """Every match of ``term``, in document order."""
        return self._cache.get(
            _TERM_HITS, (term,), lambda: self._matches(term_pattern(term), anchor_of(term))
        )

    def penalty_hits(self, term: str | re.Pattern[str]) -> tuple[Hit, ...]:
        """Every match of a term or pattern where penalties are read (see PENALTIES_READ)."""

        def find() -> tuple[Hit, ...]:
            if isinstance(term, str):
                return self._matches(term_pattern(term), anchor_of(term), penalty=True)
            return self._matches(term, penalty=True)

        return self._cache.get(_PENALTY_HITS, (term,), find)

    def step_hits(self, term: str) -> tuple[Hit, ...]:
        """Every match of the Remediation term ``term`` (see ``step_pattern``)."""
        return self._cache.get(
            _STEP_HITS, (term,), lambda: self._matches(step_pattern(term), anchor_of(term))
        )

    def regex_hits(self, pattern: re.Pattern[str]) -> tuple[Hit, ...]:
        """Every match of ``pattern``, in document order (computed once per pattern)."""
        return self._cache.get(_PATTERN_HITS, (pattern,), lambda: self._matches(pattern))

    def sections_of(self, terms: Iterable[str]) -> set[int]:
        return {hit.section for term in terms for hit in self.hits(term)}

    def section_name(self, index: int) -> str:
        path = self.md.sections[index].path
        # The document's single level-1 heading is its title: leave it out of names.
        if len(path) > 1 and self._title is not None and path[0] == self._title:
            path = path[1:]
        return " / ".join(path) if path else self.md.sections[index].name

    def top_section(self, hit: Hit) -> tuple[str, ...]:
        """The section under the document's title that holds ``hit``: its path down to the
        first heading of level 2 or deeper (a report's "# Title" covers every section)."""
        section = self.md.sections[hit.section]
        for depth, level in enumerate(section.levels):
            if level >= 2:
                return section.path[: depth + 1]
        return section.path

    def where(self, hit: Hit) -> str:
        """Where a rationale says the match is: its section and line."""
        return f"section '{self.section_name(hit.section)}' (line {hit.line})"

    # ---- artifacts

    def artifact_at(self, block_index: int, line_index: int) -> tuple[str, Hit] | None:
        """The quotable concrete artifact of one line of a block, if any: (kind, hit)."""
        return self._cache.get(
            _ARTIFACT_AT,
            (block_index, line_index),
            lambda: self._find_artifact(self.md.blocks[block_index], line_index),
        )

    def _find_artifact(self, block: Block, index: int) -> tuple[str, Hit] | None:
        line = block.lines[index]
        if line.number in self.masked:
            return None
        found = line_artifact(line.text, in_code=block.kind == "code")
        if found is None:
            return None
        kind, start, end = found
        hit = self.hit_at(block, block.starts[index] + start, block.starts[index] + end)
        return (kind, hit) if hit.quote is not None else None

    def nearest_artifact(self, hit: Hit) -> tuple[str, Hit] | None:
        """The artifact of the hit's block nearest to its line (the earlier one on a tie).

        Lines are tried outward from the hit's own, so a long block is read only as far
        as its nearest artifact.
        """
        block = self.md.blocks[hit.block]
        lines = block.lines
        home = block.line_index(hit.start)
        left, right = home, home + 1
        while left >= 0 or right < len(lines):
            left_gap = hit.line - lines[left].number if left >= 0 else math.inf
            right_gap = lines[right].number - hit.line if right < len(lines) else math.inf
            if left_gap <= right_gap:
                index, left = left, left - 1
            else:
                index, right = right, right + 1
            found = self.artifact_at(hit.block, index)
            if found is not None:
                return found
        return None

    def first_artifact(self, block_index: int) -> tuple[str, Hit] | None:
        for index in range(len(self.md.blocks[block_index].lines)):
            found = self.artifact_at(block_index, index)
            if found is not None:
                return found
        return None

    # ---- negation

    def _context(self, hit: Hit) -> tuple[str, int, int, ClauseBreaks]:
        """The text negation reads for a hit (the block's, in code its line), with its breaks."""
        block = self.md.blocks[hit.block]
        text, start, end = _in_context(block, hit.start, hit.end)
        line = block.line_index(hit.start) if block.kind == "code" else -1
        breaks = self._cache.get(_BREAKS, (hit.block, line), lambda: clause_ends(text))
        return text, start, end, breaks

    def _read_as(self, kind: _Kind[bool], reading: _Reading, hit: Hit) -> bool:
        """``reading`` of the match where it stands, read once per match."""
        return self._cache.get(
            kind, (hit.block, hit.start, hit.end), lambda: reading(*self._context(hit))
        )

    def negated(self, hit: Hit) -> bool:
        """Is the match negated where it stands (see ``negated_at``)? Read once per match."""
        return self._read_as(_NEGATED, negated_at, hit)

    def denied(self, hit: Hit) -> bool:
        """Is the match denied after it or only supposed (see ``denied_at``)?"""
        return self._read_as(_DENIED, denied_at, hit)

    def supposed(self, hit: Hit) -> bool:
        """Is the match only supposed, in a conditional clause (see ``supposed_at``)?"""
        return self._read_as(_SUPPOSED, supposed_at, hit)

    def advised_against(self, hit: Hit) -> bool:
        return self._read_as(_ADVISED_AGAINST, advised_against_at, hit)

    def hedged(self, hit: Hit) -> bool:
        return hedged_at(*self._context(hit))

    def asserted(self, hit: Hit, *, negation_is_finding: bool = False) -> bool:
        """False when the document negates the mention where it stands (see ``negated_at``).

        ``negation_is_finding`` for a term the item's Detection criterion itself negates
        ("no fail2ban"): for it, the report saying so is the finding.
        """
        if self.supposed(hit):
            return False  # a supposition is no finding, whatever the criterion negates
        return negation_is_finding or not self.negated(hit)

    # ---- distance

    def block_distance(self, terms: Iterable[str], hit: Hit) -> float:
        """How many blocks from ``hit`` the nearest mention of ``terms`` in its section stands
        (0: its own block; a block after it counts half a block more, so one before wins a
        tie); infinite when none is in that section."""
        nearest = math.inf
        for term in dict.fromkeys(terms):
            for other in self.hits(term):
                if other.section == hit.section:
                    gap = other.block - hit.block
                    nearest = min(nearest, -gap if gap <= 0 else gap + 0.5)
        return nearest


def nearest(distances: Mapping[str, float]) -> frozenset[str]:
    """The checkpoints at the smallest distance (all of them on a tie)."""
    best = min(distances.values(), default=math.inf)
    return frozenset(chk_id for chk_id, gap in distances.items() if gap == best)


def describe_lines(hits: Iterable[Hit]) -> str:
    """The lines of ``hits`` as a rationale names them: "line 3", "lines 3, 9"."""
    numbers = sorted({hit.line for hit in hits})
    return ("line " if len(numbers) == 1 else "lines ") + ", ".join(map(str, numbers))
