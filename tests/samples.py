"""The shipped sample data and the installed `evalkit` command, as end-to-end tests use them."""

from __future__ import annotations

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
