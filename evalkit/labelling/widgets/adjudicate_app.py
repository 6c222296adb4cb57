"""The adjudication notebook's app: the disagreements of two or more sides, resolved one by one.

Choose a pair and its sides (labels, judges' evaluations): only the checkpoints
they read differently are listed. Each is shown side by side: every side's
sub-scores (those that differ marked), its note or the judge's rationale, its
quotes highlighted in the documents in the side's colour. *Take* a side (its
column and button then say it was taken, and the adjudicated reading what it
set where the sides differ), or edit the adjudicated reading below with the
same toggles, penalty form and note as the labelling notebook. Every change is
saved to the draft at once; *Write* settles each resolution
(:func:`evalkit.labelling.adjudication.settle`) and writes ``labels/<name>.json``
when :func:`evalkit.gold_labels.check_labels` accepts it. Reopening resumes the draft,
or the written label.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from pathlib import Path

import ipywidgets as w

from ...checklist import load_range
from ...errors import EvalkitError
from ...gold_labels import (
    RESOLUTION_AGREED,
    RESOLUTION_EDITED,
    find_labels,
    load_labels,
    validate_label_files,
)
from ...grounding import Sources
from ...model import Checkpoint, Range, Submission
from ...runs import list_runs, load_submission
from .. import drafts, store
from ..adjudication import (
    ADJUDICATED,
    draft_targets,
    resolution_of,
    settle,
    start_adjudication,
    take_side,
)
from ..disagreements import Disagreement, find_disagreements, reading_targets
from ..drafts import CheckpointDraft, LabelDraft
from ..readings import Reading, Side, list_evaluations
from ..render import criteria_html
from .common import FLEXIBLE_CHOICE, LABELLER_NAME, Channels, two_columns
from .editor import KEYMAP, DraftEditor
from .label_app import load_side
from .panels import PenaltyPanel, ScorePanel, quote_button
from .viewer import DocumentViewer

__all__ = ["AdjudicationApp"]


class AdjudicationApp(DraftEditor):
    """See the module docstring."""

    def __init__(self, ranges_dir: str | Path, runs_dir: str | Path) -> None:
        self.ranges_dir = Path(ranges_dir)
        self.runs_dir = Path(runs_dir)
        self.draft: LabelDraft | None = None
        self.rng: Range | None = None
        self.submission: Submission | None = None
        self.sources: Sources | None = None
        self.sides: list[Side] = []
        self.disagreements: tuple[Disagreement, ...] = ()
        self._syncing = False
        self._followed: str | None = None

        self.run = w.Dropdown(options=list_runs(self.runs_dir), description="Run")
        self.range = w.Dropdown(description="Range")
        self.side_choice = w.SelectMultiple(description="Sides", rows=4)
        self.side_choice.add_class("evk-sides")
        self.name = w.Text(value=ADJUDICATED, description="Write as")
        self.name.add_class("evk-name")
        self.start = w.Button(description="Adjudicate", button_style="primary")
        self.start.add_class("evk-start")
        self.message = w.HTML()
        self.message.add_class("evk-message")
        self.run.observe(lambda _c: self._run_changed(), names="value")
        self.range.observe(lambda _c: self._pair_changed(), names="value")
        self.start.on_click(lambda _b: self.open())

        self.choice = w.Dropdown(layout=FLEXIBLE_CHOICE)
        self.choice.add_class("evk-disagreement")
        self.choice.observe(self._checkpoint_chosen, names="value")
        self.previous = w.Button(description="◀ previous (p)")
        self.next = w.Button(description="next (n) ▶")
        self.previous.on_click(lambda _b: self.press("p"))
        self.next.on_click(lambda _b: self.press("n"))
        self.progress = w.HTML()
        self.progress.add_class("evk-progress")
        self.criteria = w.HTML()
        self.columns = w.HBox(layout={"flex_flow": "row wrap"})
        self.columns.add_class("evk-columns")
        self._takes: dict[str, tuple[w.VBox, w.Button]] = {}  # side: its column and Take
        self.resolution = w.HTML()
        self.resolution.add_class("evk-resolution")
        self.scores = ScorePanel(self._set_score, self._show_quote)
        self.penalties = PenaltyPanel(
            on_add=self._add_penalty,
            on_remove=self._remove_penalty,
            on_show=self._show_quote,
            check=self._check,
        )
        self.note = w.Textarea(continuous_update=True, layout={"width": "98%", "height": "60px"})
        self.note.add_class("evk-note")
        self.note.observe(self._note_changed, names="value")
        self.borderline = w.Checkbox(description="borderline (b)", indent=False)
        self.borderline.add_class("evk-borderline")
        self.borderline.observe(self._borderline_changed, names="value")
        self.write = w.Button(description="Write adjudicated label", button_style="success")
        self.write.add_class("evk-write")
        self.write.on_click(lambda _b: self.finalise())
        self.result = w.HTML()
        self.result.add_class("evk-result")
        self.viewer = DocumentViewer()
        self.channels = Channels(KEYMAP, self.press, self.select)

        # The criteria across the top; below them the sides and the adjudicated reading's
        # toggles, and beside them the documents (see two_columns).
        left = w.VBox(
            [
                self.columns,
                w.HTML("<b>Adjudicated reading</b>"),
                self.resolution,
                self.scores.widget,
                self.penalties.widget,
                self.note,
                self.borderline,
            ]
        )
        self.body = w.VBox(
            [
                w.HBox([self.previous, self.choice, self.next, self.progress]),
                self.criteria,
                two_columns(left, self.viewer.widget),
                w.HBox([self.write, self.result]),
            ],
            layout={"display": "none"},
        )
        chooser = w.HBox([self.run, self.range, self.side_choice, self.name, self.start])
        self.widget = w.VBox([chooser, self.message, self.body, self.channels.widget])
        self.widget.add_class("evk-app")
        self.widget.add_class("evk-adjudication")
        self._run_changed()

    # ------------------------------------------------------------------ choosing

    def _pair_changed(self) -> None:
        run, range_id = self.run.value, self.range.value
        if not run or not range_id:
            self.side_choice.options = []
            return
        labels = [
            label.labeller
            for label in find_labels(self.runs_dir, run, range_id)
            if not label.resolves
        ]
        judges = [f"judge:{folder}" for folder in list_evaluations(self.runs_dir, run, range_id)]
        self.side_choice.options = [*labels, *judges]
        self.side_choice.value = tuple(labels[:2]) if len(labels) >= 2 else tuple(labels)

    def open(self) -> None:
        """Resume the adjudication's draft or label, else start one with the chosen sides."""
        name = self.name.value.strip()
        if not LABELLER_NAME.match(name):
            self._say(f"a label name is a-z, 0-9, _ or -: {name!r}", bad=True)
            return
        try:
            rng = load_range(self.ranges_dir, self.range.value)
            submission = load_submission(self.runs_dir, self.run.value, rng)
            sources = Sources.of(submission)
            draft, how = self._resume(rng, submission.run_id, name)
            names = list(draft.resolves) if draft is not None else list(self.side_choice.value)
            sides = [load_side(self.runs_dir, rng, submission, n, sources) for n in names]
            if draft is None:
                draft, _found = start_adjudication(
                    rng, submission.run_id, sides, created=store.today(), name=name
                )
                how = f"started: {' vs '.join(names)}"
        except EvalkitError as exc:
            self._say(str(exc), bad=True)
            return
        self.rng, self.submission, self.sources, self.sides = rng, submission, sources, sides
        self.disagreements = find_disagreements(rng, sides)
        open_ids = [d.chk_id for d in self.disagreements]
        if open_ids and draft.position not in open_ids:
            draft = drafts.go_to(draft, open_ids[0])
        self.viewer.load(rng, submission)
        self._followed = None
        count = len(self.disagreements)
        self._say(f"{how}; {count} disagreement(s) of {len(rng.checkpoints)} checkpoints")
        self.result.value = ""
        self.body.layout.display = "flex"
        self._commit(draft, full=True)

    def _resume(self, rng: Range, run_id: str, name: str) -> tuple[LabelDraft | None, str]:
        path = store.draft_path(self.runs_dir, run_id, rng.id, name)
        found = store.load_draft(path)
        if found is not None:
            draft, changes = drafts.rebase(found, rng)
            return draft, "; ".join([f"resumed the draft {path.name}", *changes])
        label = store.label_path(self.runs_dir, run_id, rng.id, name)
        if label.is_file():
            labels = load_labels(label)
            if labels.resolves:
                draft = drafts.draft_from_labels(labels, rng, name, created=store.today())
                return draft, f"opened the adjudicated label {label.name}"
            raise EvalkitError(f"{label.name} is a labeller's label, not an adjudication")
        return None, ""

    # ------------------------------------------------------------------ changes

    def take(self, side: str) -> None:
        """Resolve the current checkpoint by ``side``'s reading."""
        draft = self.draft
        if draft is None:
            return
        reading = next((s.reading(draft.position) for s in self.sides if s.name == side), None)
        if reading is None:
            self._say(f"{side} has no reading of {draft.position}", bad=True)
            return
        self._change(lambda d: take_side(d, d.position, reading), full=True)

    def _step(self, forward: bool) -> None:
        """``n`` and ``p`` move between the disagreements, not every checkpoint."""
        ids = [d.chk_id for d in self.disagreements]
        if not ids or self.draft is None:
            return
        position = self.draft.position
        at = ids.index(position) if position in ids else -1
        target = ids[min(max(at + (1 if forward else -1), 0), len(ids) - 1)]
        self._change(lambda d: drafts.go_to(d, target), full=True)

    # ------------------------------------------------------------------ showing

    def _refresh(self, full: bool) -> None:
        draft, rng = self.draft, self.rng
        if draft is None or rng is None:
            return
        item = draft.current
        checkpoint = rng.checkpoint(item.chk_id)
        resolved = {d.chk_id: resolution_of(draft.item(d.chk_id), rng, self.sides)
                    for d in self.disagreements}  # fmt: skip
        self._syncing = True
        try:
            self.choice.options = [
                (
                    f"{'✓' if resolved[d.chk_id] else '○'} {d.chk_id} "
                    f"{rng.checkpoint(d.chk_id).name}: {', '.join(d.targets or d.missing)}",
                    d.chk_id,
                )
                for d in self.disagreements
            ]
            if item.chk_id in resolved:
                self.choice.value = item.chk_id
            if full:
                self.note.value = item.note
            self.borderline.value = item.borderline
        finally:
            self._syncing = False
        done = sum(1 for value in resolved.values() if value)
        self.progress.value = f"{done} of {len(resolved)} resolved · draft saved"
        now = resolution_of(item, rng, self.sides) if item.chk_id in resolved else "agreed"
        disagreement = next((d for d in self.disagreements if d.chk_id == item.chk_id), None)
        self.resolution.value = _resolution_html(
            item, now, disagreement, rng.checkpoint(item.chk_id), self.sides
        )
        self.scores.show(item, checkpoint.scope)
        if full:
            self.criteria.value = criteria_html(rng, checkpoint)
            self.penalties.show(item)
            self._takes = {}
            self.columns.children = tuple(
                self._column(index, side, disagreement) for index, side in enumerate(self.sides)
            )
            passages: dict[str, list[tuple[str, str]]] = {"report": [], "plan": []}
            order: list[tuple[str, str]] = []
            for index, side in enumerate(self.sides):
                reading = side.reading(item.chk_id)
                for ref in reading.quotes() if reading is not None else ():
                    if ref.source is not None:
                        passages[ref.source].append((ref.quote, f"side{index % 4}"))
                        order.append((ref.source, ref.quote))
            self.viewer.set_highlights(passages, follow=self._to_follow(item.chk_id, order))
        self._mark_taken(now)

    def _mark_taken(self, now: str | None) -> None:
        """The side whose reading the adjudicated one is now: its column and button say so."""
        for name, (column, take) in self._takes.items():
            if name == now:
                column.add_class("evk-taken")
                take.description, take.button_style = f"✓ taken: {name}", "success"
            else:
                column.remove_class("evk-taken")
                take.description, take.button_style = f"Take {name}", "info"

    def _column(self, index: int, side: Side, disagreement: Disagreement | None) -> w.Widget:
        reading = side.reading(self.draft.position) if self.draft is not None else None
        parts: list[w.Widget] = [w.HTML(f"<b>{html.escape(side.title)}</b>")]
        if reading is None or reading.error is not None:
            why = (reading.error if reading is not None else None) or "no reading"
            parts.append(w.HTML(f'<div class="evk-reason evk-bad">{html.escape(why)}</div>'))
        else:
            parts.append(w.HTML(_scores_table(reading, disagreement, self.rng)))
            parts += _reasons(reading, self._show_quote)
            take = w.Button(description=f"Take {side.name}", button_style="info")
            take.add_class(f"evk-take-{index}")
            take.on_click(lambda _b, name=side.name: self.take(name))
            parts.append(take)
        column = w.VBox(parts, layout={"flex": "1 1 200px", "min_width": "0"})
        column.add_class("evk-side")
        column.add_class(f"evk-side-{index}")
        if reading is not None and reading.error is None:
            self._takes[side.name] = (column, take)
        return column

    # ------------------------------------------------------------------ writing

    def finalise(self) -> store.Finalised | None:
        """Settle every resolution and write the adjudicated label if check_labels accepts it."""
        if self.draft is None or self.rng is None or self.submission is None:
            return None
        draft = settle(self.draft, self.rng, self.sides)
        self._commit(draft)
        done = store.finalise(self.runs_dir, draft, self.rng, self.submission)
        if done.path is None:
            items = "".join(f"<li>{html.escape(p)}</li>" for p in done.problems[:30])
            self.result.value = (
                f'<div class="evk-bad">Not written ({len(done.problems)} problem(s)); the draft'
                f" keeps your work:<ul>{items}</ul></div>"
            )
        else:
            lines, _failed = validate_label_files([done.path])
            self.result.value = (
                f'<div class="evk-ok">Written {html.escape(str(done.path))} (resolves '
                f"{html.escape(', '.join(draft.resolves))})<br>evalkit validate: "
                f"{html.escape(lines[-1].rsplit(': ', 1)[-1])}</div>"
            )
        return done


