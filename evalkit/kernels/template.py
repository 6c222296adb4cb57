"""The template kernel: a process that has imported what a record's kernel needs, and forks.

Run as ``python -m evalkit.kernels.template FD [--listen FD PATH]`` by
:class:`evalkit.kernels.pool.KernelPool`, with ``FD`` one end of a ``SOCK_SEQPACKET`` socket
pair (one JSON message per packet), the owner's channel; with ``--listen``, other pools (a
batch's workers) connect to that listening Unix socket and get channels of their own. It
imports ipykernel, IPython, pandas, matplotlib, numpy and evalkit once, then serves, on
each channel:

- ``{"op": "fork", "argv": [...], "env": {...}, "cwd": "..."}``: forks a child that
  becomes a fresh ipykernel (``argv`` is what follows ``-m ipykernel_launcher`` in the
  kernel's command: its connection file, ports and HMAC key, the history file), with
  exactly ``env`` as its environment and ``cwd`` as its working directory. The answer is
  ``{"pid": N}`` with a pidfd of the child passed alongside (``SCM_RIGHTS``), or
  ``{"error": "..."}``.
- ``{"op": "quit"}`` or the channel closing: that channel's children are killed; for the
  owner's channel (or when the owner's process dies), every child, and the template exits.

The template runs no user code: every record starts from the same state, the template's
after its imports. It holds no thread and no ZMQ context when it forks (checked before
every fork: forking a process with threads or a ZMQ context is unsafe), so the child can
start its own. It reaps its children itself; a child it forked dies with it
(``PR_SET_PDEATHSIG``).

Only the standard library is imported at module level: the preloading is :func:`preload`'s.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import importlib.util
import json
import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
from typing import Any

# What the evaluation notebook's kernel imports (ipykernel's own modules, and the notebook's
# imports), measured on a fresh kernel after a record; the rest is paid per record.
PRELOAD: tuple[str, ...] = (
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.zmqshell",
    "ipykernel.comm",
    "ipykernel.debugger",
    "IPython.core.completer",
    "IPython.core.completerlib",
    "IPython.core.debugger",
    "IPython.core.logger",
    "IPython.core.magic_arguments",
    "IPython.core.magics.ast_mod",
    "IPython.core.magics.auto",
    "IPython.core.magics.basic",
    "IPython.core.magics.config",
    "IPython.core.magics.display",
    "IPython.core.magics.execution",
    "IPython.core.magics.extension",
    "IPython.core.magics.history",
    "IPython.core.magics.logging",
    "IPython.core.magics.namespace",
    "IPython.core.magics.osm",
    "IPython.core.magics.packaging",
    "IPython.core.magics.pylab",
    "IPython.core.magics.script",
    "IPython.core.oinspect",
    "IPython.core.pylabtools",
    "IPython.extensions.storemagic",
    "IPython.utils.module_paths",
    "IPython.utils.wildcard",
    "faulthandler",
    "multiprocessing.synchronize",
    "psutil",
    "runpy",
    "sqlite3",
    "tornado.platform.asyncio",
    "zmq.utils.garbage",
    "PIL.PngImagePlugin",
    "matplotlib.backends.backend_agg",
    "IPython.core.display",
    "IPython.display",
    "jupyter_client.session",
    "tornado.ioloop",
    "zmq.eventloop.zmqstream",
    "numpy",
    "pandas",
    "matplotlib.pyplot",
    "tqdm.auto",
    "evalkit",
    "evalkit.prepare",
    "evalkit.runplan",
    "evalkit.render",
    "evalkit.render.plots",
    "evalkit.render.tables",
    "evalkit.render.scores_json",
    "evalkit.judges.rules",
    "evalkit.judges.file",
)
# The inline backend binds itself to the IPython shell that exists when it is first
# imported: that must be the record's kernel, never the template.
NOT_PRELOADED = ("matplotlib_inline.backend_inline",)
INLINE_BACKEND = "module://matplotlib_inline.backend_inline"
_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
_PARENT_POLL_S = 0.5
FILES_PREFIX = "evalkit-kernels-"  # the private folders of pools (connection files, socket)


def _os_threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def preload() -> tuple[list[str], int]:
    """Import :data:`PRELOAD` as a fresh kernel would have them; returns what was imported
    and the OS threads the imports leave (numpy's OpenBLAS keeps a pool, which it stops
    before a fork and restarts after: ``pthread_atfork``)."""
    # ipykernel sets this before any user code imports matplotlib, unless it is already set.
    if not os.environ.get("MPLBACKEND"):
        os.environ["MPLBACKEND"] = INLINE_BACKEND
    # ipykernel_launcher removes the working directory from sys.path; so does the template.
    if sys.path and (sys.path[0] in ("", os.getcwd())):
        del sys.path[0]
    importlib.import_module("numpy")  # first: the one library allowed threads of its own
    allowed_threads = _os_threads()
    for name in PRELOAD:
        importlib.import_module(name)
    early = [name for name in NOT_PRELOADED if name in sys.modules]
    if early:
        raise RuntimeError(f"preloading imported {', '.join(early)}, which must wait")
    return list(PRELOAD), allowed_threads


def warm_up() -> None:
    """Do once what every record's kernel would do first, the same for all: build the
    scores.json validator and report template, compile the Markdown reader's patterns, load
    the fonts and the Agg renderer (through a figure of its own, never pyplot's)."""
    import PIL.Image
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from evalkit import markdown, render

    render.warm_up()
    PIL.Image.preinit()  # the image formats PIL registers at its first save
    markdown.parse("# Title\n\n- `item` **strong** [link](x)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    figure = Figure(figsize=(2, 1))
    figure.subplots().set_title("warm-up 0123456789")
    FigureCanvasAgg(figure).draw()  # type: ignore[no-untyped-call]


def check_forkable(allowed_threads: int) -> None:
    """Refuse to fork a process with Python threads, extra OS threads or a ZMQ context."""
    if threading.active_count() != 1:
        names = ", ".join(thread.name for thread in threading.enumerate())
        raise RuntimeError(f"the template has Python threads ({names}): not forking")
    if _os_threads() > allowed_threads:
        found = _os_threads()
        raise RuntimeError(f"the template has {found} OS threads, not {allowed_threads}: no fork")
    zmq = sys.modules.get("zmq")
    if zmq is not None and getattr(zmq.Context, "_instance", None) is not None:
        raise RuntimeError("the template holds a ZMQ context: not forking")


def _launcher_path() -> str:
    """Where ``python -m ipykernel_launcher`` runs from: a fresh kernel's ``sys.argv[0]``."""
    spec = importlib.util.find_spec("ipykernel_launcher")
    return str(spec.origin) if spec and spec.origin else "ipykernel_launcher"


def _prctl(option: int, value: int | bytes) -> None:
    """Linux's prctl(2) for the calling process; elsewhere nothing."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _become_kernel(request: dict[str, Any], template_pid: int) -> int:
    """In the forked child: become the kernel ``request`` describes; returns its exit code."""
    os.setsid()  # as jupyter_client starts a kernel: its own session, no terminal's Ctrl-C
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # it dies with the template
    # Its command line is the template's; its name in ps and top says what it is.
    _prctl(_PR_SET_NAME, b"evalkit-kernel")
    if os.getppid() != template_pid:  # the template died before the line above
        return 1
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()  # a fresh process seeds its own; `random` reseeds itself at fork
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    from ipykernel.kernelapp import IPKernelApp

    sys.argv = [_launcher_path(), *request["argv"]]
    try:
        IPKernelApp.launch_instance()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0
    return 0


class Template:
    """The serving loop: requests from its channels, children reaped as they end.

    The owner's channel (the pool that started it) is always there; with a listening
    socket, every pool that connects gets a channel of its own. A channel that closes takes
    its kernels with it; the owner's takes everything, the template included.
    """

    def __init__(
        self, owner: socket.socket, allowed_threads: int, listener: socket.socket | None
    ) -> None:
        self.owner = owner
        self.listener = listener
        self.allowed_threads = allowed_threads
        self.parent = os.getppid()
        self.channels: dict[socket.socket, set[int]] = {owner: set()}
        self.ready: dict[str, Any] = {}
        # Each child's connection file and each channel's folder of them: removed here when
        # their pool went without doing it (killed).
        self.files: dict[int, str] = {}
        self.folders: dict[socket.socket, set[str]] = {owner: set()}

    def send(
        self, channel: socket.socket, message: dict[str, Any], fds: list[int] | None = None
    ) -> None:
        data = json.dumps(message).encode()
        try:
            if fds:
                socket.send_fds(channel, [data], fds)
            else:
                channel.send(data)
        except OSError:
            pass  # a pool that went away: its channel's end is read next

    def serve(self) -> None:
        while True:
            watched = [*self.channels, *([self.listener] if self.listener else [])]
            readable, _, _ = select.select(watched, [], [], _PARENT_POLL_S)
            self.reap()
            if os.getppid() != self.parent:
                return  # the owner's process is gone
            for channel in readable:
                if channel is self.listener:
                    self.accept()
                elif not self.handle(channel):
                    if channel is self.owner:
                        return
                    self.close(channel)

    def accept(self) -> None:
        assert self.listener is not None
        try:
            channel, _ = self.listener.accept()
        except OSError:
            return
        self.channels[channel], self.folders[channel] = set(), set()
        self.send(channel, self.ready)

    def handle(self, channel: socket.socket) -> bool:
        """Answer one request; False when the channel ended (closed, or asked to quit)."""
        try:
            data = channel.recv(1 << 20)
        except OSError:
            return False
        if not data:
            return False
        request = json.loads(data)
        if request.get("op") == "quit":
            return False
        if request.get("op") == "fork":
            self.fork(channel, request)
        else:
            self.send(channel, {"error": f"unknown request {request.get('op')!r}"})
        return True

    def fork(self, channel: socket.socket, request: dict[str, Any]) -> None:
        try:
            check_forkable(self.allowed_threads)
        except RuntimeError as exc:
            self.send(channel, {"error": str(exc)})
            return
        template_pid = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child never returns into this loop
            code = 1
            try:
                for open_socket in (*self.channels, self.listener):
                    if open_socket is not None:
                        open_socket.close()
                code = _become_kernel(request, template_pid)
            except BaseException:
                traceback.print_exc()
            finally:
                _flush_and_exit(code)
        self.channels[channel].add(pid)
        argv = request["argv"]
        if "-f" in argv[:-1]:
            self.files[pid] = path = argv[argv.index("-f") + 1]
            if os.path.basename(os.path.dirname(path)).startswith(FILES_PREFIX):
                self.folders[channel].add(os.path.dirname(path))
        pidfd = os.pidfd_open(pid)
        try:
            self.send(channel, {"pid": pid}, [pidfd])
        finally:
            os.close(pidfd)

    def close(self, channel: socket.socket) -> None:
        self.kill(self.channels.pop(channel, set()))
        self.remove_folders(self.folders.pop(channel, set()))
        channel.close()

    @staticmethod
    def remove_folders(folders: set[str]) -> None:
        """A gone pool's folders of connection files, once empty (a pool that closes removes
        its own)."""
        for folder in folders:
            with contextlib.suppress(OSError):
                os.rmdir(folder)

    def reap(self) -> None:
        for children in self.channels.values():
            self._reap(children)

    def _reap(self, children: set[int]) -> None:
        for pid in list(children):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                children.discard(pid)
                self.files.pop(pid, None)  # its pool removes it (jupyter_client does)

    def kill(self, children: set[int]) -> None:
        """Kill ``children`` (their pool is gone, or the template ends), and remove their
        connection files, as their pool would have."""
        for pid in children:
            for kill in (os.killpg, os.kill):  # the child's group: what it started too
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    continue
            path = self.files.pop(pid, None)
            if path is not None:
                with contextlib.suppress(OSError):
                    os.remove(path)
        deadline = time.monotonic() + 5
        while children and time.monotonic() < deadline:
            self._reap(children)
            time.sleep(0.01)

    def kill_children(self) -> None:
        for channel, children in self.channels.items():
            self.kill(children)
            self.remove_folders(self.folders.get(channel, set()))


def _flush_and_exit(code: int) -> None:
    """Leave the child as an interpreter would (exit handlers, buffers), without ever
    unwinding into the template's loop."""
    try:
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def main(argv: list[str]) -> int:
    """``FD [--listen FD PATH]``: serve the owner's channel, and the pools that connect to
    the listening socket (bound by the owner at PATH, which goes when the template does)."""
    owner = socket.socket(fileno=int(argv[0]))
    listener, address = None, None
    if argv[1:2] == ["--listen"]:
        listener, address = socket.socket(fileno=int(argv[2])), argv[3]
    started = time.perf_counter()
    try:
        preloaded, allowed_threads = preload()
        warm_up()
        check_forkable(allowed_threads)
    except BaseException:
        owner.send(json.dumps({"error": traceback.format_exc(limit=-3)}).encode())
        return 1
    template = Template(owner, allowed_threads, listener)
    template.ready = {
        "ready": True,
        "pid": os.getpid(),
        "preloaded": preloaded,
        "seconds": round(time.perf_counter() - started, 3),
    }
    template.send(owner, template.ready)
    try:
        template.serve()
    finally:
        template.kill_children()
        if address is not None:  # its owner removes it too; not if the owner was killed
            with contextlib.suppress(OSError):
                os.remove(address)
                os.rmdir(os.path.dirname(address))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
