"""A third-party judge, shipped as a package with an ``evalkit.judges`` entry point.

The package under tests/plugin_judge is made importable the way an installed
distribution is: its code and a ``.dist-info`` (with the entry points from its
pyproject.toml) in a folder on PYTHONPATH. Offline, and nothing is installed
into the shared environment.
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from pathlib import Path

import pytest

from tests.samples import REPO, copy_samples, run_evalkit

PLUGIN = REPO / "tests" / "plugin_judge"


def site_with_plugin(into: Path) -> Path:
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text())["project"]
    site = into / "site"
    shutil.copytree(PLUGIN / "evalkit_zero_judge", site / "evalkit_zero_judge")
    dist = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    lines = []
    for group, entries in project["entry-points"].items():
        lines.append(f"[{group}]")
        lines.extend(f"{name} = {target}" for name, target in entries.items())
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    return site


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    site = site_with_plugin(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(site), str(REPO), env.get("PYTHONPATH", "")) if part
    )
    return env


def test_the_plugin_is_listed(tmp_path: Path, plugin_env: dict[str, str]) -> None:
    result = run_evalkit("judges", "--json", cwd=tmp_path, env=plugin_env)
    assert result.returncode == 0, result.stderr
    listed = {j["name"]: j for j in json.loads(result.stdout)["judges"]}
    assert listed["zero"]["settings"][0]["flag"] == "--rationale"
    assert list(listed)[-1] == "zero"  # after the built-ins


def test_a_broken_plugin_is_one_warning_line(tmp_path: Path, plugin_env: dict[str, str]) -> None:
    site = Path(plugin_env["PYTHONPATH"].split(os.pathsep)[0])
    (site / "evalkit_zero_judge" / "__init__.py").write_text("raise ImportError('boom')\n")
    result = run_evalkit("judges", cwd=tmp_path, env=plugin_env)
    assert result.returncode == 0
    assert result.stderr.strip().splitlines() == [
        "evalkit: warning: judge plugin 'zero' not loaded: ImportError: boom"
    ]
    assert "rules" in result.stdout


@pytest.mark.e2e
def test_the_plugin_runs_end_to_end_through_the_notebook(
    tmp_path: Path, plugin_env: dict[str, str]
) -> None:
    workspace = copy_samples(tmp_path)
    result = run_evalkit(
        "run",
        "--range",
        "ssh-miner",
        "--run",
        "demo",
        "--judge",
        "zero",
        "--quiet",
        cwd=workspace,
        env=plugin_env,
    )
    assert result.returncode == 0, result.stderr
    out = workspace / "runs/demo/ssh-miner/evaluations/zero-zero-v1"
    scores = json.loads((out / "scores.json").read_text())
    assert scores["meta"]["judge"] == "zero" and scores["meta"]["evaluator_model"] == "zero-v1"
    assert scores["summary"]["detection"]["score"] == 0 and scores["summary"]["complete"]
    assert (out / "evaluation.ipynb").is_file()
