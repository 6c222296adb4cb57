"""`evalkit batch` as a user runs it: selection, resume after a kill, isolated failures, index."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import nbformat
import psutil
import pytest

from evalkit import batch
from tests.samples import REPO, copy_samples, evalkit_command, run_evalkit

pytestmark = pytest.mark.e2e

RANGES = ("redis-exposed", "ssh-miner", "weak-baseline")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The sample ranges with the demo run only: the counts below are the demo run's."""
    return copy_samples(tmp_path, runs=("demo",))


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}


def add_runs(workspace: Path, *names: str) -> None:
    for name in names:
        shutil.copytree(workspace / "runs/demo", workspace / "runs" / name)


def evaluation(workspace: Path, run: str, range_id: str) -> Path:
    return workspace / "runs" / run / range_id / "evaluations" / "rules"


# --------------------------------------------------------------------------- unit level


def test_selection_takes_globs_and_only_pairs_with_documents(workspace: Path):
    add_runs(workspace, "alpha", "beta")
    shutil.rmtree(workspace / "runs/beta/ssh-miner")
    pairs = batch.select_pairs(workspace / "runs", workspace / "ranges")
    assert len(pairs) == 8 and ("beta", "ssh-miner") not in pairs
    pairs = batch.select_pairs(workspace / "runs", workspace / "ranges", ["a*", "demo"], ["s*"])
    assert pairs == [("alpha", "ssh-miner"), ("demo", "ssh-miner")]


def test_leaderboard_keeps_detection_and_plan_apart():
    rows = [
        dict(run="a", range="r1", judge="rules", model="rules-v1", detection_pct=90.0,
             plan_pct=10.0, mode="Plan bottleneck", complete=True, model_under_test="m1"),
        dict(run="b", range="r1", judge="rules", model="rules-v1", detection_pct=50.0,
             plan_pct=100.0, mode="Blind fix", complete=True, model_under_test=None),
    ]  # fmt: skip
    text = batch.leaderboard_markdown(rows)
    assert "| 1 | a | m1 | 1 | 90.0 | 10.0 | r1: Plan bottleneck | yes |" in text
    assert "| 2 | b | unknown | 1 | 50.0 | 100.0 | r1: Blind fix | yes |" in text


def test_gold_pairs_are_listed_apart_and_never_ranked_among_agents():
    # Issue 19: the hard gold pairs (model "unknown") ranked first among the agents.
    rows = [
        dict(run="hard", range="r1", judge="rules", model="rules-v1", detection_pct=100.0,
             plan_pct=100.0, mode="All-round", complete=True, model_under_test=None,
             purpose="gold"),
        dict(run="a", range="r1", judge="rules", model="rules-v1", detection_pct=90.0,
             plan_pct=10.0, mode="Plan bottleneck", complete=True, model_under_test="m1",
             purpose="agent"),
    ]  # fmt: skip
    text = batch.leaderboard_markdown(rows)
    assert "| 1 | a | m1 |" in text
    ranks = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ")]
    assert "2" not in ranks
    apart = text.index("Gold pairs, not ranked:")
    assert text.index("| gold | hard | unknown |") > apart > text.index("| 1 | a |")


