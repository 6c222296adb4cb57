"""Warm kernels (evalkit.kernels): real template processes, real forked ipykernels."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from jupyter_client.manager import AsyncKernelManager

from evalkit.errors import NotebookError
from evalkit.kernels import KernelPool
from evalkit.kernels.pool import shared_template
from evalkit.kernels.provisioner import ipykernel_arguments, manager_for

DEADLINE_S = 60  # how long a process may take to go, before the test says it stayed


@pytest.fixture
def pool() -> Iterator[KernelPool]:
    kernels = KernelPool()
    try:
        yield kernels
    finally:
        kernels.close()


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_gone(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline and not all(gone(pid) for pid in pids):
        time.sleep(0.05)
    return [pid for pid in pids if not gone(pid)]


async def run_code(manager: AsyncKernelManager, code: str) -> str:
    """What ``code`` prints in the manager's kernel."""
    printed: list[str] = []

    def collect(message: dict) -> None:
        if message["header"]["msg_type"] == "stream":
            printed.append(message["content"]["text"])

    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        reply = await client.execute_interactive(code, timeout=60, output_hook=collect)
        assert reply["content"]["status"] == "ok", reply["content"]
        return "".join(printed)
    finally:
        client.stop_channels()


async def start(pool: KernelPool, tmp_path: Path, **env: str) -> AsyncKernelManager:
    manager = manager_for(pool)(kernel_name="python3")
    await manager.start_kernel(env={**os.environ, **env}, cwd=str(tmp_path))
    return manager


# --------------------------------------------------------------------------- the template


