"""Read what a detection agent wrote for one range in one run.

Layout (see ``checklist-format.md``)::

    runs/<run_id>/<range>/<report>.md          analysis report (kind "report")
    runs/<run_id>/<range>/remediation-plan.md  remediation plan (kind "plan")
    runs/<run_id>/run.yaml                     optional: model_under_test, notes, purpose

Anything missing, empty, not UTF-8 or malformed is a :class:`RunError` naming
the file (and the line, for run.yaml), because scoring an absent document as
zero would hide a broken run behind a bad score.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from yaml import ScalarNode

from .bounded import check_name, compose_yaml, parse_yaml
from .checklist import natural_key
from .errors import EvalkitError, RunError
from .fileio import confined, is_outside, read_confined
from .model import PLAN_FILENAME, Document, Range, SourceName, Submission
from .text.fold import fold
from .workspace import POINT_ELSEWHERE

__all__ = [
    "DEFAULT_MAX_DOCUMENT_BYTES",
    "AGENT",
    "GOLD",
    "PURPOSES",
    "RUN_FILENAME",
    "list_runs",
    "load_submission",
    "run_purpose",
]

RUN_FILENAME = "run.yaml"
# run.yaml's purpose: an agent's work (the default), or gold pairs written to measure
# judges, which no leaderboard ranks among agents.
AGENT, GOLD = "agent", "gold"
PURPOSES = (AGENT, GOLD)


def list_runs(runs_dir: str | Path) -> list[str]:
    """Names of the run folders of ``runs_dir``, in natural order; ``[]`` if it is missing.

    Hidden folders (``.cache``, ``.ipynb_checkpoints``) are not runs.
    """
    root = Path(runs_dir)
    if not root.is_dir():
        return []
    names = [e.name for e in root.iterdir() if e.is_dir() and not e.name.startswith(".")]
    return sorted(names, key=natural_key)


# A document larger than this is refused before any judge sees it (the bench in bench/
# measures 30 MB within the time and memory budget; 50 MB leaves room above it).
DEFAULT_MAX_DOCUMENT_BYTES = 50 * 1024 * 1024


def load_submission(
    runs_dir: str | Path,
    run_id: str,
    rng: Range,
    *,
    model_under_test: str | None = None,
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
    allow_outside_inputs: bool = False,
) -> Submission:
    """Read the report and plan of ``rng`` in run ``run_id``.

    ``model_under_test``, when given, overrides the one in run.yaml. A document
    larger than ``max_document_bytes`` is refused with a :class:`RunError`. Every
    file read must resolve (symlinks followed) inside ``runs_dir``: the run folder is
    the agent's to write, and a planted link to a secret would otherwise be read,
    scored and sent to the judge. ``allow_outside_inputs`` lifts that, and the
    submission records that it did.
    """
    # A run id is a folder name; "../x" or "a/b" would read outside runs_dir.
    check_name(run_id, "run id", error=RunError)
    run_dir = Path(runs_dir) / run_id
    if not run_dir.is_dir():
        available = list_runs(runs_dir)
        hint = (
            f" (available runs: {', '.join(available)})"
            if available
            else f" (no runs in {runs_dir}: {POINT_ELSEWHERE})"
        )
        raise RunError(f"run folder {run_dir} is missing{hint}", path=run_dir)
    range_dir = run_dir / rng.id
    if not range_dir.is_dir():
        raise RunError(f"range folder {range_dir} is missing", path=range_dir)

    report_path, plan_path = range_dir / rng.report_filename, range_dir / PLAN_FILENAME
    run_yaml = run_dir / RUN_FILENAME
    inputs = [report_path, plan_path, *([run_yaml] if run_yaml.exists() else [])]
    for path in inputs:
        confined(path, runs_dir, allow_outside=allow_outside_inputs)
    outside = allow_outside_inputs and any(is_outside(path, runs_dir) for path in inputs)
    reader = _Reader(Path(runs_dir), allow_outside_inputs)
    report = _read_document("report", report_path, max_document_bytes, reader)
    plan = _read_document("plan", plan_path, max_document_bytes, reader)
    meta = _read_run_yaml(run_yaml, reader)
    return Submission(
        run_id=run_id,
        range_id=rng.id,
        report=report,
        plan=plan,
        model_under_test=_blank_to_none(model_under_test) or meta.get("model_under_test"),
        notes=meta.get("notes"),
        inputs_outside=outside,
    )


def run_purpose(runs_dir: str | Path, run_id: str) -> str:
    """The run's ``purpose`` in its run.yaml: ``agent`` (also when there is no run.yaml, or
    it cannot be read: its evaluations then fail with the reason) or ``gold``."""
    run_yaml = Path(runs_dir) / run_id / RUN_FILENAME
    try:
        check_name(run_id, "run id", error=RunError)
        meta = _read_run_yaml(run_yaml, _Reader(Path(runs_dir), allow_outside=False))
    except (EvalkitError, OSError):
        return AGENT
    return meta.get("purpose") or AGENT


# --------------------------------------------------------------------------- helpers


def _blank_to_none(value: str | None) -> str | None:
    return (value.strip() or None) if value is not None else None


class _Reader:
    """Reads the files of a run, never through a link out of the runs folder."""

    def __init__(self, root: Path, allow_outside: bool) -> None:
        self.root = root
        self.allow_outside = allow_outside

    def read(self, path: Path, max_bytes: int | None = None) -> bytes:
        return read_confined(path, self.root, allow_outside=self.allow_outside, max_bytes=max_bytes)


def _read_text(
    path: Path, what: str, reader: _Reader, max_bytes: int | None = None
) -> tuple[str, bytes]:
    """The file's text (newlines normalised, BOM dropped) and its bytes as stored."""
    if not path.exists():
        raise RunError(f"{what} {path} is missing", path=path)
    if not path.is_file():
        raise RunError(f"{what} {path} is not a file", path=path)
    try:
        data = reader.read(path, max_bytes)
    except OSError as exc:
        raise RunError(f"cannot read {what} {path}: {exc.strerror}", path=path) from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RunError(
            f"{what} {path} is not valid UTF-8 (byte {exc.start}: {exc.reason})", path=path
        ) from exc
    # Same newlines as text-mode reading, so line numbers in quotes match editors;
    # a BOM is an encoding artefact, not something the agent wrote.
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n"), data


