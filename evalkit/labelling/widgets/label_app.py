"""The labelling notebook's app: one labeller, one (run, range) pair, one checkpoint at a time.

It orchestrates and displays; every decision is made by :mod:`evalkit.labelling`
(drafts, quotes, readings, store) and :func:`evalkit.gold_labels.check_labels`.
Tests drive it from Python: set the choosers' values, ``click()`` its buttons,
set toggles, call :meth:`LabellingApp.press` for a key and
:meth:`LabellingApp.select` for a passage selected with the mouse.

Keys (when the focus is in the app, not in a text box): ``n``/``j`` next
checkpoint, ``p``/``k`` previous, ``1``-``5`` toggle discovery, evidence,
attribution, correctness, completeness, ``b`` the borderline flag.
"""

from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as w

from ...checklist import load_range
from ...errors import EvalkitError
from ...gold_labels import find_labels, validate_label_files
from ...grounding import Sources
from ...model import Range, Submission
from ...runs import list_runs, load_submission
from .. import drafts, store
from ..drafts import LabelDraft
from ..readings import (
    Side,
    evaluation_side,
    label_side,
    list_evaluations,
    load_evaluation,
)
from ..render import criteria_html, rubric_html
from .common import FLEXIBLE_CHOICE, LABELLER_NAME, Channels, two_columns
from .editor import KEYMAP, DraftEditor
from .panels import PenaltyPanel, ScorePanel
from .viewer import DocumentViewer

__all__ = ["LabellingApp"]


def load_side(
    runs_dir: Path, rng: Range, submission: Submission, name: str, sources: Sources
) -> Side:
    """A side by name: ``judge:<folder>`` (an evaluation's verdicts) or a labeller."""
    if name.startswith("judge:"):
        folder = name.removeprefix("judge:")
        return evaluation_side(load_evaluation(runs_dir, folder, rng, submission), folder)
    for labels in find_labels(runs_dir, submission.run_id, rng.id):
        if labels.labeller == name:
            return label_side(labels, sources)
    raise EvalkitError(f"no label {name!r} for {submission.run_id}/{rng.id}")


