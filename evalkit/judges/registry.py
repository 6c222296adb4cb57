"""The judge registry: every judge by name, with the settings it takes.

Built-in judges are registered here; third-party packages add theirs through the
``evalkit.judges`` entry-point group (the entry point's name is the judge name;
it loads to a :class:`JudgeSpec`, or to a zero-argument callable returning one).
The CLI, the notebook and ``evalkit judges`` all read this one table, so adding
a judge touches only its own module and one ``register_judge`` call.

Built-in factories import their module on first use and entry points are loaded
once, on the first lookup, so ``import evalkit`` stays light.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from ..errors import JudgeError
from ..fileio import add_secret_env_var
from . import measured
from .base import Judge

ENTRY_POINT_GROUP = "evalkit.judges"
# A current, non-deprecated model: the SDK warns on every call to a deprecated one.
DEFAULT_CLAUDE_MODEL = "claude-sonnet-4-6"


@dataclass(frozen=True)
class JudgeSetting:
    """One setting of a judge: a notebook parameter and a ``--name-with-dashes`` flag."""

    name: str  # python identifier = notebook parameter name
    type: type  # str, int, float, bool or pathlib.Path
    default: Any
    help: str

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class JudgeSpec:
    name: str  # "rules", "claude", "openai-compatible", "file", or a plugin's
    factory: Callable[..., Judge]  # factory(**settings) -> Judge
    settings: tuple[JudgeSetting, ...] = ()
    help: str = ""
    needs_key: str | None = None  # env var name of the API key, if any

    def setting(self, name: str) -> JudgeSetting | None:
        return next((s for s in self.settings if s.name == name), None)


_BUILT_IN: dict[str, JudgeSpec] = {}
_PLUGINS: dict[str, JudgeSpec] | None = None  # None until entry points are loaded


def register_judge(
    name: str,
    factory: Callable[..., Judge],
    settings: Iterable[JudgeSetting] = (),
    *,
    help: str = "",
    needs_key: str | None = None,
) -> JudgeSpec:
    """Register (or replace) the judge ``name``; returns its spec."""
    spec = JudgeSpec(name, factory, tuple(settings), help=help, needs_key=needs_key)
    _BUILT_IN[name] = spec
    if needs_key:
        add_secret_env_var(needs_key)  # its value is redacted from every file evalkit writes
    return spec


def _lazy(module: str, attribute: str) -> Callable[..., Judge]:
    """A factory importing ``module`` only when a judge is first built."""

    def factory(**settings: Any) -> Judge:
        judge_class: Callable[..., Judge] = getattr(import_module(module, __package__), attribute)
        return judge_class(**settings)

    factory.__qualname__ = f"{module}.{attribute}"
    return factory


def _warn(message: str) -> None:
    print(f"evalkit: warning: {message}", file=sys.stderr)


def _load_plugins() -> dict[str, JudgeSpec]:
    global _PLUGINS
    if _PLUGINS is not None:
        return _PLUGINS
    found: dict[str, JudgeSpec] = {}
    for entry in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            loaded = entry.load()
            spec = loaded if isinstance(loaded, JudgeSpec) else loaded()
            if not isinstance(spec, JudgeSpec):
                raise TypeError(f"{entry.value} is not a JudgeSpec")
        except Exception as exc:  # a broken plugin must not break evalkit
            _warn(f"judge plugin {entry.name!r} not loaded: {type(exc).__name__}: {exc}")
            continue
        if spec.name != entry.name:
            spec = JudgeSpec(entry.name, spec.factory, spec.settings, spec.help, spec.needs_key)
        if entry.name in _BUILT_IN:
            _warn(f"judge plugin {entry.name!r} ignored: a built-in judge has that name")
            continue
        found[entry.name] = spec
        if spec.needs_key:
            add_secret_env_var(spec.needs_key)
    _PLUGINS = found
    return found


def judge_specs() -> tuple[JudgeSpec, ...]:
    """Built-in judges in registration order, then plugins by name."""
    return (*_BUILT_IN.values(), *_load_plugins().values())


def judge_names() -> tuple[str, ...]:
    return tuple(spec.name for spec in judge_specs())


def judge_spec(name: str) -> JudgeSpec:
    spec = _BUILT_IN.get(name) or _load_plugins().get(name)
    if spec is None:
        raise JudgeError(f"unknown judge {name!r}; choose one of: {', '.join(judge_names())}")
    return spec


def make_judge(name: str, **settings: Any) -> Judge:
    """Build the judge ``name``; a setting it does not declare is a JudgeError."""
    spec = judge_spec(name)
    known = {s.name for s in spec.settings}
    unknown = sorted(set(settings) - known)
    if unknown:
        takes = ", ".join(sorted(known)) or "no settings"
        raise JudgeError(f"judge {name!r} does not take {', '.join(unknown)} (it takes {takes})")
    try:
        return spec.factory(**settings)
    except TypeError as exc:
        raise JudgeError(f"judge {name!r}: {exc}") from exc


def judge_options(name: str, **settings: Any) -> dict[str, Any]:
    """The subset of ``settings`` that the judge ``name`` takes.

    Lets one parameter set (the notebook's, the CLI's) drive any judge without
    each caller knowing which judge reads what.
    """
    spec = judge_spec(name)
    return {s.name: settings[s.name] for s in spec.settings if s.name in settings}


# --- API keys: one rule for `run` and `estimate` -------------------------------------------


def api_key(spec: JudgeSpec, environ: Mapping[str, str] | None = None) -> str | None:
    """The judge's API key from its env var (never from a flag), or None."""
    if spec.needs_key is None:
        return None
    value = (os.environ if environ is None else environ).get(spec.needs_key, "").strip()
    return value or None


