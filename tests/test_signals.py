"""SIGINT and SIGTERM, sent to real `evalkit run` and `evalkit batch` processes.

The evaluation notebook is given a cell that marks that it started (one file per run
and range) and then sleeps, so a signal always lands on an evaluation in flight. Every
process the command starts (workers, kernels) inherits a marker in its environment, so
the test can tell, from /proc, that none is left; kernel connection files (ports and
HMAC key) go to a private TMPDIR and JUPYTER_RUNTIME_DIR, so the test can tell that none
is left either.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

from tests.samples import REPO, clean_env, copy_samples, evalkit_command, sigint_as_in_a_terminal

pytestmark = pytest.mark.e2e

PATIENCE_S = 600  # how long to wait for a notebook to start, or a process to end


def _slow_notebook(workspace: Path, started: Path) -> Path:
    notebook = nbformat.read(REPO / "notebooks/evaluate.ipynb", as_version=4)
    cell = (
        "import time\n"
        "from pathlib import Path\n"
        f"Path({str(started)!r}, f'{{run_id}}-{{range_id}}').write_text('started')\n"
        "time.sleep(60)"
    )
    notebook.cells.insert(3, nbformat.v4.new_code_cell(cell))
    path = workspace / "slow.ipynb"
    nbformat.write(notebook, path)
    return path


def _processes_with(mark: str) -> list[str]:
    """The processes whose environment holds ``mark``: what the command started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or entry.name == str(os.getpid()):
            continue
        try:
            if mark.encode() in (entry / "environ").read_bytes():
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:120])
        except OSError:
            continue
    return found


def _wait_until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(PATIENCE_S * 10):
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting until {what}")


def _interrupt(tmp_path: Path, signum: int, *args: str) -> tuple[Path, int, str, Path]:
    """Start ``evalkit ARGS --notebook slow.ipynb`` in a fresh workspace, send ``signum``
    once the first evaluation is in flight, and wait for the command to end. Returns the
    workspace, the exit code, stderr and the folder of started marks."""
    workspace = copy_samples(tmp_path / "ws", runs=("demo",))
    started = tmp_path / "started"
    started.mkdir()
    private = {name: tmp_path / name for name in ("tmp", "runtime")}
    for folder in private.values():
        folder.mkdir()
    mark = uuid.uuid4().hex
    env = clean_env(
        TMPDIR=str(private["tmp"]),
        JUPYTER_RUNTIME_DIR=str(private["runtime"]),
        EVALKIT_TEST_MARK=mark,
    )
    process = subprocess.Popen(
        [*evalkit_command(), *args, "--notebook", str(_slow_notebook(workspace, started))],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=sigint_as_in_a_terminal,
    )
    try:
        _wait_until(lambda: any(started.iterdir()) or process.poll() is not None, "a start")
        assert process.poll() is None, process.communicate()
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=PATIENCE_S)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    _wait_until(lambda: not _processes_with(mark), "every worker and kernel ended")
    connection_files = [
        path.name
        for folder in private.values()
        for path in folder.rglob("*.json")
        if path.is_file()
    ]
    assert connection_files == [], "kernel connection files left behind"
    assert "Traceback" not in stderr, stderr
    return workspace, process.returncode, stderr, started


EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_batch_within_the_evaluation_in_flight(tmp_path: Path, signum: int):
    workspace, code, stderr, started = _interrupt(
        tmp_path, signum, "batch", "--runs", "demo", "--workers", "1", "--quiet"
    )
    assert code == EXIT[signum], stderr
    # Three evaluations were planned; the one in flight stopped and no queued one started.
    assert len(list(started.iterdir())) == 1
    assert (workspace / "runs/index.json").is_file(), "the index of what is done is written"
    assert not list((workspace / "runs").glob("*/*/evaluations/.*.staging-*"))


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_run_and_leaves_no_kernel(tmp_path: Path, signum: int):
    workspace, code, stderr, started = _interrupt(
        tmp_path, signum, "run", "--run", "demo", "--all-ranges", "--quiet"
    )
    assert code == EXIT[signum], stderr
    assert len(list(started.iterdir())) == 1
    assert not list((workspace / "runs").glob("*/*/evaluations/.*.staging-*"))
