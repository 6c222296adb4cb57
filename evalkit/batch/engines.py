"""Where a batch's tasks run: local worker processes (:func:`run_local`) or an existing
Dask cluster (:func:`run_dask`). Each task is one process's, so the batch survives whatever
one evaluation does; a worker that dies is that task's failure.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, as_completed

from ..errors import EvalkitError
from .plan import Outcome, Task
from .tasks import run_task

__all__ = ["OnOutcome", "run_dask", "run_local"]

OnOutcome = Callable[[Outcome], None]


def run_local(tasks: Sequence[Task], workers: int, on_outcome: OnOutcome) -> list[Outcome]:
    """Run ``tasks`` on ``workers`` processes (in this process for the no-notebook path).

    A ``KeyboardInterrupt`` (SIGINT, or SIGTERM as :class:`evalkit.signals.Terminated`)
    stops the batch within the evaluations in flight: no queued task starts, every
    worker stops its evaluation (its kernel shut down) and ends, then it is re-raised.
    """
    if not tasks:
        return []
    if not tasks[0].settings.with_notebook:
        outcomes = []
        for task in tasks:
            outcome = run_task(task)
            on_outcome(outcome)
            outcomes.append(outcome)
        return outcomes
    from ..kernels.workers import local_workers, run

    outcomes = []
    # Each worker is a process of its own (and each notebook a kernel of its own), so the
    # batch survives whatever one evaluation does. Workers ignore Ctrl-C: on an interrupt,
    # this process cancels what has not started and stops them (evalkit.kernels.workers).
    fresh = tasks[0].settings.fresh_kernels
    with local_workers(max(1, workers), fresh_kernels=fresh) as (pool, interrupt):
        futures: dict[Future[Outcome], Task] = {
            pool.submit(run, run_task, task): task for task in tasks
        }
        try:
            for future in as_completed(futures):
                outcome = _result(future, futures[future])
                on_outcome(outcome)
                outcomes.append(outcome)
        except KeyboardInterrupt:
            interrupt()
            raise
    return outcomes


def _result(future: Future[Outcome], task: Task) -> Outcome:
    try:
        return future.result()
    except Exception as exc:  # the worker process itself died
        reason = f"worker process died: {type(exc).__name__}: {exc}".splitlines()[0]
        return Outcome(task.run, task.range, "failed", reason)


def run_dask(tasks: Sequence[Task], scheduler: str, on_outcome: OnOutcome) -> list[Outcome]:
    """Run each task on an existing Dask cluster; workers must share this file system."""
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError as exc:
        raise EvalkitError(
            "--scheduler needs dask.distributed: pip install 'evalkit[dask]'"
        ) from exc
    if not tasks:
        return []
    outcomes = []
    try:
        client = Client(scheduler, timeout=30)  # type: ignore[no-untyped-call]
    except OSError as exc:
        raise EvalkitError(f"cannot reach the Dask scheduler {scheduler}: {exc}") from exc
    with client:
        futures = client.map(run_task, list(tasks), pure=False, key=[_dask_key(t) for t in tasks])
        by_key = {future.key: task for future, task in zip(futures, tasks, strict=True)}
        for future in dask_completed(futures):  # type: ignore[no-untyped-call]
            task = by_key[future.key]
            try:
                outcome = future.result()
            except Exception as exc:  # the Dask worker died or the task was lost
                reason = f"Dask task failed: {type(exc).__name__}: {exc}".splitlines()[0]
                outcome = Outcome(task.run, task.range, "failed", reason)
            on_outcome(outcome)
            outcomes.append(outcome)
    return outcomes


def _dask_key(task: Task) -> str:
    return f"evalkit-{task.run}-{task.range}-{os.getpid()}-{time.monotonic_ns()}"
