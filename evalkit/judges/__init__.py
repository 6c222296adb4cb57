"""Judge backends behind one protocol, chosen by name."""

from __future__ import annotations

from typing import Any

from ..errors import JudgeError
from .base import Judge, JudgeResult, ProgressCallback

JUDGE_NAMES: tuple[str, ...] = ("rules", "claude")
# A current, non-deprecated model: the SDK warns on every call to a deprecated one.
DEFAULT_CLAUDE_MODEL = "claude-sonnet-4-6"

# The settings each backend takes; the notebook and CLI offer the union of them.
JUDGE_SETTINGS: dict[str, tuple[str, ...]] = {
    "rules": (),
    "claude": ("model", "prompt_dir", "concurrency", "use_cache", "cache_dir"),
}


def judge_options(name: str, **settings: Any) -> dict[str, Any]:
    """The subset of ``settings`` that the backend ``name`` takes.

    Lets one parameter set (the notebook's, the CLI's) drive any backend
    without each caller knowing which backend reads what.
    """
    if name not in JUDGE_SETTINGS:
        raise JudgeError(f"unknown judge {name!r}; choose one of: {', '.join(JUDGE_NAMES)}")
    return {key: settings[key] for key in JUDGE_SETTINGS[name] if key in settings}


def make_judge(name: str, **options: Any) -> Judge:
    """Build the judge called ``name``; ``options`` are its backend's settings.

    Unknown names, and options a backend does not take, are a JudgeError.
    """
    try:
        if name == "rules":
            from .rules import RulesJudge

            return RulesJudge(**options)
        if name == "claude":
            from .claude import ClaudeJudge

            return ClaudeJudge(**options)
    except TypeError as exc:
        raise JudgeError(f"judge {name!r}: {exc}") from exc
    raise JudgeError(f"unknown judge {name!r}; choose one of: {', '.join(JUDGE_NAMES)}")


__all__ = [
    "JUDGE_NAMES",
    "JUDGE_SETTINGS",
    "DEFAULT_CLAUDE_MODEL",
    "judge_options",
    "Judge",
    "JudgeResult",
    "ProgressCallback",
    "make_judge",
]
