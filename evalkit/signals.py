"""How a command stops when asked: SIGINT and SIGTERM end it cleanly, exit 130 or 143.

SIGINT is Python's ``KeyboardInterrupt``. SIGTERM would end the process at once,
leaving its kernel running until the parent watch notices and the kernel's
connection file (its ports and HMAC key) in the temporary folder; so
:func:`terminate_as_interrupt` turns it into :class:`Terminated`, a
``KeyboardInterrupt`` too. Either unwinds every ``finally``: the notebook's kernel
is shut down and its connection file removed, the staging folder removed, the
evaluation lock released. The command line then exits 130 (SIGINT) or 143
(SIGTERM), as a shell reports a process those signals ended.

A batch's worker processes handle their signals in :mod:`evalkit.kernels.workers`:
they ignore SIGINT (a Ctrl-C reaches the whole process group; the batch decides) and
stop on SIGTERM, unwinding the record they are running as above.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["Terminated", "exit_code", "terminate_as_interrupt"]

EXIT_SIGINT, EXIT_SIGTERM = 128 + signal.SIGINT, 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is, so that it unwinds as for a Ctrl-C."""


def exit_code(interrupt: KeyboardInterrupt) -> int:
    """130 for a Ctrl-C (SIGINT), 143 for SIGTERM."""
    return EXIT_SIGTERM if isinstance(interrupt, Terminated) else EXIT_SIGINT


def _raise_terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated` (main thread only; elsewhere,
    nothing changes). The previous handler comes back on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
