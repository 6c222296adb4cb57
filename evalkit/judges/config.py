"""``JudgeConfig``: one judge configuration, built once at the edge and passed down.

A configuration is a judge's registry name and every setting it takes (defaults
filled in, validated, paths absolute). Commands build it from their flags
(:meth:`JudgeConfig.from_args`, the flags :func:`evalkit.arguments.add_judge_arguments`
adds from the registry), notebooks from their parameters
(:meth:`JudgeConfig.from_parameters`, papermill's strings parsed strictly: ``-p
use_cache false`` is ``False``, ``-p concurrency lots`` an error) and ``evalkit ab``
from a YAML file (:meth:`JudgeConfig.from_file`). It gives the notebook parameters
back (:meth:`to_parameters`), names its output folder safely without building the
judge (:meth:`folder_name`), and builds the judge (:meth:`build`) where the caller
needs one, once. The registry keeps the specs and their lookup only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import EvalkitError, JudgeInputError
from .base import Judge
from .registry import JudgeSetting, all_settings, judge_spec, make_judge

__all__ = [
    "JudgeConfig",
    "parse_bool",
    "parse_int",
    "parse_str",
    "path_setting_names",
]

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
# Settings that must be at least 1 when a judge takes them.
_AT_LEAST_ONE = ("concurrency", "repeats")


# --------------------------------------------------------------------------- strict parsing


def parse_bool(name: str, value: object) -> bool:
    """A bool from a bool or a papermill string (``true``/``false``/``yes``/``no``/``1``/``0``)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise EvalkitError(f"parameter {name} must be true or false, not {value!r}")


def parse_int(name: str, value: object) -> int:
    """An int from an int or a string of digits; anything else is an error."""
    if isinstance(value, bool):
        raise EvalkitError(f"parameter {name} must be a whole number, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,18}\s*", value):
        return int(value)
    raise EvalkitError(f"parameter {name} must be a whole number, not {value!r}")