def in_a_fresh_interpreter(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_template_will_not_fork_a_process_with_threads_or_a_zmq_context():
    seen = in_a_fresh_interpreter(
        """
        import threading
        import zmq
        from evalkit.kernels import template

        allowed = template._os_threads()
        template.check_forkable(allowed)  # one thread, no context: forkable
        stop = threading.Event()
        thread = threading.Thread(target=stop.wait, name="probe")
        thread.start()
        try:
            template.check_forkable(allowed)
        except RuntimeError as exc:
            print(exc)
        stop.set()
        thread.join()
        # join() returns before the OS has reaped the thread: wait until it is gone.
        import time
        deadline = time.monotonic() + 10
        while template._os_threads() > allowed and time.monotonic() < deadline:
            time.sleep(0.01)
        context = zmq.Context.instance()
        try:
            template.check_forkable(allowed)
        except RuntimeError as exc:
            print(exc)
        context.term()
        """
    )
    assert seen.splitlines() == [
        "the template has Python threads (MainThread, probe): not forking",
        "the template holds a ZMQ context: not forking",
    ]


def test_the_template_preloads_without_threads_and_leaves_the_inline_backend():
    seen = in_a_fresh_interpreter(
        """
        import os, sys
        os.environ.pop("MPLBACKEND", None)
        from evalkit.kernels import template

        preloaded, allowed = template.preload()
        template.warm_up()
        template.check_forkable(allowed)
        print(os.environ["MPLBACKEND"])
        print(all(name in sys.modules for name in preloaded), "evalkit.render.plots" in preloaded)
        print("matplotlib_inline.backend_inline" in sys.modules)
        """
    )
    assert seen.splitlines() == [
        "module://matplotlib_inline.backend_inline",
        "True True",
        "False",
    ]


def test_only_this_interpreters_ipykernel_is_forked(tmp_path):
    assert ipykernel_arguments(
        [sys.executable, "-m", "ipykernel_launcher", "-f", "k.json", "--x"]
    ) == ["-f", "k.json", "--x"]
    with pytest.raises(NotebookError, match="--fresh-kernels"):
        ipykernel_arguments(["/usr/bin/other-python", "-m", "ipykernel_launcher", "-f", "k"])
    # Another virtual environment's python: a link to the same interpreter, other packages.
    other = tmp_path / "other-venv-python"
    other.symlink_to(os.path.realpath(sys.executable))
    with pytest.raises(NotebookError, match="--fresh-kernels"):
        ipykernel_arguments([str(other), "-m", "ipykernel_launcher", "-f", "k"])
    with pytest.raises(NotebookError, match="--fresh-kernels"):
        ipykernel_arguments([sys.executable, "-m", "some_other_kernel", "-f", "k"])


# --------------------------------------------------------------------------- kernels


async def test_each_kernel_is_forked_for_its_record_with_its_own_environment(pool, tmp_path):
    first = await start(pool, tmp_path, EVALKIT_PROBE="first")
    (tmp_path / "second").mkdir()
    second = await start(pool, tmp_path / "second", EVALKIT_PROBE="second")
    try:
        probe = "import os, sys; print(os.getppid(), os.getcwd(), os.environ['EVALKIT_PROBE'])"
        first_seen = (await run_code(first, probe)).split()
        second_seen = (await run_code(second, probe)).split()
        template_pid = str(pool.template_pid)
        assert first_seen == [template_pid, str(tmp_path), "first"]
        assert second_seen == [template_pid, str(tmp_path / "second"), "second"]
        assert first.provisioner.pid != second.provisioner.pid
        # Each has its own connection: ports and key.
        assert first.get_connection_info()["key"] != second.get_connection_info()["key"]
        assert (
            first.get_connection_info()["shell_port"] != second.get_connection_info()["shell_port"]
        )
    finally:
        for manager in (first, second):
            await manager.shutdown_kernel(now=True)
    assert pool.live_kernels() == []
    for manager in (first, second):
        assert not Path(manager.connection_file).exists()


async def test_a_record_cannot_reach_the_next_one(pool, tmp_path):
    first = await start(pool, tmp_path)
    try:
        await run_code(first, "import os, json; os.environ['LEFT'] = '1'; json.left = 1; x = 1")
    finally:
        await first.shutdown_kernel(now=True)
    second = await start(pool, tmp_path)
    try:
        seen = await run_code(
            second,
            "import os, json; print('LEFT' in os.environ, hasattr(json, 'left'), 'x' in globals())",
        )
    finally:
        await second.shutdown_kernel(now=True)
    assert seen.split() == ["False", "False", "False"]


async def test_a_dead_template_is_replaced(pool, tmp_path):
    manager = await start(pool, tmp_path)
    await manager.shutdown_kernel(now=True)
    first_template = pool.template_pid
    assert first_template is not None
    os.kill(first_template, signal.SIGKILL)
    assert wait_gone([first_template]) == []
    manager = await start(pool, tmp_path)
    try:
        assert (await run_code(manager, "print(6 * 7)")).strip() == "42"
    finally:
        await manager.shutdown_kernel(now=True)
    assert pool.template_pid not in (None, first_template)
    assert pool.stats.templates_started == 2


async def test_a_kernel_dies_with_its_template(pool, tmp_path):
    manager = await start(pool, tmp_path)
    kernel, template_pid = manager.provisioner.pid, pool.template_pid
    try:
        os.kill(template_pid, signal.SIGKILL)
        assert wait_gone([template_pid, kernel]) == []
        assert not await manager.is_alive()
    finally:
        await manager.shutdown_kernel(now=True)


async def test_closing_the_pool_leaves_nothing(tmp_path):
    pool = KernelPool()
    manager = await start(pool, tmp_path)
    kernel, template_pid = manager.provisioner.pid, pool.template_pid
    connection_file = manager.connection_file
    assert Path(connection_file).exists()
    pool.close()  # while the kernel runs: as an interrupted worker leaves
    assert wait_gone([kernel, template_pid]) == []
    assert not Path(connection_file).exists()


def test_everything_goes_when_the_pools_process_is_killed(tmp_path):
    script = textwrap.dedent(
        """
        import asyncio, os, sys
        from evalkit.kernels import KernelPool
        from evalkit.kernels.provisioner import manager_for

        async def main():
            pool = KernelPool()
            manager = manager_for(pool)(kernel_name="python3")
            await manager.start_kernel()
            client = manager.client()
            client.start_channels()
            await client.wait_for_ready(timeout=60)
            print(pool.template_pid, manager.provisioner.pid, flush=True)
            await asyncio.sleep(600)

        asyncio.run(main())
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        template_pid, kernel = (int(pid) for pid in process.stdout.readline().split())
        assert not gone(template_pid) and not gone(kernel)
    finally:
        process.kill()  # SIGKILL: no clean-up of its own runs
        process.wait()
        process.stdout.close()
    assert wait_gone([template_pid, kernel]) == []


async def test_pools_share_one_template_and_keep_their_own_kernels(tmp_path):
    with shared_template() as address:
        assert address is not None and Path(address).exists()
        first, second = KernelPool(shared=address), KernelPool(shared=address)
        try:
            ours, theirs = await start(first, tmp_path), await start(second, tmp_path)
            assert first.template_pid == second.template_pid is not None
            assert first.stats.templates_started == second.stats.templates_started == 0
            first.close()  # its channel ends: its kernel goes, the other pool's stays
            assert wait_gone([ours.provisioner.pid]) == []
            assert (await run_code(theirs, "print(6 * 7)")).strip() == "42"
            await theirs.shutdown_kernel(now=True)
        finally:
            first.close()
            second.close()
        template_pid = first._template
    assert template_pid is not None and wait_gone([template_pid]) == []
    assert not Path(address).exists()  # the private folder of its socket went too


async def test_a_pool_starts_its_own_template_when_the_shared_one_is_gone(tmp_path):
    with shared_template() as address:
        pass  # ended at once
    pool = KernelPool(shared=address)
    try:
        manager = await start(pool, tmp_path)
        try:
            assert (await run_code(manager, "print(6 * 7)")).strip() == "42"
        finally:
            await manager.shutdown_kernel(now=True)
        assert pool.stats.templates_started == 1 and pool.shared is None
    finally:
        pool.close()
