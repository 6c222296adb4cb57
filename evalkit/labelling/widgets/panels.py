"""Widgets both notebooks share: the sub-score toggles and the penalties of one checkpoint.

They hold no rule: a toggle reports a value, the penalty form asks
:func:`evalkit.labelling.quotes.check_penalty_quote` (through the ``check``
callable its app gives it) and enables *Add* only when the penalty stands.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping

import ipywidgets as w

from ...gold_labels import LabelPenalty
from ...penalties import PENALTY_RULE_NAMES, PENALTY_SOURCES
from ..drafts import SUBSCORE_ORDER, CheckpointDraft
from ..quotes import QuoteResult
from ..readings import QuoteRef, Reading, SubReading

__all__ = ["PenaltyPanel", "ScorePanel", "quote_button"]

ShowQuote = Callable[[str, str], None]
QUOTE_SHOWN = 90  # characters of a quote on its button (it wraps; the tooltip holds it all)


def _short(text: str, limit: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quote_button(ref: QuoteRef, on_show: ShowQuote) -> w.Widget:
    """A quote as a button that shows it in its document, or a note that it is not there."""
    if ref.line is None or ref.source is None:
        quote = html.escape(_short(ref.quote))
        return w.HTML(f'<span class="evk-reason evk-bad">not verbatim: «{quote}»</span>')
    button = w.Button(
        description=f"{ref.source} L{ref.line}: {_short(ref.quote, QUOTE_SHOWN)}",
        tooltip=ref.quote,
        layout={"width": "auto", "max_width": "100%"},
    )
    button.add_class("evk-quote")
    source = ref.source
    button.on_click(lambda _button: on_show(source, ref.quote))
    return button


def _sub_reason(side: str, sub: SubReading) -> str:
    value = "–" if sub.value is None else str(sub.value)
    claimed = (
        f" (claimed {sub.claimed})" if sub.claimed is not None and sub.claimed != sub.value else ""
    )
    text = f"<b>{html.escape(side)}: {value}</b>{claimed}"
    if sub.rationale:
        text += f" {html.escape(sub.rationale)}"
    return f'<div class="evk-reason">{text}</div>'


class ScorePanel:
    """One 0/1 toggle per sub-score the checkpoint's scope has; none for an N/A one."""

    def __init__(self, on_set: Callable[[str, int], None], on_show: ShowQuote) -> None:
        self.on_set = on_set
        self.on_show = on_show
        self._syncing = False
        self.toggles: dict[str, w.ToggleButtons] = {}
        self.rows: dict[str, w.HBox] = {}
        self.names: dict[str, w.HTML] = {}
        self.reasons: dict[str, w.VBox] = {}
        for key, (_dimension, name) in enumerate(SUBSCORE_ORDER, start=1):
            toggle = w.ToggleButtons(
                options=[("0", 0), ("1", 1)],
                value=None,
                style={"button_width": "30px"},
                layout={"width": "auto", "min_width": "80px"},
            )
            toggle.add_class(f"evk-score-{name}")
            toggle.observe(self._changed(name), names="value")
            self.toggles[name] = toggle
            self.names[name] = w.HTML(
                f"<b>{name}</b> <kbd>{key}</kbd>", layout={"width": "122px", "min_width": "122px"}
            )
            self.reasons[name] = w.VBox(layout={"flex": "1 1 0", "min_width": "0"})
            self.rows[name] = w.HBox([self.names[name], toggle, self.reasons[name]])
            self.rows[name].add_class(f"evk-row-{name}")
        self.widget = w.VBox([self.rows[name] for _dimension, name in SUBSCORE_ORDER])

    def _changed(self, name: str) -> Callable[[Mapping[str, object]], None]:
        def handler(change: Mapping[str, object]) -> None:
            value = change["new"]
            if not self._syncing and isinstance(value, int):
                self.on_set(name, value)

        return handler

    def show(self, item: CheckpointDraft, scope: str, reading: Reading | None = None) -> None:
        """Show ``item``'s values, and ``reading``'s reasons beside each toggle."""
        self._syncing = True
        try:
            for dimension, name in SUBSCORE_ORDER:
                values = item.dimension(dimension)
                row = self.rows[name]
                if values is None:
                    row.children = (
                        self.names[name],
                        w.HTML(f'<span class="evk-reason">N/A ({html.escape(scope)})</span>'),
                    )
                    continue
                self.toggles[name].value = values.get(name)
                row.children = (self.names[name], self.toggles[name], self.reasons[name])
                self.reasons[name].children = self._reason(reading, dimension, name)
        finally:
            self._syncing = False

    def _reason(self, reading: Reading | None, dimension: str, name: str) -> tuple[w.Widget, ...]:
        if reading is None:
            return ()
        if reading.error is not None:
            return (w.HTML(f'<div class="evk-reason">{html.escape(reading.side)}: error</div>'),)
        subs = reading.detection if dimension == "detection" else reading.plan
        sub = (subs or {}).get(name)
        if sub is None:
            return ()
        return (
            w.HTML(_sub_reason(reading.side, sub)),
            *(quote_button(ref, self.on_show) for ref in sub.quotes),
        )


