"""The LLM judge's prompt folders: loading, versions and bad templates."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from evalkit.errors import JudgeError
from evalkit.judges.llm.prompts import DEFAULT_PROMPT_DIR, PromptSet
from tests.samples import REPO, copy_samples, run_evalkit


def test_a_template_that_is_not_utf8_is_a_judge_error_naming_the_file(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    shutil.copytree(DEFAULT_PROMPT_DIR, prompts)
    (prompts / "item.md").write_bytes(b"Score \xff\xfe this checkpoint\n")
    with pytest.raises(JudgeError, match="not UTF-8") as caught:
        PromptSet.load(prompts)
    assert caught.value.path == str(prompts / "item.md")


@pytest.mark.e2e
def test_the_cli_says_so_in_one_line(tmp_path: Path) -> None:
    import os

    workspace = copy_samples(tmp_path)
    prompts = tmp_path / "prompts"
    shutil.copytree(DEFAULT_PROMPT_DIR, prompts)
    (prompts / "system.md").write_bytes("caf\u00e9".encode("latin-1"))
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    result: subprocess.CompletedProcess[str] = run_evalkit(
        "run", "--range", "ssh-miner", "--run", "demo", "--judge", "claude",
        "--prompt-dir", str(prompts), cwd=workspace, env=env,
    )  # fmt: skip
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "system.md" in lines[0] and "not UTF-8" in lines[0]
    assert REPO.is_dir()