class LabellingApp(DraftEditor):
    """See the module docstring."""

    def __init__(self, ranges_dir: str | Path, runs_dir: str | Path) -> None:
        self.ranges_dir = Path(ranges_dir)
        self.runs_dir = Path(runs_dir)
        self.draft: LabelDraft | None = None
        self.rng: Range | None = None
        self.submission: Submission | None = None
        self.sources: Sources | None = None
        self.assist: Side | None = None
        self._syncing = False
        self._followed: str | None = None

        runs = list_runs(self.runs_dir)
        self.run = w.Dropdown(options=runs, description="Run")
        self.range = w.Dropdown(description="Range")
        self.labeller = w.Combobox(
            description="Labeller", placeholder="your name: a-z, 0-9, _ or -", ensure_option=False
        )
        self.labeller.add_class("evk-labeller")
        self.prefill = w.Dropdown(description="Pre-fill", options=[("nothing", "")])
        self.open_button = w.Button(description="Open", button_style="primary")
        self.open_button.add_class("evk-open")
        self.message = w.HTML()
        self.message.add_class("evk-message")
        self.run.observe(lambda _c: self._run_changed(), names="value")
        self.range.observe(lambda _c: self._pair_changed(), names="value")
        self.open_button.on_click(lambda _b: self.open())

        self.previous = w.Button(description="◀ previous (p)")
        self.next = w.Button(description="next (n) ▶")
        self.previous.add_class("evk-previous")
        self.next.add_class("evk-next")
        self.checkpoint = w.Dropdown(layout=FLEXIBLE_CHOICE)
        self.checkpoint.add_class("evk-checkpoint")
        self.progress = w.HTML()
        self.progress.add_class("evk-progress")
        self.previous.on_click(lambda _b: self.press("p"))
        self.next.on_click(lambda _b: self.press("n"))
        self.checkpoint.observe(self._checkpoint_chosen, names="value")

        self.criteria = w.HTML()
        self.criteria.add_class("evk-criteria-pane")
        self.assist_note = w.HTML()
        self.scores = ScorePanel(self._set_score, self._show_quote)
        self.penalties = PenaltyPanel(
            on_add=self._add_penalty,
            on_remove=self._remove_penalty,
            on_show=self._show_quote,
            check=self._check,
        )
        self.note = w.Textarea(
            placeholder="why, in a sentence or two", continuous_update=True,
            layout={"width": "98%", "height": "70px"},
        )  # fmt: skip
        self.note.add_class("evk-note")
        self.borderline = w.Checkbox(description="borderline (b)", indent=False)
        self.borderline.add_class("evk-borderline")
        self.note.observe(self._note_changed, names="value")
        self.borderline.observe(self._borderline_changed, names="value")
        self.finalise_button = w.Button(description="Finalise label", button_style="success")
        self.finalise_button.add_class("evk-finalise")
        self.finalise_button.on_click(lambda _b: self.finalise())
        self.result = w.HTML()
        self.result.add_class("evk-result")
        self.viewer = DocumentViewer()
        self.channels = Channels(KEYMAP, self.press, self.select)

        # The rubric the judge reads too (evalkit/rubric.py), folded until asked for.
        self.rubric = w.Accordion(children=[w.HTML(rubric_html())], selected_index=None)
        self.rubric.set_title(0, "Rubric: what each sub-score and penalty means")
        self.rubric.add_class("evk-rubric-panel")
        # The criteria across the top; below them the toggles with everything the labeller
        # sets, and beside them the documents (see two_columns).
        left = w.VBox(
            [
                w.HTML("<b>Sub-scores</b> (before penalties)"),
                self.scores.widget,
                self.assist_note,
                self.penalties.widget,
                w.HTML("<b>Note</b>"),
                self.note,
                self.borderline,
                w.HBox([self.finalise_button, self.result]),
            ]
        )
        self.body = w.VBox(
            [
                w.HBox([self.previous, self.checkpoint, self.next, self.progress]),
                self.rubric,
                self.criteria,
                two_columns(left, self.viewer.widget),
            ],
            layout={"display": "none"},
        )
        chooser = w.HBox([self.run, self.range, self.labeller, self.prefill, self.open_button])
        self.widget = w.VBox([chooser, self.message, self.body, self.channels.widget])
        self.widget.add_class("evk-app")
        self.widget.add_class("evk-labelling")
        self._run_changed()

    # ------------------------------------------------------------------ choosing

    def _pair_changed(self) -> None:
        run, range_id = self.run.value, self.range.value
        if not run or not range_id:
            self.prefill.options = [("nothing", "")]
            return
        labels = find_labels(self.runs_dir, run, range_id)
        judges = list_evaluations(self.runs_dir, run, range_id)
        self.labeller.options = tuple(label.labeller for label in labels)
        self.prefill.options = [
            ("nothing", ""),
            *((f"judge {folder}", f"judge:{folder}") for folder in judges),
            *((f"label {label.labeller}", label.labeller) for label in labels),
        ]

    def open(self) -> None:
        """Open the chosen pair for the chosen labeller: resume, reopen or start."""
        name = self.labeller.value.strip()
        if not LABELLER_NAME.match(name):
            self._say(
                f"a labeller name is a-z, 0-9, _ or -, starting with a letter or digit: {name!r}",
                bad=True,
            )
            return
        try:
            rng = load_range(self.ranges_dir, self.range.value)
            submission = load_submission(self.runs_dir, self.run.value, rng)
            sources = Sources.of(submission)
            prefill = self.prefill.value
            side = load_side(self.runs_dir, rng, submission, prefill, sources) if prefill else None
            opened = store.open_draft(self.runs_dir, rng, submission.run_id, name, prefill=side)
            assist = side
            if assist is None and opened.draft.prefilled_from:
                try:
                    assist = load_side(
                        self.runs_dir, rng, submission, opened.draft.prefilled_from, sources
                    )
                except EvalkitError:
                    assist = None
        except EvalkitError as exc:
            self._say(str(exc), bad=True)
            return
        self.rng, self.submission, self.sources, self.assist = rng, submission, sources, assist
        self.viewer.load(rng, submission)
        self._followed = None
        self._say(opened.message)
        self.result.value = ""
        self.body.layout.display = "flex"
        self._commit(opened.draft, full=True)

    # ------------------------------------------------------------------ changes

    def _step(self, forward: bool) -> None:
        """``n`` and ``p`` move to the next or previous checkpoint."""
        self._change(lambda d: drafts.step(d, 1 if forward else -1), full=True)

    # ------------------------------------------------------------------ showing

    def _refresh(self, full: bool) -> None:
        draft, rng = self.draft, self.rng
        if draft is None or rng is None:
            return
        item = draft.current
        checkpoint = rng.checkpoint(item.chk_id)
        self._syncing = True
        try:
            self.checkpoint.options = [
                (f"{_mark(i)} {i.chk_id} {rng.checkpoint(i.chk_id).name}", i.chk_id)
                for i in draft.checkpoints
            ]
            self.checkpoint.value = item.chk_id
            if full:
                self.note.value = item.note
            self.borderline.value = item.borderline
        finally:
            self._syncing = False
        left = drafts.unfinished(draft)
        seen = sum(1 for i in draft.checkpoints if i.seen)
        self.progress.value = (
            f"{draft.index + 1} of {len(draft.checkpoints)}; seen {seen}; "
            f"{len(draft.checkpoints) - len(left)} finished · draft saved"
        )
        reading = self.assist.reading(item.chk_id) if self.assist is not None else None
        self.scores.show(item, checkpoint.scope, reading)
        if full:
            self.criteria.value = criteria_html(rng, checkpoint)
            self.penalties.show(item)
            self.assist_note.value = _assist_html(self.assist, reading)
            passages: dict[str, list[tuple[str, str]]] = {"report": [], "plan": []}
            order: list[tuple[str, str]] = []  # the pre-fill's quotes first, then the label's
            if reading is not None:
                for ref in reading.quotes():
                    if ref.source is not None:
                        passages[ref.source].append((ref.quote, "quote"))
                        order.append((ref.source, ref.quote))
            for penalty in item.penalties:
                passages.setdefault(penalty.source, []).append((penalty.quote, "penalty"))
                order.append((penalty.source, penalty.quote))
            self.viewer.set_highlights(passages, follow=self._to_follow(item.chk_id, order))

    # ------------------------------------------------------------------ finishing

    def finalise(self) -> store.Finalised | None:
        """Write the label if it is finished and check_labels finds no problem."""
        if self.draft is None or self.rng is None or self.submission is None:
            return None
        done = store.finalise(self.runs_dir, self.draft, self.rng, self.submission)
        if done.path is None:
            items = "".join(f"<li>{html.escape(p)}</li>" for p in done.problems[:30])
            more = (
                f"<li>... and {len(done.problems) - 30} more</li>"
                if len(done.problems) > 30
                else ""
            )
            self.result.value = (
                f'<div class="evk-bad">Not finalised ({len(done.problems)} problem(s)); the'
                f" draft keeps your work:<ul>{items}{more}</ul></div>"
            )
        else:
            lines, _failed = validate_label_files([done.path])
            self.result.value = (
                f'<div class="evk-ok">Written {html.escape(str(done.path))}<br>'
                f"evalkit validate: {html.escape(lines[-1].rsplit(': ', 1)[-1])}</div>"
            )
        return done


