"""The shipped sample data and the installed `evalkit` command, as end-to-end tests use them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def copy_samples(into: Path, runs: tuple[str, ...] | None = None) -> Path:
    """Copy ranges/ and runs/ (without earlier evaluations) so outputs never land in the repo.

    ``runs`` keeps only those sample runs (default: all of them, the gold runs included).
    """
    shutil.copytree(REPO / "ranges", into / "ranges")
    shutil.copytree(REPO / "runs", into / "runs", ignore=shutil.ignore_patterns("evaluations"))
    if runs is not None:
        for folder in (into / "runs").iterdir():
            if folder.is_dir() and folder.name not in runs:
                shutil.rmtree(folder)
    return into


def evalkit_command() -> list[str]:
    """The console script a user runs, falling back to ``python -m evalkit``."""
    script = Path(sys.executable).parent / "evalkit"
    return [str(script)] if script.exists() else [sys.executable, "-m", "evalkit"]


def sigint_as_in_a_terminal() -> None:
    """A child's ``preexec_fn``: SIGINT back to its default. A shell starts a background job
    (``pytest &``) with SIGINT ignored and every process inherits that, so a command under
    test would never see the Ctrl-C a test sends it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_evalkit(
    *args: str, cwd: Path, env: Mapping[str, str], timeout: float = 600
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*evalkit_command(), *args],
        cwd=cwd,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# --------------------------------------------------------------------------- a hostile workspace

# Planted outside the workspace: it must never appear in any output, stdout or stderr.
SECRET_MARKER = "SECRET-MARKER-OUTSIDE-9c41e7"
# A name longer than any file system takes for one path part (255 bytes).
LONG_NAME = "n" * 300
# JSON nested 100,000 deep: json.loads fails with RecursionError, not a JSONDecodeError.
DEEP_JSON = "[" * 100_000 + "]" * 100_000


def snapshot(folder: Path) -> dict[str, tuple[str, bytes]]:
    """Every entry below ``folder`` (links not followed): its kind and content or target."""
    entries: dict[str, tuple[str, bytes]] = {}
    for path in sorted(folder.rglob("*")):
        name = path.relative_to(folder).as_posix()
        if path.is_symlink():
            entries[name] = ("link", os.readlink(path).encode())
        elif path.is_dir():
            entries[name] = ("dir", b"")
        elif path.is_file():
            entries[name] = ("file", path.read_bytes())
        else:
            entries[name] = ("other", b"")
    return entries


def files_holding(folder: Path, marker: str) -> list[str]:
    """The regular files below ``folder`` (links not followed) whose bytes hold ``marker``."""
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink() and marker.encode() in path.read_bytes():
            found.append(path.relative_to(folder).as_posix())
    return sorted(found)


def plant_link(workspace: Path, name: str, target: Path) -> Path:
    """Replace ``workspace/name`` (file or folder) by a symlink to ``target``."""
    path = workspace / name
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target, target_is_directory=target.is_dir())
    return path


def clean_env(**extra: str) -> dict[str, str]:
    """The test process's environment without API keys or a workspace, plus ``extra``."""
    drop = {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "EVALKIT_WORKSPACE", "EVALKIT_UNWRITABLE_CACHES"}
    return {**{k: v for k, v in os.environ.items() if k not in drop}, **extra}


def write_rules_record(workspace: Path, run: str, range_id: str = "ssh-miner") -> Path:
    """A rules evaluation record (scores.json, verdicts.json, report) of ``run`` x
    ``range_id``, written in-process (no notebook); returns its folder."""
    from evalkit.checklist import load_range
    from evalkit.judges import make_judge
    from evalkit.pipeline import evaluate
    from evalkit.render import write_outputs
    from evalkit.runs import load_submission

    rng = load_range(workspace / "ranges", range_id)
    submission = load_submission(workspace / "runs", run, rng)
    folder = workspace / "runs" / run / range_id / "evaluations" / "rules"
    write_outputs(evaluate(rng, submission, make_judge("rules")), folder)
    return folder
