"""The one Markdown reader: what a reader of the rendered document sees, with line numbers.

Built on markdown-it-py (CommonMark, plus GitHub tables). The checklist parser,
grounding, screening and the offline ``rules`` judge all read documents through
:func:`parse`, so they agree on what is code, what is a heading and what is
hidden.

* A **section** is the text from one heading (any level) to the next heading;
  text before the first heading is a section of its own with an empty path.
* A **block** is a heading, a paragraph, one list item (its paragraphs, until a
  nested item starts), one blockquote (everything inside it), one table row
  (cells joined by `` | ``), or one code block (fenced or indented).
* **Visible text** is what the rendered document shows: emphasis markers,
  list markers, ``>``, heading ``#``s and table pipes are gone; inline code
  keeps its backticks (a code span is still a code span to the judge).
* **Hidden content** is not in any block: HTML comments and raw HTML blocks,
  link targets and titles, reference definitions, image alt text and
  collapsed ``<details>`` blocks. :attr:`MarkdownDocument.hidden` lists each
  hidden span with its kind and source offsets, and
  :meth:`MarkdownDocument.visible_source` is the source with those spans
  blanked (line breaks kept), which is what grounding searches.

Every block keeps its first and last line (1-based, counting ``\\n`` as
grounding does) and, per line, the raw source line and its visible text.
Pure functions, no I/O.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Literal

from markdown_it import MarkdownIt
from markdown_it.token import Token

__all__ = [
    "Block",
    "BlockKind",
    "LINK",
    "HiddenSpan",
    "Line",
    "MarkdownDocument",
    "Section",
    "parse",
]

BlockKind = Literal["heading", "paragraph", "list_item", "quote", "table_row", "code"]
HiddenKind = Literal[
    "HTML comment",
    "raw HTML block",
    "link target",
    "reference definition",
    "image alt text",
    "collapsed <details> block",
]

# Inline parsing is done on demand (see _inline_children): a paragraph with no inline
# markup at all is its own text, and markdown-it's inline parser reads character by
# character, which would dominate the time on a very large document.
_PARSER = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
# Characters that can start inline markup (code, emphasis, links, images, HTML, entities,
# escapes, hard breaks). Content without any of them renders as itself.
_INLINE_MARKUP = re.compile(r"[\\`*_\[\]!<&]")

_DETAILS_OPEN = re.compile(r"<details\b([^>]*)>", re.IGNORECASE)
_DETAILS_CLOSE = re.compile(r"</details\s*>", re.IGNORECASE)
_OPEN_ATTRIBUTE = re.compile(r"\bopen\b", re.IGNORECASE)
_TASK_BOX = re.compile(r"^\[[ xX]\][ \t]+")
# An image, whole: ![alt](target "title") or ![alt][ref].
_IMAGE = re.compile(r"!\[[^\]\n]*\](?:\([^)\n]*\)|\[[^\]\n]*\])?")
# An inline link's brackets and target: "[" text "](" target ")". Group 1 is the text.
LINK = re.compile(r"(?<![!\\])\[([^\[\]\n]*)\]\(([^()\n]*(?:\([^()\n]*\)[^()\n]*)*)\)")


@dataclass(frozen=True)
class Line:
    number: int  # 1-based line number in the document
    raw: str  # the source line as written (without its line break)
    text: str  # what the rendered document shows of it


@dataclass(frozen=True)
class Block:
    index: int
    kind: BlockKind
    section: int  # index into MarkdownDocument.sections
    start: int  # first line number, fences included
    end: int  # last line number, fences included
    lines: tuple[Line, ...]  # content lines (a code block's fences are not among them)
    text: str  # visible lines joined with "\n"
    starts: tuple[int, ...]  # offset of each line's visible text in ``text``

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
    atx: bool = True  # written with "#"s (a setext heading is underlined instead)

    @property
    def name(self) -> str:
        return " / ".join(self.path) if self.path else "(before the first heading)"


@dataclass(frozen=True)
class HiddenSpan:
    """Source text a reader of the rendered document does not see."""

    kind: HiddenKind
    start: int  # offsets into MarkdownDocument.text
    end: int
    line: int  # 1-based line of ``start``


@dataclass(frozen=True)
class MarkdownDocument:
    text: str  # the source, carriage returns removed (line numbers are unchanged)
    blocks: tuple[Block, ...]
    sections: tuple[Section, ...]
    hidden: tuple[HiddenSpan, ...]
    line_starts: tuple[int, ...] = field(repr=False)  # offset of each line in ``text``

    def line_of(self, offset: int) -> int:
        """1-based line holding ``offset`` of ``text``."""
        return bisect.bisect_right(self.line_starts, offset)

    @cached_property
    def code_lines(self) -> frozenset[int]:
        """Line numbers inside code blocks, fences included."""
        return frozenset(
            number
            for block in self.blocks
            if block.kind == "code"
            for number in range(block.start, block.end + 1)
        )

    @cached_property
    def visible_source(self) -> str:
        """``text`` with every hidden span blanked to spaces, line breaks kept."""
        return blank_spans(self.text, ((span.start, span.end) for span in self.hidden))

    def hidden_at(self, start: int, end: int) -> HiddenSpan | None:
        """The first hidden span overlapping ``[start, end)`` of ``text``, if any."""
        for span in self.hidden:
            if span.start < end and start < span.end:
                return span
        return None


def blank_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each ``[start, end)`` replaced by spaces (line breaks kept)."""
    parts: list[str] = []
    at = 0
    for start, end in sorted(spans):
        start = max(start, at)
        if end <= start:
            continue
        parts.append(text[at:start])
        parts.append(re.sub(r"[^\n]", " ", text[start:end]))
        at = end
    parts.append(text[at:])
    return "".join(parts)


