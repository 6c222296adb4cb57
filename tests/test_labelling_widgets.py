"""The widget layer, driven from Python as the browser drives it (no browser needed):
choosers, toggles, keys through the key channel, a selected passage, finalising, adjudicating."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from evalkit.labelling.disagreements import reading_targets
from evalkit.labelling.drafts import SUBSCORE_ORDER
from evalkit.labelling.widgets.adjudicate_app import AdjudicationApp
from evalkit.labelling.widgets.browser import EVENT_SEPARATOR, FIELD_SEPARATOR, new_keys
from evalkit.labelling.widgets.editor import KEYMAP
from evalkit.labelling.widgets.label_app import LabellingApp
from tests.labelling_samples import RANGE, RUN, workspace_with_evaluation
from tests.samples import REPO


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return workspace_with_evaluation(tmp_path)


def opened(root: Path, labeller: str = "zed", prefill: str = "") -> LabellingApp:
    app = LabellingApp(root / "ranges", root / "runs")
    app.run.value = RUN
    app.range.value = RANGE
    app.labeller.value = labeller
    app.prefill.value = prefill
    app.open_button.click()
    return app


def draft_on_disk(root: Path, labeller: str = "zed") -> dict:
    path = root / "runs" / RUN / RANGE / "labels" / f"{labeller}.json.draft"
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_choosers_list_runs_ranges_labels_and_judges(root: Path):
    app = LabellingApp(root / "ranges", root / "runs")
    assert RUN in app.run.options
    app.run.value = RUN
    assert app.range.options == ("redis-exposed", "ssh-miner", "weak-baseline")
    app.range.value = RANGE
    assert [value for _label, value in app.prefill.options] == ["", "judge:rules", "a", "b"]
    assert app.labeller.options == ("a", "b")
    app.labeller.value = "Not A Name"
    app.open_button.click()
    assert "a labeller name is" in app.message.value and app.draft is None


def test_toggles_keys_and_navigation_save_the_draft_at_once(root: Path):
    app = opened(root)
    assert app.message.value.endswith("new label</span>")
    assert draft_on_disk(root)["position"] == "CHK-01"
    app.scores.toggles["evidence"].value = 1  # a mouse click
    assert draft_on_disk(root)["checkpoints"][0]["detection"]["evidence"] == 1
    app.channels.keys.value = EVENT_SEPARATOR.join(["pg:1:2", "pg:2:1", "pg:3:n"])  # fast keys
    on_disk = draft_on_disk(root)
    assert on_disk["checkpoints"][0]["detection"] == {
        "discovery": 1, "evidence": 0, "attribution": None
    }  # fmt: skip
    assert on_disk["position"] == "CHK-02" and "2 of 12" in app.progress.value
    app.channels.keys.value = EVENT_SEPARATOR.join(["pg:2:1", "pg:3:n", "pg:4:p"])  # seen again
    assert draft_on_disk(root)["position"] == "CHK-01"
    app.press("b")
    assert app.borderline.value and draft_on_disk(root)["checkpoints"][0]["borderline"]


def test_n_a_dimensions_have_no_toggle_and_their_keys_do_nothing(root: Path):
    app = opened(root)
    app.checkpoint.value = "CHK-04"  # detection-only
    row = app.scores.rows["correctness"]
    assert app.scores.toggles["correctness"] not in row.children
    app.press("4")
    assert "correctness is N/A for CHK-04" in app.message.value
    assert draft_on_disk(root)["checkpoints"][3]["plan"] is None


def test_a_selected_passage_becomes_a_checked_penalty_quote(root: Path):
    app = opened(root)
    app.channels.selection.value = f"report{FIELD_SEPARATOR}LISTEN 0      511\u241e7"
    assert app.penalties.quote.value == "LISTEN 0      511"
    assert "found verbatim in the report, line 38" in app.penalties.result.value
    assert app.penalties.add.disabled  # no detail yet
    app.penalties.detail.value = "why"
    assert not app.penalties.add.disabled
    app.penalties.add.click()
    assert draft_on_disk(root)["checkpoints"][0]["penalties"][0]["quote"] == "LISTEN 0      511"
    app.penalties.quote.value = "LISTEN 0 512"
    assert "not found verbatim" in app.penalties.result.value and app.penalties.add.disabled


def test_prefill_shows_the_judges_reasons_and_finalise_validates(root: Path):
    app = opened(root, prefill="judge:rules")
    assert "Pre-filled from judge rules" in app.assist_note.value
    assert any("evk-quote" in c._dom_classes for c in app.scores.reasons["discovery"].children)
    app.finalise_button.click()
    assert "Not finalised" in app.result.value and "not yet seen" in app.result.value
    for _ in range(11):
        app.press("n")
    app.finalise_button.click()
    assert "evalkit validate: ok (labels)" in app.result.value
    assert (root / "runs" / RUN / RANGE / "labels" / "zed.json").is_file()
    again = opened(root)
    assert again.message.value.endswith("opened the label zed.json to edit it</span>")


def test_reopening_resumes_where_the_labeller_stopped(root: Path):
    app = opened(root)
    app.press("n")
    app.press("n")
    app.note.value = "later"
    resumed = opened(root)
    assert "resumed the draft zed.json.draft at CHK-03" in resumed.message.value
    assert resumed.note.value == "later" and resumed.checkpoint.value == "CHK-03"


def test_the_adjudication_app_resolves_and_writes(root: Path):
    app = AdjudicationApp(root / "ranges", root / "runs")
    app.run.value, app.range.value = RUN, RANGE
    assert app.side_choice.options == ("a", "b", "judge:rules")
    assert app.side_choice.value == ("a", "b")
    app.start.click()
    assert len(app.disagreements) >= 1 and len(app.columns.children) == 2
    for _ in app.disagreements:
        app.take("a")
        app.press("n")
    app.write.click()
    assert "evalkit validate: ok (labels)" in app.result.value
    written = json.loads((root / "runs" / RUN / RANGE / "labels" / "adjudicated.json").read_text())
    assert written["resolves"] == ["a", "b"]
    reopened = AdjudicationApp(root / "ranges", root / "runs")
    reopened.run.value, reopened.range.value = RUN, RANGE
    assert reopened.side_choice.options == ("a", "b", "judge:rules")  # not the adjudication
    reopened.start.click()
    assert "opened the adjudicated label adjudicated.json" in reopened.message.value


def test_new_keys_acts_on_each_key_once_and_a_new_page_starts_again():
    keys, seen = new_keys(EVENT_SEPARATOR.join(["p1:1:n", "p1:2:j"]), ("", 0))
    assert (keys, seen) == (["n", "j"], ("p1", 2))
    keys, seen = new_keys(EVENT_SEPARATOR.join(["p1:2:j", "p1:3:1"]), seen)
    assert keys == ["1"]
    assert new_keys("p2:1:b", seen)[0] == ["b"]
    assert set(KEYMAP) == {"n", "j", "p", "k", "1", "2", "3", "4", "5", "b"}


@pytest.mark.parametrize("name", ["label.ipynb", "adjudicate.ipynb"])
def test_the_notebooks_are_committed_clean_and_only_orchestrate(name: str):
    notebook = nbformat.read(REPO / "notebooks" / name, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)
    source = "\n".join(cell.source for cell in code)
    assert "show(app)" in source and "def " not in source and len(source.splitlines()) < 10


def test_the_assist_note_lists_the_passages_the_judge_reported():
    from evalkit.labelling.readings import QuoteRef, Side
    from evalkit.labelling.widgets.label_app import _assist_html

    side = Side(
        "judge:x", "judge", "judge x (m)", reported=(QuoteRef("Accept <all>.", "report", 9),)
    )
    note = _assist_html(side, None)
    assert "addressed to the evaluator" in note
    assert "Accept &lt;all&gt;. <i>(report line 9)</i>" in note
    assert "addressed to the evaluator" not in _assist_html(Side("a", "label", "label a"), None)


def test_the_documents_jump_to_each_new_checkpoints_first_quote_and_stay_put_on_edits(root: Path):
    app = opened(root, prefill="judge:rules")
    # CHK-01's first quote (discovery's, report line 38) is the passage to scroll to.
    assert app.viewer.focus is not None and app.viewer.focus[0] == "report"
    assert app.viewer.focus[1].first == 38 and app.viewer.current_tab == "report"
    assert 'data-line="38"' in app.viewer.panes["report"].value.split("evk-jump")[1][:200]
    app.press("n")
    jump, focus = app.viewer.jump, app.viewer.focus
    reading = app.assist.reading("CHK-02") if app.assist is not None else None
    assert reading is not None and focus is not None
    first = next(ref for ref in reading.quotes() if ref.line is not None)
    assert (focus[0], focus[1].first) == (first.source, first.line)
    # Edits on the same checkpoint never move the documents away from the reader.
    app.press("2")
    app.channels.selection.value = f"report{FIELD_SEPARATOR}LISTEN 0      511\u241e7"
    app.penalties.detail.value = "why"
    app.penalties.add.click()
    assert app.draft is not None and app.draft.current.penalties
    assert (app.viewer.jump, app.viewer.focus) == (jump, focus)
    app.press("p")
    assert app.viewer.jump > jump and app.viewer.focus is not None
    assert app.viewer.focus[1].first == 38


def test_a_checkpoint_with_nothing_quoted_leaves_the_documents_where_they_are(root: Path):
    app = opened(root)  # no pre-fill: no quote to follow
    app.viewer.tabs.selected_index = 1  # the reader is in the plan
    app.press("n")
    assert app.viewer.focus is None and app.viewer.current_tab == "plan"


def test_a_penalty_problem_is_shown_as_an_error(root: Path):
    app = opened(root)
    app.channels.selection.value = f"report{FIELD_SEPARATOR}LISTEN 0      511\u241e7"
    found, problem = app.penalties.result.value.split("</div>")[:2]
    assert "evk-ok" in found and "found verbatim in the report, line 38" in found
    assert "evk-bad" in problem and "$.detail" in problem and "evk-ok" not in problem


def test_take_marks_the_side_taken_and_says_what_it_set(root: Path):
    app = AdjudicationApp(root / "ranges", root / "runs")
    app.run.value, app.range.value = RUN, RANGE
    app.start.click()
    assert app.draft is not None and app.rng is not None
    disagreement = next(d for d in app.disagreements if d.chk_id == app.draft.position)
    target = disagreement.targets[0]
    checkpoint = app.rng.checkpoint(disagreement.chk_id)
    values = {
        side: reading_targets(reading, checkpoint)[target]
        for side, reading in zip(disagreement.sides, disagreement.readings, strict=True)
        if reading is not None
    }
    columns = app.columns.children
    assert [column.children[-1].description for column in columns] == ["Take a", "Take b"]
    app.take("a")
    columns = app.columns.children
    assert "evk-taken" in columns[0]._dom_classes and "evk-taken" not in columns[1]._dom_classes
    assert [column.children[-1].description for column in columns] == ["✓ taken: a", "Take b"]
    assert columns[0].children[-1].button_style == "success"
    assert f"{disagreement.chk_id}: <b>a</b>" in app.resolution.value
    assert f"took a&#x27;s reading: {target} {values['a']} (b: {values['b']})" in (
        app.resolution.value
    )
    app.press(str(1 + [n for _d, n in SUBSCORE_ORDER].index(target)))  # an edit of a's reading
    assert "evk-taken" not in columns[0]._dom_classes
    assert columns[0].children[-1].description == "Take a"
    assert f"edited: {target} {1 - values['a']} (a: {values['a']}, b: {values['b']})" in (
        app.resolution.value
    )
