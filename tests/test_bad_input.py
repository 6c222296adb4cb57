"""Bad input through the command line: one line, a non-zero exit, never a traceback.

Each test is a finding of issue 18 (the hostile-input audit): each failed, with a
traceback or a silent acceptance, before the bounded parsers (evalkit/bounded.py) and
the checks that use them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.samples import DEEP_JSON, clean_env, copy_samples, run_evalkit, write_rules_record

RECORD = "runs/demo/ssh-miner/evaluations/rules"
LABEL = "runs/demo/ssh-miner/labels/a.json"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return copy_samples(tmp_path / "ws", runs=("demo",))


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_evalkit(*args, cwd=cwd, env=clean_env())


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def refused(result: subprocess.CompletedProcess, code: int = 2) -> str:
    """The one line of a refusal, on stderr (or stdout, where validate prints findings)."""
    said = result.stdout + result.stderr
    assert "Traceback" not in said, said
    assert result.returncode == code, said
    where = result.stderr if result.stderr.strip() else result.stdout
    assert len(error_lines(where)) == 1, where
    return where


# Finding 11 --------------------------------------------------------------------------


def _range_with_a_huge_checkpoint_id(ws: Path) -> None:
    huge = "CHK-" + "1" * 5000
    text = (ws / "ranges/ssh-miner/checklist.md").read_text()
    (ws / "ranges/big").mkdir()
    (ws / "ranges/big/checklist.md").write_text(
        text.replace("range: ssh-miner", "range: big").replace("CHK-01", huge, 1)
    )
    shutil.copytree(ws / "runs/demo/ssh-miner", ws / "runs/demo/big")


def test_a_checkpoint_id_of_5000_digits_is_one_line_and_hides_no_other_range(ws: Path):
    _range_with_a_huge_checkpoint_id(ws)
    result = cli("ranges", cwd=ws)
    assert "invalid checkpoint id" in refused(result)
    assert [line.split()[0] for line in error_lines(result.stdout)] == [
        "redis-exposed",
        "ssh-miner",
        "weak-baseline",
    ]


def test_a_checkpoint_id_of_5000_digits_fails_its_pair_not_the_batch(ws: Path):
    _range_with_a_huge_checkpoint_id(ws)
    result = cli("batch", "--no-notebook", "--runs", "demo", "--quiet", cwd=ws)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1 and "invalid checkpoint id" in result.stderr
    assert (ws / RECORD / "scores.json").is_file(), "the other pairs were evaluated"


# Finding 12 --------------------------------------------------------------------------


def test_a_verdicts_file_nested_100000_deep_is_one_line(ws: Path):
    (ws / "deep.json").write_text(DEEP_JSON)
    result = cli(
        "run", "--range", "ssh-miner", "--run", "demo", "--judge", "file",
        "--verdicts", "deep.json", cwd=ws,
    )  # fmt: skip
    assert "deeper than" in refused(result)


def test_a_label_file_nested_100000_deep_is_one_line(ws: Path):
    (ws / LABEL).write_text(DEEP_JSON)
    assert "deeper than" in refused(cli("validate", LABEL, cwd=ws))


# Finding 13 --------------------------------------------------------------------------


def test_a_5000_digit_number_in_a_label_is_one_line(ws: Path):
    data = json.loads((ws / LABEL).read_text())
    item = next(item for item in data["checkpoints"] if item["detection"])
    item["detection"]["discovery"] = "placeholder"
    huge = "1" + "0" * 4999
    (ws / LABEL).write_text(json.dumps(data).replace('"placeholder"', huge))
    assert "number of 5000 characters" in refused(cli("validate", LABEL, cwd=ws))


# Finding 14 --------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["verify", "record"])
@pytest.mark.parametrize(
    "scores", ["[]", '{"meta": "a string", "checkpoints": [], "summary": {}}'], ids=["list", "meta"]
)
def test_a_scores_json_that_is_not_a_record_is_one_line(ws: Path, command: str, scores: str):
    write_rules_record(ws, "demo")
    (ws / RECORD / "scores.json").write_text(scores)
    assert "not an evaluation record" in refused(cli(command, RECORD, cwd=ws))


# Finding 15 --------------------------------------------------------------------------


def test_a_line_break_in_a_run_id_is_one_line(ws: Path):
    result = cli("run", "--range", "ssh-miner", "--run", "de\nmo", cwd=ws)
    assert "de\\nmo" in refused(result)


# Finding 16 --------------------------------------------------------------------------


def test_an_empty_verdicts_file_is_refused(ws: Path):
    (ws / "empty.jsonl").write_text("\n")
    result = cli(
        "run", "--range", "ssh-miner", "--run", "demo", "--judge", "file",
        "--verdicts", "empty.jsonl", cwd=ws,
    )  # fmt: skip
    assert "empty" in refused(result)
    assert not (ws / "runs/demo/ssh-miner/evaluations").exists()


# Finding 17 --------------------------------------------------------------------------


def test_a_label_dated_9999_99_99_is_refused(ws: Path):
    data = json.loads((ws / LABEL).read_text())
    data["created"] = "9999-99-99"
    (ws / LABEL).write_text(json.dumps(data))
    assert "not a date" in refused(cli("validate", LABEL, cwd=ws))
