"""The document viewer: the report, the plan and the Facts, rendered, numbered, searchable.

One search box looks through both documents: every match is marked, and the
previous/next buttons jump from match to match, report
first, switching to the document that holds it. :meth:`DocumentViewer.show`
highlights a passage (a quote) and jumps to it. The HTML comes from
:mod:`evalkit.labelling.render`; the scrolling is done in the browser
(:mod:`.browser`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ipywidgets as w

from ...model import Range, SourceName, Submission
from ..render import Highlight, document_html, facts_html, quote_span

__all__ = ["DocumentViewer"]

SOURCES: tuple[SourceName, ...] = ("report", "plan")
# As tall as fits beside the toggles in a 900 px window, and never taller than the window.
SCROLL_HEIGHT = "min(620px, calc(100vh - 220px))"


class DocumentViewer:
    """Report, plan and Facts in tabs, with one search over both documents."""

    def __init__(self) -> None:
        self.search = w.Text(
            placeholder="search both documents", continuous_update=True, description="Search"
        )
        self.search.add_class("evk-search")
        self.previous = w.Button(
            description="◀", tooltip="previous match", layout={"width": "40px"}
        )
        self.next = w.Button(description="▶", tooltip="next match", layout={"width": "40px"})
        self.previous.add_class("evk-search-prev")
        self.next.add_class("evk-search-next")
        self.count = w.HTML()
        self.count.add_class("evk-search-count")
        self.panes: dict[str, w.HTML] = {}
        for name in (*SOURCES, "facts"):
            pane = w.HTML(layout={"height": SCROLL_HEIGHT, "overflow": "auto"})
            pane.add_class("evk-doc-scroll")
            pane.add_class(f"evk-source-{name}")
            self.panes[name] = pane
        self.tabs = w.Tab(children=[self.panes[name] for name in (*SOURCES, "facts")])
        for index, title in enumerate(("Report", "Plan", "Facts")):
            self.tabs.set_title(index, title)
        self.search.layout = w.Layout(width="auto", flex="1 1 auto", min_width="0")
        self.count.layout = w.Layout(flex="0 1 auto", min_width="0")
        self.widget = w.VBox(
            [w.HBox([self.search, self.previous, self.next, self.count]), self.tabs],
            layout={"width": "100%"},
        )
        self.widget.add_class("evk-viewer")
        self.texts: dict[str, str] = {}
        self.filenames: dict[str, str] = {}
        self.highlights: dict[str, list[Highlight]] = {name: [] for name in SOURCES}
        self.focus: tuple[str, Highlight] | None = None
        self.match = 0  # the current search match, over both documents
        self.matches: dict[str, int] = {name: 0 for name in SOURCES}
        self.jump = 0
        self.search.observe(lambda _change: self.find(), names="value")
        self.previous.on_click(lambda _button: self.step(-1))
        self.next.on_click(lambda _button: self.step(1))

    # ------------------------------------------------------------------ content

    def load(self, rng: Range, submission: Submission) -> None:
        self.texts = {"report": submission.report.text, "plan": submission.plan.text}
        self.filenames = {"report": submission.report.filename, "plan": submission.plan.filename}
        self.panes["facts"].value = facts_html(rng)
        self.highlights = {name: [] for name in SOURCES}
        self.focus = None
        self.render()

    def set_highlights(
        self,
        passages: Mapping[str, Sequence[tuple[str, str]]],
        *,
        follow: Sequence[tuple[str, str]] | None = (),
    ) -> None:
        """Highlight quotes: ``{source: [(quote, kind), ...]}``; quotes not found are skipped.

        ``follow`` lists ``(source, quote)`` passages in order of preference: the first
        found is shown and jumped to (a new checkpoint's first quote), as :meth:`show`
        does; with none found the documents stay where the reader left them. ``None``
        keeps the passage shown last (the same checkpoint, edited).
        """
        self.highlights = {name: [] for name in SOURCES}
        for source, quotes in passages.items():
            if source not in self.texts:
                continue
            for quote, kind in quotes:
                span = quote_span(self.texts[source], source, quote)  # type: ignore[arg-type]
                if span is not None:
                    self.highlights[source].append(Highlight(span[0], span[1], kind))
        if follow is not None:
            self.focus = None
            for source, quote in follow:
                if self._focus_on(source, quote) is not None:
                    break
        self.render()

    def show(self, source: str, quote: str) -> int | None:
        """Highlight ``quote`` in ``source`` and jump to it; its first line, or None."""
        line = self._focus_on(source, quote)
        if line is not None:
            self.render()
        return line

    def _focus_on(self, source: str, quote: str) -> int | None:
        """Make ``quote`` the passage to jump to, in its document's tab (not yet rendered)."""
        if source not in self.texts:
            return None
        span = quote_span(self.texts[source], source, quote)  # type: ignore[arg-type]
        if span is None:
            return None
        self.focus = (source, Highlight(span[0], span[1], "current"))
        self.jump += 1
        self.match = -1
        self.tabs.selected_index = SOURCES.index(source)
        return span[0]

    # ------------------------------------------------------------------ search

    def find(self) -> None:
        self.match = 0
        self.jump += 1
        self.render()
        self._select_tab_of_match()

    def step(self, delta: int) -> None:
        total = sum(self.matches.values())
        if not total:
            return
        self.match = (max(self.match, 0) + delta) % total if self.match >= 0 else 0
        self.jump += 1
        self.render()
        self._select_tab_of_match()

    def _where(self) -> tuple[str, int] | None:
        """The document and index within it of the current match."""
        if self.match < 0:
            return None
        index = self.match
        for name in SOURCES:
            if index < self.matches[name]:
                return name, index
            index -= self.matches[name]
        return None

    def _select_tab_of_match(self) -> None:
        where = self._where()
        if where is not None:
            self.tabs.selected_index = SOURCES.index(where[0])

    def render(self) -> None:
        query = self.search.value
        for name in SOURCES:
            self.matches[name] = document_html(self.texts.get(name, ""), search=query).matches
        total = sum(self.matches.values())
        if total and self.match >= total:
            self.match = 0
        where = self._where() if total else None
        for name in SOURCES:
            highlights = list(self.highlights[name])
            if self.focus is not None and self.focus[0] == name:
                highlights.append(self.focus[1])
            current = where[1] if where is not None and where[0] == name else None
            rendered = document_html(
                self.texts.get(name, ""),
                highlights=highlights,
                search=query,
                current=current,
                jump=self.jump,
            )
            self.panes[name].value = rendered.html
        if not query.strip():
            self.count.value = ""
        elif not total:
            self.count.value = '<span class="evk-bad">no match</span>'
        else:
            at = f"{self.match + 1} of {total}" if where is not None else f"{total}"
            parts = ", ".join(f"{name} {self.matches[name]}" for name in SOURCES)
            self.count.value = f"<b>{at}</b> ({parts})"

    @property
    def current_tab(self) -> str:
        return (*SOURCES, "facts")[self.tabs.selected_index or 0]