def _resolution_html(
    item: CheckpointDraft,
    now: str | None,
    disagreement: Disagreement | None,
    checkpoint: Checkpoint,
    sides: Sequence[Side],
) -> str:
    """What the adjudicated reading of ``item`` is now, and its values where the sides differ:
    ``CHK-05: a``, then ``took a's reading: correctness 0 (b: 1)``."""
    head = f"{item.chk_id}: <b>{html.escape(now or 'open: take a side or edit')}</b>"
    targets = disagreement.targets if disagreement is not None else ()
    if now is None or now == RESOLUTION_AGREED or not targets:
        return f'<div class="evk-reason">{head}</div>'
    mine = draft_targets(item, checkpoint)
    values = []
    for target in targets:
        others = [
            f"{side.name}: {_value(reading_targets(reading, checkpoint).get(target))}"
            for side in sides
            if side.name != now and (reading := side.reading(item.chk_id)) is not None
            and reading.error is None
        ]  # fmt: skip
        values.append(f"{target} {_value(mine.get(target))} ({', '.join(others)})")
    what = f"✓ took {now}'s reading" if now != RESOLUTION_EDITED else "edited"
    css = "evk-took" if now != RESOLUTION_EDITED else "evk-edited"
    return (
        f'<div class="evk-reason">{head}</div><div class="evk-reason {css}">'
        f"{html.escape(what)}: {html.escape('; '.join(values))}</div>"
    )


