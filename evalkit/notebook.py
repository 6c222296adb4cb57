"""Execute the evaluation notebook with papermill, leaving it as the audit record.

The executed notebook, ``scores.json`` and ``evaluation-report.md`` land in
one output folder, published together: the notebook runs in a staging folder
that is swapped in only on success, so a failed run never replaces a good
record; the failed notebook is kept as ``evaluation.failed.ipynb``. Nor does a
run less complete than the record it would replace (more items errored): it is
kept aside, hidden beside the record, unless forced. Publishing carries over
every file of the old folder the run did not write, as it is (a link stays a
link, a FIFO a FIFO): evalkit deletes only what it wrote.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .errors import EvalkitError, NotebookError, OutputError
from .fileio import evaluation_lock, make_folder, write_bytes_atomic, write_text_atomic
from .kernels.pool import FRESH
from .runplan import PARENT_PID_ENV, WORKSPACE_ENV, RunPlan
from .workspace import read_json

if TYPE_CHECKING:
    from .kernels.pool import KernelPool

NOTEBOOK_NAME = "evaluation.ipynb"
FAILED_NOTEBOOK_NAME = "evaluation.failed.ipynb"
HTML_NAME = "evaluation.html"
# Parameters holding a path: passed relative to the workspace when one is given, so the
# record names no absolute local path.
# The notebooks' own path parameters; a judge's path settings (cache, prompts, verdicts) come
# from the registry (JudgeConfig's path_setting_names), so a new one needs no edit here.
NOTEBOOK_PATH_PARAMETERS = ("ranges_dir", "runs_dir", "out_dir", "replay_from", "evaluations")


def path_parameters() -> frozenset[str]:
    """Every parameter that holds a path: the notebooks' own and every judge's."""
    from .judges.config import path_setting_names

    return frozenset((*NOTEBOOK_PATH_PARAMETERS, *path_setting_names()))


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
        """The record as a page without code cells, beside the notebook."""
        return self.notebook.with_suffix(".html")


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
    plan: RunPlan,
    *,
    progress: bool = True,
    kernel_name: str | None = None,
    cell_timeout: float | None = None,
    workspace: Path | None = None,
    html: bool = True,
    force: bool = False,
    kernels: KernelPool | None = None,
) -> NotebookRun:
    """Run the evaluation notebook for ``plan``; its outputs appear in ``plan.out_dir`` at once.

    See :func:`execute_notebook`, which this calls with the plan's parameters. A
    record with more errored items than the one in ``plan.out_dir`` is kept aside
    instead of replacing it, unless ``force``.
    """
    return execute_notebook(
        plan.notebook or template_path(),
        plan.to_parameters(),
        plan.out_dir,
        root=plan.output_root,
        progress=progress,
        kernel_name=kernel_name,
        cell_timeout=cell_timeout,
        workspace=workspace,
        html=html,
        keep_complete=not force,
        kernels=kernels,
    )


SCORES_NAME = "scores.json"


def errored_items(folder: Path, root: Path) -> int | None:
    """How many items errored in the record ``folder`` holds (its ``scores.json``, read
    without following a link out of ``root``); None when there is no readable record."""
    try:
        data = read_json(folder / SCORES_NAME, root, what=SCORES_NAME)
        errored = data["summary"]["errored"]
    except (EvalkitError, KeyError, TypeError):
        return None
    return len(errored) if isinstance(errored, list) else None


def less_complete(new: int | None, old: int | None) -> str | None:
    """Why a record with ``new`` errored items must not replace one with ``old``; None when
    it may (either is unknown, or it is at least as complete)."""
    if new is None or old is None or new <= old:
        return None
    return (
        f"not replacing a more complete record ({old} item(s) errored) with one where {new} errored"
    )


def aside_folder(out_dir: Path, root: Path) -> Path:
    """Where a less complete record is kept: hidden beside the record (or inside a folder
    the user named), stamped with the time, so no index or comparison picks it up."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    if os.path.abspath(out_dir) == os.path.abspath(root):
        return out_dir / f".evalkit.incomplete-{stamp}"
    return out_dir.parent / f".{out_dir.name}.incomplete-{stamp}"