class PenaltyPanel:
    """The checkpoint's penalties, and a form to add one whose quote is checked at once."""

    def __init__(
        self,
        *,
        on_add: Callable[[LabelPenalty], None],
        on_remove: Callable[[int], None],
        on_show: ShowQuote,
        check: Callable[[str, str, str, str], QuoteResult | None],
    ) -> None:
        self.on_add = on_add
        self.on_remove = on_remove
        self.on_show = on_show
        self.check = check
        self.listing = w.VBox()
        self.rule = w.Dropdown(options=PENALTY_RULE_NAMES, description="Rule")
        self.source = w.Dropdown(options=("report", "plan"), description="Quotes the")
        self.quote = w.Textarea(
            placeholder="select the passage in a document, or type it",
            continuous_update=True,
            layout={"width": "98%", "height": "60px"},
        )
        self.quote.add_class("evk-penalty-quote")
        self.detail = w.Text(
            placeholder="why it applies", description="Detail", continuous_update=True
        )
        self.detail.add_class("evk-penalty-detail")
        self.result = w.HTML()
        self.result.add_class("evk-penalty-result")
        self.add = w.Button(description="Add penalty", disabled=True, button_style="warning")
        self.add.add_class("evk-penalty-add")
        self.last: QuoteResult | None = None
        for widget in (self.rule, self.source, self.quote, self.detail):
            widget.observe(lambda _change: self.recheck(), names="value")
        self.rule.observe(self._rule_changed, names="value")
        self.add.on_click(lambda _button: self._add())
        self.widget = w.VBox(
            [
                w.HTML("<b>Penalties</b>"),
                self.listing,
                w.HBox([self.rule, self.source]),
                self.quote,
                self.detail,
                w.HBox([self.add, self.result]),
            ]
        )

    def _rule_changed(self, change: Mapping[str, object]) -> None:
        allowed = PENALTY_SOURCES.get(str(change["new"]), ())
        if allowed and self.source.value not in allowed and not self.quote.value.strip():
            self.source.value = allowed[0]

    def show(self, item: CheckpointDraft) -> None:
        rows: list[w.Widget] = []
        for index, penalty in enumerate(item.penalties):
            remove = w.Button(description="remove")
            remove.add_class("evk-penalty-remove")
            remove.on_click(lambda _button, index=index: self.on_remove(index))
            show = w.Button(description=f"show in {penalty.source}")
            show.on_click(lambda _button, p=penalty: self.on_show(p.source, p.quote))
            text = (
                f"<b>{html.escape(penalty.rule)}</b> ({html.escape(penalty.source)}): "
                f"«{html.escape(_short(penalty.quote, 80))}» {html.escape(penalty.detail)}"
            )
            listed = w.HTML(f'<div class="evk-reason">{text}</div>', layout={"flex": "1 1 0"})
            rows.append(w.HBox([listed, show, remove], layout={"align_items": "center"}))
        if not rows:
            rows.append(w.HTML('<div class="evk-reason">none</div>'))
        self.listing.children = tuple(rows)
        self.recheck()

    def select(self, source: str, text: str) -> None:
        """Take a passage selected in a document as the quote."""
        self.source.value = source if source in ("report", "plan") else self.source.value
        self.quote.value = text.strip()

    def recheck(self) -> QuoteResult | None:
        result = self.check(
            str(self.rule.value), str(self.source.value), self.quote.value, self.detail.value
        )
        self.last = result
        if result is None or not self.quote.value.strip():
            self.result.value = (
                '<span class="evk-reason">select a passage in a document, or type it</span>'
            )
            self.add.disabled = True
            return result
        # Where the quote is (good news, or not), then each problem as the error it is.
        css = "evk-ok" if result.found else "evk-bad"
        others = [p for p in result.problems if "not found verbatim" not in p]
        problems = "".join(
            f'<div class="evk-reason evk-bad">{html.escape(p)}</div>' for p in others
        )
        self.result.value = (
            f'<div class="evk-reason {css}">{html.escape(result.message)}</div>{problems}'
        )
        self.add.disabled = not result.ok
        return result

    def _add(self) -> None:
        result = self.recheck()
        if result is None or not result.ok:
            return
        self.on_add(result.penalty)
        self.quote.value = ""
        self.detail.value = ""
