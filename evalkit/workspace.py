"""The workspace: where every command finds its inputs and puts its outputs, confined.

A :class:`Workspace` is one value, built once at the edge (the command line from
its flags, a notebook from its parameters) and passed down. It owns:

- **discovery**: ``--ranges-dir``/``--runs-dir`` when given; else ``ranges/``
  and ``runs/`` of ``$EVALKIT_WORKSPACE``, or of the nearest folder holding both,
  walking up from the working directory, or of the working directory
  (:func:`find_workspace`). So ``evalkit ranges`` works from ``runs/demo`` too.
- **confined reads**: a file is read only if it resolves (links followed)
  inside its root: the ranges or runs folder for what lies in them, a folder
  the user named by flag or argument (trusted itself: it may be a link) for
  what lies in it, else the workspace folder. A link that leads out is refused
  with one line naming it (``RunError``, exit 2). ``--allow-outside-inputs``
  (``evalkit run``) lifts that, and the record says so.
- **confined writes**: an output folder (``--out``, ``--cache-dir``, an
  evaluation folder) is never a symlink and is not reached through one from the
  runs folder, the workspace or the working directory, whichever holds it; below
  it, the one guarded writer (:mod:`evalkit.fileio`) follows no link.
  :meth:`Workspace.check_out` checks every target before the first byte is
  written.

The run folder is the agent's to write, so nothing in it is trusted, its links
included; what is trusted is the checklist and the paths the user types.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import fileio
from .bounded import check_path, parse_json
from .errors import EvalkitError, OutputError, RunError

__all__ = [
    "POINT_ELSEWHERE",
    "WORKSPACE_ENV",
    "Workspace",
    "absolute",
    "find_workspace",
    "read_json",
    "within",
]

WORKSPACE_ENV = "EVALKIT_WORKSPACE"
# How to point a command at other folders, for every error about a missing input.
POINT_ELSEWHERE = (
    "give --ranges-dir DIR and --runs-dir DIR, run evalkit inside a folder holding ranges/"
    f" and runs/, or set {WORKSPACE_ENV} to it"
)


def find_workspace(start: str | Path | None = None) -> Path:
    """The folder relative ``ranges_dir``/``runs_dir`` resolve against.

    ``$EVALKIT_WORKSPACE`` when set; else the nearest folder, walking up from
    ``start`` (default: the working directory), that holds ``ranges/`` and
    ``runs/``; else ``start`` itself.
    """
    given = os.environ.get(WORKSPACE_ENV, "").strip()
    if given:
        return Path(given).resolve()
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "ranges").is_dir() and (folder / "runs").is_dir():
            return folder
    return here


def read_json(
    path: str | Path,
    root: str | Path,
    *,
    what: str = "JSON file",
    error: type[EvalkitError] = EvalkitError,
    allow_outside: bool = False,
) -> Any:
    """The JSON file ``path``, read without following a link out of ``root``
    (:func:`evalkit.fileio.read_confined`) and parsed within the bounds
    (:func:`evalkit.bounded.parse_json`). Whatever goes wrong is ``error``, one line
    (a missing file too: ``FileNotFoundError`` is an ``OSError``)."""
    try:
        data = fileio.read_confined(path, root, allow_outside=allow_outside)
    except RunError as exc:
        raise error(exc.message, path=path) from None
    except OSError as exc:
        raise error(f"cannot read the {what}: {exc.strerror or exc}", path=path) from None
    return parse_json(data, path=path, what=what, error=error)


def absolute(path: str | Path) -> Path:
    """``path`` made absolute against the working directory, lexically: ``..`` is folded,
    no link is followed (a planted link must not move a root)."""
    return Path(os.path.abspath(check_path(path)))


def within(path: Path, root: Path) -> bool:
    """Whether absolute ``path`` is ``root`` or lies below it, lexically."""
    return path == root or root in path.parents


def _deepest(path: Path, roots: Iterable[Path]) -> Path | None:
    holding = [root for root in roots if within(path, root)]
    return max(holding, key=lambda root: len(root.parts)) if holding else None


@dataclass(frozen=True)
class Workspace:
    """Where inputs are found and outputs go; every path absolute (lexically)."""

    root: Path
    ranges_dir: Path
    runs_dir: Path
    # Paths the user named by flag or argument (--out, --corpus, a folder to verify ...):
    # each is trusted itself, and nothing below it is followed out of it.
    named: tuple[Path, ...] = ()
    allow_outside_inputs: bool = False
    cwd: Path = field(default_factory=lambda: absolute(Path.cwd()))

    # ----------------------------------------------------------------- building

    @classmethod
    def find(
        cls,
        *,
        ranges_dir: str | Path | None = None,
        runs_dir: str | Path | None = None,
        named: Iterable[str | Path | None] = (),
        allow_outside_inputs: bool = False,
        start: str | Path | None = None,
    ) -> Workspace:
        """The workspace of a command: the folders given, else the discovered ones."""
        root = find_workspace(start)
        return cls(
            root=root,
            ranges_dir=absolute(ranges_dir) if ranges_dir is not None else root / "ranges",
            runs_dir=absolute(runs_dir) if runs_dir is not None else root / "runs",
            named=tuple(absolute(path) for path in named if path is not None),
            allow_outside_inputs=allow_outside_inputs,
        )

    @classmethod
    def from_args(cls, args: Any, *named: str | Path | None) -> Workspace:
        """The workspace of parsed command-line ``args`` (``--ranges-dir``, ``--runs-dir``,
        ``--allow-outside-inputs`` where the command has them) trusting ``named``."""
        return cls.find(
            ranges_dir=getattr(args, "ranges_dir", None),
            runs_dir=getattr(args, "runs_dir", None),
            named=named,
            allow_outside_inputs=bool(getattr(args, "allow_outside_inputs", False)),
        )

    def naming(self, *paths: str | Path | None) -> Workspace:
        """This workspace, also trusting ``paths`` (named by the user)."""
        more = tuple(absolute(path) for path in paths if path is not None)
        return replace(self, named=(*self.named, *more))

    def require(self, folder: Path, what: str) -> Path:
        """``folder`` when it is a folder; else one line saying how to point elsewhere."""
        if not folder.is_dir():
            raise EvalkitError(f"{what} folder is missing ({POINT_ELSEWHERE})", path=folder)
        return folder

    # ----------------------------------------------------------------- reading

    def read_root(self, path: str | Path) -> Path:
        """The root ``path`` is read under: the ranges or runs folder, else the deepest
        folder the user named, else the workspace; outside all of them, a RunError."""
        target = absolute(path)
        root = (
            _deepest(target, (self.ranges_dir, self.runs_dir))
            or _deepest(target, self.named)
            or _deepest(target, (self.root,))
        )
        if root is None:
            raise RunError(
                f"refusing to read {path}: it is outside the workspace {self.root}"
                " (name it with a flag to read it)",
                path=path,
            )
        return root

    def confined(self, path: str | Path) -> Path:
        """``path`` resolved, when it stays inside its root (RunError otherwise)."""
        return fileio.confined(
            absolute(path), self.read_root(path), allow_outside=self.allow_outside_inputs
        )

    def read_bytes(self, path: str | Path, *, max_bytes: int | None = None) -> bytes:
        """The bytes of the file ``path``, read without following a link out of its root."""
        return fileio.read_confined(
            absolute(path),
            self.read_root(path),
            allow_outside=self.allow_outside_inputs,
            max_bytes=max_bytes,
        )

    def read_json(
        self, path: str | Path, *, what: str = "JSON file", error: type[EvalkitError] = EvalkitError
    ) -> Any:
        """The JSON file ``path``, confined to its root and bounded (:func:`read_json`)."""
        return read_json(
            absolute(path),
            self.read_root(path),
            what=what,
            error=error,
            allow_outside=self.allow_outside_inputs,
        )

    def is_file(self, path: str | Path) -> bool:
        """Whether ``path`` is a file; a link that leads out of its root is a RunError."""
        target = absolute(path)
        if not target.is_file():
            return False
        self.confined(target)
        return True

    def is_dir(self, path: str | Path) -> bool:
        """Whether ``path`` is a folder; a link that leads out of its root is a RunError."""
        target = absolute(path)
        if not target.is_dir():
            return False
        self.confined(target)
        return True

    def glob(self, folder: str | Path, pattern: str, *, skip_outside: bool = False) -> list[Path]:
        """The paths below ``folder`` matching ``pattern``, sorted, each one confined: one
        that leads out of its root is a RunError, or left out with ``skip_outside``."""
        found = []
        for path in sorted(absolute(folder).glob(pattern)):
            try:
                self.confined(path)
            except RunError:
                if skip_outside:
                    continue
                raise
            found.append(path)
        return found

    # ----------------------------------------------------------------- writing

    def out_container(self, folder: str | Path) -> Path:
        """The trusted folder an output folder is reached from without a link: the runs
        folder, the workspace or the working directory (the deepest holding it), else
        its parent, taken as typed."""
        target = absolute(folder)
        return _deepest(target, (self.runs_dir, self.root, self.cwd)) or target.parent

    def check_out(self, folder: str | Path, names: Sequence[str] = ()) -> Path:
        """Refuse, before anything is written, an output folder that is a symlink or a file
        or is reached through a symlink, and any of ``names`` (paths relative to it) that
        the writer would refuse (RunError, exit 2). Returns the folder, absolute."""
        target = absolute(folder)
        fileio.check_no_symlinks(target, self.out_container(target))
        if target.is_symlink():
            raise RunError(f"refusing to write outputs through {target}: it is a symlink")
        if target.exists() and not target.is_dir():
            raise RunError("output folder is a file", path=target)
        for name in names:
            fileio.check_target(target / check_path(name), target)
        return target

    def make_out(self, folder: str | Path, names: Sequence[str] = ()) -> Path:
        """:meth:`check_out`, then create the folder without following a link."""
        target = self.check_out(folder, names)
        fileio.make_folder(target, root=self.out_container(target))
        return target

    def write_root(self, path: str | Path) -> Path:
        """The root below which no link is followed when writing ``path``: the deepest
        folder the user named, the runs folder or the workspace holding it."""
        target = absolute(path)
        root = _deepest(target, (*self.named, self.runs_dir, self.root))
        if root is None:
            raise OutputError(
                "refusing to write outside the workspace and the folders given", path=path
            )
        return root

    def write_text(self, path: str | Path, text: str) -> Path:
        """Write ``text`` to ``path`` through the one guarded writer, confined."""
        return fileio.write_text_atomic(absolute(path), text, root=self.write_root(path))

    def write_bytes(self, path: str | Path, data: bytes) -> Path:
        return fileio.write_bytes_atomic(absolute(path), data, root=self.write_root(path))
