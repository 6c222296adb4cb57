"""One evaluation of a batch: :func:`run_task` never raises, so one failure cannot stop
the batch. With a notebook it runs :func:`evalkit.notebook.execute` (the path ``evalkit
run`` takes), in a kernel forked from its worker's warm template (:mod:`evalkit.kernels`)
unless the batch asked for fresh kernels; without one, the same evaluation runs in this
process through the Python API (:func:`evaluate_in_process`).
"""

from __future__ import annotations

import time

from ..errors import EvalkitError, OutputError
from ..prepare import build_judge, load_inputs
from .plan import Outcome, Task

__all__ = ["evaluate_in_process", "run_task"]


def run_task(task: Task) -> Outcome:
    """Evaluate one (run, range); never raises, so one failure cannot stop the batch."""
    started = time.perf_counter()
    try:
        if task.settings.with_notebook:
            _execute_notebook(task)
        else:
            evaluate_in_process(task)
    except EvalkitError as exc:
        return Outcome(task.run, task.range, "failed", str(exc), time.perf_counter() - started)
    except Exception as exc:  # a bug or an environment failure: still only this task's
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0]
        return Outcome(task.run, task.range, "failed", reason, time.perf_counter() - started)
    return Outcome(task.run, task.range, "done", "", time.perf_counter() - started)


def _execute_notebook(task: Task) -> None:
    from ..kernels import worker_pool
    from ..notebook import execute

    settings = task.settings
    execute(
        settings.plan(task.run, task.range, task.out_dir),
        progress=False,
        cell_timeout=settings.cell_timeout,
        workspace=settings.workspace,
        force=settings.force,
        # This worker's warm kernels, on a local worker and on a Dask worker alike.
        kernels=None if settings.fresh_kernels else worker_pool(),
    )


def evaluate_in_process(task: Task) -> None:
    """The fast path: judge, ground, score and write scores.json + report, no notebook.

    Under the folder's lock, created without following a link below the runs folder;
    an evaluation less complete than the record there is written aside, not over it.
    """
    from ..fileio import evaluation_lock, make_folder
    from ..notebook import aside_folder, errored_items, less_complete
    from ..pipeline import evaluate
    from ..render import write_outputs

    settings = task.settings
    # Read and judged as `evalkit run` reads and judges (the same confinement).
    plan = settings.plan(task.run, task.range, task.out_dir)
    rng, submission = load_inputs(plan)
    evaluation = evaluate(rng, submission, build_judge(plan))
    runs_dir = settings.runs_dir
    with evaluation_lock(task.out_dir, root=runs_dir):
        old = errored_items(task.out_dir, runs_dir)
        reason = not settings.force and less_complete(len(evaluation.summary.errored), old)
        folder = aside_folder(task.out_dir, runs_dir) if reason else task.out_dir
        write_outputs(evaluation, make_folder(folder, root=runs_dir))
    if reason:
        raise OutputError(f"{reason}: the new one is kept in {folder} (--force replaces)")
