"""Execute the evaluation notebook with papermill, leaving it as the audit record.

The executed notebook, ``scores.json`` and ``evaluation-report.md`` land in
one output folder. The notebook runs under a temporary name and takes its
final name only on success, so a failed run never replaces a good record;
the failed notebook is kept as ``evaluation.failed.ipynb`` for inspection.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from .errors import NotebookError

NOTEBOOK_NAME = "evaluation.ipynb"
FAILED_NOTEBOOK_NAME = "evaluation.failed.ipynb"


def template_path(name: str = "evaluate.ipynb") -> Path:
    """A shipped notebook (default the evaluation one): ``notebooks/<name>`` of the checkout.

    The package carries the same file (``evalkit/notebooks`` links to it in the
    source tree, and a wheel holds a copy), so a non-editable install runs too.
    """
    repo_copy = Path(__file__).resolve().parent.parent / "notebooks" / name
    if repo_copy.is_file():
        return repo_copy
    packaged = Path(str(resources.files("evalkit") / "notebooks" / name))
    if packaged.is_file():
        return packaged
    raise NotebookError(f"notebook {name} not found", path=repo_copy)


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
    parameters: dict[str, Any],
    out_dir: Path,
    *,
    notebook: Path | None = None,
    progress: bool = True,
    kernel_name: str | None = None,
    record_name: str = NOTEBOOK_NAME,
) -> NotebookRun:
    """Run the notebook with ``parameters`` in ``out_dir``; raise NotebookError on failure.

    With ``progress``, the notebook's stderr is streamed to ours as it runs, so the
    per-checkpoint progress bar the notebook draws is live in the terminal too.
    ``record_name`` names the executed notebook (``calibration.ipynb`` for
    ``evalkit calibrate``); a failed one keeps the name with ``.failed``.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NotebookError(
            f"cannot create the output folder: {exc.strerror}", path=out_dir
        ) from exc
    stem = record_name.removesuffix(".ipynb")
    running = out_dir / f".{stem}.running.ipynb"
    final = out_dir / record_name
    failed = f"{stem}.failed.ipynb"
    try:
        with _kernel_chatter_silenced() as terminal:
            papermill.execute_notebook(
                str(notebook or template_path()),
                str(running),
                parameters={**parameters, "out_dir": str(out_dir)},
                # Papermill's own per-cell bar would garble the streamed per-item bar.
                progress_bar=False,
                stderr_file=terminal if progress else None,
                kernel_name=kernel_name,
                cwd=str(out_dir),
            )
    except PapermillExecutionError as exc:
        _keep_failed(running, out_dir / failed)
        # evalue already names file:line for evalkit's own errors.
        raise NotebookError(
            f"notebook cell {exc.exec_count} failed: {exc.ename}: {_first_line(exc.evalue)}",
            path=out_dir / failed,
        ) from exc
    except Exception as exc:
        _keep_failed(running, out_dir / failed)
        raise NotebookError(f"could not execute the notebook: {_first_line(str(exc))}") from exc
    os.replace(running, final)
    return NotebookRun(notebook=final, out_dir=out_dir)


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


def _keep_failed(running: Path, failed: Path) -> None:
    if running.exists():
        os.replace(running, failed)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0] if lines else "(no message)"