def line_starts_of(text: str) -> tuple[int, ...]:
    return (0, *(match.end() for match in re.finditer("\n", text)))


# --------------------------------------------------------------------------- inline rendering


def _inline_children(token: Token, env: dict[str, Any]) -> list[Token] | None:
    """The inline token's children, parsed now; None when its content has no markup."""
    if token.children:
        return token.children
    if not _INLINE_MARKUP.search(token.content):
        return None
    children: list[Token] = []
    _PARSER.inline.parse(token.content, _PARSER, env, children)
    token.children = children
    return children


def _render_inline(token: Token, env: dict[str, Any]) -> list[str]:
    """The visible text of an inline token, one string per source line it spans."""
    children = _inline_children(token, env)
    if children is None:
        return token.content.split("\n")
    lines = [""]
    for child in children:
        kind = child.type
        if kind == "text":
            lines[-1] += child.content
        elif kind == "code_inline":
            ticks = "``" if "`" in child.content else "`"
            lines[-1] += f"{ticks}{child.content}{ticks}"
        elif kind in ("softbreak", "hardbreak"):
            lines.append("")
        elif kind == "html_inline":
            lines.extend("" for _ in range(child.content.count("\n")))
        # link_open/close, em/strong markers and images (alt text) show nothing of their own
    return lines