def execute_notebook(
    template: Path,
    parameters: dict[str, Any],
    out_dir: Path,
    *,
    root: Path | None = None,
    record_name: str = NOTEBOOK_NAME,
    progress: bool = True,
    kernel_name: str | None = None,
    cell_timeout: float | None = None,
    workspace: Path | None = None,
    html: bool = True,
    keep_complete: bool = False,
    kernels: KernelPool | None = None,
) -> NotebookRun:
    """Run ``template`` with ``parameters``; its outputs appear in ``out_dir`` all at once.

    One run at a time holds the output folder's lock. The notebook executes into a
    fresh staging folder beside the output folder (its ``out_dir`` parameter points
    there); only when it succeeds is the staging folder swapped in, so the notebook,
    the files it writes and its HTML page are published together, and a failed run
    leaves every earlier file as it was (its notebook is kept as
    ``<record>.failed.ipynb`` in the output folder). No folder below ``root``
    (default: the output folder's parent) may be a symlink. An output folder that is
    its own ``root`` (a folder the user named) keeps the lock and the staging folder
    inside it, and its outputs are moved in one by one. With ``keep_complete``, a
    ``scores.json`` with more errored items than the one it would replace is not
    published: it is kept aside (:func:`aside_folder`) and an OutputError says where.
    The kernel learns this process's pid and stops when it dies.

    ``cell_timeout`` (seconds) fails a cell that runs longer, and the kept failed
    notebook says so (papermill does not). With ``workspace``, the kernel runs there
    and path parameters are given relative to it, so the record names no absolute
    local path. With ``html``, the executed notebook is also exported beside it
    (``evaluation.html``) without code cells. With ``progress``, the notebook's
    progress bar is streamed to our terminal as it runs.

    ``kernels`` (a :class:`~evalkit.kernels.KernelPool`) runs the notebook in a kernel
    forked for this record from the pool's warm template instead of a new kernel process;
    ``scores.json`` records which in ``meta.execution``.
    """
    import papermill
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    root = root or out_dir.parent
    # A folder the user named keeps its lock, staging and retired files inside; an
    # evaluation folder keeps them beside it (it is swapped in whole).
    inside = os.path.abspath(out_dir) == os.path.abspath(root)
    home, prefix = (out_dir, ".evalkit") if inside else (out_dir.parent, f".{out_dir.name}")
    stem = record_name.removesuffix(".ipynb")
    failed = f"{stem}.failed.ipynb"
    warming = None
    if html:
        import threading

        from .render.html import warm_up

        # The HTML exporter loads while the kernel works and this process mostly waits.
        warming = threading.Thread(target=warm_up, name="evalkit-html", daemon=True)
        warming.start()
    with evaluation_lock(out_dir, root=root):
        # Holding the lock, anything staged or retired by a run that was killed is stale.
        for stale in home.glob(f"{prefix}.staging-*"):
            shutil.rmtree(stale, ignore_errors=True)
        for stale in home.glob(f"{prefix}.old-*"):
            shutil.rmtree(stale, ignore_errors=True)
        staging = home / f"{prefix}.staging-{secrets.token_hex(4)}"
        make_folder(staging, root=root)
        running = staging / record_name
        given = {**parameters, "out_dir": str(staging)}
        if workspace is not None:
            workspace = workspace.resolve()
            paths = path_parameters()
            given = {
                key: _relative_to(workspace, value) if key in paths else value
                for key, value in given.items()
            }
        try:
            try:
                with _kernel_chatter_silenced() as terminal, _kernel_environment(workspace):
                    lines = _ProgressLines(terminal)
                    papermill.execute_notebook(
                        str(template),
                        str(running),
                        parameters=given,
                        # Papermill's own per-cell bar would garble the streamed per-item bar.
                        progress_bar=False,
                        stderr_file=terminal if progress else None,
                        stdout_file=lines if progress else None,
                        kernel_name=kernel_name,
                        cwd=str(workspace or staging),
                        execution_timeout=cell_timeout,
                        **_kernel_arguments(kernels),
                    )
                    lines.end_line()
            except CellTimeoutError as exc:
                # Papermill leaves a timed-out cell looking like a finished one: flag it.
                cell = _flag_timeout(running, cell_timeout)
                _keep_failed(running, out_dir / failed, root)
                raise NotebookError(
                    f"notebook cell {cell} timed out after {cell_timeout:g} s",
                    path=out_dir / failed,
                ) from exc
            except DeadKernelError as exc:
                _keep_failed(running, out_dir / failed, root)
                raise NotebookError(
                    f"the notebook's kernel died: {_first_line(str(exc))}",
                    path=out_dir / failed,
                ) from exc
            except PapermillExecutionError as exc:
                _keep_failed(running, out_dir / failed, root)
                # evalue already names file:line for evalkit's own errors.
                raise NotebookError(
                    f"notebook cell {exc.exec_count} failed: {exc.ename}: "
                    f"{_first_line(exc.evalue)}",
                    path=out_dir / failed,
                ) from exc
            except Exception as exc:
                _keep_failed(running, out_dir / failed, root)
                raise NotebookError(
                    f"could not execute the notebook: {_first_line(str(exc))}"
                ) from exc
            _clean_record(running, record_name)
            _record_execution(staging, kernels)
            if warming is not None:
                from .render.html import export_html

                warming.join()
                export_html(running, running.with_suffix(".html"))
            reason = keep_complete and less_complete(
                errored_items(staging, staging), errored_items(out_dir, root)
            )
            if reason:
                kept = aside_folder(out_dir, root)
                os.replace(staging, kept)
                raise OutputError(
                    f"{reason}: the new one is kept in {kept} (--force replaces)", path=out_dir
                )
            if inside:
                _publish_into(staging, out_dir, failed, prefix)
            else:
                _publish(staging, out_dir, failed)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return NotebookRun(notebook=out_dir / record_name, out_dir=out_dir)


