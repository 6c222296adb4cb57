"""`evalkit batch` on warm kernels, end to end: the same records as fresh kernels, isolation
between records, faults kept in their record, and nothing left running, Ctrl-C included."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import nbformat
import psutil
import pytest

from tests.samples import REPO, copy_samples, evalkit_command, run_evalkit, sigint_as_in_a_terminal

pytestmark = pytest.mark.e2e

DEADLINE_S = 120  # how long processes may take to go before a test says they stayed


def environment(tmp: Path | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")}
    if tmp is not None:
        # Connection files go to the temporary folder; the runtime folder is jupyter's own.
        tmp.mkdir(exist_ok=True)
        runtime = tmp / "runtime"
        runtime.mkdir(exist_ok=True)
        env.update(TMPDIR=str(tmp), JUPYTER_RUNTIME_DIR=str(runtime))
    env.update(extra)
    return env


def connection_files(tmp: Path) -> list[Path]:
    """Kernels' connection files: jupyter_client's, and the warm pools' private folders."""
    return [*tmp.rglob("*.json"), *tmp.glob("evalkit-kernels-*")]


def folder(workspace: Path, run: str, range_id: str) -> Path:
    return workspace / "runs" / run / range_id / "evaluations" / "rules"


def notebook_with(cell: str, *, after: str = "load_inputs(plan)", at_end: str = "") -> Any:
    """The evaluation notebook with ``cell`` inserted after the setup cell (and ``at_end``)."""
    notebook = nbformat.read(REPO / "notebooks/evaluate.ipynb", as_version=4)
    setup = next(i for i, c in enumerate(notebook.cells) if after in c.source)
    notebook.cells.insert(setup + 1, nbformat.v4.new_code_cell(cell))
    if at_end:
        notebook.cells.append(nbformat.v4.new_code_cell(at_end))
    return notebook


class Watched:
    """A process and every process it starts, followed while it runs (the kernels' too)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.seen: dict[int, str] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        root = psutil.Process(self.process.pid)
        while not self._done.is_set():
            try:
                for child in root.children(recursive=True):
                    if child.pid not in self.seen:
                        self.seen[child.pid] = " ".join(child.cmdline())
            except psutil.Error:
                pass
            time.sleep(0.02)

    def finish(self, timeout: float = 900) -> tuple[int, str, str]:
        out, err = self.process.communicate(timeout=timeout)
        self._done.set()
        self._thread.join()
        return self.process.returncode, out, err

    def left_running(self) -> list[str]:
        """The processes it started that still run (a zombie has ended), after a grace."""
        deadline = time.monotonic() + DEADLINE_S
        while True:
            left = []
            for pid, command in self.seen.items():
                try:
                    if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                        left.append(f"{pid} {command}")
                except psutil.NoSuchProcess:
                    continue
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.1)


def start_batch(workspace: Path, *args: str, env: dict[str, str]) -> Watched:
    process = subprocess.Popen(
        [*evalkit_command(), "batch", *args],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # as from a terminal: its own group, which Ctrl-C reaches
        preexec_fn=sigint_as_in_a_terminal,
    )
    return Watched(process)


# --------------------------------------------------------------------------- same records

# What legitimately differs between two executions of the same notebook: the progress bar's
# timing, pandas Styler's random table ids, object addresses in reprs and the random name of
# the staging folder the notebook writes into (its out_dir parameter).
_TIMING = re.compile(r"\[\d\d:\d\d<[^\]]*\]")
_VOLATILE = re.compile(r"T_[0-9a-f]{5}|at 0x[0-9a-f]+|\.staging-[0-9a-f]+")


def _as_terminal(text: str) -> str:
    """Stream text as a terminal shows it: each line's last carriage-returned state."""
    return "\n".join(_TIMING.sub("[timing]", line.rsplit("\r", 1)[-1]) for line in text.split("\n"))


