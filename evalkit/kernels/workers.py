"""A local batch's worker processes around their records: start, interruption, stop.

:func:`local_workers` starts them (and, with warm kernels, the template they share);
:func:`start_worker` is each worker's initializer: it reaches the template (which imports
meanwhile) and builds the HTML exporter before the first record (nbconvert imported once
per worker, and never in a thread racing the record's own imports). It tells the batch
process its pid.

A terminal's Ctrl-C does not reach a worker: the batch process decides. It cancels the
records not started and calls :func:`stop_workers`: each worker gets SIGTERM, which ends
its running record as Ctrl-C would end ``evalkit run`` (jupyter's clean-up runs: the kernel
is stopped, its connection file removed; the staging folder goes), refuses any record
already handed to it (:func:`run`), and leaves; its pool (template and kernels) is closed on
the way out (:mod:`.pool`).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, contextmanager
from multiprocessing.queues import SimpleQueue
from types import FrameType
from typing import TypeVar

from .pool import UNIX_PATH_MAX, shared_template, worker_pool

T = TypeVar("T")
R = TypeVar("R")
_stopping = False
_started = False


@contextmanager
def local_workers(
    workers: int, *, fresh_kernels: bool
) -> Iterator[tuple[ProcessPoolExecutor, Callable[[], None]]]:
    """A batch's worker processes, and what to call on Ctrl-C.

    With warm kernels, one template serves them all (:func:`.pool.shared_template`),
    started first so that it imports while they start: its imports are paid once per batch.
    Workers start from a clean process, not a copy of the batch's (:func:`_start_method`).
    """
    context = multiprocessing.get_context(_start_method())
    pids: SimpleQueue[int] = context.SimpleQueue()
    with ExitStack() as stack:
        shared = None if fresh_kernels else stack.enter_context(shared_template())
        executor = stack.enter_context(
            ProcessPoolExecutor(
                max_workers=workers,
                mp_context=context,
                initializer=start_worker,
                initargs=(fresh_kernels, shared, pids),
            )
        )

        def interrupt() -> None:
            # Records not handed to a worker yet are cancelled; the workers are stopped.
            # The executor's own thread waits for them as this process exits.
            executor.shutdown(wait=False, cancel_futures=True)
            stop_workers(pids)

        yield executor, interrupt


def _start_method() -> str:
    """forkserver: workers start from a clean process. Its server listens on a Unix socket
    in the temporary folder (``pymp-*/listener-*``); where that path would be too long for
    one (a deep TMPDIR), spawn, which starts workers as clean and needs no socket."""
    socket_path = os.path.join(tempfile.gettempdir(), "pymp-12345678", "listener-12345678")
    return "forkserver" if len(socket_path.encode()) <= UNIX_PATH_MAX else "spawn"


def start_worker(fresh_kernels: bool, shared: str | None, pids: SimpleQueue[int]) -> None:
    global _started
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)
    pids.put(os.getpid())
    if not fresh_kernels:
        worker_pool(shared=shared)
    from ..render.html import warm_up

    warm_up()
    _started = True


def _stop(signum: int, frame: FrameType | None) -> None:
    global _stopping
    _stopping = True
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the clean-up is not interrupted
    if not _started:
        # Still starting: no record to clean up, and an exception would be reported as the
        # initializer's failure.
        os._exit(128 + signum)
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