def missing_key_error(
    env: str, purpose: str, *, without: str = "only a fully cached re-run works without it"
) -> JudgeError | None:
    """The one "stop before spending" rule for a missing key, shared by ``run`` and ``estimate``.

    None when ``env`` is set; else the JudgeError to raise before anything starts.
    ``purpose`` finishes "export it to ..."; ``without`` says what works without the key.
    """
    if os.environ.get(env, "").strip():
        return None
    return JudgeError(f"{env} is not set: export it to {purpose} ({without})")


# --- every setting ---------------------------------------------------------------------------


def all_settings() -> tuple[JudgeSetting, ...]:
    """Every setting of every judge, once per name (the first registration wins)."""
    seen: dict[str, JudgeSetting] = {}
    for spec in judge_specs():
        for setting in spec.settings:
            seen.setdefault(setting.name, setting)
    return tuple(seen.values())


def setting_owners(name: str) -> tuple[str, ...]:
    """The judges that take the setting ``name``."""
    return tuple(spec.name for spec in judge_specs() if spec.setting(name) is not None)


# --- built-in judges --------------------------------------------------------------------------

register_judge(
    "rules",
    _lazy(".rules", "RulesJudge"),
    help=(
        "offline, deterministic: keyword and structure rules (no API key, no cost);"
        f" measured blind: kappa {measured.BLIND_KAPPA:.2f} against human labels,"
        f" {measured.INFLATION_MEAN_SPREAD[0]:g} to {measured.INFLATION_MEAN_SPREAD[1]:g} points"
        f" per held-out attack on average across {len(measured.RED_TEAMS)} blind red teams"
        f" ({measured.INFLATION_WORST_SPREAD[0]} to {measured.INFLATION_WORST_SPREAD[1]} at"
        " worst): a baseline for honest documents,"
        " never for untrusted or optimised agents or as a reward signal"
    ),
)
_LLM_SETTINGS = (
    JudgeSetting("prompt_dir", Path, None, "judge prompt templates (default: packaged)"),
    JudgeSetting("concurrency", int, 8, "judge calls in flight"),
    JudgeSetting("use_cache", bool, True, "reuse cached judge responses"),
    JudgeSetting("cache_dir", Path, Path(".evalkit-cache"), "response cache folder"),
    JudgeSetting("repeats", int, 1, "independent verdicts per item; the majority is kept"),
)
register_judge(
    "claude",
    _lazy(".claude", "ClaudeJudge"),
    (JudgeSetting("model", str, DEFAULT_CLAUDE_MODEL, "judge model id"), *_LLM_SETTINGS),
    help="an LLM judge through the Anthropic Messages API",
    needs_key="ANTHROPIC_API_KEY",
)
register_judge(
    "openai-compatible",
    _lazy(".llm.openai_compat", "openai_compatible_judge"),
    (
        JudgeSetting("model", str, None, "judge model id"),
        JudgeSetting(
            "base_url", str, None, "Chat Completions server URL (default: OPENAI_BASE_URL/OpenAI)"
        ),
        *_LLM_SETTINGS,
    ),
    help="an LLM judge through any OpenAI-compatible Chat Completions server "
    "(vLLM, Ollama, llama.cpp, OpenAI); needs pip install 'evalkit[openai]'",
    needs_key="OPENAI_API_KEY",
)
register_judge(
    "file",
    _lazy(".file", "FileJudge"),
    (JudgeSetting("verdicts", Path, None, "precomputed verdicts (JSON or JSONL)"),),
    help="precomputed verdicts from a file, in the LLM judge's answer shape",
)
