"""The flags every command shares, and the values commands build from them.

``--ranges-dir``/``--runs-dir`` (:func:`add_workspace_arguments`) and ``--judge``
with one flag per setting of every registered judge (:func:`add_judge_arguments`,
from the registry, so a new judge setting is a flag of every command that takes a
judge with no edit here); :func:`judge_config` turns the parsed flags into the one
:class:`~evalkit.judges.config.JudgeConfig` a command passes down, and
:func:`check_writable_folder` refuses an output folder before any work. Used by
``evalkit.cli`` and every module of ``evalkit.commands``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from .errors import EvalkitError
from .judges.config import JudgeConfig
from .judges.registry import all_settings, judge_names, setting_owners
from .workspace import Workspace

__all__ = [
    "add_judge_arguments",
    "add_workspace_arguments",
    "check_writable_folder",
    "judge_config",
    "prompt_dir_arg",
]

# Flags that predate the registry and keep working.
_LEGACY_NEGATIONS = {"use_cache": "--no-cache"}


def add_workspace_arguments(
    parser: argparse.ArgumentParser, *, ranges: bool = True, runs: bool = True
) -> None:
    """``--ranges-dir`` and ``--runs-dir``, whose defaults come from the workspace."""
    if ranges:
        parser.add_argument(
            "--ranges-dir",
            type=Path,
            metavar="DIR",
            help="folder of ranges (default: the workspace's ranges/)",
        )
    if runs:
        parser.add_argument(
            "--runs-dir",
            type=Path,
            metavar="DIR",
            help="folder of runs (default: the workspace's runs/)",
        )


def prompt_dir_arg(value: str) -> Path:
    """``--prompt-dir``: a folder, or the name of a packaged prompt version (``v1``, ``v3``)
    when no folder of that name exists."""
    path = Path(value)
    # The packaged prompts' folder, named here so that parsing flags loads no judge.
    packaged = Path(__file__).resolve().parent / "prompts" / value
    if not path.exists() and "/" not in value and (packaged / "system.md").is_file():
        return packaged
    return path


def add_judge_arguments(parser: Any, *, default: str = "rules") -> None:
    """``--judge`` and one flag per setting of every registered judge.

    Flags default to None ("not given") so each judge's own default applies.
    """
    parser.add_argument(
        "--judge",
        choices=judge_names(),
        default=default,
        help=f"judge backend (default: {default}; `evalkit judges` lists them)",
    )
    for setting in all_settings():
        owners = ", ".join(setting_owners(setting.name))
        shown = "" if setting.default is None else f"; default: {setting.default}"
        text = f"{setting.help} ({owners}{shown})"
        if setting.type is bool:
            parser.add_argument(
                setting.flag,
                dest=setting.name,
                action=argparse.BooleanOptionalAction,
                default=None,
                help=text,
            )
            negation = _LEGACY_NEGATIONS.get(setting.name)
            if negation:
                parser.add_argument(
                    negation,
                    dest=setting.name,
                    action="store_false",
                    default=None,
                    help=f"same as --no-{setting.flag[2:]}",
                )
        else:
            parser.add_argument(
                setting.flag,
                dest=setting.name,
                type=prompt_dir_arg if setting.name == "prompt_dir" else setting.type,
                default=None,
                metavar=setting.name.upper(),
                help=text,
            )


def given_paths(args: argparse.Namespace) -> list[Path]:
    """The paths the user typed as judge settings (``--cache-dir``, ``--verdicts`` ...)."""
    return [
        value
        for setting in all_settings()
        if isinstance(value := getattr(args, setting.name, None), Path)
    ]


def judge_config(args: argparse.Namespace, workspace: Workspace) -> JudgeConfig:
    """The judge configuration of the parsed flags: a path the user typed is absolute
    against the working directory; a default one (the response cache) lies in the
    workspace."""
    return JudgeConfig.from_args(args, base=workspace.root, cwd=workspace.cwd)


def check_writable_folder(folder: Path) -> None:
    """Fail before any work when ``folder`` cannot become an output folder."""
    if folder.exists() and not folder.is_dir():
        raise EvalkitError("output folder is a file", path=folder)
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise EvalkitError("output folder cannot be created or written", path=folder)
