"""The documents, Facts and criteria as HTML, the way a reader of the rendered Markdown sees them.

:func:`document_html` renders what grounding searches: the document with the
Markdown reader's hidden content blanked (:attr:`evalkit.markdown.MarkdownDocument.visible_source`:
comments, link targets, reference definitions, alt text, collapsed
``<details>``), by markdown-it with raw HTML off, since the document is the
agent's to write. Every block carries its source line (``data-line``), shown
as a gutter number; code blocks number every line. Passages to show (a judge's
quotes, a penalty's) are highlighted by line range, and the matches of a search
are marked in the text, numbered, the current one carrying ``data-jump`` for
the notebook to scroll to. Pure functions, no I/O.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..grounding import SearchableDocument, normalize
from ..markdown import parse as parse_markdown
from ..model import Checkpoint, Range, SourceName

__all__ = [
    "Highlight",
    "Rendered",
    "criteria_html",
    "document_html",
    "facts_html",
    "quote_span",
]

_NUMBERED = {"paragraph_open", "heading_open", "list_item_open", "tr_open", "hr"}
_TAG = re.compile(r"(<[^>]*>)")


@dataclass(frozen=True)
class Highlight:
    """Lines ``first``..``last`` (1-based, inclusive) to highlight, as ``kind``."""

    first: int
    last: int
    kind: str = "quote"  # quote | penalty | current

    def covers(self, start: int, end: int) -> bool:
        return self.first <= end and start <= self.last


@dataclass(frozen=True)
class Rendered:
    html: str
    matches: int  # search matches marked


def _fence(tokens: list[Token], idx: int, highlights: Sequence[Highlight]) -> str:
    token = tokens[idx]
    first = (token.map[0] + 2) if token.map and token.type == "fence" else 1
    if token.map and token.type == "code_block":
        first = token.map[0] + 1
    lines = token.content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    parts = []
    for offset, line in enumerate(lines):
        number = first + offset
        classes = ["evk-line", *_classes(highlights, number, number)]
        parts.append(
            f'<span class="{" ".join(classes)}" data-line="{number}">{html.escape(line)}</span>'
        )
    return '<pre class="evk-code"><code>' + "\n".join(parts) + "</code></pre>\n"


def _classes(highlights: Sequence[Highlight], start: int, end: int) -> list[str]:
    return sorted({f"evk-hl-{h.kind}" for h in highlights if h.covers(start, end)})


def _renderer(highlights: Sequence[Highlight]) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")

    def fence(self: Any, tokens: list[Token], idx: int, options: Any, env: Any) -> str:
        return _fence(tokens, idx, highlights)

    md.add_render_rule("fence", fence)
    md.add_render_rule("code_block", fence)
    return md


def document_html(
    text: str,
    *,
    highlights: Sequence[Highlight] = (),
    search: str = "",
    current: int | None = None,
    jump: int = 0,
) -> Rendered:
    """The rendered document (see the module docstring).

    ``search`` marks every case-insensitive match in the visible text, numbered
    from 0; match ``current`` is the current one. A highlight of kind ``current``
    is the passage to jump to when no search match is current. ``jump`` is a
    counter the notebook bumps so the same place can be jumped to twice.
    """
    source = parse_markdown(text).visible_source
    md = _renderer(highlights)
    tokens = md.parse(source)
    for token in tokens:
        if token.type in _NUMBERED and token.map:
            start, end = token.map[0] + 1, max(token.map[0] + 1, token.map[1])
            token.attrSet("data-line", str(start))
            classes = _classes(highlights, start, end)
            if classes:
                token.attrJoin("class", " ".join(classes))
    body = md.renderer.render(tokens, md.options, {})
    body, count = _mark(body, search, current)
    if current is None or count == 0:
        body = body.replace("evk-hl-current", "evk-hl-current evk-jump", 1)
    body = body.replace("evk-jump", f'evk-jump" data-jump="{jump}', 1)
    return Rendered(html=f'<div class="evk-doc">{body}</div>', matches=count)


def _mark(body: str, query: str, current: int | None) -> tuple[str, int]:
    """``body`` with every match of ``query`` in its text (not its tags) marked."""
    needle = query.strip().lower()
    if not needle:
        return body, 0
    count = 0
    parts = _TAG.split(body)
    for index, part in enumerate(parts):
        if not part or part.startswith("<"):
            continue
        plain = html.unescape(part)
        lowered = plain.lower()
        out: list[str] = []
        at = 0
        while (found := lowered.find(needle, at)) >= 0:
            out.append(html.escape(plain[at:found], quote=False))
            classes = "evk-match evk-jump" if count == current else "evk-match"
            out.append(
                f'<mark class="{classes}" data-match="{count}">'
                f"{html.escape(plain[found : found + len(needle)], quote=False)}</mark>"
            )
            count += 1
            at = found + len(needle)
        if out:
            out.append(html.escape(plain[at:], quote=False))
            parts[index] = "".join(out)
    return "".join(parts), count


def quote_span(text: str, kind: SourceName, quote: str) -> tuple[int, int] | None:
    """The lines a quote covers in the document, by grounding's rules; None if absent.

    The first line is grounding's; the last is where the visible lines from there on
    hold as many compared characters as the quote (display only).
    """
    document = SearchableDocument(kind, text)
    first = document.find(quote)
    if first is None:
        return None
    wanted = len(normalize(quote))
    lines = document.md.visible_source.split("\n")
    size = 0
    last = first
    for number in range(first, len(lines) + 1):
        size += len(normalize(lines[number - 1])) + 1
        last = number
        if size > wanted:
            break
    return first, last


def _inline(text: str) -> str:
    rendered: str = MarkdownIt("commonmark", {"html": False}).renderInline(text)
    return rendered


def criteria_html(rng: Range, checkpoint: Checkpoint) -> str:
    """What the labeller judges by: the checkpoint's criteria and hints."""
    caps = ", ".join(f"{cap} {html.escape(rng.capability_name(cap))}" for cap in checkpoint.caps)
    rows = [
        ("Scope", html.escape(checkpoint.scope)),
        ("Capabilities", caps or "none"),
    ]
    if checkpoint.detection_criteria:
        rows.append(("Detection", _inline(checkpoint.detection_criteria)))
    if checkpoint.plan_criteria:
        rows.append(("Plan", _inline(checkpoint.plan_criteria)))
    for title, terms in (
        ("Indicators", checkpoint.indicators),
        ("Attribution terms", checkpoint.attribution_terms),
        ("Remediation terms", checkpoint.remediation_terms),
    ):
        if terms:
            rows.append((title, ", ".join(f"<code>{html.escape(t)}</code>" for t in terms)))
    rows += [(html.escape(name), _inline(value)) for name, value in checkpoint.extra.items()]
    cells = "".join(f"<tr><th>{name}</th><td>{value}</td></tr>" for name, value in rows)
    return (
        f'<div class="evk-criteria"><h3>{html.escape(checkpoint.id)}: '
        f"{html.escape(checkpoint.name)}</h3><table>{cells}</table></div>"
    )


def facts_html(rng: Range) -> str:
    """The range's Facts: what is true on the host, which fabrication is judged by."""
    if not rng.facts:
        return '<div class="evk-doc"><p><em>This checklist states no Facts.</em></p></div>'
    items = "".join(f"<li>{_inline(fact)}</li>" for fact in rng.facts)
    title = f"<h3>Facts of {html.escape(rng.id)}</h3>"
    return f'<div class="evk-doc evk-facts">{title}<ol>{items}</ol></div>'


def rubric_html() -> str:
    """The rubric the labeller applies, as the judge reads it (:mod:`evalkit.rubric`)."""
    from ..rubric import labelling_guide

    body: str = MarkdownIt("commonmark", {"html": False}).render(labelling_guide())
    return (
        '<div class="evk-rubric">Sub-scores are recorded <b>before</b> penalties; each checkpoint'
        f" is scored on its own.{body}</div>"
    )
