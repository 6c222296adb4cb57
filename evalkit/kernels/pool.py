"""A process's warm kernels: a template process, and the kernels it forks for records.

:class:`KernelPool` starts ``python -m evalkit.kernels.template`` (see there) in a session
of its own, so a terminal's Ctrl-C reaches only this process, which then ends everything
it started; or it connects to a template another process started for it
(:func:`shared_template`: a local batch starts one for all its workers). Each record asks
the template for a child (:meth:`KernelPool.fork`), which becomes the record's kernel and is
killed after it. A template that died is started again on the next request. A template
watches the process that started it and exits when it dies; each kernel dies with its
template, and with its pool's channel.

:func:`worker_pool` is the one pool of a process (a batch worker, a Dask worker, the
``evalkit record`` process), closed when the process exits or :func:`close_worker_pool`
is called.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..errors import NotebookError
from .template import FILES_PREFIX

WARM, FRESH, REUSED = "warm", "fresh", "reused"
# Test-only: one kernel for every record of a process, so the isolation tests can show what
# the warm path prevents. Never set it for real records (they then say kernel "reused").
REUSE_ENV = "EVALKIT_TEST_REUSE_KERNEL"
TEMPLATE_MODULE = "evalkit.kernels.template"
START_TIMEOUT_S = 120.0
UNIX_PATH_MAX = 100  # a Unix socket's path: 108 bytes on Linux, 104 on macOS


@dataclass
class ForkedKernel:
    """A record's kernel, forked by the template; followed through a pidfd (not our child)."""

    pid: int
    pidfd: int

    def running(self) -> bool:
        if self.pidfd < 0:
            return False
        readable, _, _ = select.select([self.pidfd], [], [], 0)
        return not readable

    def signal(self, signum: int) -> None:
        """``signum`` to the kernel's process group (what it started too), while it runs."""
        if not self.running():
            return
        try:
            os.killpg(self.pid, signum)  # its own session and group since the fork
        except OSError:
            try:
                signal.pidfd_send_signal(self.pidfd, signum)
            except OSError:
                pass

    def close(self) -> None:
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1


@dataclass
class PoolStats:
    templates_started: int = 0
    kernels_forked: int = 0
    template_seconds: list[float] = field(default_factory=list)


