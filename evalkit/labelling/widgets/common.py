"""What both notebook apps share: the workspace's runs and ranges, hidden browser channels."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

import ipywidgets as w

from ...checklist import list_ranges
from ...runs import list_runs
from .browser import FIELD_SEPARATOR, STYLE, TOKEN_SEPARATOR, new_keys

__all__ = [
    "Channels",
    "FLEXIBLE_CHOICE",
    "LABELLER_NAME",
    "pairs_of",
    "ranges_of_run",
    "style_widget",
    "two_columns",
]

LABELLER_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")

# A chooser that takes the room its row has left, and gives it up first when the row is narrow.
FLEXIBLE_CHOICE = {"width": "auto", "flex": "1 1 420px", "min_width": "0", "max_width": "600px"}


def ranges_of_run(ranges_dir: Path, runs_dir: Path, run_id: str) -> list[str]:
    """The ranges with a checklist for which the run has a folder."""
    return [r for r in list_ranges(ranges_dir) if (runs_dir / run_id / r).is_dir()]


def pairs_of(ranges_dir: Path, runs_dir: Path) -> list[str]:
    return [r for r in list_runs(runs_dir) if ranges_of_run(ranges_dir, runs_dir, r)]


def two_columns(work: w.Widget, documents: w.Widget) -> w.HBox:
    """What the reader works in, beside the documents: two columns sharing the row equally
    and shrinking with it (so nothing is cut off at any width), the documents' column
    staying in view while the other scrolls past it (``evk-documents``, sticky in
    :data:`.browser.STYLE`)."""
    column = {"flex": "1 1 0", "min_width": "0"}
    left = w.VBox([work], layout=column)
    left.add_class("evk-work")
    right = w.VBox([documents], layout=column)
    right.add_class("evk-documents")
    row = w.HBox([left, right], layout={"width": "100%", "align_items": "flex-start"})
    row.add_class("evk-two-columns")
    return row


def style_widget() -> w.HTML:
    return w.HTML(STYLE, layout={"display": "none"})


class Channels:
    """The hidden text widgets the browser script writes keys and selections into."""

    def __init__(
        self,
        keys: Mapping[str, str],
        on_key: Callable[[str], None],
        on_select: Callable[[str, str], None],
    ) -> None:
        self.keys = w.Text(layout={"display": "none"}, continuous_update=True)
        self.keys.add_class("evk-keys")
        self.selection = w.Text(layout={"display": "none"}, continuous_update=True)
        self.selection.add_class("evk-selection")
        self.keymap = w.HTML(
            f'<span data-keys="{" ".join(keys)}"></span>', layout={"display": "none"}
        )
        self.keymap.add_class("evk-keymap")
        self.seen: tuple[str, int] = ("", 0)

        def typed(change: Mapping[str, object]) -> None:
            keys, self.seen = new_keys(str(change["new"]), self.seen)
            for key in keys:
                on_key(key)

        self.keys.observe(typed, "value")

        def selected(change: Mapping[str, object]) -> None:
            value = str(change["new"]).split(TOKEN_SEPARATOR)[0]
            if FIELD_SEPARATOR in value:
                source, text = value.split(FIELD_SEPARATOR, 1)
                on_select(source, text)

        self.selection.observe(selected, "value")
        self.widget = w.HBox([self.keys, self.selection, self.keymap, style_widget()])
