"""One rubric for the judge and the labellers: evalkit/rubric.py drives prompt v3, the label
guide (docs/labels.md), the labelling brief and the labelling notebook's rubric panel."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from evalkit.judges.llm.prompts import PromptSet
from evalkit.labelling.render import rubric_html
from evalkit.model import DETECTION_SUBSCORES, PLAN_SUBSCORES
from evalkit.penalties import PENALTY_RULE_NAMES
from evalkit.rubric import RUBRIC, Rubric, judge_tables, labelling_guide

ROOT = Path(__file__).resolve().parent.parent
START = (
    "<!-- rubric: rendered from evalkit/rubric.py (labelling_guide);"
    " tests/test_rubric.py pins it -->"
)
END = "<!-- end of the rubric -->"


def _pinned_part(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text[text.index(START) + len(START) + 1 : text.index(END)]


def test_the_rubric_names_every_subscore_and_penalty_once():
    names = [sub.name for sub in RUBRIC.subscores]
    assert names == [*DETECTION_SUBSCORES, *PLAN_SUBSCORES]
    assert [p.rule for p in RUBRIC.penalties] == list(PENALTY_RULE_NAMES)
    # Trusted text that sits in a table cell as written: no cell separator in it.
    for text in (*(s.when for s in RUBRIC.subscores), *(p.when for p in RUBRIC.penalties)):
        assert "|" not in text


def test_the_label_guide_and_the_labelling_brief_are_the_rubric_rendered():
    guide = labelling_guide()
    assert _pinned_part(ROOT / "docs" / "labels.md") == guide
    assert _pinned_part(ROOT / "corpora" / "briefs" / "labelling.md") == guide


def test_prompt_v3_renders_every_definition_of_the_rubric():
    system = PromptSet.load("v3").system()
    for sub in RUBRIC.subscores:
        assert f"| {sub.name} | 0/1 | {sub.when} |" in system
        assert sub.guidance in system
    for penalty in RUBRIC.penalties:
        assert penalty.when in system and penalty.guidance in system
    assert "{{" not in system and "rubric." not in system


def test_a_rubric_sentence_changed_in_one_place_changes_the_prompt_and_the_guide_together():
    changed_sub = replace(RUBRIC.subscores[3], when="the step does what the criterion says, here")
    changed_pen = replace(RUBRIC.penalties[0], guidance="A transposed digit is a slip.")
    rubric = Rubric(
        subscores=(*RUBRIC.subscores[:3], changed_sub, *RUBRIC.subscores[4:]),
        penalties=(changed_pen, *RUBRIC.penalties[1:]),
    )
    before, after = PromptSet.load("v3"), PromptSet.load("v3", rubric=rubric)
    for text in ("the step does what the criterion says, here", "A transposed digit is a slip."):
        assert text not in before.system() and text in after.system()
        assert text not in labelling_guide() and text in labelling_guide(rubric)
    # The rendered rubric is part of the prompt's identity: cached answers are not reused.
    assert before.sha256 != after.sha256


def test_prompts_that_do_not_render_the_rubric_keep_their_hash():
    for version in ("v1", "v2"):
        prompts = PromptSet.load(version)
        assert not prompts.uses_rubric
        assert prompts.sha256 == PromptSet.load(version, rubric=Rubric(subscores=())).sha256


def test_the_judge_tables_carry_each_penalty_effect_from_the_penalty_table():
    table = judge_tables()["penalty_table"]
    assert re.search(r"\| `fabrication` \| .+ \| detection score set to 0 \|", table)
    assert re.search(r"\| `dangerous_advice` \| .+ \| plan score set to 0 \|", table)


def test_the_labelling_notebook_shows_the_same_rubric():
    panel = rubric_html()
    for sub in RUBRIC.subscores:
        assert sub.name.capitalize() in panel
    assert "near-miss identifier" in panel and "copying slip" in panel
