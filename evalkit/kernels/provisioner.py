"""jupyter_client's seam for starting a kernel another way: a provisioner that forks.

nbclient (under papermill) builds a kernel manager of the class it is given, which builds a
*provisioner* to launch the kernel process. :class:`WarmProvisioner` is jupyter_client's
:class:`~jupyter_client.provisioning.LocalProvisioner` (same connection file, ports and
HMAC key, written by the manager for each record) with one difference: the kernel process
is forked from the pool's template instead of started with ``Popen``. Everything after
(client, heartbeat, execution, shutdown, the connection file's removal) is jupyter_client's
and nbclient's own, as on the fresh path.

The kernel must be the one ``python -m ipykernel_launcher`` of this interpreter would run;
any other kernel command is refused (``--fresh-kernels`` runs it).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
import uuid
import weakref
from queue import Empty
from typing import TYPE_CHECKING, Any

from jupyter_client.asynchronous.client import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning.local_provisioner import LocalProvisioner
from traitlets import DottedObjectName, Type

from ..errors import NotebookError
from .pool import REUSED, ForkedKernel, KernelPool

if TYPE_CHECKING:
    from jupyter_client.connect import KernelConnectionInfo

_WAIT_POLL_S = 0.01
_IOPUB_LOOK_S = 0.02
_KILL_WAIT_LOOKS = 500  # of 2 ms: one second at most


def ipykernel_arguments(cmd: list[str]) -> list[str]:
    """The arguments after ``-m ipykernel_launcher`` in ``cmd``, when ``cmd`` runs this
    interpreter's ipykernel; else a NotebookError."""
    # The same path, not the same file: another virtual environment's python is a link to
    # the same interpreter, with other packages.
    runs_us = bool(cmd) and os.path.abspath(cmd[0]) == os.path.abspath(sys.executable)
    if not runs_us or cmd[1:3] != ["-m", "ipykernel_launcher"]:
        raise NotebookError(
            f"warm kernels run this Python's ipykernel only, not {' '.join(cmd[:3])!r};"
            " use --fresh-kernels"
        )
    return list(cmd[3:])


class WarmProvisioner(LocalProvisioner):
    """LocalProvisioner whose kernel process comes from a :class:`KernelPool`."""

    pool: KernelPool
    kernel: ForkedKernel | None = None
    detached = False  # reuse mode: the record let go of the kernel, which stays in the pool

    @property
    def has_process(self) -> bool:
        return self.kernel is not None and not self.detached

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        if self.pool.kind == REUSED and self.pool.reused is not None:
            # The same kernel again: its ports and key, not new ones.
            assert self.parent is not None
            self.parent.load_connection_info(self.pool.reused[1])
            self.ports_cached = True
        return dict(await super().pre_launch(**kwargs))

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        argv = ipykernel_arguments(cmd)
        env = dict(kwargs.get("env") or os.environ)
        # What jupyter_client's launcher gives a kernel it starts (not independent).
        env["JPY_PARENT_PID"] = str(os.getpid())
        cwd = str(kwargs.get("cwd") or os.getcwd())
        if self.pool.kind == REUSED and self.pool.reused is not None:
            self.kernel = self.pool.reused[0]
        else:
            self.kernel = self.pool.fork(argv, env, cwd)
            if self.pool.kind == REUSED:
                self.pool.reused = (self.kernel, dict(self.connection_info))
        self.detached = False
        self.pid = self.pgid = self.kernel.pid
        self.cwd = cwd
        return self.connection_info

    def _reused(self) -> bool:
        return self.pool.reused is not None and self.pool.reused[0] is self.kernel

    async def poll(self) -> int | None:
        if self.kernel is None or self.detached:
            return 0
        # The template reaps its children; their exit status is not ours to read.
        return None if self.kernel.running() else -1

    async def wait(self) -> int | None:
        while await self.poll() is None:
            await asyncio.sleep(_WAIT_POLL_S)
        self._let_go()
        return 0

    async def send_signal(self, signum: int) -> None:
        if self.kernel is None or self.detached:
            return
        if self._reused():
            # Reuse mode: the record ends, the kernel does not.
            if signum in (signal.SIGKILL, signal.SIGTERM):
                self.detached = True
            return
        self.kernel.signal(signum)

    async def kill(self, restart: bool = False) -> None:
        await self.send_signal(signal.SIGKILL)
        # Gone in a few milliseconds: waiting for it here spares the manager's next look,
        # a tenth of a second later.
        for _ in range(_KILL_WAIT_LOOKS):
            if await self.poll() is not None:
                return
            await asyncio.sleep(_WAIT_POLL_S / 5)

    async def terminate(self, restart: bool = False) -> None:
        await self.send_signal(signal.SIGTERM)

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart=restart)
        self._let_go()

    def _let_go(self) -> None:
        if self.kernel is not None and not self._reused():
            self.pool.release(self.kernel)
        self.kernel = None
        self.detached = False


class WarmKernelClient(AsyncKernelClient):
    """nbclient's client, waiting for a new kernel as jupyter_client does, with shorter looks.

    jupyter_client's ``wait_for_ready`` asks for ``kernel_info`` until the reply comes on
    the shell channel *and* a message shows on IOPub (an IOPub subscription takes a moment
    to reach the kernel, which drops what it publishes before), looking at IOPub for 0.2 s
    each time: a kernel that starts in a tenth of a second waited that long for nothing.
    Here each look lasts 20 ms; the asks and the checks are the same.
    """

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout if timeout is not None else float("inf"))
        while True:
            self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                pass
            else:
                if reply["msg_type"] == "kernel_info_reply":
                    try:
                        await self.iopub_channel.get_msg(timeout=_IOPUB_LOOK_S)
                    except Empty:
                        pass
                    else:
                        self._handle_kernel_info_reply(reply)
                        return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")


class WarmKernelManager(AsyncKernelManager):
    """nbclient's AsyncKernelManager, with the pool's provisioner for every kernel."""

    pool: KernelPool
    client_class = DottedObjectName(f"{__name__}.WarmKernelClient")
    client_factory = Type(WarmKernelClient, klass=AsyncKernelClient)

    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        if self.provisioner is None:
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", None) or str(uuid.uuid4())
            if not self.connection_file:
                self.connection_file = self.pool.connection_file(self.kernel_id)
            provisioner = WarmProvisioner(
                kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self
            )
            provisioner.pool = self.pool
            self.provisioner = provisioner
        result: tuple[list[str], dict[str, Any]] = await super()._async_pre_start_kernel(**kw)
        return result


_MANAGERS: weakref.WeakKeyDictionary[KernelPool, type[WarmKernelManager]] = (
    weakref.WeakKeyDictionary()
)
_MANAGERS_LOCK = threading.Lock()


def manager_for(pool: KernelPool) -> type[WarmKernelManager]:
    """The WarmKernelManager class bound to ``pool`` (nbclient takes a class, not an
    object): one per pool."""
    with _MANAGERS_LOCK:
        manager = _MANAGERS.get(pool)
        if manager is None:
            manager = type("WarmKernelManager", (WarmKernelManager,), {"pool": pool})
            _MANAGERS[pool] = manager
        return manager
