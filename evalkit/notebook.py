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
HTML_NAME = "evaluation.html"
# Parameters holding a path: passed relative to the workspace when one is given, so the
# record names no absolute local path.
PATH_PARAMETERS = ("ranges_dir", "runs_dir", "out_dir", "prompt_dir", "cache_dir", "replay_from")


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

    @property
    def html(self) -> Path:
        return self.out_dir / HTML_NAME


def _relative_to(workspace: Path, value: Any) -> Any:
    """``value`` as a path relative to ``workspace`` when it lies inside it; else unchanged."""
    if not isinstance(value, str | Path) or not str(value):
        return value
    path = Path(value)
    if not path.is_absolute():
        return str(value)
    try:
        return path.resolve().relative_to(workspace).as_posix() or "."
    except ValueError:
        return str(value)


def execute(
    parameters: dict[str, Any],
    out_dir: Path,
    *,
    notebook: Path | None = None,
    progress: bool = True,
    kernel_name: str | None = None,
    cell_timeout: float | None = None,
    workspace: Path | None = None,
    html: bool = True,
    record_name: str = NOTEBOOK_NAME,
) -> NotebookRun:
    """Run the notebook with ``parameters`` in ``out_dir``; raise NotebookError on failure.

    With ``progress``, the notebook's stderr is streamed to ours as it runs, so the
    per-checkpoint progress bar the notebook draws is live in the terminal too.
    ``cell_timeout`` (seconds) fails a cell that runs longer, and the kept failed
    notebook says so. With ``workspace``, the kernel runs there and path parameters
    are given relative to it, so the record carries no absolute local path. With
    ``html``, the executed notebook is also exported beside it as ``evaluation.html``.
    ``record_name`` names the executed notebook (``calibration.ipynb`` for
    ``evalkit calibrate``); a failed one keeps the name with ``.failed``.
    """
    import papermill
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
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
    given = {**parameters, "out_dir": str(out_dir)}
    if workspace is not None:
        workspace = workspace.resolve()
        given = {
            key: _relative_to(workspace, value) if key in PATH_PARAMETERS else value
            for key, value in given.items()
        }
    warming = None
    if html:
        import threading

        from .render.html import warm_up

        # The HTML exporter loads while the kernel works and this process mostly waits.
        warming = threading.Thread(target=warm_up, name="evalkit-html", daemon=True)
        warming.start()
    try:
        with _kernel_chatter_silenced() as terminal:
            papermill.execute_notebook(
                str(notebook or template_path()),
                str(running),
                parameters=given,
                # Papermill's own per-cell bar would garble the streamed per-item bar.
                progress_bar=False,
                stderr_file=terminal if progress else None,
                stdout_file=_ProgressLines(terminal) if progress else None,
                kernel_name=kernel_name,
                cwd=str(workspace or out_dir),
                execution_timeout=cell_timeout,
            )
    except CellTimeoutError as exc:
        # Papermill leaves a timed-out cell looking like a finished one: flag it.
        cell = _flag_timeout(running, cell_timeout)
        _keep_failed(running, out_dir / failed)
        raise NotebookError(
            f"notebook cell {cell} timed out after {cell_timeout:g} s",
            path=out_dir / failed,
        ) from exc
    except DeadKernelError as exc:
        _keep_failed(running, out_dir / failed)
        raise NotebookError(
            f"the notebook's kernel died: {_first_line(str(exc))}",
            path=out_dir / failed,
        ) from exc
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
    _drop_local_paths(running, record_name)
    os.replace(running, final)
    result = NotebookRun(notebook=final, out_dir=out_dir)
    if warming is not None:
        from .render.html import export_html

        warming.join()
        export_html(final, final.with_suffix(".html"))
    return result


def _drop_local_paths(path: Path, record_name: str) -> None:
    """Papermill records where it read and wrote the notebook, as absolute local paths; the
    record names the notebook files only."""
    import nbformat

    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    meta = nb.metadata.get("papermill", {})
    for key, name in (("input_path", None), ("output_path", record_name)):
        if meta.get(key):
            meta[key] = name or Path(meta[key]).name
    nbformat.write(nb, path)  # type: ignore[no-untyped-call]


def _flag_timeout(path: Path, timeout: float | None) -> str:
    """Mark the cell that was running when the timeout hit as failed, as papermill marks an
    exception: an error output in the cell and papermill's banner at the top. Returns the
    cell's execution count (or index) for the message."""
    import nbformat
    from papermill.execute import ERROR_MARKER_TAG

    if not path.exists():
        return "?"
    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    started = [
        (index, cell)
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and cell.metadata.get("papermill", {}).get("start_time")
    ]
    if not started:
        return "?"
    index, cell = started[-1]
    label = str(cell.get("execution_count") or index)
    message = f"cell did not finish within {timeout:g} s and was stopped (cell timeout)"
    cell.outputs.append(
        nbformat.v4.new_output(  # type: ignore[no-untyped-call]
            "error", ename="CellTimeoutError", evalue=message, traceback=[]
        )
    )
    cell.metadata.setdefault("papermill", {}).update(exception=True, status="failed")
    nb.metadata.setdefault("papermill", {})["exception"] = True
    banner = nbformat.v4.new_markdown_cell(  # type: ignore[no-untyped-call]
        f"**Evaluation failed**: cell In [{label}] timed out after {timeout:g} s.",
        metadata={"tags": [ERROR_MARKER_TAG]},
    )
    nb.cells.insert(0, banner)
    nbformat.write(nb, path)  # type: ignore[no-untyped-call]
    return label


class _ProgressLines:
    """Passes on the notebook's progress bar, which it prints on stdout (so the record shows
    it as text, not as an error block), and nothing else of its stdout."""

    def __init__(self, terminal: TextIO) -> None:
        self.terminal = terminal

    def write(self, text: str) -> None:
        if text.lstrip("\r").startswith("judging "):
            self.terminal.write(text)

    def flush(self) -> None:
        self.terminal.flush()


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
