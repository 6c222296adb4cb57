"""The guarded writer, the name sanitiser, input confinement and the folder lock."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evalkit import fileio
from evalkit.errors import OutputError, RunError


def test_writes_atomically_and_creates_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.txt"
    fileio.write_text_atomic(target, "one\n", root=tmp_path)
    fileio.write_text_atomic(target, "two\n", root=tmp_path)
    assert target.read_text() == "two\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.txt"]


def test_refuses_a_symlinked_target(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    folder = tmp_path / "eval"
    folder.mkdir()
    (folder / "scores.json").symlink_to(victim)
    with pytest.raises(OutputError, match="symlink"):
        fileio.write_text_atomic(folder / "scores.json", "attack\n")
    assert victim.read_text() == "precious\n"
    assert (folder / "scores.json").is_symlink()


def test_refuses_a_symlinked_folder_below_the_root(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    runs = tmp_path / "runs"
    (runs / "r1" / "evaluations").mkdir(parents=True)
    (runs / "r1" / "evaluations" / "rules").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(OutputError, match="symlink"):
        fileio.write_text_atomic(runs / "r1" / "evaluations" / "rules" / "x.txt", "x", root=runs)
    assert list(elsewhere.iterdir()) == []


def test_refuses_writing_outside_its_root(tmp_path: Path) -> None:
    with pytest.raises(OutputError, match="outside"):
        fileio.write_text_atomic(tmp_path / "a" / ".." / ".." / "x.txt", "x", root=tmp_path / "a")


def test_refuses_replacing_a_folder(tmp_path: Path) -> None:
    (tmp_path / "scores.json").mkdir()
    with pytest.raises(OutputError):
        fileio.write_text_atomic(tmp_path / "scores.json", "x")


def test_redacts_api_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value-123")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-other-456")
    target = fileio.write_text_atomic(
        tmp_path / "r.md", "key sk-ant-secret-value-123 and sk-openai-other-456 end"
    )
    text = target.read_text()
    assert "secret" not in text and "other" not in text
    assert text == "key [REDACTED] and [REDACTED] end"
    assert fileio.redact_secrets("no key here") == "no key here"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("rules", "rules"),
        ("claude-claude-sonnet-4-6", "claude-claude-sonnet-4-6"),
        ("x/../../../../escaped", "x_.._.._.._.._escaped"),
        ("..", "_"),
        ("", "_"),
        (".hidden", "hidden"),
        ("a\\b:c", "a_b_c"),
    ],
)
def test_safe_name(name: str, expected: str) -> None:
    assert fileio.safe_name(name) == expected
    assert "/" not in fileio.safe_name(name)


def test_confined_inputs(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("s")
    (runs / "report.md").symlink_to(secret)
    (runs / "ok.md").write_text("ok")
    assert fileio.confined(runs / "ok.md", runs) == (runs / "ok.md").resolve()
    with pytest.raises(RunError, match="outside"):
        fileio.confined(runs / "report.md", runs)
    assert fileio.confined(runs / "report.md", runs, allow_outside=True) == secret.resolve()


def test_one_holder_of_an_evaluation_lock(tmp_path: Path) -> None:
    out = tmp_path / "evaluations" / "rules"
    with fileio.evaluation_lock(out):
        with pytest.raises(OutputError, match="another evalkit run"):
            with fileio.evaluation_lock(out):
                pass
    with fileio.evaluation_lock(out):  # released
        pass


def test_the_usual_file_mode(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    os.umask(umask)
    path = fileio.write_text_atomic(tmp_path / "a.txt", "x\n")
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_named_folder_keeps_its_lock_inside(tmp_path: Path) -> None:
    out = tmp_path / "given"
    with fileio.evaluation_lock(out, root=out):
        assert (out / ".evalkit.lock").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["given"], "nothing beside it"


def test_read_confined_reads_a_file_inside_and_refuses_the_rest(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "ok.md").write_text("ok")
    (runs / "alias.md").symlink_to(runs / "ok.md")
    assert fileio.read_confined(runs / "alias.md", runs) == b"ok"
    with pytest.raises(RunError, match="above the limit"):
        fileio.read_confined(runs / "ok.md", runs, max_bytes=1)
    with pytest.raises(RunError, match="not a regular file"):
        fileio.read_confined(runs, runs)
    with pytest.raises(FileNotFoundError):
        fileio.read_confined(runs / "missing.md", runs)


def test_check_target_refuses_what_the_writer_would(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("precious")
    (tmp_path / "out").mkdir()
    (tmp_path / "out/scores.json").symlink_to(tmp_path / "victim")
    os.mkfifo(tmp_path / "out/pipe")
    fileio.check_target(tmp_path / "out/new.json", tmp_path)
    for name in ("scores.json", "pipe"):
        with pytest.raises(RunError, match="not a regular file"):
            fileio.check_target(tmp_path / "out" / name, tmp_path)