def _kernel_arguments(kernels: KernelPool | None) -> dict[str, Any]:
    """What papermill hands nbclient for a pool's kernel: the pool's kernel manager, no
    graceful shutdown (the forked kernel is killed; nothing of it outlives the record), and
    the engine that writes the notebook when execution starts and ends only."""
    if kernels is None:
        return {}
    from .kernels.engine import ENGINE_NAME
    from .kernels.provisioner import manager_for

    return {
        "engine_name": ENGINE_NAME,
        "kernel_manager_class": manager_for(kernels),
        "shutdown_kernel": "immediate",
    }


def _record_execution(folder: Path, kernels: KernelPool | None) -> None:
    """``meta.execution`` in the ``scores.json`` the notebook wrote: how its kernel started."""
    from .render import SCORES_FILENAME, dumps_scores, validate_scores

    scores = folder / SCORES_FILENAME
    if not scores.is_file():
        return  # a custom notebook that writes none
    data = json.loads(scores.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict):
        return  # nor is this evalkit's
    data["meta"]["execution"] = {"kernel": kernels.kind if kernels is not None else FRESH}
    validate_scores(data, path=scores)
    write_text_atomic(scores, dumps_scores(data))


def _publish(staging: Path, out_dir: Path, failed: str) -> None:
    """Swap the staging folder in as ``out_dir``; the old folder goes away only after.

    Every entry of the old folder that this run did not write (a user's notes, a
    link, a FIFO) is carried over as it is, by renaming, so publishing replaces
    only what the run produced and deletes nothing else; the failed notebook of an
    earlier run is dropped, since this run succeeded.
    """
    if out_dir.is_symlink() or (out_dir.exists() and not out_dir.is_dir()):
        raise OutputError("refusing to replace a symlink or file", path=out_dir)
    if not out_dir.is_dir():
        os.replace(staging, out_dir)
        return
    retired = out_dir.parent / f".{out_dir.name}.old-{secrets.token_hex(4)}"
    os.replace(out_dir, retired)
    carried: list[str] = []
    try:
        for name in sorted(os.listdir(retired)):
            if name == failed or os.path.lexists(staging / name):
                continue
            os.replace(retired / name, staging / name)
            carried.append(name)
        os.replace(staging, out_dir)
    except OSError:
        for name in carried:  # put the old record back, whole
            os.replace(staging / name, retired / name)
        os.replace(retired, out_dir)
        raise
    shutil.rmtree(retired, ignore_errors=True)