def parse_str(name: str, value: object) -> str:
    """A string from a string (or a number or path, as papermill may pass them); None is ""."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, Path)) and not isinstance(value, bool):
        return str(value)
    raise EvalkitError(f"parameter {name} must be a string, not {value!r}")


def _check_bounds(value_of: Callable[[str], object], prefix: str) -> None:
    """Refuse a setting below its bound (JudgeInputError, exit 2), named as the user wrote
    it: ``prefix`` is ``--`` for a flag."""
    for name in _AT_LEAST_ONE:
        value = value_of(name)
        if isinstance(value, int) and not isinstance(value, bool) and value < 1:
            raise JudgeInputError(f"{prefix}{name} must be at least 1")


def _absolute(path: Path, base: Path) -> Path:
    return path if path.is_absolute() else base / path


def _parse_setting(setting: JudgeSetting, value: object, base: Path) -> Any:
    name, kind = setting.name, setting.type
    if kind is bool:
        return parse_bool(name, value)
    if kind is int:
        return parse_int(name, value)
    if kind is float:
        try:
            return float(parse_str(name, value))
        except ValueError:
            raise EvalkitError(f"parameter {name} must be a number, not {value!r}") from None
    if kind is Path:
        text = parse_str(name, value)
        if not text:  # "" means the judge's own default
            return setting.default
        return _absolute(Path(text), base)
    text = parse_str(name, value)
    # "" stands for None where None is the default (a model or server the user did not name).
    return None if not text and setting.default is None else text


def path_setting_names() -> tuple[str, ...]:
    """The settings of every judge that hold a path (passed relative to the workspace)."""
    return tuple(setting.name for setting in all_settings() if setting.type is Path)


# --------------------------------------------------------------------------- the value


@dataclass(frozen=True)
class JudgeConfig:
    """A judge by its registry name, with every setting it takes (see the module docstring)."""

    judge: str = "rules"
    settings: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        spec = judge_spec(self.judge)  # an unknown judge names the known ones
        # Bad input, said before anything runs (exit 2): a bound, then a setting not taken.
        _check_bounds(self.settings.get, "")
        known = {setting.name for setting in spec.settings}
        unknown = sorted(set(self.settings) - known)
        if unknown:
            takes = ", ".join(sorted(known)) or "no settings"
            raise JudgeInputError(
                f"judge {self.judge!r} does not take {', '.join(unknown)} (it takes {takes})"
            )
        filled = {s.name: self.settings.get(s.name, s.default) for s in spec.settings}
        # Frozen means frozen: a read-only copy of every setting, defaults filled in.
        object.__setattr__(self, "settings", MappingProxyType(filled))

    def __reduce__(self) -> tuple[Any, ...]:
        # A batch sends its configuration to worker processes and Dask workers: pickled as
        # its name and a plain copy of its settings (the read-only view itself cannot be).
        return (type(self), (self.judge, dict(self.settings)))

    # ----------------------------------------------------------------- building

    @classmethod
    def of(
        cls, judge: str, settings: Mapping[str, Any] | None = None, *, base: Path
    ) -> JudgeConfig:
        """``judge`` with ``settings`` (the others at their defaults), a relative path
        setting resolved against ``base`` (the workspace)."""
        given = dict(settings or {})
        for setting in judge_spec(judge).settings:
            given.setdefault(setting.name, setting.default)
        return cls(
            judge,
            {
                name: _absolute(value, base) if isinstance(value, Path) else value
                for name, value in given.items()
            },
        )

    @classmethod
    def from_args(cls, args: Any, *, base: Path, cwd: Path | None = None) -> JudgeConfig:
        """The configuration parsed command-line flags give: ``--judge`` and each setting's
        flag. A path the user typed is relative to ``cwd`` (default: the working
        directory); a default path (the response cache) lies in the workspace ``base``."""
        judge = getattr(args, "judge", None) or "rules"
        here = cwd or Path.cwd()
        spec = judge_spec(judge)
        # A bound is checked on every flag given, even one this judge then drops: a typed
        # ``--concurrency 0`` is bad input whichever judge runs.
        _check_bounds(lambda name: getattr(args, name, None), "--")
        # Another judge's setting is dropped, but repeats is refused: a judge that draws one
        # verdict must not pass for K samples.
        repeats = getattr(args, "repeats", None)
        if repeats not in (None, 1) and spec.setting("repeats") is None:
            raise JudgeInputError(
                f"the {judge} judge does not take repeats: it gives one verdict per checkpoint"
            )
        settings: dict[str, Any] = {}
        for setting in spec.settings:
            value = getattr(args, setting.name, None)
            if value is None:
                value = setting.default
                if isinstance(value, Path):
                    value = _absolute(value, base)
            elif isinstance(value, Path):
                value = _absolute(value, here)
            settings[setting.name] = value
        return cls(judge, settings)

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, Any], *, base: Path) -> JudgeConfig:
        """The configuration a notebook's parameters give, parsed strictly.

        ``parameters`` may hold unrelated names (a notebook's ``globals()``): only
        ``judge`` and the chosen judge's settings are read. Relative paths resolve
        against ``base`` (the workspace), not the kernel's working directory.
        """
        judge = parse_str("judge", parameters.get("judge", "rules")) or "rules"
        settings = {
            setting.name: _parse_setting(setting, parameters[setting.name], base)
            for setting in judge_spec(judge).settings
            if setting.name in parameters
        }
        return cls.of(judge, settings, base=base)

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], *, base: Path, path: Path, workspace: Path | None = None
    ) -> JudgeConfig:
        """A configuration file's mapping (``judge`` and settings by name, as ``evalkit ab``
        reads them); a relative path it names is relative to ``base``, the file's folder,
        and a default path (the response cache) lies in ``workspace`` (default: ``base``).
        A key the judge does not take, or a value of the wrong type, is one error naming
        ``path``."""
        if not isinstance(data.get("judge"), str):
            raise EvalkitError("a judge configuration is a mapping with a judge name", path=path)
        spec = judge_spec(data["judge"])
        known = {setting.name: setting for setting in spec.settings}
        unknown = sorted(set(data) - {"judge"} - set(known))
        if unknown:
            takes = ", ".join(["judge", *sorted(known)])
            raise EvalkitError(
                f"the {spec.name} judge does not take {', '.join(unknown)} (keys: {takes})",
                path=path,
            )
        settings: dict[str, Any] = {}
        for name, setting in known.items():
            if name not in data or data[name] is None:
                continue
            value = data[name]
            if setting.type is Path:
                value = _absolute(Path(str(value)), base) if str(value) else setting.default
            elif setting.type is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            elif not isinstance(value, setting.type) or isinstance(value, bool) != (
                setting.type is bool
            ):
                raise EvalkitError(f"{name} must be a {setting.type.__name__}", path=path)
            settings[name] = value
        return cls.of(spec.name, settings, base=workspace or base)

    # ----------------------------------------------------------------- giving back

    def to_parameters(self, *, relative_to: Path | None = None) -> dict[str, Any]:
        """``judge`` and every setting of every registered judge (this judge's value, else
        the setting's default), JSON-ready, so a parameters cell never keeps a stale
        value. Paths are strings, relative to ``relative_to`` where they lie inside it."""
        parameters: dict[str, Any] = {"judge": self.judge}
        for setting in all_settings():
            value = self.settings.get(setting.name, setting.default)
            if isinstance(value, Path):
                value = _shown(value, relative_to)
            parameters[setting.name] = "" if value is None else value
        return parameters

    def describe(self) -> dict[str, Any]:
        """The configuration, JSON-ready (what a calibration records of its judge)."""
        return {
            "judge": self.judge,
            "settings": {
                name: str(value) if isinstance(value, Path) else value
                for name, value in self.settings.items()
            },
        }

    @property
    def paths(self) -> tuple[Path, ...]:
        """The paths among the settings (a cache, a prompt folder, a verdicts file)."""
        return tuple(value for value in self.settings.values() if isinstance(value, Path))

    @property
    def model(self) -> str | None:
        """The judge model a setting names, when the judge takes one."""
        value = self.settings.get("model")
        return str(value) if value else None

    def folder_name(self) -> str:
        """``<judge>[-<model>]`` as one safe folder name: the model a setting names, else
        the name of the file of recorded verdicts, else (a plugin) what the built judge
        reports; the offline ``rules`` judge has one folder, ``rules``."""
        from ..fileio import safe_name

        if self.judge == "rules":
            return safe_name(self.judge)
        model = self.model
        if model is None and isinstance(self.settings.get("verdicts"), Path):
            model = self.settings["verdicts"].name
        if model is None and "model" not in self.settings:
            model = self.build().info.evaluator_model or None
        return safe_name(self.judge if not model else f"{self.judge}-{model}")

    def build(self) -> Judge:
        """The judge, built (no call is made); build it once where it is used."""
        return make_judge(self.judge, **dict(self.settings))


def _shown(path: Path, relative_to: Path | None) -> str:
    if relative_to is None:
        return str(path)
    try:
        return path.relative_to(relative_to).as_posix() or "."
    except ValueError:
        return str(path)
