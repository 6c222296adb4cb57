"""``evalkit label`` and ``evalkit adjudicate``: the notebook is copied into the workspace and
JupyterLab is pointed at the copy; the package's own notebooks are never written."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.samples import REPO, copy_samples, run_evalkit

NOTEBOOKS = {"label": "label.ipynb", "adjudicate": "adjudicate.ipynb"}


def shipped_hashes() -> dict[str, str]:
    return {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted((REPO / "notebooks").glob("*.ipynb"))
    }


def clean_env(**extra: str) -> dict[str, str]:
    mine = ("EVALKIT_WORKSPACE", "JP_LSP_VIRTUAL_DIR")
    env = {key: value for key, value in os.environ.items() if key not in mine}
    return {**env, **extra}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return copy_samples(tmp_path / "ws", runs=("demo",))


@pytest.mark.parametrize("command", sorted(NOTEBOOKS))
def test_the_copy_is_written_in_the_workspace_and_the_shipped_notebooks_are_untouched(
    workspace: Path, command: str
):
    before = shipped_hashes()
    # From a subfolder of the workspace, with no EVALKIT_WORKSPACE: found by walking up.
    result = run_evalkit(command, "--print-only", cwd=workspace / "runs" / "demo", env=clean_env())
    assert result.returncode == 0, result.stderr
    copy = workspace / "labelling" / NOTEBOOKS[command]
    assert copy.read_bytes() == (REPO / "notebooks" / NOTEBOOKS[command]).read_bytes()
    assert (workspace / "labelling" / ".gitignore").read_text(encoding="utf-8").endswith("\n*\n")
    lines = result.stdout.strip().splitlines()
    assert lines[0] == f"labelling/{NOTEBOOKS[command]}: copied from the shipped notebook" + (
        " (git ignores the labelling/ folder)"
    )
    started = shlex.split(lines[-1])
    assert started[:2] == [
        f"EVALKIT_WORKSPACE={workspace.resolve()}",
        "JP_LSP_VIRTUAL_DIR=labelling/.virtual_documents",  # git ignores it there
    ]
    assert started[3:5] == ["-m", "jupyterlab"]
    assert f"--ServerApp.root_dir={workspace.resolve()}" in started
    assert started[-1] == str(copy.resolve())
    assert shipped_hashes() == before
    assert sorted(p.name for p in (workspace / "labelling").iterdir()) == sorted(
        [".gitignore", NOTEBOOKS[command]]
    )


def test_the_flags_reach_jupyterlab_and_the_workspace_flag_wins(workspace: Path, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = run_evalkit(
        "label", "--workspace", str(workspace), "--print-only", "--no-browser",
        "--", "--port", "8899",
        cwd=elsewhere, env=clean_env(EVALKIT_WORKSPACE=str(elsewhere)),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    started = shlex.split(result.stdout.strip().splitlines()[-1])
    assert started[0] == f"EVALKIT_WORKSPACE={workspace.resolve()}"
    assert started[-4:] == [
        "--no-browser",
        "--port",
        "8899",
        str(workspace.resolve() / "labelling" / "label.ipynb"),
    ]
    assert not (elsewhere / "labelling").exists()


def test_an_existing_copy_is_reused_as_it_is_and_replaced_only_when_asked(workspace: Path):
    env = clean_env()
    assert run_evalkit("label", "--print-only", cwd=workspace, env=env).returncode == 0
    copy = workspace / "labelling" / "label.ipynb"
    # JupyterLab saved the app's outputs into the copy: reused, kept byte for byte.
    notebook = json.loads(copy.read_text(encoding="utf-8"))
    notebook["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x"}]
    copy.write_text(json.dumps(notebook), encoding="utf-8")
    saved = copy.read_bytes()
    result = run_evalkit("label", "--print-only", cwd=workspace, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "reusing labelling/label.ipynb"
    assert copy.read_bytes() == saved
    # Its code edited: still reused, and the command says it differs and how to replace it.
    notebook["cells"][1]["source"] = "print('mine')"
    copy.write_text(json.dumps(notebook), encoding="utf-8")
    edited = copy.read_bytes()
    result = run_evalkit("label", "--print-only", cwd=workspace, env=env)
    assert result.returncode == 0, result.stderr
    assert "code differs from the shipped notebook's" in result.stdout
    assert "--fresh" in result.stdout and copy.read_bytes() == edited
    # --fresh replaces it with the shipped notebook, saying so.
    result = run_evalkit("label", "--print-only", "--fresh", cwd=workspace, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("labelling/label.ipynb: replaced from the shipped notebook")
    assert copy.read_bytes() == (REPO / "notebooks" / "label.ipynb").read_bytes()


def one_line_refusal(result: subprocess.CompletedProcess, *expected: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stderr.startswith("error: ")
    for text in expected:
        assert text in result.stderr, result.stderr


def test_bad_input_is_refused_in_one_line_and_nothing_is_written(workspace: Path, tmp_path: Path):
    before = shipped_hashes()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = run_evalkit("label", "--print-only", cwd=empty, env=clean_env())
    one_line_refusal(result, "is not a workspace", "ranges/", "--workspace", "EVALKIT_WORKSPACE")
    assert list(empty.iterdir()) == []
    result = run_evalkit(
        "adjudicate", "--print-only", "--workspace", str(tmp_path / "missing"), cwd=empty,
        env=clean_env(),
    )  # fmt: skip
    one_line_refusal(result, "the workspace is not a folder")
    # A copy that is not a notebook is kept, and the refusal says how to replace it.
    (workspace / "labelling").mkdir()
    broken = workspace / "labelling" / "label.ipynb"
    broken.write_text("{ not json", encoding="utf-8")
    result = run_evalkit("label", "--print-only", cwd=workspace, env=clean_env())
    one_line_refusal(result, "not a notebook", "--fresh")
    assert broken.read_text(encoding="utf-8") == "{ not json"
    # A copy folder that is a symlink (here to a folder outside the workspace) is not used.
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(workspace / "labelling")
    (workspace / "labelling").symlink_to(outside)
    result = run_evalkit("adjudicate", "--print-only", cwd=workspace, env=clean_env())
    one_line_refusal(result, "symlink")
    assert list(outside.iterdir()) == []
    assert shipped_hashes() == before


def test_git_never_lists_the_copies(workspace: Path):
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")

    def status() -> str:
        return subprocess.run(
            [git, "status", "--porcelain", "--untracked-files=all"],
            cwd=workspace, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip

    subprocess.run([git, "init", "-q"], cwd=workspace, check=True)
    subprocess.run([git, "add", "-A"], cwd=workspace, check=True)
    listed = status()
    for command in NOTEBOOKS:
        assert run_evalkit(command, "--print-only", cwd=workspace, env=clean_env()).returncode == 0
    (workspace / "labelling" / ".ipynb_checkpoints").mkdir()
    (workspace / "labelling" / ".ipynb_checkpoints" / "label-checkpoint.ipynb").write_text("{}")
    assert status() == listed


def test_this_repository_ignores_a_labelling_folder_at_its_root():
    assert "/labelling/" in (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