def _publish_into(staging: Path, out_dir: Path, failed: str, prefix: str) -> None:
    """Move each staged output into ``out_dir`` (a folder the user named, never swapped);
    the outputs it replaces, and an earlier failed notebook, go away only after, and
    nothing else of the folder is touched."""
    retired = out_dir / f"{prefix}.old-{secrets.token_hex(4)}"
    make_folder(retired, root=out_dir)
    replaced: list[str] = []
    try:
        for name in [*sorted(os.listdir(staging)), failed]:
            if os.path.lexists(out_dir / name):
                os.replace(out_dir / name, retired / name)
                replaced.append(name)
            if name != failed:
                os.replace(staging / name, out_dir / name)
    except OSError:
        for name in replaced:  # put back what is not replaced yet
            if not os.path.lexists(out_dir / name):
                os.replace(retired / name, out_dir / name)
        raise
    shutil.rmtree(retired, ignore_errors=True)


@contextmanager
def _kernel_environment(workspace: Path | None) -> Iterator[None]:
    """What the kernel (which inherits our environment) must know: this process's pid, to
    stop when it dies, and the workspace its relative path parameters are relative to."""
    given = {PARENT_PID_ENV: str(os.getpid())}
    if workspace is not None:
        given[WORKSPACE_ENV] = str(workspace)
    previous = {name: os.environ.get(name) for name in given}
    os.environ.update(given)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


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


def _keep_failed(running: Path, failed: Path, root: Path) -> None:
    """Keep the failed notebook for inspection; no earlier output is touched."""
    if running.is_file() and not running.is_symlink():
        write_bytes_atomic(failed, running.read_bytes(), root=root)


def _first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return lines[0] if lines else "(no message)"


def _clean_record(path: Path, record_name: str) -> None:
    """The executed notebook as a record: papermill wrote where it read and wrote the
    notebook as absolute local paths (the record names the notebook files only), and the
    progress bars' lines are dropped (a stream output left empty goes too). Written by the
    guarded writer: the notebook shows what the judge said, and a key echoed there is
    redacted too."""
    import nbformat

    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    meta = nb.metadata.get("papermill", {})
    for key, name in (("input_path", None), ("output_path", record_name)):
        if meta.get(key):
            meta[key] = name or Path(meta[key]).name
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.outputs:
            if output.get("output_type") == "stream":
                output["text"] = without_progress_bars(output.get("text", ""))
                if not output["text"].strip():
                    continue  # nothing left but the bar's own line break
            outputs.append(output)
        cell.outputs = outputs
    text = nbformat.writes(nb)  # type: ignore[no-untyped-call]
    write_text_atomic(path, text if text.endswith("\n") else text + "\n")  # as nbformat.write


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


def is_progress_line(text: str) -> bool:
    """Whether ``text`` (one line, or its carriage-return updates) is a judging progress bar."""
    from .pipeline import PROGRESS_PREFIX

    return any(part.startswith(PROGRESS_PREFIX) for part in text.split("\r") if part)


def without_progress_bars(text: str) -> str:
    """``text`` without the lines of a judging progress bar: streamed to the terminal as a
    record runs, they are no part of the record (a bar's updates are one line, each
    starting with a carriage return)."""
    # Split at line feeds only: a carriage return stays inside its line (splitlines would
    # cut there).
    lines = text.split("\n")
    ends = ["\n"] * (len(lines) - 1) + [""]
    kept = (line + end for line, end in zip(lines, ends, strict=True))
    return "".join(line for line in kept if not is_progress_line(line))


class _ProgressLines:
    """Passes on the notebook's progress bar, which it prints on stdout (so the record shows
    it as text, not as an error block), and nothing else of its stdout."""

    def __init__(self, terminal: TextIO) -> None:
        self.terminal = terminal
        self.mid_line = False  # a bar was written and its line not ended yet

    def write(self, text: str) -> None:
        if is_progress_line(text):
            self.terminal.write(text)
            self.mid_line = not text.endswith("\n")
        elif self.mid_line and text.startswith("\n"):
            self.end_line()  # the bar's own line break, written apart from it

    def end_line(self) -> None:
        """End the bar's line, so what the command prints next starts on its own."""
        if self.mid_line:
            self.terminal.write("\n")
            self.terminal.flush()
            self.mid_line = False

    def flush(self) -> None:
        self.terminal.flush()
