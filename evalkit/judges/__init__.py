"""Judge backends behind one protocol, chosen by name from the registry."""

from __future__ import annotations

from typing import Any

from .base import Judge, JudgeBase, JudgeResult, ProgressCallback
from .registry import (
    DEFAULT_CLAUDE_MODEL,
    JudgeSetting,
    JudgeSpec,
    judge_names,
    judge_options,
    judge_spec,
    judge_specs,
    make_judge,
    register_judge,
)


def __getattr__(name: str) -> Any:
    # Computed on use: the names include plugins, which load on the first lookup.
    if name == "JUDGE_NAMES":
        return judge_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_CLAUDE_MODEL",
    "Judge",
    "JudgeBase",
    "JudgeResult",
    "JudgeSetting",
    "JudgeSpec",
    "ProgressCallback",
    "judge_names",
    "judge_options",
    "judge_spec",
    "judge_specs",
    "make_judge",
    "register_judge",
]