class _Builder:
    def __init__(self, text: str) -> None:
        self.text = text
        self.raw_lines = text.split("\n")
        self.line_starts = line_starts_of(text)
        self.blocks: list[Block] = []
        self.sections: list[dict[str, Any]] = []
        self.stack: list[tuple[int, str]] = []
        self.hidden: list[HiddenSpan] = []
        self.env: dict[str, Any] = {}

    # ---- positions

    def offset(self, line0: int) -> int:
        """Offset of 0-based line ``line0`` (the end of the text past the last line)."""
        if line0 >= len(self.line_starts):
            return len(self.text)
        return self.line_starts[line0]

    def hide_lines(self, kind: HiddenKind, first0: int, end0: int) -> None:
        start, end = self.offset(first0), self.offset(end0)
        if end > start:
            self.hidden.append(HiddenSpan(kind, start, end, first0 + 1))

    def hide(self, kind: HiddenKind, start: int, end: int) -> None:
        if end > start:
            self.hidden.append(
                HiddenSpan(kind, start, end, bisect.bisect_right(self.line_starts, start))
            )

    # ---- blocks and sections

    def section(self, first_line: int) -> int:
        if not self.sections:
            self.sections.append(
                {
                    "path": (),
                    "levels": (),
                    "level": 0,
                    "start": first_line,
                    "blocks": [],
                    "atx": True,
                }
            )
        return len(self.sections) - 1

    def add_block(
        self, kind: BlockKind, start: int, end: int, lines: Sequence[tuple[int, str]]
    ) -> None:
        kept = [
            Line(number, self.raw_lines[number - 1] if number <= len(self.raw_lines) else "", text)
            for number, text in lines
        ]
        if kind != "code":
            kept = [line for line in kept if line.text]
        if not kept:
            return
        section = self.section(start)
        starts: list[int] = []
        offset = 0
        for line in kept:
            starts.append(offset)
            offset += len(line.text) + 1
        block = Block(
            index=len(self.blocks),
            kind=kind,
            section=section,
            start=start,
            end=end,
            lines=tuple(kept),
            text="\n".join(line.text for line in kept),
            starts=tuple(starts),
        )
        self.blocks.append(block)
        self.sections[section]["blocks"].append(block.index)

    def heading(self, level: int, number: int, title: str, atx: bool) -> None:
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
                "atx": atx,
            }
        )

    def inline_hidden(self, inline: Token) -> None:
        """Hidden parts inside an inline token: comments, link targets, images."""
        children = _inline_children(inline, self.env) or []
        kinds = {child.type for child in children}
        if not kinds & {"html_inline", "link_open", "image"} or inline.map is None:
            return
        start, end = self.offset(inline.map[0]), self.offset(inline.map[1])
        source = self.text[start:end]
        if "image" in kinds:
            for match in _IMAGE.finditer(source):
                self.hide("image alt text", start + match.start(), start + match.end())
        if "link_open" in kinds:
            for match in LINK.finditer(source):
                # "[" and "](target)" are markup; the link text between is what a reader sees.
                self.hide("link target", start + match.start(), start + match.start(1))
                self.hide("link target", start + match.end(1), start + match.end())
        if "html_inline" in kinds:
            cursor = 0
            for child in children:
                if child.type != "html_inline":
                    continue
                at = source.find(child.content, cursor)
                if at < 0:
                    continue
                kind: HiddenKind = (
                    "HTML comment" if child.content.startswith("<!--") else "raw HTML block"
                )
                self.hide(kind, start + at, start + at + len(child.content))
                cursor = at + len(child.content)

    def document(self) -> MarkdownDocument:
        hidden = tuple(sorted(self.hidden, key=lambda span: (span.start, span.end)))
        return MarkdownDocument(
            text=self.text,
            blocks=tuple(self.blocks),
            sections=tuple(
                Section(
                    index=i,
                    path=s["path"],
                    levels=s["levels"],
                    level=s["level"],
                    start=s["start"],
                    blocks=tuple(s["blocks"]),
                    atx=s["atx"],
                )
                for i, s in enumerate(self.sections)
            ),
            hidden=hidden,
            line_starts=self.line_starts,
        )


def _inline_lines(inline: Token, first_line: int, env: dict[str, Any]) -> list[tuple[int, str]]:
    """(line number, visible text) for each source line of an inline token."""
    return [(first_line + i, text.strip()) for i, text in enumerate(_render_inline(inline, env))]


