"""The evaluation notebook: committed clean, self-describing, and runnable by papermill."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import papermill
import pytest

from evalkit.notebook import template_path

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = REPO / "notebooks" / "evaluate.ipynb"
EXPECTED_PARAMETERS = {
    "range_id",
    "run_id",
    "judge",
    "model",
    "ranges_dir",
    "runs_dir",
    "out_dir",
    "model_under_test",
    "prompt_dir",
    "concurrency",
    "use_cache",
    "cache_dir",
    "base_url",
    "repeats",
    "verdicts",
    "allow_outside_inputs",
    "replay_from",
}


def test_notebook_is_committed_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def test_parameters_cell_is_tagged_typed_and_commented():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    tagged = [c for c in notebook.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    for line in tagged[0].source.splitlines():
        name, _, rest = line.partition(":")
        assert name.isidentifier(), line
        assert " = " in rest and "  # " in rest, f"parameter needs a type, default and help: {line}"
        # papermill cannot parse a parameter line with a second '='.
        assert line.count("=") == 1, line


def test_papermill_describes_every_parameter():
    described = papermill.inspect_notebook(str(NOTEBOOK))
    assert set(described) == EXPECTED_PARAMETERS
    for name, info in described.items():
        assert info["inferred_type_name"] in {"str", "int", "bool"}, name
        assert info["help"], f"{name} has no help comment"


def test_judge_help_names_every_registered_judge():
    from evalkit.judges import judge_names

    help_text = papermill.inspect_notebook(str(NOTEBOOK))["judge"]["help"]
    for name in judge_names():
        assert name in re.split(r"[\s|;,()`]+", help_text), name


def test_every_judge_setting_and_plan_field_is_a_notebook_parameter(tmp_path: Path):
    from evalkit.runplan import RunPlan

    (tmp_path / "ranges").mkdir()
    (tmp_path / "runs").mkdir()
    plan = RunPlan.build(
        range_id="r", run_id="x", judge="rules", ranges_dir="ranges", runs_dir="runs", base=tmp_path
    )
    assert set(plan.to_parameters()) <= set(papermill.inspect_notebook(str(NOTEBOOK)))


def test_no_secret_is_a_parameter():
    for name in papermill.inspect_notebook(str(NOTEBOOK)):
        assert not any(word in name.lower() for word in ("key", "token", "secret", "password"))


def test_template_path_is_the_repository_notebook():
    assert template_path() == NOTEBOOK


@pytest.mark.e2e
def test_papermill_executes_the_notebook_and_writes_outputs_beside_it(workspace: Path):
    out = workspace / "eval"
    out.mkdir()

    papermill.execute_notebook(
        str(NOTEBOOK),
        str(out / "evaluation.ipynb"),
        parameters={
            "range_id": "redis-exposed",
            "ranges_dir": str(workspace / "ranges"),
            "runs_dir": str(workspace / "runs"),
            "out_dir": str(out),
        },
        cwd=str(out),
        progress_bar=False,
    )

    scores = json.loads((out / "scores.json").read_text())
    assert scores["meta"]["range"] == "redis-exposed"
    assert scores["summary"]["diagnosis"] == "Plan bottleneck"
    assert (out / "evaluation-report.md").read_text().startswith("#")
    executed = nbformat.read(out / "evaluation.ipynb", as_version=4)
    pngs = [
        o
        for c in executed.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "image/png" in o.get("data", {})
    ]
    assert len(pngs) >= 3
    # The offline judge's measured agreement stands next to its scores in the record.
    shown = [
        o["data"]["text/markdown"]
        for c in executed.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "text/markdown" in o.get("data", {})
    ]
    assert any("**About this judge.**" in text and "kappa" in text for text in shown)
    # Said once, not repeated by a second summary table or the heading's own sentence; an
    # offline judge gets a sentence instead of a table of zeros for its usage.
    every_text = "\n".join(
        [c.source for c in executed.cells if c.cell_type == "markdown"]
        + [
            # one representation per output: what a reader of the record sees
            next(
                (o["data"][kind] for kind in ("text/markdown", "text/html") if kind in o["data"]),
                o["data"].get("text/plain", ""),
            )
            for c in executed.cells
            if c.cell_type == "code"
            for o in c.outputs
            if "data" in o
        ]
    )
    assert every_text.count("never merged") == 1
    summary_rows = [line for line in every_text.splitlines() if line.startswith("| Percentage |")]
    assert len(summary_rows) == 1
    assert "judge called no model" in every_text


def _papermill(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "EVALKIT_WORKSPACE"}
    return subprocess.run(
        [sys.executable, "-m", "papermill", str(NOTEBOOK), *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.e2e
@pytest.mark.parametrize("where", [".", "notebooks"])
def test_plain_papermill_works_from_the_root_and_from_notebooks(workspace: Path, where: str):
    cwd = workspace / where
    cwd.mkdir(exist_ok=True)
    result = _papermill(
        "out.ipynb", "-p", "range_id", "redis-exposed", "-p", "run_id", "demo", cwd=cwd
    )
    assert result.returncode == 0, result.stderr[-2000:]
    evaluation = workspace / "runs/demo/redis-exposed/evaluations/rules"
    scores = json.loads((evaluation / "scores.json").read_text())
    assert scores["summary"]["diagnosis"] == "Plan bottleneck"
    assert (evaluation / "evaluation-report.md").exists()
    # Nothing but the output notebook lands in the working directory.
    assert sorted(p.name for p in cwd.iterdir() if p.is_file()) == ["out.ipynb"]


@pytest.mark.e2e
def test_papermill_with_a_parameters_yaml_parses_strings_strictly(workspace: Path):
    params = workspace / "params.yaml"
    params.write_text("range_id: ssh-miner\nrun_id: demo\nout_dir: evals/ssh\nuse_cache: 'false'\n")
    result = _papermill("out.ipynb", "-f", str(params), cwd=workspace)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (workspace / "evals/ssh/scores.json").exists()

    params.write_text("range_id: ssh-miner\nrun_id: demo\njudge: claude\nuse_cache: maybe\n")
    result = _papermill("bad.ipynb", "-f", str(params), cwd=workspace)
    assert result.returncode != 0
    assert (
        "use_cache must be true or false" in result.stderr + (workspace / "bad.ipynb").read_text()
    )


def test_the_streamed_progress_bar_ends_its_line_before_the_summary():
    """tqdm writes its closing line break apart from the bar: it must reach the terminal,
    or the command's summary line starts on the bar's line."""
    import io

    from evalkit.notebook import _ProgressLines

    terminal = io.StringIO()
    lines = _ProgressLines(terminal)
    lines.write("\rjudging ssh-miner (rules):  50%| 1/2")
    lines.write("other notebook output\n")  # not the bar's: dropped, the line stays open
    lines.write("\rjudging ssh-miner (rules): 100%| 2/2")
    lines.write("\n")
    lines.end_line()  # already ended: nothing more
    print("ssh-miner: detection ...", file=terminal)
    assert terminal.getvalue().splitlines()[-1] == "ssh-miner: detection ..."
    assert terminal.getvalue().count("\n") == 2


def test_the_record_keeps_no_progress_bar_line_and_everything_else():
    from evalkit.notebook import without_progress_bars

    streamed = (
        "loaded 8 checkpoints\n"
        "\rjudging ssh-miner (rules):   0%|          | 0/8 [00:00<?, ?item/s]"
        "\rjudging ssh-miner (rules): 100%|##########| 8/8 [00:00<00:00, 99.0item/s, CHK-08]\n"
        "a line that mentions judging in the middle\n"
        "last line without a break"
    )
    assert without_progress_bars(streamed) == (
        "loaded 8 checkpoints\na line that mentions judging in the middle\n"
        "last line without a break"
    )
    assert without_progress_bars("\rjudging x (rules): 50%| 1/2") == ""
