"""The life of a local batch worker process around its records: start, interruption, stop.

:func:`start_worker` is each worker's initializer. With warm kernels it starts the worker's
template at once, so it imports while the worker does; either way it builds the HTML
exporter before the first record (nbconvert imported once per worker, and never in a thread
racing the record's own imports). It tells the batch process its pid.

A terminal's Ctrl-C does not reach a worker: the batch process decides. It cancels the
records not started and calls :func:`stop_workers`: each worker gets SIGTERM, which ends
its running record as Ctrl-C would end ``evalkit run`` (jupyter's clean-up runs: the kernel
is stopped, its connection file removed; the staging folder goes), refuses any record
already handed to it (:func:`run`), and leaves; its pool (template and kernels) is closed on
the way out (:mod:`.pool`).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from multiprocessing.queues import SimpleQueue
from types import FrameType
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")
_stopping = False


def start_worker(fresh_kernels: bool, pids: SimpleQueue[int] | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)
    if pids is not None:
        pids.put(os.getpid())
    if not fresh_kernels:
        from .pool import worker_pool

        worker_pool()
    from ..render.html import warm_up

    warm_up()


def _stop(signum: int, frame: FrameType | None) -> None:
    global _stopping
    _stopping = True
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the clean-up is not interrupted
    raise SystemExit(128 + signum)


def run(task: Callable[[T], R], argument: T) -> R:
    """``task(argument)`` in this worker, unless the batch was interrupted."""
    if _stopping:
        raise SystemExit(128 + signal.SIGTERM)
    return task(argument)


def stop_workers(pids: SimpleQueue[int]) -> None:
    """Interrupt every worker that told ``pids`` its pid (the batch was interrupted)."""
    while not pids.empty():
        try:
            os.kill(pids.get(), signal.SIGTERM)
        except ProcessLookupError:
            continue