def _read_document(kind: SourceName, path: Path, max_bytes: int, reader: _Reader) -> Document:
    what = "analysis report" if kind == "report" else "remediation plan"
    if path.is_file() and (size := path.stat().st_size) > max_bytes:
        raise RunError(
            f"{what} {path} is {size / 2**20:.1f} MB, above the limit of "
            f"{max_bytes / 2**20:.1f} MB (max_document_bytes)",
            path=path,
        )
    text, data = _read_text(path, what, reader, max_bytes)
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise RunError(f"{what} {path} contains a NUL byte (\\x00)", path=path, line=line)
    # Zero-width and other format characters show nothing: a document of only those is empty.
    if not fold(text).strip():
        raise RunError(f"{what} {path} is empty (nothing visible in it)", path=path)
    return Document(
        kind=kind, path=str(path), text=text, file_sha256=hashlib.sha256(data).hexdigest()
    )


def _read_run_yaml(path: Path, reader: _Reader) -> dict[str, str | None]:
    """``model_under_test``, ``notes`` and ``purpose`` from run.yaml; ``{}`` when there is
    none."""
    if not path.exists():
        return {}
    text, _ = _read_text(path, RUN_FILENAME, reader)
    # compose() keeps node positions, so type errors can name their line too.
    root = compose_yaml(text, path=path, error=RunError)
    data: Any = parse_yaml(text, path=path, error=RunError)
    if data is None or root is None:
        return {}
    if not isinstance(data, dict):
        raise RunError(
            f"run.yaml must be a mapping, not {type(data).__name__}",
            path=path,
            line=root.start_mark.line + 1,
        )
    key_lines = {
        key.value: key.start_mark.line + 1 for key, _ in root.value if isinstance(key, ScalarNode)
    }
    meta: dict[str, str | None] = {}
    for key in ("model_under_test", "notes", "purpose"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise RunError(
                f"{key} must be a string, not {type(value).__name__}",
                path=path,
                line=key_lines.get(key),
            )
        meta[key] = _blank_to_none(value)
    if meta["purpose"] not in (None, *PURPOSES):
        raise RunError(
            f"purpose must be {' or '.join(PURPOSES)}, not {meta['purpose']!r}",
            path=path,
            line=key_lines.get("purpose"),
        )
    return meta
