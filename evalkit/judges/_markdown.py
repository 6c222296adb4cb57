"""Split a Markdown document into sections and blocks, with line numbers.

Private helper of the offline ``rules`` judge (see ``docs/rules-judge.md``).
It is deliberately small, not a CommonMark parser:

* a **section** is the text from one ATX heading (``#`` .. ``######``, outside
  fenced code) to the next heading of any level; text before the first
  heading is a section of its own with an empty path;
* a **block** is a heading line, a paragraph (consecutive plain lines), one
  list item with its continuation lines, one blockquote run (``>`` lines),
  one table row, or one fenced code block. Blank lines, table separator rows
  (``|---|``) and thematic breaks (``---``) end a block and are not blocks.

Every block keeps its lines both as written and *clean*: without list
markers, task boxes, ``>`` markers, heading ``#``s, outer table pipes and
surrounding whitespace (code lines only lose their surrounding whitespace).
``Block.text`` joins the clean lines with ``\\n``; ``Block.starts`` gives the
offset of each clean line in it, so a match in the text maps back to lines.
Pure functions, no I/O.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

BlockKind = Literal["heading", "paragraph", "list_item", "quote", "table_row", "code"]

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_HEADING_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
_TASK_BOX = re.compile(r"^\[[ xX]\][ \t]+")
_QUOTE = re.compile(r"^\s*>")
_QUOTE_MARKERS = re.compile(r"^\s*(?:>[ \t]?)+")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")


@dataclass(frozen=True)
class Line:
    number: int  # 1-based line number in the document
    raw: str  # the line as written (without its line break)
    text: str  # the clean line


@dataclass(frozen=True)
class Block:
    index: int
    kind: BlockKind
    section: int  # index into MarkdownDocument.sections
    start: int  # first line number, fences included
    end: int  # last line number, fences included
    lines: tuple[Line, ...]  # content lines (a code block's fences are not among them)
    text: str  # clean lines joined with "\n"
    starts: tuple[int, ...]  # offset of each line's clean text in ``text``

    def line_index(self, offset: int) -> int:
        """Index into ``lines`` of the line holding ``offset`` of ``text``."""
        return max(0, bisect.bisect_right(self.starts, offset) - 1)


@dataclass(frozen=True)
class Section:
    index: int
    path: tuple[str, ...]  # heading titles from the outermost down; () before any heading
    levels: tuple[int, ...]  # the level of each heading in ``path``
    level: int  # heading level, 0 before any heading
    start: int  # line number of the heading (or of the first line)
    blocks: tuple[int, ...]  # indices into MarkdownDocument.blocks

    @property
    def name(self) -> str:
        return " / ".join(self.path) if self.path else "(before the first heading)"


@dataclass(frozen=True)
class MarkdownDocument:
    text: str
    blocks: tuple[Block, ...]
    sections: tuple[Section, ...]


def heading_title(raw: str) -> str | None:
    """The title of an ATX heading line, or None when ``raw`` is not one."""
    match = _HEADING.match(raw)
    if not match:
        return None
    title = match.group(2) or ""
    return _HEADING_CLOSE.sub("", title).strip()


def clean_line(raw: str, kind: BlockKind, first: bool = True) -> str:
    """``raw`` without the Markdown markup that is not part of what it says."""
    text = raw
    if kind == "code":
        return text.strip()
    if kind == "heading":
        return heading_title(raw) or ""
    if kind == "quote":
        text = _QUOTE_MARKERS.sub("", text)
        first = True  # a list marker inside a quote is markup too
    if kind in ("list_item", "quote") and first:
        match = _LIST_ITEM.match(text)
        if match:
            text = text[match.end() :]
            text = _TASK_BOX.sub("", text)
    text = text.strip()
    if kind == "table_row":
        if text.startswith("|"):
            text = text[1:]
        if text.endswith("|") and not text.endswith("\\|"):
            text = text[:-1]
        text = text.strip()
    return text


def _indent(raw: str) -> int:
    expanded = raw.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


class _Builder:
    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.sections: list[dict] = []
        self.stack: list[tuple[int, str]] = []
        # the open block: kind, first line number, last line number, lines
        self.kind: BlockKind | None = None
        self.first_line = 0
        self.last_line = 0
        self.lines: list[Line] = []

    def _section(self) -> int:
        if not self.sections:
            self.sections.append(
                {"path": (), "levels": (), "level": 0, "start": self.first_line or 1, "blocks": []}
            )
        return len(self.sections) - 1

    def open(self, kind: BlockKind, number: int) -> None:
        self.close()
        self.kind = kind
        self.first_line = number
        self.last_line = number
        self.lines = []

    def add(self, number: int, raw: str, *, first: bool = False) -> None:
        assert self.kind is not None
        self.lines.append(Line(number, raw, clean_line(raw, self.kind, first)))
        self.last_line = number

    def close(self, end: int | None = None) -> None:
        if self.kind is None:
            return
        section = self._section()
        starts: list[int] = []
        offset = 0
        for line in self.lines:
            starts.append(offset)
            offset += len(line.text) + 1
        block = Block(
            index=len(self.blocks),
            kind=self.kind,
            section=section,
            start=self.first_line,
            end=end if end is not None else self.last_line,
            lines=tuple(self.lines),
            text="\n".join(line.text for line in self.lines),
            starts=tuple(starts),
        )
        self.blocks.append(block)
        self.sections[section]["blocks"].append(block.index)
        self.kind = None
        self.lines = []

    def heading(self, number: int, raw: str) -> None:
        self.close()
        level = len(_HEADING.match(raw).group(1))  # type: ignore[union-attr]
        title = heading_title(raw) or ""
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        self.stack.append((level, title))
        self.sections.append(
            {
                "path": tuple(t for _, t in self.stack),
                "levels": tuple(lv for lv, _ in self.stack),
                "level": level,
                "start": number,
                "blocks": [],
            }
        )
        self.open("heading", number)
        self.add(number, raw)
        self.close()

    def document(self, text: str) -> MarkdownDocument:
        return MarkdownDocument(
            text=text,
            blocks=tuple(self.blocks),
            sections=tuple(
                Section(
                    index=i,
                    path=s["path"],
                    levels=s["levels"],
                    level=s["level"],
                    start=s["start"],
                    blocks=tuple(s["blocks"]),
                )
                for i, s in enumerate(self.sections)
            ),
        )


def parse(text: str) -> MarkdownDocument:
    """Sections and blocks of ``text`` (line numbers count ``\\n`` like grounding does)."""
    builder = _Builder()
    raws = [raw.rstrip("\r") for raw in text.split("\n")]
    if raws and not raws[-1]:
        raws.pop()  # what follows the final line break is not a line
    fence: tuple[str, int] | None = None  # (char, length) of the open fence
    blank_since = False  # a blank line since the open list item's last line
    for number, raw in enumerate(raws, start=1):
        if fence is not None:
            stripped = raw.strip()
            char, length = fence
            if stripped and set(stripped) == {char} and len(stripped) >= length:
                builder.close(end=number)
                fence = None
            else:
                builder.add(number, raw)
            continue
        fence_match = _FENCE.match(raw)
        if fence_match and not (fence_match.group(1)[0] == "`" and "`" in fence_match.group(2)):
            builder.open("code", number)
            fence = (fence_match.group(1)[0], len(fence_match.group(1)))
            continue
        if not raw.strip():
            if builder.kind == "list_item":
                blank_since = True
            else:
                builder.close()
            continue
        if _HEADING.match(raw):
            builder.heading(number, raw)
            continue
        if _TABLE_SEPARATOR.match(raw) and "|" in raw:
            builder.close()
            continue
        if _THEMATIC_BREAK.match(raw):
            builder.close()
            continue
        if raw.lstrip().startswith("|"):
            builder.open("table_row", number)
            builder.add(number, raw)
            builder.close()
            continue
        if _QUOTE.match(raw):
            if builder.kind != "quote":
                builder.open("quote", number)
            if _QUOTE_MARKERS.sub("", raw).strip():
                builder.add(number, raw)
            else:
                builder.close()
            continue
        if _LIST_ITEM.match(raw):
            builder.open("list_item", number)
            builder.add(number, raw, first=True)
            blank_since = False
            continue
        if builder.kind == "list_item" and (not blank_since or _indent(raw) >= 2):
            builder.add(number, raw)
            blank_since = False
            continue
        if builder.kind != "paragraph":
            builder.open("paragraph", number)
        builder.add(number, raw)
    builder.close(end=len(raws) if fence is not None else None)
    return builder.document(text)
