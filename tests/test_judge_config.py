"""JudgeConfig: one judge configuration from flags, notebook parameters or a file, and back."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from evalkit.arguments import add_judge_arguments
from evalkit.cli import build_parser
from evalkit.errors import EvalkitError, JudgeError
from evalkit.judges.config import JudgeConfig, path_setting_names

BASE = Path("/work/space")


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_judge_arguments(parser)
    return parser.parse_args(list(argv))


def test_flags_come_from_settings_and_old_flag_names_keep_working() -> None:
    args = _parse("--judge", "claude", "--model", "m", "--no-cache", "--concurrency", "3")
    settings = JudgeConfig.from_args(args, base=BASE).settings
    assert settings["model"] == "m"
    assert settings["use_cache"] is False
    assert settings["concurrency"] == 3
    # A default path lies in the workspace; a path the user types is relative to the cwd.
    assert settings["cache_dir"] == BASE / ".evalkit-cache"
    typed = JudgeConfig.from_args(
        _parse("--judge", "claude", "--cache-dir", "c"), base=BASE, cwd=Path("/here")
    )
    assert typed.settings["cache_dir"] == Path("/here/c")
    assert _parse("--use-cache").use_cache is True
    assert _parse("--no-use-cache").use_cache is False


def test_settings_not_given_take_the_judges_default_and_other_judges_settings_are_dropped() -> None:
    config = JudgeConfig.from_args(_parse("--judge", "rules", "--model", "m"), base=BASE)
    assert dict(config.settings) == {}
    parameters = config.to_parameters()
    assert parameters["judge"] == "rules" and parameters["prompt_dir"] == ""
    assert parameters["cache_dir"] == ".evalkit-cache"  # every judge's setting, its default


@pytest.mark.parametrize("judge", ["rules", "claude"])
def test_a_bound_is_checked_on_every_flag_given_even_one_the_judge_drops(judge: str) -> None:
    with pytest.raises(JudgeError, match="--concurrency must be at least 1"):
        JudgeConfig.from_args(_parse("--judge", judge, "--concurrency", "0"), base=BASE)


def test_notebook_parameters_become_the_judges_settings_parsed_strictly() -> None:
    parameters = {
        "judge": "openai-compatible",
        "model": "m",
        "base_url": "",
        "prompt_dir": "",
        "repeats": "3",
        "use_cache": "false",
        "verdicts": "v.json",
        "range_id": "x",
    }
    config = JudgeConfig.from_parameters(parameters, base=BASE)
    assert config.settings["model"] == "m" and config.settings["base_url"] is None
    assert config.settings["prompt_dir"] is None and config.settings["repeats"] == 3
    assert config.settings["use_cache"] is False
    assert config.settings["cache_dir"] == BASE / ".evalkit-cache"
    file = JudgeConfig.from_parameters({**parameters, "judge": "file"}, base=BASE)
    assert dict(file.settings) == {"verdicts": BASE / "v.json"}
    with pytest.raises(EvalkitError, match="concurrency must be a whole number"):
        JudgeConfig.from_parameters({"judge": "claude", "concurrency": "lots"}, base=BASE)


def test_to_parameters_and_back_is_the_same_configuration() -> None:
    config = JudgeConfig.of(
        "claude", {"model": "m", "concurrency": 2, "prompt_dir": Path("p")}, base=BASE
    )
    parameters = config.to_parameters(relative_to=BASE)
    assert parameters["prompt_dir"] == "p" and parameters["verdicts"] == ""
    assert JudgeConfig.from_parameters(parameters, base=BASE) == config
    assert set(path_setting_names()) == {"prompt_dir", "cache_dir", "verdicts"}


def test_the_judge_takes_the_settings_its_registry_entry_declares(tmp_path: Path) -> None:
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text("")
    assert JudgeConfig.of("file", {"verdicts": verdicts}, base=tmp_path).judge == "file"
    with pytest.raises(JudgeError, match="does not take"):
        JudgeConfig("rules", {"verdicts": verdicts})
    with pytest.raises(EvalkitError, match="does not take repeats"):
        JudgeConfig("rules", {"repeats": 3})
    with pytest.raises(EvalkitError, match="at least 1"):
        JudgeConfig("rules", {"repeats": 0})
    with pytest.raises(EvalkitError, match="at least 1"):
        JudgeConfig("claude", {"concurrency": 0})


@pytest.mark.parametrize(
    "model",
    ["x/../../../escaped-here", "../..", "/etc/passwd", "a\\b", "..", "x\ny", "."],
)
def test_no_model_name_becomes_a_path(model: str) -> None:
    for judge in ("claude", "openai-compatible"):
        name = JudgeConfig.of(judge, {"model": model}, base=BASE).folder_name()
        assert "/" not in name and "\\" not in name and "\n" not in name
        assert name not in {".", ".."} and not name.startswith(".")
        assert name.startswith(judge)


def test_the_folder_is_named_without_building_the_judge() -> None:
    # openai-compatible without a model cannot be built, yet its folder has a name.
    assert JudgeConfig("openai-compatible").folder_name() == "openai-compatible"
    assert JudgeConfig.of("claude", {"model": "claude-x"}, base=BASE).folder_name() == (
        "claude-claude-x"
    )
    assert JudgeConfig.of("file", {"verdicts": Path("a/v.jsonl")}, base=BASE).folder_name() == (
        "file-v.jsonl"
    )
    assert JudgeConfig().folder_name() == "rules"


def test_a_configuration_file_names_settings_by_their_registry_names(tmp_path: Path) -> None:
    config = JudgeConfig.from_mapping(
        {"judge": "claude", "model": "m", "prompt_dir": "prompts", "repeats": 2},
        base=tmp_path,
        path=tmp_path / "a.yaml",
        workspace=BASE,
    )
    assert config.settings["prompt_dir"] == tmp_path / "prompts"
    assert config.settings["cache_dir"] == BASE / ".evalkit-cache"
    with pytest.raises(EvalkitError, match=r"a\.yaml.*does not take colour"):
        JudgeConfig.from_mapping(
            {"judge": "rules", "colour": 1}, base=tmp_path, path=tmp_path / "a.yaml"
        )
    with pytest.raises(EvalkitError, match="repeats must be a int"):
        JudgeConfig.from_mapping(
            {"judge": "claude", "repeats": "2"}, base=tmp_path, path=tmp_path / "a.yaml"
        )


def _flags(command: str) -> set[str]:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    sub = subparsers.choices[command]
    return {flag for action in sub._actions for flag in action.option_strings}


def test_every_command_that_takes_a_judge_takes_the_same_judge_flags() -> None:
    parser = argparse.ArgumentParser()
    add_judge_arguments(parser)
    judge_flags = {flag for action in parser._actions for flag in action.option_strings} - {
        "-h",
        "--help",
    }
    assert {"--judge", "--model", "--base-url", "--cache-dir", "--concurrency"} <= judge_flags
    for command in ("run", "batch", "calibrate", "robustness", "prompts"):
        assert judge_flags <= _flags(command), command


def test_a_configuration_crosses_to_worker_processes() -> None:
    import pickle

    config = JudgeConfig.of("claude", {"model": "m"}, base=BASE)
    assert pickle.loads(pickle.dumps(config)) == config
