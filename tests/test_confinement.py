"""The escapes of issue 8 through the command line: each one failed before confinement.

A hostile run folder may plant symlinks and hostile names; nothing may be read from
or written to outside the runs folder, two runs may not mix their outputs, a failed
run changes no earlier file, and the kernel stops when its CLI dies.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from evalkit import fileio
from tests.samples import REPO, evalkit_command, run_evalkit


def run_cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    return run_evalkit(*args, cwd=cwd, env={**environment, **env})


def lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


RUN = ("run", "--range", "ssh-miner", "--run", "demo", "--quiet")
EVALUATIONS = Path("runs/demo/ssh-miner/evaluations")


@pytest.mark.e2e
def test_a_symlink_planted_in_the_evaluation_folder_is_never_written_through(workspace: Path):
    victim = workspace / "victim.txt"
    victim.write_text("precious\n")
    out = workspace / EVALUATIONS / "rules"
    out.mkdir(parents=True)
    for name in (".evaluation.running.ipynb", "scores.json", "evaluation.ipynb"):
        (out / name).symlink_to(victim)
    result = run_cli(*RUN, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious\n"
    assert not (out / "scores.json").is_symlink()
    assert json.loads((out / "scores.json").read_text())["meta"]["judge"] == "rules"


def test_an_evaluation_folder_that_is_a_symlink_is_refused(workspace: Path):
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir()
    (workspace / EVALUATIONS).mkdir(parents=True)
    (workspace / EVALUATIONS / "rules").symlink_to(elsewhere, target_is_directory=True)
    result = run_cli(*RUN, cwd=workspace)
    assert result.returncode == 2
    assert len(lines(result.stderr)) == 1 and "symlink" in result.stderr
    assert list(elsewhere.iterdir()) == []


def test_an_evaluations_folder_that_is_a_symlink_is_refused(workspace: Path):
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir()
    (workspace / EVALUATIONS).symlink_to(elsewhere, target_is_directory=True)
    result = run_cli(*RUN, cwd=workspace)
    assert result.returncode == 2 and "symlink" in result.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_report_linked_to_a_file_outside_the_run_is_not_read(workspace: Path):
    secret = workspace / "secret.txt"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    report = workspace / "runs/demo/ssh-miner/intrusion-report.md"
    report.unlink()
    report.symlink_to(secret)
    result = run_cli(*RUN, cwd=workspace)
    assert result.returncode == 2
    assert len(lines(result.stderr)) == 1 and "outside" in result.stderr
    assert not (workspace / EVALUATIONS).exists()


@pytest.mark.e2e
def test_allow_outside_inputs_reads_it_and_the_record_says_so(workspace: Path):
    report = workspace / "runs/demo/ssh-miner/intrusion-report.md"
    moved = workspace / "moved-report.md"
    report.rename(moved)
    report.symlink_to(moved)
    result = run_cli(*RUN, "--allow-outside-inputs", cwd=workspace)
    assert result.returncode == 0, result.stderr
    scores = json.loads((workspace / EVALUATIONS / "rules/scores.json").read_text())
    assert scores["meta"]["inputs_outside"] is True


def test_a_hostile_model_name_cannot_leave_the_run(workspace: Path):
    # No key: the run stops at the preflight, after the plan (and its folder) were built.
    result = run_cli(
        *RUN, "--judge", "claude", "--model", "x/../../../../escaped", "--no-cache", cwd=workspace
    )
    assert result.returncode != 0
    assert not list(workspace.rglob("escaped"))
    from evalkit.runplan import RunPlan

    plan = RunPlan.build(
        range_id="ssh-miner",
        run_id="demo",
        judge="claude",
        ranges_dir="ranges",
        runs_dir="runs",
        judge_settings={"model": "x/../../../../escaped"},
        base=workspace,
    )
    assert plan.out_dir.parent == workspace / EVALUATIONS


def test_a_second_run_into_a_locked_folder_fails_in_one_line(workspace: Path):
    out = workspace / EVALUATIONS / "rules"
    with fileio.evaluation_lock(out, root=workspace / "runs"):
        result = run_cli(*RUN, cwd=workspace)
    assert result.returncode == 1
    assert len(lines(result.stderr)) == 1 and "another evalkit run" in result.stderr
    assert not (out / "scores.json").exists()


def _broken_notebook(workspace: Path, after_outputs: bool) -> Path:
    notebook = nbformat.read(REPO / "notebooks/evaluate.ipynb", as_version=4)
    failing = nbformat.v4.new_code_cell("raise RuntimeError('boom after writing')")
    if after_outputs:
        notebook.cells.append(failing)
    else:
        notebook.cells.insert(3, failing)
    path = workspace / "broken.ipynb"
    nbformat.write(notebook, path)
    return path


@pytest.mark.e2e
def test_a_run_failing_after_its_outputs_leaves_every_earlier_file(workspace: Path):
    assert run_cli(*RUN, cwd=workspace).returncode == 0
    out = workspace / EVALUATIONS / "rules"
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    broken = _broken_notebook(workspace, after_outputs=True)
    result = run_cli(*RUN, "--notebook", str(broken), cwd=workspace)
    assert result.returncode == 1
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.name != "evaluation.failed.ipynb"}
    assert after == before
    assert (out / "evaluation.failed.ipynb").exists()
    leftovers = [p.name for p in out.parent.iterdir() if "staging" in p.name or "old" in p.name]
    assert leftovers == []


def _heartbeat_notebook(workspace: Path, beat: Path) -> Path:
    notebook = nbformat.read(REPO / "notebooks/evaluate.ipynb", as_version=4)
    loop = (
        "import time\n"
        "from pathlib import Path\n"
        "for _ in range(3000):\n"
        f"    Path({str(beat)!r}).write_text(str(time.time()))\n"
        "    time.sleep(0.1)"
    )
    notebook.cells.insert(3, nbformat.v4.new_code_cell(loop))
    path = workspace / "heartbeat.ipynb"
    nbformat.write(notebook, path)
    return path


@pytest.mark.e2e
def test_the_kernel_stops_when_its_cli_dies(workspace: Path):
    beat = workspace / "beat.txt"
    notebook = _heartbeat_notebook(workspace, beat)
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    cli = subprocess.Popen(
        [*evalkit_command(), *RUN, "--notebook", str(notebook)],
        cwd=workspace,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(1200):
            if beat.exists():
                break
            time.sleep(0.1)
        assert beat.exists(), "the notebook never started"
        cli.send_signal(signal.SIGKILL)
        cli.wait()
        # The loop would beat for five minutes; the kernel must stop long before that.
        last = None
        for _ in range(600):
            time.sleep(0.5)
            current = beat.read_text()
            if current == last:
                break
            last = current
        time.sleep(1.0)
        assert beat.read_text() == last, "the kernel kept running after its CLI died"
        # The next run cleans what the killed one had staged.
        assert list((workspace / EVALUATIONS).glob(".rules.staging-*"))
        assert run_cli(*RUN, cwd=workspace).returncode == 0
        assert not list((workspace / EVALUATIONS).glob(".rules.staging-*"))
    finally:
        if cli.poll() is None:
            cli.kill()