def _value(value: int | None) -> str:
    return "–" if value is None else str(value)


def _scores_table(reading: Reading, disagreement: Disagreement | None, rng: Range | None) -> str:
    differs = set(disagreement.targets) if disagreement is not None else set()
    if rng is None:
        return ""
    targets = reading_targets(reading, rng.checkpoint(reading.chk_id))
    rows = "".join(
        f'<tr class="{"evk-differs" if name in differs else ""}"><td>{html.escape(name)}</td>'
        f"<td>{'–' if value is None else value}</td></tr>"
        for name, value in targets.items()
    )
    return f'<table class="evk-reason">{rows}</table>'


def _reasons(reading: Reading, on_show: Callable[[str, str], None]) -> Sequence[w.Widget]:
    parts: list[w.Widget] = []
    if reading.note:
        parts.append(w.HTML(f'<div class="evk-reason">note: {html.escape(reading.note)}</div>'))
    if reading.borderline:
        parts.append(w.HTML('<div class="evk-reason">marked borderline</div>'))
    for dimension in ("detection", "plan"):
        subs = reading.detection if dimension == "detection" else reading.plan
        for name, sub in (subs or {}).items():
            if sub.rationale:
                text = f"<b>{name}</b>: {html.escape(sub.rationale)}"
                parts.append(w.HTML(f'<div class="evk-reason">{text}</div>'))
    for penalty in reading.penalties:
        text = f"<b>{penalty.rule}</b> ({penalty.source}): {html.escape(penalty.detail)}"
        parts.append(w.HTML(f'<div class="evk-reason">{text}</div>'))
    parts += [quote_button(ref, on_show) for ref in reading.quotes()]
    return parts