def _mark(item: drafts.CheckpointDraft) -> str:
    values = [*(item.detection or {}).values(), *(item.plan or {}).values()]
    if not item.seen:
        return "○"
    return "✓" if all(v is not None for v in values) else "…"


def _assist_html(side: Side | None, reading: object) -> str:
    if side is None:
        return ""
    from ..readings import Reading

    parts = [f"<b>Pre-filled from {html.escape(side.title)}</b>"]
    if side.caveat:
        parts.append(f'<div class="evk-reason">{html.escape(side.caveat)}</div>')
    if side.reported:
        passages = "".join(
            f"<li>{html.escape(ref.quote)} <i>({html.escape(ref.source or '?')}"
            f" line {ref.line})</i></li>"
            for ref in side.reported
        )
        parts.append(
            '<div class="evk-reported"><b>The judge reported as addressed to the evaluator'
            "</b> (set apart before scoring: nothing in these passages earns a point):"
            f"<ul>{passages}</ul></div>"
        )
    if isinstance(reading, Reading):
        if reading.error:
            parts.append(f'<div class="evk-reason">error: {html.escape(reading.error)}</div>')
        if reading.note:
            parts.append(f'<div class="evk-reason">note: {html.escape(reading.note)}</div>')
        if reading.borderline:
            parts.append('<div class="evk-reason">marked borderline</div>')
    return "".join(parts)