def test_the_shipped_hard_gold_pairs_stay_off_the_agents_ranking(workspace: Path):
    shutil.copytree(REPO / "runs/hard", workspace / "runs/hard")
    result = run_evalkit(
        "batch", "--runs", "demo,hard", "--no-notebook", "--quiet", cwd=workspace,
        env=environment(),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = (workspace / "runs/leaderboard.md").read_text()
    assert "| 1 | demo | claude-sonnet-4-5 |" in text
    assert text.index("| gold | hard | unknown |") > text.index("Gold pairs, not ranked:")


def test_leaderboard_shows_a_bootstrap_interval_over_checkpoints():
    def row(range_id: str, detection: list, plan: list, det: float, pln: float) -> dict:
        scores = {"detection": detection, "plan": plan}
        return dict(run="a", range=range_id, judge="rules", model="rules-v1",
                    detection_pct=det, plan_pct=pln, mode="Blind fix", complete=True,
                    model_under_test="m", checkpoint_scores=scores)  # fmt: skip

    rows = [
        row("r1", [(3, 3), (0, 3), (3, 3), (0, 3)], [(2, 2)] * 4, 50.0, 100.0),
        row("r2", [(3, 3)] * 4, [(0, 2)] * 4, 100.0, 0.0),
    ]
    text = batch.leaderboard_markdown(rows)
    line = next(line for line in text.splitlines() if line.startswith("| 1 | a |"))
    cells = [cell.strip() for cell in line.split("|")]
    detection, plan = cells[5], cells[6]
    low, high = (float(x) for x in detection.removeprefix("75.0 [").removesuffix("]").split(","))
    assert 50.0 <= low < 75.0 < high <= 100.0
    assert plan == "50.0 [50.0, 50.0]"  # every checkpoint of each range scores alike
    assert "95 % bootstrap interval" in text


# --------------------------------------------------------------------------- end to end


def test_batch_resumes_after_being_killed_and_writes_the_index(workspace: Path):
    add_runs(workspace, "demo-b")
    command = [*evalkit_command(), "batch", "--workers", "2"]
    process = subprocess.Popen(
        command,
        cwd=workspace,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the kill takes workers and kernels
    )
    deadline = time.monotonic() + 300
    records = []
    while time.monotonic() < deadline and process.poll() is None:
        records = list((workspace / "runs").glob("*/*/evaluations/rules/evaluation.html"))
        if records:
            break
        time.sleep(0.2)
    assert records, "no evaluation finished before the batch ended"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    process.stdout.close()
    process.stderr.close()
    finished = len(list((workspace / "runs").glob("*/*/evaluations/rules/evaluation.html")))

    result = run_evalkit("batch", "--workers", "2", cwd=workspace, env=environment())
    assert result.returncode == 0, result.stderr
    summary = result.stdout.splitlines()[0]
    skipped = int(summary.split(" skipped")[0].rsplit(" ", 1)[1])
    assert skipped >= finished >= 1 and summary.startswith("6 evaluations:")
    for run in ("demo", "demo-b"):
        for range_id in RANGES:
            folder = evaluation(workspace, run, range_id)
            for name in ("evaluation.ipynb", "evaluation.html", "scores.json", "verdicts.json"):
                assert (folder / name).is_file(), folder / name

    with open(workspace / "runs/index.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [(row["run"], row["range"]) for row in rows] == [
        (run, range_id) for run in ("demo", "demo-b") for range_id in RANGES
    ]
    assert list(rows[0]) == list(batch.INDEX_COLUMNS)
    assert (
        rows[1]["mode"] == "All-round"
        and rows[1]["path"] == "runs/demo/ssh-miner/evaluations/rules"
    )
    assert len(json.loads((workspace / "runs/index.json").read_text())) == 6
    assert "| demo |" in (workspace / "runs/leaderboard.md").read_text()
    index_html = (workspace / "runs/index.html").read_text()
    assert index_html.count('evaluations/rules/evaluation.html"') == 6
    assert str(workspace) not in index_html

    again = run_evalkit("batch", cwd=workspace, env=environment())
    assert again.returncode == 0 and "0 done, 6 skipped" in again.stdout


def test_batch_survives_a_failing_and_a_hanging_notebook(workspace: Path, tmp_path: Path):
    notebook = nbformat.read(REPO / "notebooks/evaluate.ipynb", as_version=4)
    setup = next(i for i, cell in enumerate(notebook.cells) if "load_inputs(plan)" in cell.source)
    notebook.cells.insert(
        setup + 1,
        nbformat.v4.new_code_cell(
            "import time\n"
            'if range_id == "weak-baseline":\n'
            '    raise RuntimeError("this range breaks the notebook")\n'
            'if range_id == "redis-exposed":\n'
            "    time.sleep(600)\n"
        ),
    )
    override = tmp_path / "broken.ipynb"
    nbformat.write(notebook, override)

    result = run_evalkit(
        "batch", "--runs", "demo", "--workers", "2", "--notebook", str(override),
        "--cell-timeout", "20", cwd=workspace, env=environment(),
    )  # fmt: skip

    assert result.returncode == 1
    assert "1 done, 0 skipped (already up to date), 2 failed" in result.stdout
    failures = result.stderr[result.stderr.index("failed evaluations:") :].splitlines()
    assert any("weak-baseline" in line and "RuntimeError" in line for line in failures)
    assert any("redis-exposed" in line and "timed out after 20 s" in line for line in failures)
    assert (evaluation(workspace, "demo", "ssh-miner") / "evaluation.html").is_file()
    hung = nbformat.read(
        evaluation(workspace, "demo", "redis-exposed") / "evaluation.failed.ipynb", as_version=4
    )
    assert "timed out" in hung.cells[0].source  # flagged at the top, as papermill flags errors
    flagged = [c for c in hung.cells if c.cell_type == "code" and c.get("outputs")]
    assert any(o.get("ename") == "CellTimeoutError" for c in flagged for o in c.outputs)
    rows = json.loads((workspace / "runs/index.json").read_text())
    assert [row["range"] for row in rows] == ["ssh-miner"]


def test_no_notebook_then_record_gives_the_same_scores(workspace: Path):
    result = run_evalkit(
        "batch", "--runs", "demo", "--no-notebook", cwd=workspace, env=environment()
    )
    assert result.returncode == 0, result.stderr
    folder = evaluation(workspace, "demo", "weak-baseline")
    assert not (folder / "evaluation.ipynb").exists()
    scores = (folder / "scores.json").read_text()
    verdicts = json.loads((folder / "verdicts.json").read_text())
    assert verdicts[0]["chk_id"] == "CHK-01" and set(verdicts[0]) == {
        "chk_id",
        "detection",
        "plan",
        "penalties",
    }

    other = evaluation(workspace, "demo", "ssh-miner")
    other_scores = (other / "scores.json").read_text()
    recorded = run_evalkit("record", str(folder), str(other), cwd=workspace, env=environment())
    assert recorded.returncode == 0, recorded.stderr
    for done, before in ((folder, scores), (other, other_scores)):
        assert (done / "evaluation.html").is_file()
        # Same verdicts, same record; the notebook says it ran in a kernel of the warm pool.
        after = json.loads((done / "scores.json").read_text())
        assert after["meta"].pop("execution") == {"kernel": "warm"}
        assert after == json.loads(before)
        text = (done / "evaluation.ipynb").read_text()
        assert str(workspace) not in text

    # The notebook batch now finds these done, and runs the one without a notebook.
    result = run_evalkit("batch", "--runs", "demo", cwd=workspace, env=environment())
    assert result.returncode == 0, result.stderr
    assert "1 done, 2 skipped" in result.stdout
    # The bar (and so its rate) counts the one evaluation run; the skipped are in its counts.
    assert "| 1/1 [" in result.stderr and "/3 [" not in result.stderr
    assert "skipped=2" in result.stderr


def _kernel_templates() -> list[psutil.Process]:
    """The warm kernel templates among this process's descendants (the Dask workers')."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if "evalkit.kernels.template" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


def test_batch_on_a_local_dask_cluster(workspace: Path):
    distributed = pytest.importorskip("distributed")
    add_runs(workspace, "demo-b")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        result = run_evalkit(
            "batch", "--ranges", "ssh-miner,weak-baseline", "--scheduler",
            cluster.scheduler_address, cwd=workspace, env=environment(),
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("4 evaluations: 4 done")
        # Each Dask worker process that made a record keeps its own warm template.
        templates = _kernel_templates()
        assert 1 <= len(templates) <= 2
        assert len({template.ppid() for template in templates}) == len(templates)
        again = run_evalkit(
            "batch", "--ranges", "ssh-miner,weak-baseline", "--scheduler",
            cluster.scheduler_address, cwd=workspace, env=environment(),
        )  # fmt: skip
        assert "0 done, 4 skipped" in again.stdout
    rows = json.loads((workspace / "runs/index.json").read_text())
    assert {(row["run"], row["range"]) for row in rows} == {
        (run, range_id) for run in ("demo", "demo-b") for range_id in ("ssh-miner", "weak-baseline")
    }
    for scores in workspace.glob("runs/*/*/evaluations/rules/scores.json"):
        assert json.loads(scores.read_text())["meta"]["execution"] == {"kernel": "warm"}
    # The cluster closed: its workers' templates (and any kernel) went with them.
    deadline = time.monotonic() + 120
    while _kernel_templates() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _kernel_templates() == []


def test_a_less_complete_batch_evaluation_is_kept_aside(workspace: Path):
    # Issue 18: nothing lost. Without a notebook too, a record that errored on every item
    # does not replace a complete one; --force replaces it.
    verdicts = workspace / "v.json"
    args = ("batch", "--no-notebook", "--ranges", "ssh-miner", "--judge", "file")
    assert run_evalkit("run", "--range", "ssh-miner", "--run", "demo", "--quiet",
                       cwd=workspace, env=environment()).returncode == 0  # fmt: skip
    shutil.copy(evaluation(workspace, "demo", "ssh-miner") / "verdicts.json", verdicts)
    first = run_evalkit(*args, "--verdicts", str(verdicts), cwd=workspace, env=environment())
    assert first.returncode == 0, first.stderr
    out = workspace / "runs/demo/ssh-miner/evaluations/file-v.json"
    complete = (out / "scores.json").read_bytes()
    items = json.loads(verdicts.read_text())
    verdicts.write_text(json.dumps([{"chk_id": v["chk_id"], "error": "down"} for v in items]))
    report = workspace / "runs/demo/ssh-miner/intrusion-report.md"
    report.write_text(report.read_text() + "\nA line added since: the pair is run again.\n")
    second = run_evalkit(*args, "--verdicts", str(verdicts), cwd=workspace, env=environment())
    assert second.returncode == 1 and "more complete" in second.stderr
    assert (out / "scores.json").read_bytes() == complete
    assert len(list(out.parent.glob(".file-v.json.incomplete-*"))) == 1
    index = json.loads((workspace / "runs/index.json").read_text())
    assert {row["path"] for row in index} == {
        "runs/demo/ssh-miner/evaluations/rules",
        "runs/demo/ssh-miner/evaluations/file-v.json",
    }, "a record kept aside is no record of the index"
    forced = run_evalkit(
        *args, "--verdicts", str(verdicts), "--force", cwd=workspace, env=environment()
    )
    assert forced.returncode == 0 and (out / "scores.json").read_bytes() != complete