@lru_cache(maxsize=4)
def parse(text: str) -> MarkdownDocument:
    """Sections, blocks and hidden spans of ``text``.

    The last few documents are cached: screening, the rules judge and grounding each read
    the same two documents in one evaluation, and parsing is the costliest step.
    """
    text = text.replace("\r", "")  # line numbers count "\n" only, as grounding does
    builder = _Builder(text)
    env = builder.env
    tokens = _PARSER.parse(text, env)
    for reference in (env.get("references") or {}).values():
        span = reference.get("map")
        if span:
            builder.hide_lines("reference definition", span[0], span[1])

    # Open containers: ("quote" | "item", index of the pending block in ``pending``).
    containers: list[str] = []
    pending: dict[str, Any] | None = None  # a list item or quote block being collected
    details_depth = 0
    details_start = 0

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            builder.add_block(pending["kind"], pending["start"], pending["end"], pending["lines"])
            pending = None

    index = 0
    while index < len(tokens):
        token = tokens[index]
        kind = token.type
        index += 1
        if details_depth:
            # Inside a collapsed <details>: nothing is visible until it closes.
            if kind == "html_block":
                details_depth += len(_DETAILS_OPEN.findall(token.content))
                details_depth -= len(_DETAILS_CLOSE.findall(token.content))
                if details_depth <= 0 and token.map:
                    details_depth = 0
                    builder.hide_lines("collapsed <details> block", details_start, token.map[1])
            continue
        if kind == "html_block":
            if token.map is None:
                continue
            opened = [m for m in _DETAILS_OPEN.finditer(token.content)]
            closed = len(_DETAILS_CLOSE.findall(token.content))
            if opened and not _OPEN_ATTRIBUTE.search(opened[0].group(1)) and len(opened) > closed:
                flush()
                details_depth = len(opened) - closed
                details_start = token.map[0]
                continue
            hidden_kind: HiddenKind = (
                "HTML comment" if token.content.lstrip().startswith("<!--") else "raw HTML block"
            )
            builder.hide_lines(hidden_kind, token.map[0], token.map[1])
            continue
        if kind == "blockquote_open":
            if "quote" not in containers:
                flush()
                line = token.map[0] + 1 if token.map else 1
                pending = {"kind": "quote", "start": line, "end": line, "lines": []}
            containers.append("quote")
        elif kind == "blockquote_close":
            containers.pop()
            if "quote" not in containers:
                flush()
        elif kind == "list_item_open":
            containers.append("item")
            if "quote" not in containers:
                flush()
                line = token.map[0] + 1 if token.map else 1
                pending = {"kind": "list_item", "start": line, "end": line, "lines": []}
        elif kind == "list_item_close":
            containers.pop()
            if "quote" not in containers:
                flush()
        elif kind in ("paragraph_open", "heading_open"):
            inline = tokens[index]
            index += 1
            if inline.map is None or token.map is None:
                continue
            builder.inline_hidden(inline)
            lines = _inline_lines(inline, inline.map[0] + 1, env)
            if kind == "heading_open":
                flush()
                level = int(token.tag[1])
                title = " ".join(text for _, text in lines if text)
                builder.heading(level, token.map[0] + 1, title, atx=token.markup.startswith("#"))
                builder.add_block(
                    "heading", token.map[0] + 1, token.map[1], [(token.map[0] + 1, title)]
                )
            elif pending is not None:
                if pending["kind"] == "list_item" and not pending["lines"] and lines:
                    # a task box renders as a checkbox, not as text
                    lines[0] = (lines[0][0], _TASK_BOX.sub("", lines[0][1]))
                pending["lines"].extend(lines)
                pending["end"] = token.map[1]
            else:
                builder.add_block("paragraph", token.map[0] + 1, token.map[1], lines)
        elif kind in ("fence", "code_block"):
            if token.map is None:
                continue
            first = token.map[0] + (2 if kind == "fence" else 1)
            content = token.content.split("\n")
            if content and content[-1] == "":
                content.pop()
            lines = [(first + i, raw.strip()) for i, raw in enumerate(content)]
            reopen = pending["kind"] if pending is not None else None
            flush()  # a code block is a block of its own, even inside a list item or quote
            builder.add_block("code", token.map[0] + 1, token.map[1], lines)
            if reopen is not None:
                pending = {
                    "kind": reopen,
                    "start": token.map[1] + 1,
                    "end": token.map[1],
                    "lines": [],
                }
        elif kind == "tr_open":
            row_line = token.map[0] + 1 if token.map else 0
            cells: list[str] = []
            while index < len(tokens) and tokens[index].type != "tr_close":
                cell = tokens[index]
                if cell.type == "inline":
                    builder.inline_hidden(cell)
                    cells.append(" ".join(t for t in _render_inline(cell, env) if t).strip())
                index += 1
            index += 1
            if row_line:
                builder.add_block("table_row", row_line, row_line, [(row_line, " | ".join(cells))])
    flush()
    if details_depth:
        builder.hide_lines("collapsed <details> block", details_start, len(builder.raw_lines))
    return builder.document()