def notebook_view(path: Path) -> list[tuple[str, Any, list[Any]]]:
    """Each code cell's source, execution count and outputs, timing metadata left out."""
    view = []
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code":
            continue
        outputs: list[Any] = []
        for output in cell.outputs:
            if output.output_type != "stream":
                content = {k: v for k, v in output.items() if k != "output_type"}
                outputs.append((output.output_type, _VOLATILE.sub("?", json.dumps(content))))
            elif outputs and outputs[-1][:2] == ("stream", output.name):
                outputs[-1] = ("stream", output.name, outputs[-1][2] + output.text)
            else:
                outputs.append(("stream", output.name, output.text))
        view.append(
            (
                _VOLATILE.sub("?", cell.source),
                cell.execution_count,
                [(*o[:2], _as_terminal(o[2])) if o[0] == "stream" else o for o in outputs],
            )
        )
    return view


def record_view(evaluation: Path) -> dict[str, Any]:
    """The record but for what may differ: meta.timestamp and meta.execution."""
    scores = json.loads((evaluation / "scores.json").read_text())
    timestamp = scores["meta"].pop("timestamp")
    execution = scores["meta"].pop("execution")
    report = (evaluation / "evaluation-report.md").read_text().replace(timestamp, "<timestamp>")
    return {
        "execution": execution,
        "scores": scores,
        "report": report,
        "verdicts": (evaluation / "verdicts.json").read_text(),
        "notebook": notebook_view(evaluation / "evaluation.ipynb"),
    }


def test_warm_and_fresh_kernels_make_the_same_record_of_every_sample(tmp_path: Path):
    warm = copy_samples(tmp_path / "warm")
    fresh = copy_samples(tmp_path / "fresh")
    for workspace, flags in ((warm, ()), (fresh, ("--fresh-kernels",))):
        result = run_evalkit("batch", "--workers", "2", *flags, cwd=workspace, env=environment())
        assert result.returncode == 0, result.stderr
    samples = sorted(p.parent.relative_to(warm) for p in warm.glob("runs/*/*/*.md"))
    evaluations = sorted({(path.parts[1], path.parts[2]) for path in samples})
    assert len(evaluations) == 15  # every sample run x range
    for run, range_id in evaluations:
        made_warm = record_view(folder(warm, run, range_id))
        made_fresh = record_view(folder(fresh, run, range_id))
        assert made_warm.pop("execution") == {"kernel": "warm"}
        assert made_fresh.pop("execution") == {"kernel": "fresh"}
        assert made_warm == made_fresh, f"{run}/{range_id}"
        html = (folder(warm, run, range_id) / "evaluation.html").read_text()
        assert html.count("data:image/png;base64") >= 3


# --------------------------------------------------------------------------- isolation

PROBE = """\
import os, sys
# The isolation probe: fails if an earlier record left anything behind.
left = [what for what, found in (
    ("a global", "probe_marker" in globals()),
    ("a module attribute", hasattr(evalkit, "probe_marker")),
    ("an environment variable", "EVALKIT_PROBE_MARKER" in os.environ),
    ("a module", "probe_module" in sys.modules),
    ("a working directory", os.getcwd() != os.environ["EVALKIT_WORKSPACE"]),
) if found]
if left:
    raise AssertionError(f"an earlier record left {', '.join(left)}")
"""
LEAVE_TRACES = """\
import types
probe_marker = 1
evalkit.probe_marker = 1
os.environ["EVALKIT_PROBE_MARKER"] = "1"
sys.modules["probe_module"] = types.ModuleType("probe_module")
os.chdir("/")
"""


@pytest.fixture
def two_runs(tmp_path: Path) -> Path:
    workspace = copy_samples(tmp_path / "ws", runs=("demo",))
    shutil.copytree(workspace / "runs/demo", workspace / "runs/demo-b")
    return workspace


def test_a_record_sees_nothing_an_earlier_record_left(two_runs: Path, tmp_path: Path):
    probe = tmp_path / "probe.ipynb"
    nbformat.write(notebook_with(PROBE, at_end=LEAVE_TRACES), probe)
    batch = ("--workers", "1", "--notebook", str(probe))

    result = run_evalkit("batch", *batch, cwd=two_runs, env=environment())
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("6 evaluations: 6 done")

    # The same probe, with the isolation switched off on purpose: one kernel for every record.
    result = run_evalkit(
        "batch", *batch, "--force", cwd=two_runs, env=environment(EVALKIT_TEST_REUSE_KERNEL="1")
    )
    assert result.returncode == 1
    assert "1 done, 0 skipped (already up to date), 5 failed" in result.stdout
    failures = result.stderr[result.stderr.index("failed evaluations:") :].splitlines()[2:]
    assert len(failures) == 5
    for line in failures:
        assert (
            "an earlier record left a global, a module attribute, an environment variable,"
            " a module, a working directory" in line
        ), line


