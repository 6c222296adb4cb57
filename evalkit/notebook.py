"""Execute the evaluation notebook with papermill, leaving it as the audit record.

The executed notebook, ``scores.json`` and ``evaluation-report.md`` land in
one output folder, published together: the notebook runs in a staging folder
that is swapped in only on success, so a failed run never replaces a good
record; the failed notebook is kept as ``evaluation.failed.ipynb``.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TextIO

from .errors import NotebookError, OutputError
from .fileio import evaluation_lock, make_folder, write_bytes_atomic
from .runplan import PARENT_PID_ENV, RunPlan

NOTEBOOK_NAME = "evaluation.ipynb"
FAILED_NOTEBOOK_NAME = "evaluation.failed.ipynb"


def template_path() -> Path:
    """The evaluation notebook: ``notebooks/evaluate.ipynb`` of the checkout.

    The package carries the same file (``evalkit/notebooks`` links to it in the
    source tree, and a wheel holds a copy), so a non-editable install runs too.
    """
    repo_copy = Path(__file__).resolve().parent.parent / "notebooks" / "evaluate.ipynb"
    if repo_copy.is_file():
        return repo_copy
    packaged = Path(str(resources.files("evalkit") / "notebooks" / "evaluate.ipynb"))
    if packaged.is_file():
        return packaged
    raise NotebookError("evaluation notebook not found", path=repo_copy)


@dataclass(frozen=True)
class NotebookRun:
    notebook: Path
    out_dir: Path

    @property
    def scores(self) -> Path:
        return self.out_dir / "scores.json"

    @property
    def report(self) -> Path:
        return self.out_dir / "evaluation-report.md"


def execute(
    plan: RunPlan,
    *,
    progress: bool = True,
    kernel_name: str | None = None,
) -> NotebookRun:
    """Run the notebook for ``plan``; its outputs appear in ``plan.out_dir`` all at once.

    One run at a time holds the evaluation folder's lock. The notebook executes
    into a fresh staging folder beside the evaluation folder; only when it
    succeeds is the staging folder swapped in, so the notebook, ``scores.json``
    and the report of one run are published together, and a failed run leaves
    every earlier file as it was (its notebook is kept as
    ``evaluation.failed.ipynb`` in the evaluation folder). The kernel learns this
    process's pid and stops when it dies. With ``progress``, the notebook's stderr
    is streamed to ours as it runs, so the per-checkpoint progress bar is live.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    out_dir = plan.out_dir
    root = plan.output_root
    with evaluation_lock(out_dir, root=root):
        # Holding the lock, anything staged or retired by a run that was killed is stale.
        for stale in out_dir.parent.glob(f".{out_dir.name}.staging-*"):
            shutil.rmtree(stale, ignore_errors=True)
        for stale in out_dir.parent.glob(f".{out_dir.name}.old-*"):
            shutil.rmtree(stale, ignore_errors=True)
        staging = out_dir.parent / f".{out_dir.name}.staging-{secrets.token_hex(4)}"
        make_folder(staging, root=root)
        running = staging / NOTEBOOK_NAME
        try:
            try:
                with _kernel_chatter_silenced() as terminal, _parent_pid_for_kernel():
                    papermill.execute_notebook(
                        str(plan.notebook or template_path()),
                        str(running),
                        parameters=plan.with_out_dir(staging).to_parameters(),
                        # Papermill's own per-cell bar would garble the streamed per-item bar.
                        progress_bar=False,
                        stderr_file=terminal if progress else None,
                        kernel_name=kernel_name,
                        cwd=str(staging),
                    )
            except PapermillExecutionError as exc:
                _keep_failed(running, out_dir, root)
                # evalue already names file:line for evalkit's own errors.
                raise NotebookError(
                    f"notebook cell {exc.exec_count} failed: {exc.ename}: "
                    f"{_first_line(exc.evalue)}",
                    path=out_dir / FAILED_NOTEBOOK_NAME,
                ) from exc
            except Exception as exc:
                _keep_failed(running, out_dir, root)
                raise NotebookError(
                    f"could not execute the notebook: {_first_line(str(exc))}"
                ) from exc
            # The notebook shows what the judge said; a key echoed there is redacted too.
            write_bytes_atomic(running, running.read_bytes())
            _publish(staging, out_dir)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return NotebookRun(notebook=out_dir / NOTEBOOK_NAME, out_dir=out_dir)


def _publish(staging: Path, out_dir: Path) -> None:
    """Swap the staging folder in as ``out_dir``; the old folder goes away only after.

    Files of the old folder that this run did not write (a user's notes) are
    carried over, so publishing replaces only what the run produced; the failed
    notebook of an earlier run is dropped, since this run succeeded.
    """
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise OutputError("refusing to replace a symlink or file", path=out_dir)
    if out_dir.is_dir():
        for entry in out_dir.iterdir():
            if entry.name == FAILED_NOTEBOOK_NAME or (staging / entry.name).exists():
                continue
            if entry.is_file() and not entry.is_symlink():
                os.link(entry, staging / entry.name)
            elif entry.is_dir() and not entry.is_symlink():
                shutil.copytree(entry, staging / entry.name, symlinks=True)
        retired = out_dir.parent / f".{out_dir.name}.old-{secrets.token_hex(4)}"
        os.replace(out_dir, retired)
        try:
            os.replace(staging, out_dir)
        except OSError:
            os.replace(retired, out_dir)  # put the old record back
            raise
        shutil.rmtree(retired, ignore_errors=True)
    else:
        os.replace(staging, out_dir)


@contextmanager
def _parent_pid_for_kernel() -> Iterator[None]:
    """Give the kernel (which inherits our environment) this process's pid to watch."""
    previous = os.environ.get(PARENT_PID_ENV)
    os.environ[PARENT_PID_ENV] = str(os.getpid())
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(PARENT_PID_ENV, None)
        else:
            os.environ[PARENT_PID_ENV] = previous


@contextmanager
def _kernel_chatter_silenced() -> Iterator[TextIO]:
    """Send what the kernel process itself logs (start-up warnings) away from the terminal.

    The kernel inherits this process's stderr; its log lines ("Kernel is running
    over TCP without encryption") would break the one-line error contract. The
    notebook's own stderr (progress bars, warnings) still reaches the terminal
    through the returned stream. Where stderr is not a real file descriptor
    (some embedding hosts), nothing is redirected.
    """
    try:
        stderr_fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        yield sys.stderr
        return
    sys.stderr.flush()
    saved = os.dup(stderr_fd)
    terminal = os.fdopen(os.dup(saved), "w", buffering=1)
    try:
        with open(os.devnull, "w") as sink:
            os.dup2(sink.fileno(), stderr_fd)
            try:
                yield terminal
            finally:
                sys.stderr.flush()
                os.dup2(saved, stderr_fd)
    finally:
        os.close(saved)
        terminal.close()


def _keep_failed(running: Path, out_dir: Path, root: Path) -> None:
    """Keep the failed notebook for inspection; no earlier output is touched."""
    if running.is_file() and not running.is_symlink():
        write_bytes_atomic(out_dir / FAILED_NOTEBOOK_NAME, running.read_bytes(), root=root)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0] if lines else "(no message)"
