"""``RunPlan``: everything one evaluation needs, validated once, from the CLI to the notebook.

The CLI builds a plan from its arguments, checks it (and the inputs it names)
before anything runs, and hands the notebook ``plan.to_parameters()``: the
notebook's parameters by the same names. The notebook turns its parameters back
into the same plan with :meth:`RunPlan.from_parameters`, which parses papermill's
strings strictly (``-p use_cache false`` is ``False``; ``-p concurrency lots`` is
an error, never a truthy string) and resolves relative folders against the
workspace, so plain ``papermill notebooks/evaluate.ipynb OUT.ipynb -p range_id R
-p run_id X`` behaves the same from any working directory.

A plan is data: its judge is one :class:`~evalkit.judges.config.JudgeConfig`,
checked against the registry when it is built, whose ``folder_name`` names the
default evaluation folder without building the judge. It does nothing: reading the inputs it names,
building its judge and creating its output folder are :mod:`evalkit.prepare`'s.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .errors import EvalkitError
from .judges.config import JudgeConfig, parse_bool, parse_int, parse_str

# Workspace discovery lives in evalkit.workspace; its names stay importable from here, as
# the labelling notebooks import them.
from .workspace import WORKSPACE_ENV, Workspace, find_workspace

__all__ = [
    "PARENT_PID_ENV",
    "WORKSPACE_ENV",
    "RunPlan",
    "find_workspace",
    "parse_bool",
    "parse_int",
    "stop_with_parent",
]

# Set by the CLI for the kernel it starts: the kernel stops when that process dies.
PARENT_PID_ENV = "EVALKIT_PARENT_PID"

_RANGE_ID = re.compile(r"[a-z0-9][a-z0-9_-]*")


# --------------------------------------------------------------------------- workspace


def _absolute(path: Path, base: Path) -> Path:
    return path if path.is_absolute() else base / path


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class RunPlan:
    """One (range, run, judge) evaluation, validated when built."""

    range_id: str
    run_id: str
    judge_config: JudgeConfig
    ranges_dir: Path
    runs_dir: Path
    out_dir: Path
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
        for name in ("ranges_dir", "runs_dir", "out_dir"):
            if not getattr(self, name).is_absolute():
                raise EvalkitError(f"{name} must be an absolute path inside a plan")

    @property
    def judge(self) -> str:
        """The judge's registry name."""
        return self.judge_config.judge

    @property
    def judge_settings(self) -> Mapping[str, Any]:
        """Every setting of the judge, defaults filled in (read-only)."""
        return self.judge_config.settings

    # ----------------------------------------------------------------- building

    @classmethod
    def build(
        cls,
        *,
        range_id: str,
        run_id: str,
        judge: str | JudgeConfig,
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
        and the default evaluation folder when ``out_dir`` is not given.

        ``judge`` is the configuration a caller built once (``judge_settings`` then must be
        None), or a judge's name with its ``judge_settings`` (path settings, like the
        folders, relative to ``base``)."""
        root = base or find_workspace()
        ranges = _absolute(Path(ranges_dir), root).resolve()
        runs = _absolute(Path(runs_dir), root).resolve()
        if isinstance(judge, JudgeConfig):
            if judge_settings is not None:
                raise EvalkitError("give a judge configuration or its settings, not both")
            config = judge
        else:
            config = JudgeConfig.of(judge, judge_settings, base=root)
        if out_dir:
            out = _absolute(Path(out_dir), root)
        else:
            out = runs / run_id / range_id / "evaluations" / config.folder_name()
        return cls(
            range_id=range_id,
            run_id=run_id,
            judge_config=config,
            ranges_dir=ranges,
            runs_dir=runs,
            out_dir=Path(os.path.abspath(out)),
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
        return {
            "range_id": self.range_id,
            "run_id": self.run_id,
            "ranges_dir": str(self.ranges_dir),
            "runs_dir": str(self.runs_dir),
            "out_dir": str(self.out_dir),
            "model_under_test": self.model_under_test,
            "allow_outside_inputs": self.allow_outside_inputs,
            "replay_from": str(self.replay_from) if self.replay_from else "",
            **self.judge_config.to_parameters(),
        }

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
        return cls.build(
            range_id=parse_str("range_id", parameters["range_id"]),
            run_id=parse_str("run_id", parameters["run_id"]),
            judge=JudgeConfig.from_parameters(parameters, base=base),
            ranges_dir=parse_str("ranges_dir", parameters.get("ranges_dir", "")) or "ranges",
            runs_dir=parse_str("runs_dir", parameters.get("runs_dir", "")) or "runs",
            out_dir=parse_str("out_dir", parameters.get("out_dir", "")) or None,
            model_under_test=parse_str("model_under_test", parameters.get("model_under_test")),
            allow_outside_inputs=parse_bool(
                "allow_outside_inputs", parameters.get("allow_outside_inputs", False)
            ),
            base=base,
            replay_from=parse_str("replay_from", parameters.get("replay_from", "")) or None,
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