# --------------------------------------------------------------------------- faults


def test_a_dead_kernel_and_a_hung_cell_fail_their_record_only(two_runs: Path, tmp_path: Path):
    broken = tmp_path / "broken.ipynb"
    nbformat.write(
        notebook_with(
            "import os, time\n"
            'if run_id == "demo" and range_id == "redis-exposed":\n'
            "    os._exit(1)\n"
            'if run_id == "demo" and range_id == "ssh-miner":\n'
            "    time.sleep(600)\n"
        ),
        broken,
    )
    batch = start_batch(
        two_runs, "--workers", "1", "--notebook", str(broken), "--cell-timeout", "20",
        env=environment(tmp_path / "tmp"),
    )  # fmt: skip
    code, out, err = batch.finish()

    assert code == 1
    assert "4 done, 0 skipped (already up to date), 2 failed" in out
    failures = err[err.index("failed evaluations:") :].splitlines()
    assert any("redis-exposed" in line and "kernel died" in line for line in failures), err
    assert any("ssh-miner" in line and "timed out after 20 s" in line for line in failures), err
    for range_id in ("redis-exposed", "ssh-miner"):
        kept = folder(two_runs, "demo", range_id) / "evaluation.failed.ipynb"
        assert kept.is_file() and not (kept.parent / "evaluation.html").exists()
    # The one worker's pool went on: every other record was made after the two faults.
    for run, range_id in (("demo", "weak-baseline"), ("demo-b", "redis-exposed")):
        scores = json.loads((folder(two_runs, run, range_id) / "scores.json").read_text())
        assert scores["meta"]["execution"] == {"kernel": "warm"}
    assert batch.left_running() == []
    assert connection_files(tmp_path / "tmp") == []


def test_ctrl_c_leaves_nothing_running_and_the_batch_resumable(two_runs: Path, tmp_path: Path):
    tmp = tmp_path / "tmp"
    env = environment(tmp)
    batch = start_batch(two_runs, "--workers", "2", env=env)
    records = lambda: list(two_runs.glob("runs/*/*/evaluations/rules/evaluation.html"))  # noqa: E731
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and batch.process.poll() is None:
        if records() and list(tmp.rglob("*.json")):  # a record made, another one running
            break
        time.sleep(0.02)
    assert batch.process.poll() is None, "the batch ended before it could be interrupted"
    assert any("evalkit.kernels.template" in command for command in batch.seen.values())

    os.killpg(batch.process.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
    code, out, err = batch.finish(timeout=DEADLINE_S)

    assert code == 130 and err.strip().splitlines()[-1] == "interrupted", err
    assert batch.left_running() == []
    assert connection_files(tmp) == []
    finished = len(records())
    assert finished < 6  # the records not started yet were not made
    assert not list(two_runs.glob("runs/*/*/evaluations/.rules.staging-*"))

    again = run_evalkit("batch", "--workers", "2", cwd=two_runs, env=env)
    assert again.returncode == 0, again.stderr
    skipped = int(again.stdout.split(" skipped")[0].rsplit(" ", 1)[1])
    assert skipped == finished >= 1 and "0 failed" in again.stdout


def test_a_deep_temporary_folder_still_makes_the_records(tmp_path: Path):
    # multiprocessing's forkserver listens on a Unix socket in TMPDIR, whose path has ~100
    # bytes at most: under a deep TMPDIR the batch failed at once ("AF_UNIX path too long").
    workspace = copy_samples(tmp_path / "ws", runs=("demo",))
    deep = tmp_path / ("t" * 60) / ("u" * 40)
    deep.parent.mkdir()
    result = run_evalkit(
        "batch", "--runs", "demo", "--ranges", "ssh-miner", "--quiet",
        cwd=workspace, env=environment(deep),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (folder(workspace, "demo", "ssh-miner") / "evaluation.html").is_file()
    assert connection_files(deep) == []
