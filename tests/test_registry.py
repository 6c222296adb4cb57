"""The judge registry: names, settings, CLI flags and entry-point plugins."""

from __future__ import annotations

from typing import Any

import pytest

import evalkit
from evalkit.errors import JudgeError
from evalkit.judges import registry
from evalkit.judges.registry import (
    JudgeSetting,
    JudgeSpec,
    judge_spec,
    judge_specs,
    make_judge,
)


def test_built_ins_come_first_in_a_stable_order() -> None:
    names = [spec.name for spec in judge_specs()]
    assert names[:4] == ["rules", "claude", "openai-compatible", "file"]
    assert names == [spec.name for spec in judge_specs()]
    assert evalkit.JUDGE_NAMES == tuple(names)


def test_unknown_judge_names_the_choices() -> None:
    with pytest.raises(
        JudgeError,
        match="unknown judge 'oracle'; choose one of: rules, claude, openai-compatible, file",
    ):
        judge_spec("oracle")


def test_a_setting_the_judge_does_not_declare_is_a_judge_error() -> None:
    with pytest.raises(JudgeError, match="does not take model"):
        make_judge("rules", model="x")


def test_claude_declares_its_key_and_settings() -> None:
    spec = judge_spec("claude")
    assert spec.needs_key == "ANTHROPIC_API_KEY"
    assert [s.name for s in spec.settings][:5] == [
        "model",
        "prompt_dir",
        "concurrency",
        "use_cache",
        "cache_dir",
    ]


def test_plugins_load_once_and_a_broken_one_is_a_one_line_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from importlib.metadata import EntryPoint

    spec = JudgeSpec(
        "echo", lambda **s: make_judge("rules"), (JudgeSetting("level", int, 1, "how loud"),)
    )
    module = type(registry)("fake_plugin_module")
    module.SPEC = spec  # type: ignore[attr-defined]
    module.make_spec = lambda: spec  # type: ignore[attr-defined]
    module.broken = lambda: 1 / 0  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "fake_plugin_module", module)
    entries = [
        EntryPoint("echo", "fake_plugin_module:SPEC", registry.ENTRY_POINT_GROUP),
        EntryPoint("echo2", "fake_plugin_module:make_spec", registry.ENTRY_POINT_GROUP),
        EntryPoint("bad", "fake_plugin_module:broken", registry.ENTRY_POINT_GROUP),
        EntryPoint("gone", "no_such_module_xyz:SPEC", registry.ENTRY_POINT_GROUP),
    ]
    calls: list[Any] = []

    def fake_entry_points(*, group: str) -> list[EntryPoint]:
        calls.append(group)
        return entries

    monkeypatch.setattr(registry, "entry_points", fake_entry_points)
    monkeypatch.setattr(registry, "_PLUGINS", None)
    names = [s.name for s in judge_specs()]
    assert names[-2:] == ["echo", "echo2"]
    assert "bad" not in names and "gone" not in names
    judge_specs()
    assert calls == [registry.ENTRY_POINT_GROUP]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert all(line.startswith("evalkit: warning: judge plugin") for line in err)
    assert make_judge("echo", level=2).info.name == "rules"
    monkeypatch.setattr(registry, "_PLUGINS", None)


def test_evalkit_judges_lists_every_judge_with_settings_and_key(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from evalkit.cli import main

    assert main(["judges", "--json"]) == 0
    listed = {j["name"]: j for j in json.loads(capsys.readouterr().out)["judges"]}
    assert list(listed)[:4] == ["rules", "claude", "openai-compatible", "file"]
    assert listed["openai-compatible"]["needs_key"] == "OPENAI_API_KEY"
    flags = {s["flag"]: s for s in listed["openai-compatible"]["settings"]}
    assert flags["--base-url"]["type"] == "str" and flags["--repeats"]["default"] == 1
    assert listed["file"]["settings"][0]["flag"] == "--verdicts"
    assert main(["judges"]) == 0
    assert "claude  (API key: $ANTHROPIC_API_KEY)" in capsys.readouterr().out
