"""calibration.json, calibration-report.md and the figures."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

from evalkit.research.calibration import calibrate
from evalkit.research.calibration_report import report_markdown, unit_note, write_outputs
from tests.labelled import cases, labelled_workspace


def test_outputs_are_written(tmp_path: Path):
    result = calibrate(cases(labelled_workspace(tmp_path / "ws")), resamples=100, seed=1)
    paths = write_outputs(result, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert data["agreement"]["pooled"]["all sub-scores"]["accuracy"] == 1.0
    assert "alice vs bob" in data["human_band"]
    assert data["items"] and data["judge"]["repeats"] == 1
    report = paths["report"].read_text()
    assert "## Every disagreement" in report and "CHK-01 discovery" not in report
    assert paths["confusion"].read_bytes()[:4] == b"\x89PNG"
    assert paths["agreement"].read_bytes()[:4] == b"\x89PNG"


def test_the_report_rounds_says_n_a_and_names_what_was_resampled(tmp_path: Path):
    result = calibrate(cases(labelled_workspace(tmp_path)), resamples=100, seed=1)
    report = report_markdown(result)
    assert "nan" not in report.lower().replace("nano", "")
    assert "None" not in report
    # no number with more than three decimals anywhere
    assert not re.search(r"\d\.\d{4,}", report), re.search(r"\d\.\d{4,}", report)
    assert "| penalty:wrong_attribution | " in report and "n/a" in report
    assert "Intervals resample whole checkpoints (2 pair(s): too few to resample pairs)." in report
    assert unit_note({}) == "No intervals (no bootstrap)."


def test_rationales_and_notes_are_escaped(tmp_path: Path):
    result = calibrate(cases(labelled_workspace(tmp_path)), resamples=0)
    hostile = {
        "run": "demo",
        "range": "ssh-miner",
        "chk_id": "CHK-01",
        "target": "evidence",
        "judge": 1,
        "label": 0,
        "judge_rationale": "<img src=x onerror=alert(1)> | ![t](http://t.example/x.png)\nnext",
        "judge_quotes": ["`rm -rf /`"],
        "label_note": "**borderline**",
    }
    report = report_markdown(replace(result, disagreements=(hostile,)))
    assert "<img" not in report and "&lt;img src=x onerror=alert(1)&gt;" in report
    assert "!\\[t\\](http://t.example/x.png)<br>next" in report
    assert "“\\`rm -rf /\\`”" in report and "\\*\\*borderline\\*\\*" in report
