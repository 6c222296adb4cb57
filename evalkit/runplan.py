"""``RunPlan``: everything one evaluation needs, validated once, from the CLI to the notebook.

The CLI builds a plan from its arguments, checks it (and the inputs it names)
before anything runs, and hands the notebook ``plan.to_parameters()``: the
notebook's parameters by the same names. The notebook turns its parameters back
into the same plan with :meth:`RunPlan.from_parameters`, which parses papermill's
strings strictly (``-p use_cache false`` is ``False``; ``-p concurrency lots`` is
an error, never a truthy string) and resolves relative folders against the
workspace, so plain ``papermill notebooks/evaluate.ipynb OUT.ipynb -p range_id R
-p run_id X`` behaves the same from any working directory.

A plan is data, checked against the judge registry when it is built (the default
folder of a judge other than ``rules`` is named after the model a built judge
reports; nothing is called), and does nothing: reading the inputs it names,
building its judge and creating its output folder are :mod:`evalkit.prepare`'s.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .errors import EvalkitError
from .fileio import safe_name
from .judges.registry import all_settings, judge_spec, make_judge

# Workspace discovery lives in evalkit.workspace; its names stay importable from here, as
# the labelling notebooks import them.
from .workspace import WORKSPACE_ENV, Workspace, find_workspace

__all__ = [
    "PARENT_PID_ENV",
    "WORKSPACE_ENV",
    "RunPlan",
    "default_out_dir",
    "find_workspace",
    "parse_bool",
    "parse_int",
    "stop_with_parent",
]

# Set by the CLI for the kernel it starts: the kernel stops when that process dies.
PARENT_PID_ENV = "EVALKIT_PARENT_PID"

_RANGE_ID = re.compile(r"[a-z0-9][a-z0-9_-]*")
# Parameters that are the plan's own; every other known parameter is a judge setting.
_PLAN_PARAMETERS = (
    "range_id",
    "run_id",
    "judge",
    "ranges_dir",
    "runs_dir",
    "out_dir",
    "model_under_test",
    "allow_outside_inputs",
)
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


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
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    raise EvalkitError(f"parameter {name} must be a whole number, not {value!r}")


def _parse_str(name: str, value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float, Path)) and not isinstance(value, bool):
        return str(value)
    raise EvalkitError(f"parameter {name} must be a string, not {value!r}")


def _parse_setting(name: str, kind: type, default: Any, value: object, base: Path) -> Any:
    if kind is bool:
        return parse_bool(name, value)
    if kind is int:
        return parse_int(name, value)
    if kind is float:
        try:
            return float(_parse_str(name, value))
        except ValueError:
            raise EvalkitError(f"parameter {name} must be a number, not {value!r}") from None
    if kind is Path:
        text = _parse_str(name, value)
        path = Path(text) if text else default  # "" means the judge's own default
        # Relative to the workspace, like ranges_dir and runs_dir, not to the kernel's cwd.
        return _absolute(Path(path), base) if path is not None else None
    return _parse_str(name, value)


# --------------------------------------------------------------------------- workspace


def _absolute(path: Path, base: Path) -> Path:
    return path if path.is_absolute() else base / path


def default_out_dir(
    runs_dir: Path, run_id: str, range_id: str, judge: str, model: str | None
) -> Path:
    """``runs/<run>/<range>/evaluations/<judge>[-<model>]``: judges and models never collide.

    The judge and model names become one folder name only through ``safe_name``.
    """
    name = safe_name(judge if not model else f"{judge}-{model}")
    return runs_dir / run_id / range_id / "evaluations" / name


def _folder_model(judge: str, settings: Mapping[str, Any]) -> str | None:
    """The model part of the default folder name: the judge's own ``evaluator_model``.

    The offline ``rules`` judge has one folder, ``rules``. Any other judge is built
    (no call is made) to ask it, so a plugin or the file judge names its folder
    the same way from the CLI and from plain papermill.
    """
    if judge == "rules":
        return None
    return make_judge(judge, **dict(settings)).info.evaluator_model or None


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class RunPlan:
    """One (range, run, judge) evaluation, validated when built."""

    range_id: str
    run_id: str
    judge: str
    ranges_dir: Path
    runs_dir: Path
    out_dir: Path
    judge_settings: Mapping[str, Any] = field(default_factory=dict)
    model_under_test: str = ""
    allow_outside_inputs: bool = False
    notebook: Path | None = None  # the CLI's --notebook; not a notebook parameter
    # An evaluation folder whose recorded verdicts are replayed instead of judging again.
    replay_from: Path | None = None

    def __post_init__(self) -> None:
        if not _RANGE_ID.fullmatch(self.range_id):
            raise EvalkitError(f"invalid range id {self.range_id!r}: expected [a-z0-9][a-z0-9_-]*")
        if not self.run_id or self.run_id in {".", ".."} or any(c in self.run_id for c in "/\\\0"):
            raise EvalkitError(f"invalid run id {self.run_id!r}: a folder name is expected")
        spec = judge_spec(self.judge)  # an unknown judge names the known ones
        known = {s.name: s for s in spec.settings}
        unknown = sorted(set(self.judge_settings) - set(known))
        if unknown:
            raise EvalkitError(f"judge {self.judge!r} does not take {', '.join(unknown)}")
        settings = {s.name: self.judge_settings.get(s.name, s.default) for s in spec.settings}
        concurrency = settings.get("concurrency")
        if isinstance(concurrency, int) and concurrency < 1:
            raise EvalkitError("concurrency must be at least 1")
        for name in ("ranges_dir", "runs_dir", "out_dir"):
            if not getattr(self, name).is_absolute():
                raise EvalkitError(f"{name} must be an absolute path inside a plan")
        # Frozen means frozen: a read-only copy of every setting, defaults filled in.
        object.__setattr__(self, "judge_settings", MappingProxyType(settings))

    # ----------------------------------------------------------------- building

    @classmethod
    def build(
        cls,
        *,
        range_id: str,
        run_id: str,
        judge: str,
        ranges_dir: str | Path,
        runs_dir: str | Path,
        out_dir: str | Path | None = None,
        judge_settings: Mapping[str, Any] | None = None,
        model_under_test: str = "",
        allow_outside_inputs: bool = False,
        notebook: Path | None = None,
        base: Path | None = None,
        replay_from: str | Path | None = None,
    ) -> RunPlan:
        """A plan with relative folders resolved against ``base`` (default: the workspace)
        and the default evaluation folder when ``out_dir`` is not given."""
        root = base or find_workspace()
        ranges = _absolute(Path(ranges_dir), root).resolve()
        runs = _absolute(Path(runs_dir), root).resolve()
        given = dict(judge_settings or {})
        # Every setting the judge takes, its default when not given; a setting it does not
        # take stays, so the check in __post_init__ names it.
        for setting in judge_spec(judge).settings:
            given.setdefault(setting.name, setting.default)
        # Path settings (cache, prompts) are relative to the same base as the folders.
        settings = {
            name: _absolute(value, root) if isinstance(value, Path) else value
            for name, value in given.items()
        }
        if out_dir:
            out = _absolute(Path(out_dir), root)
        else:
            out = default_out_dir(runs, run_id, range_id, judge, _folder_model(judge, settings))
        return cls(
            range_id=range_id,
            run_id=run_id,
            judge=judge,
            ranges_dir=ranges,
            runs_dir=runs,
            out_dir=Path(os.path.abspath(out)),
            judge_settings=settings,
            model_under_test=model_under_test,
            allow_outside_inputs=allow_outside_inputs,
            notebook=notebook,
            replay_from=_absolute(Path(replay_from), root) if replay_from else None,
        )

    # ----------------------------------------------------------------- notebook parameters

    def to_parameters(self) -> dict[str, Any]:
        """The notebook's parameters, JSON-ready, by the notebook's own names.

        Every setting of every registered judge is given (this judge's value, or
        the setting's default), so the parameters cell never keeps a stale value.
        """
        parameters: dict[str, Any] = {
            "range_id": self.range_id,
            "run_id": self.run_id,
            "judge": self.judge,
            "ranges_dir": str(self.ranges_dir),
            "runs_dir": str(self.runs_dir),
            "out_dir": str(self.out_dir),
            "model_under_test": self.model_under_test,
            "allow_outside_inputs": self.allow_outside_inputs,
            "replay_from": str(self.replay_from) if self.replay_from else "",
        }
        for setting in all_settings():
            value = self.judge_settings.get(setting.name, setting.default)
            if isinstance(value, Path):
                value = str(value)
            parameters[setting.name] = "" if value is None else value
        return parameters

    @classmethod
    def from_parameters(
        cls, parameters: Mapping[str, Any], *, workspace: Path | None = None
    ) -> RunPlan:
        """The plan a notebook's parameters describe, parsed strictly.

        ``parameters`` may hold unrelated names (a notebook's ``globals()``): only
        the plan's own and the chosen judge's settings are read. Relative folders
        resolve against the workspace (:func:`find_workspace`); an empty
        ``out_dir`` is the evaluation folder the CLI uses.
        """
        base = workspace or find_workspace()
        missing = [name for name in ("range_id", "run_id") if not parameters.get(name)]
        if missing:
            raise EvalkitError(f"missing parameter(s): {', '.join(missing)}")
        judge = _parse_str("judge", parameters.get("judge", "rules")) or "rules"
        spec = judge_spec(judge)
        settings = {
            s.name: _parse_setting(s.name, s.type, s.default, parameters[s.name], base)
            for s in spec.settings
            if s.name in parameters
        }
        return cls.build(
            range_id=_parse_str("range_id", parameters["range_id"]),
            run_id=_parse_str("run_id", parameters["run_id"]),
            judge=judge,
            ranges_dir=_parse_str("ranges_dir", parameters.get("ranges_dir", "")) or "ranges",
            runs_dir=_parse_str("runs_dir", parameters.get("runs_dir", "")) or "runs",
            out_dir=_parse_str("out_dir", parameters.get("out_dir", "")) or None,
            judge_settings=settings,
            model_under_test=_parse_str("model_under_test", parameters.get("model_under_test")),
            allow_outside_inputs=parse_bool(
                "allow_outside_inputs", parameters.get("allow_outside_inputs", False)
            ),
            base=base,
            replay_from=_parse_str("replay_from", parameters.get("replay_from", "")) or None,
        )

    # ----------------------------------------------------------------- derived

    @property
    def output_root(self) -> Path:
        """The folder below which no component of an output path may be a symlink:
        the runs folder for evaluation folders inside it, else the out folder itself (a
        folder the user named, whose lock and staging folder then stay inside it)."""
        # Lexically, never through links: a planted link must not move the root.
        if self.runs_dir in self.out_dir.parents:
            return self.runs_dir
        return self.out_dir

    def workspace(self) -> Workspace:
        """The workspace of this plan's folders (discovered as the CLI discovers it)."""
        return Workspace.find(
            ranges_dir=self.ranges_dir,
            runs_dir=self.runs_dir,
            allow_outside_inputs=self.allow_outside_inputs,
        )

    def with_out_dir(self, out_dir: Path) -> RunPlan:
        return replace(self, out_dir=out_dir)


# --------------------------------------------------------------------------- parent watch


def stop_with_parent(interval: float = 0.2) -> bool:
    """In a kernel started by the CLI, exit as soon as that CLI process dies.

    The CLI puts its pid in ``$EVALKIT_PARENT_PID``; a daemon thread checks it
    every ``interval`` seconds and ends the kernel process, so no judge request
    is sent after the CLI is gone. Returns whether the watch was started.
    """
    text = os.environ.get(PARENT_PID_ENV, "").strip()
    if not text.isdigit():
        return False
    pid = int(text)

    def alive() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        # A zombie parent (dead, not yet reaped) still answers kill(0); its children are
        # re-parented, so a changed parent pid means the same.
        return os.getppid() == pid or _is_running(pid)

    def watch() -> None:
        while alive():
            time.sleep(interval)
        _remove_connection_file()
        os._exit(1)

    threading.Thread(target=watch, name="evalkit-parent-watch", daemon=True).start()
    return True


def _remove_connection_file() -> None:
    """Remove this kernel's connection file (its ports and HMAC key): the process that
    started the kernel, which would have removed it, is gone."""
    try:
        from ipykernel.kernelapp import IPKernelApp

        if IPKernelApp.initialized():
            os.remove(IPKernelApp.instance().abs_connection_file)
    except Exception:  # best effort: the kernel ends either way
        pass


def _is_running(pid: int) -> bool:
    """False for a zombie (Linux /proc); True where that cannot be told."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return status.rpartition(")")[2].split()[0] != "Z"
