"""What the labelling and the adjudication apps share: the choice of run and range, and a
draft edited one checkpoint at a time, saved at every change, with the same keys, score
toggles, penalty form and notes.

Each app builds its own widgets and says what ``n``/``p`` move to (:meth:`_step`) and
how a draft is shown (:meth:`_refresh`); every edit goes through :meth:`_change`.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from pathlib import Path

import ipywidgets as w

from ...errors import EvalkitError
from ...gold_labels import LabelPenalty
from ...grounding import Sources
from ...model import Range
from .. import drafts, store
from ..drafts import SUBSCORE_ORDER, LabelDraft
from ..quotes import QuoteResult, check_penalty_quote
from .common import ranges_of_run
from .panels import PenaltyPanel
from .viewer import DocumentViewer

__all__ = ["KEYMAP", "DraftEditor"]

KEYMAP: dict[str, str] = {
    "n": "next",
    "j": "next",
    "p": "previous",
    "k": "previous",
    **{str(i): f"toggle:{name}" for i, (_dimension, name) in enumerate(SUBSCORE_ORDER, start=1)},
    "b": "borderline",
}


class DraftEditor:
    """The editing half of an app; the app sets these attributes in its ``__init__``."""

    ranges_dir: Path
    runs_dir: Path
    run: w.Dropdown
    range: w.Dropdown
    draft: LabelDraft | None
    rng: Range | None
    sources: Sources | None
    message: w.HTML
    borderline: w.Checkbox
    penalties: PenaltyPanel
    viewer: DocumentViewer
    _syncing: bool
    _followed: str | None  # the checkpoint the documents last jumped to

    def _pair_changed(self) -> None:
        """What the app offers for the chosen (run, range)."""
        raise NotImplementedError

    def _refresh(self, full: bool) -> None:
        raise NotImplementedError

    def _step(self, forward: bool) -> None:
        """What ``n`` (``forward``) and ``p`` move to."""
        raise NotImplementedError

    def _run_changed(self) -> None:
        run = self.run.value
        ranges = ranges_of_run(self.ranges_dir, self.runs_dir, run) if run else []
        self.range.options = ranges
        self.range.value = ranges[0] if ranges else None
        self._pair_changed()

    def _say(self, text: str, *, bad: bool = False) -> None:
        css = "evk-bad" if bad else "evk-ok"
        self.message.value = f'<span class="{css}">{html.escape(text)}</span>'

    # ------------------------------------------------------------------ changes

    def _commit(self, draft: LabelDraft, *, full: bool = False) -> None:
        """Take the new draft, save it at once (atomically), and show it."""
        self.draft = draft
        try:
            store.save_draft(self.runs_dir, draft)
        except EvalkitError as exc:
            self._say(f"the draft could not be saved: {exc}", bad=True)
        self._refresh(full)

    def _change(self, change: Callable[[LabelDraft], LabelDraft], *, full: bool = False) -> None:
        if self.draft is None:
            return
        try:
            self._commit(change(self.draft), full=full)
        except EvalkitError as exc:
            self._say(str(exc), bad=True)

    def _set_score(self, name: str, value: int) -> None:
        self._change(lambda d: drafts.set_subscore(d, d.position, name, value))

    def _add_penalty(self, penalty: LabelPenalty) -> None:
        self._change(lambda d: drafts.add_penalty(d, d.position, penalty), full=True)

    def _remove_penalty(self, index: int) -> None:
        self._change(lambda d: drafts.remove_penalty(d, d.position, index), full=True)

    def _note_changed(self, change: dict[str, object]) -> None:
        if not self._syncing:
            self._change(lambda d: drafts.set_note(d, d.position, str(change["new"])))

    def _borderline_changed(self, change: dict[str, object]) -> None:
        if not self._syncing:
            self._change(lambda d: drafts.set_borderline(d, d.position, bool(change["new"])))

    def _checkpoint_chosen(self, change: dict[str, object]) -> None:
        if not self._syncing and change["new"]:
            self._change(lambda d: drafts.go_to(d, str(change["new"])), full=True)

    def press(self, key: str) -> None:
        """What a key does (see :data:`KEYMAP`); unknown keys do nothing."""
        action = KEYMAP.get(key)
        draft = self.draft
        if action is None or draft is None:
            return
        if action in ("next", "previous"):
            self._step(action == "next")
        elif action == "borderline":
            self.borderline.value = not self.borderline.value
        else:
            name = action.removeprefix("toggle:")
            dimension = next(d for d, n in SUBSCORE_ORDER if n == name)
            if draft.current.dimension(dimension) is None:
                self._say(f"{name} is N/A for {draft.position}: no toggle", bad=True)
                return
            self._change(lambda d: drafts.toggle_subscore(d, d.position, name))

    def select(self, source: str, text: str) -> None:
        """A passage selected in a document becomes the penalty form's quote."""
        self.penalties.select(source, text)

    def _check(self, rule: str, source: str, quote: str, detail: str) -> QuoteResult | None:
        if self.draft is None or self.rng is None or self.sources is None:
            return None
        checkpoint = self.rng.checkpoint(self.draft.position)
        return check_penalty_quote(
            checkpoint.id, checkpoint.scope, rule=rule, source=source, quote=quote,
            detail=detail, sources=self.sources,
        )  # fmt: skip

    def _show_quote(self, source: str, quote: str) -> None:
        self.viewer.show(source, quote)

    def _to_follow(
        self, chk_id: str, passages: Sequence[tuple[str, str]]
    ) -> Sequence[tuple[str, str]] | None:
        """The ``(source, quote)`` passages for the documents to jump to, in order: a
        checkpoint's, when it has just become the current one; None while it stays current,
        so an edit never moves the documents away from where the reader is."""
        if chk_id == self._followed:
            return None
        self._followed = chk_id
        return passages
