"""The code base stays lint-clean, formatted and type-checked: ruff and mypy --strict, as
configured in pyproject.toml."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def ruff() -> list[str]:
    script = Path(sys.executable).parent / "ruff"
    if script.exists():
        return [str(script)]
    found = shutil.which("ruff")
    if found is None:
        pytest.fail("ruff is not installed: install the test extra, pip install -e '.[test]'")
    return [found]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff(command: list[str]):
    result = subprocess.run(
        [*ruff(), *command, "evalkit", "tests", "bench", "notebooks"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_on_the_package():
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_project_stands_alone():
    """No file of the project points to the specs outside the repository: docs/ says it
    all. (The folder's name is put together here, so this guard is not itself a pointer.)"""
    folder = "sha" + "red"
    outside = (f"../{folder}", f"/work/{folder}", f"{folder}/spec/", f"{folder}/design/")
    roots = (
        "evalkit", "docs", "notebooks", "bench", "corpora", "ranges", "runs", "tests", ".ci",
        "README.md", "pyproject.toml",
    )  # fmt: skip
    offenders = [
        str(path.relative_to(REPO))
        for root in roots
        for path in ([REPO / root] if (REPO / root).is_file() else (REPO / root).rglob("*"))
        if path.is_file()
        and not path.is_symlink()
        and "__pycache__" not in path.parts
        and any(mark in path.read_text(encoding="utf-8", errors="ignore") for mark in outside)
    ]
    assert offenders == []


def test_the_readme_says_once_how_evalkit_is_reached_then_uses_one_form():
    """Issue 19: the README mixed `.venv/bin/evalkit` and a bare `evalkit`, which a fresh
    shell does not find. The set-up commands name the environment; one paragraph then says
    how the bare form is reached, and every later command uses it."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    said = text.index("source .venv/bin/activate")
    after = text[said:].split("\n", 1)[1]
    assert ".venv/bin/evalkit" not in after and ".venv/bin/python" not in after
    assert text[:said].count("```sh") == 2  # only the two set-up commands before it
    for doc in (REPO / "docs").glob("*.md"):
        assert ".venv/bin/evalkit" not in doc.read_text(encoding="utf-8"), doc.name