class KernelPool:
    """A template process and the kernels it forked for this process; thread-safe.

    By default the pool starts a template of its own. With ``share``, other processes'
    pools may connect to that template, at :attr:`address` (a Unix socket in a private
    folder). With ``shared`` (such an address), the pool connects to that template instead
    of starting one, and starts its own if it cannot reach it.
    """

    def __init__(
        self,
        *,
        reuse: bool = False,
        shared: str | None = None,
        share: bool = False,
        start_timeout: float = START_TIMEOUT_S,
    ) -> None:
        self.kind = REUSED if reuse else WARM
        self.shared = shared
        self.share = share
        self.address: str | None = None
        self.start_timeout = start_timeout
        self.owner = os.getpid()
        self._template: int | None = None  # its pid, as its ready message says
        self._share_folder: str | None = None
        self.stats = PoolStats()
        self._lock = threading.RLock()
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        self._ready = False
        self._live: dict[int, ForkedKernel] = {}
        self._files: str | None = None  # the folder of its kernels' connection files
        self._closed = False
        # Reuse mode only: the one kernel every record gets, and its connection info.
        self.reused: tuple[ForkedKernel, dict[str, Any]] | None = None

    # ----------------------------------------------------------------- template

    @property
    def template_pid(self) -> int | None:
        """The template's pid while this pool is connected to it (its own, or shared)."""
        process = self._process
        if process is not None:
            return process.pid if process.poll() is None else None
        return self._template if self._channel is not None else None

    def start(self) -> None:
        """Start the template, or connect to the shared one, without waiting for its imports."""
        with self._lock:
            if self._closed:
                raise NotebookError("the warm kernel pool is closed")
            own = self._process
            if self._channel is not None and (own is None or own.poll() is None):
                return  # its own template runs, or it holds a channel to the shared one
            self._stop_template()
            if self.shared is not None:
                if self._connect(self.shared):
                    return
                self.shared = None  # gone: this pool starts a template of its own
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            listener = self._listening()
            given = [theirs] if listener is None else [theirs, listener]
            command = [sys.executable, "-m", TEMPLATE_MODULE, str(theirs.fileno())]
            if listener is not None:
                command += ["--listen", str(listener.fileno()), str(self.address)]
            try:
                self._process = subprocess.Popen(
                    command,
                    pass_fds=[handle.fileno() for handle in given],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    cwd="/",
                    start_new_session=True,
                )
            except OSError:
                ours.close()
                raise
            finally:
                for handle in given:
                    handle.close()
            self._channel = ours
            self._ready = False
            self.stats.templates_started += 1

    def _listening(self) -> socket.socket | None:
        """For a shared template, its listening socket, bound before the template starts so
        that pools may connect at once; None when the path would be too long for a Unix
        socket (each pool then starts its own)."""
        if not self.share:
            return None
        if self._share_folder is None:
            self._share_folder = tempfile.mkdtemp(prefix=FILES_PREFIX)  # ours only
        path = os.path.join(self._share_folder, "template")
        if len(path.encode()) > UNIX_PATH_MAX:
            return None
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)  # a template of ours started before, now gone
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(path)
        listener.listen(64)
        self.address = path
        return listener

    def _connect(self, address: str) -> bool:
        channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            channel.connect(address)
        except OSError:
            channel.close()
            return False
        self._channel, self._ready = channel, False
        return True

    def _wait_ready(self) -> None:
        assert self._channel is not None
        message = self._receive(self.start_timeout)[0]
        if not message.get("ready"):
            error = str(message.get("error") or message).strip().splitlines()
            self._stop_template()
            raise NotebookError(f"the warm kernel template did not start: {error[-1]}")
        self.stats.template_seconds.append(float(message.get("seconds") or 0.0))
        self._template = int(message["pid"])
        self._ready = True

    def _receive(self, timeout: float) -> tuple[dict[str, Any], list[int]]:
        assert self._channel is not None
        self._channel.settimeout(timeout)
        try:
            data, fds, _, _ = socket.recv_fds(self._channel, 1 << 16, 1)
        except (TimeoutError, OSError) as exc:
            self._stop_template()
            raise NotebookError(f"the warm kernel template did not answer: {exc}") from exc
        if not data:
            self._stop_template()
            raise NotebookError("the warm kernel template exited")
        message: dict[str, Any] = json.loads(data)
        return message, list(fds)

    def _stop_template(self) -> None:
        """Ask the template to end (it kills its kernels), then make sure it did."""
        channel, process = self._channel, self._process
        self._channel, self._process, self._ready = None, None, False
        if channel is not None:
            try:
                channel.send(json.dumps({"op": "quit"}).encode())
            except OSError:
                pass
            channel.close()
        if process is not None:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    # ----------------------------------------------------------------- kernels

    def fork(self, argv: list[str], env: dict[str, str], cwd: str) -> ForkedKernel:
        """A new kernel for one record: ``ipykernel_launcher argv`` with exactly ``env``, in
        ``cwd``. The template is (re)started when it is not running."""
        with self._lock:
            for attempt in (1, 2):
                self.start()
                if not self._ready:
                    self._wait_ready()
                assert self._channel is not None
                request = {"op": "fork", "argv": argv, "env": env, "cwd": cwd}
                try:
                    self._channel.send(json.dumps(request).encode())
                except OSError:
                    self._stop_template()
                    if attempt == 2:
                        raise NotebookError("the warm kernel template is gone") from None
                    continue  # it died since the last record: start another
                message, fds = self._receive(30.0)
                if "pid" not in message or not fds:
                    for fd in fds:
                        os.close(fd)
                    raise NotebookError(f"no warm kernel: {message.get('error') or message}")
                kernel = ForkedKernel(int(message["pid"]), fds[0])
                self._live[kernel.pid] = kernel
                self.stats.kernels_forked += 1
                return kernel
        raise AssertionError("unreachable")

    def release(self, kernel: ForkedKernel) -> None:
        """The record is over: its kernel is killed (if it still runs) and forgotten."""
        with self._lock:
            kernel.signal(signal.SIGKILL)
            deadline = time.monotonic() + 5
            while kernel.running() and time.monotonic() < deadline:
                time.sleep(0.005)
            kernel.close()
            self._live.pop(kernel.pid, None)

    def connection_file(self, kernel_id: str) -> str:
        """Where a record's kernel's connection file goes: a private folder of the pool's.
        jupyter_client removes the file when the record ends; the pool removes the folder
        when it closes, with any file whose clean-up never ran (an interrupted record)."""
        with self._lock:
            if self._files is None:
                self._files = tempfile.mkdtemp(prefix=FILES_PREFIX)
            return os.path.join(self._files, f"kernel-{kernel_id}.json")

    def live_kernels(self) -> list[int]:
        with self._lock:
            return [pid for pid, kernel in self._live.items() if kernel.running()]

    # ----------------------------------------------------------------- the whole pool

    def close(self) -> None:
        """Kill every kernel of the pool and stop the template; safe to call twice."""
        if os.getpid() != self.owner:
            return  # a forked copy of this process: the pool is not its own
        with self._lock, _signals_held():
            self._closed = True
            if self.reused is not None:
                self.release(self.reused[0])
                self.reused = None
            for kernel in list(self._live.values()):
                self.release(kernel)
            self._stop_template()
            for folder in (self._files, self._share_folder):
                if folder is not None:
                    shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the pool is closed (in the main thread, where Python
    runs its handlers): a stop arriving meanwhile must not cut the clean-up short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


_POOL: KernelPool | None = None
_POOL_LOCK = threading.Lock()


def worker_pool(*, start: bool = True, shared: str | None = None) -> KernelPool:
    """This process's pool, created (and its template started, or the ``shared`` one
    reached) on first use."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL.owner != os.getpid() or _POOL._closed:
            _POOL = KernelPool(reuse=os.environ.get(REUSE_ENV) == "1", shared=shared)
            _close_at_exit(_POOL)
        pool = _POOL
    if start:
        pool.start()
    return pool


@contextmanager
def shared_template() -> Iterator[str | None]:
    """A template for every worker of a local batch, started at once, ended on the way
    out (with every kernel it forked): yields the address their pools connect to."""
    pool = KernelPool(share=True)
    try:
        pool.start()
        yield pool.address
    finally:
        pool.close()


def close_worker_pool() -> None:
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None:
        pool.close()


def _close_at_exit(pool: KernelPool) -> None:
    # atexit for a plain process; multiprocessing's finalizers for its workers, which leave
    # through os._exit and never run atexit.
    import multiprocessing.util

    atexit.register(pool.close)
    multiprocessing.util.Finalize(pool, pool.close, exitpriority=100)
