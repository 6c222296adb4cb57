"""The one guarded writer, the one folder-name sanitiser, input confinement and the
evaluation-folder lock.

The run folder is written by the agent under test, so nothing in it is trusted:

- :func:`write_bytes_atomic` / :func:`write_text_atomic` write every output and
  cache file. They walk the destination's folders one component at a time from a
  trusted root with ``O_NOFOLLOW`` (a planted symlink anywhere below the root is
  refused), write a temporary file in the destination folder, fsync it and rename
  it over the target, so a reader sees the old file or the new one, never half.
  API keys found in the data are redacted first (:func:`redact_secrets`).
- :func:`safe_name` is the only way a judge or model name becomes a folder name.
- :func:`confined` refuses an input that resolves (symlinks followed) outside
  its root; :func:`read_confined` reads one that does not, checking again once
  the file is open (a link swapped in meanwhile is refused too), and never
  blocks on a FIFO or reads a device. Which root is :class:`evalkit.workspace.Workspace`'s
  to say.
- :func:`evaluation_lock` allows one run at a time into an evaluation folder.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import OutputError, RunError

__all__ = [
    "SECRET_ENV_VARS",
    "add_secret_env_var",
    "check_target",
    "confined",
    "evaluation_lock",
    "read_confined",
    "redact_secrets",
    "safe_name",
    "write_bytes_atomic",
    "write_text_atomic",
]

# Environment variables whose values are secrets: never written to any output.
SECRET_ENV_VARS: tuple[str, ...] = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
REDACTED = "[REDACTED]"
# Shorter values are not plausible keys, and redacting them would mangle ordinary text.
_MIN_SECRET_LENGTH = 8


# --------------------------------------------------------------------------- secrets


# The key variables fileio is told of: the known ones, and each registered judge's (the
# registry tells it, plugins included), so fileio need not ask anything above it.
_SECRET_ENV_VARS: set[str] = set(SECRET_ENV_VARS)


def add_secret_env_var(name: str) -> None:
    """Treat the value of the environment variable ``name`` as a secret from now on."""
    _SECRET_ENV_VARS.add(name)


def _secret_env_vars() -> set[str]:
    return set(_SECRET_ENV_VARS)


def _secret_values() -> list[str]:
    values = {os.environ.get(name, "").strip() for name in _secret_env_vars()}
    # Longest first, so a key that contains another is replaced whole.
    return sorted((v for v in values if len(v) >= _MIN_SECRET_LENGTH), key=len, reverse=True)


def redact_secrets(text: str) -> str:
    """``text`` with the value of every API-key variable replaced by ``[REDACTED]``."""
    for value in _secret_values():
        text = text.replace(value, REDACTED)
    return text


def _redact_bytes(data: bytes) -> bytes:
    for value in _secret_values():
        data = data.replace(value.encode("utf-8"), REDACTED.encode("utf-8"))
    return data


# --------------------------------------------------------------------------- names


_UNSAFE = re.compile(r"[^A-Za-z0-9._+=@-]+")
_MAX_NAME = 120


def safe_name(name: str) -> str:
    """A single, harmless folder-name component for a judge or model name.

    Separators and every other unusual character become ``_``, leading dots are
    dropped (no ``..``, no hidden folders), and the result is never empty, so
    ``x/../../escaped`` stays one folder under its parent.
    """
    cleaned = _UNSAFE.sub("_", name).lstrip(".")[:_MAX_NAME].rstrip(".")
    return cleaned or "_"


# --------------------------------------------------------------------------- inputs


def confined(path: str | Path, root: str | Path, *, allow_outside: bool = False) -> Path:
    """``path`` resolved (symlinks followed); a RunError when it leaves ``root``.

    With ``allow_outside`` the check is skipped (the run records that it was).
    The message names the path as given, not where it leads: what lies outside is
    none of the input's business.
    """
    resolved = Path(os.path.realpath(path))
    if allow_outside:
        return resolved
    if is_outside(resolved, root):
        raise RunError(
            f"refusing to read {path}: it leads outside {root} (through a link or ..)", path=path
        )
    return resolved


def read_confined(
    path: str | Path,
    root: str | Path,
    *,
    allow_outside: bool = False,
    max_bytes: int | None = None,
) -> bytes:
    """The bytes of the regular file ``path``, which must resolve inside ``root``.

    Links that stay inside ``root`` are followed; one that leads out is a RunError,
    and so is a FIFO, a device or a folder (which would block or mean nothing), or
    a file larger than ``max_bytes``. The file is checked again once open, so a
    link swapped in between is refused too. A missing file is the usual
    ``FileNotFoundError``, for the caller's own message.
    """
    resolved = confined(path, root, allow_outside=allow_outside)
    fd = os.open(resolved, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        opened = os.fstat(fd)
        if not _is_regular(opened.st_mode):
            raise RunError("refusing to read: not a regular file", path=path)
        again = confined(path, root, allow_outside=allow_outside)
        now = os.stat(again)
        if again != resolved or (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
            raise RunError("refusing to read: it changed while it was opened", path=path)
        if max_bytes is not None and opened.st_size > max_bytes:
            raise RunError(
                f"refusing to read: {opened.st_size} bytes, above the limit of {max_bytes}",
                path=path,
            )
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def is_outside(path: str | Path, root: str | Path) -> bool:
    """Whether ``path`` resolves (symlinks followed) outside ``root`` (resolved too)."""
    resolved, base = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    return resolved != base and base not in resolved.parents


# --------------------------------------------------------------------------- outputs


def _open_folder(folder: Path, root: Path | None) -> int:
    """A descriptor of ``folder``, created as needed, reached without following any
    symlink below ``root`` (default: the folder's parent, which the caller trusts)."""
    folder = Path(os.path.abspath(folder))
    trusted = Path(os.path.abspath(root)) if root is not None else folder.parent
    relative = Path(os.path.relpath(folder, trusted))
    if relative.parts and relative.parts[0] == "..":
        raise OutputError(f"refusing to write outside {trusted}", path=folder)
    # The trusted root itself may be reached through links (e.g. /tmp -> /private/tmp).
    trusted.mkdir(parents=True, exist_ok=True)
    fd = os.open(trusted, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in relative.parts:
            if part in (".", ""):
                continue
            try:
                os.mkdir(part, 0o777, dir_fd=fd)
            except FileExistsError:
                pass
            try:
                child = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise OutputError(
                        f"refusing to write through {part!r}: it is a symlink or not a folder",
                        path=folder,
                    ) from exc
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_bytes_atomic(path: str | Path, data: bytes, *, root: str | Path | None = None) -> Path:
    """Write ``data`` (API keys redacted) to ``path`` atomically; return the path.

    Every folder from ``root`` down (default: the target's own folder) must be a
    real folder, and the target must not be a symlink or a folder. Raises
    OutputError; on any failure the target is left exactly as it was.
    """
    target = Path(path)
    data = _redact_bytes(data)
    try:
        folder_fd = _open_folder(target.parent, Path(root) if root is not None else None)
    except OSError as exc:
        raise OutputError(f"cannot write: {exc.strerror or exc}", path=target) from exc
    temp: str | None = None
    try:
        try:
            existing = os.stat(target.name, dir_fd=folder_fd, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and not _is_regular(existing.st_mode):
            raise OutputError("refusing to replace a symlink or folder", path=target)
        # os.open applies the umask, unlike mkstemp's 0600, so the file gets the usual mode.
        while True:
            temp = f".{target.name}.{secrets.token_hex(6)}.tmp"
            try:
                fd = os.open(
                    temp,
                    os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                    0o666,
                    dir_fd=folder_fd,
                )
                break
            except FileExistsError:
                continue
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target.name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        temp = None
        try:
            os.fsync(folder_fd)  # make the rename itself durable (best effort)
        except OSError:
            pass
    except OSError as exc:
        raise OutputError(f"cannot write: {exc.strerror or exc}", path=target) from exc
    finally:
        if temp is not None:
            try:
                os.unlink(temp, dir_fd=folder_fd)
            except OSError:
                pass
        os.close(folder_fd)
    return target


def write_text_atomic(path: str | Path, text: str, *, root: str | Path | None = None) -> Path:
    """Write ``text`` as UTF-8 (newlines as given) to ``path`` atomically; return the path."""
    return write_bytes_atomic(path, text.encode("utf-8"), root=root)


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


def make_folder(folder: str | Path, *, root: str | Path | None = None) -> Path:
    """Create ``folder`` (and its parents below ``root``) without following symlinks."""
    try:
        os.close(_open_folder(Path(folder), Path(root) if root is not None else None))
    except OSError as exc:
        raise OutputError(f"cannot create the folder: {exc.strerror or exc}", path=folder) from exc
    return Path(folder)


def check_no_symlinks(folder: str | Path, root: str | Path) -> None:
    """Refuse, before anything runs, an output folder reached through a symlink below ``root``.

    The writer refuses such a path anyway; checking first turns a planted link in
    the run folder into bad input (exit 2) rather than a failure after judging.
    """
    target = Path(os.path.abspath(folder))
    base = Path(os.path.abspath(root))
    relative = Path(os.path.relpath(target, base))
    if relative.parts and relative.parts[0] == "..":
        raise RunError(f"output folder {target} is outside {base}", path=target)
    current = base
    for part in relative.parts:
        current = current / part
        if current.is_symlink():
            raise RunError(
                f"refusing to write outputs through {current}: it is a symlink", path=current
            )
        if not current.exists():
            return


def check_target(path: str | Path, root: str | Path) -> None:
    """Refuse, before anything is written, an output file that the writer would refuse:
    one reached through a symlink below ``root``, or that is itself a symlink, a folder,
    a FIFO or anything but a regular file (RunError)."""
    target = Path(os.path.abspath(path))
    check_no_symlinks(target.parent, root)
    try:
        existing = os.lstat(target)
    except FileNotFoundError:
        return
    except NotADirectoryError:
        raise RunError("cannot write: a part of its folder is a file", path=target) from None
    if not _is_regular(existing.st_mode):
        raise RunError("refusing to write: it is a symlink or not a regular file", path=target)


# --------------------------------------------------------------------------- lock


@contextmanager
def evaluation_lock(out_dir: str | Path, *, root: str | Path | None = None) -> Iterator[Path]:
    """Hold the lock of one evaluation folder; a second holder fails with one line.

    The lock file sits beside the folder (``.<name>.lock``), not in it, because
    the folder itself is swapped when a run publishes its outputs. A folder that
    is its own ``root`` (one the user named, ``--out .`` included) keeps its lock
    inside (``.evalkit.lock``): nothing is written beside a folder the user named.
    """
    folder = Path(out_dir)
    if root is not None and os.path.abspath(root) == os.path.abspath(folder):
        lock_path = make_folder(folder, root=folder) / ".evalkit.lock"
    else:
        lock_path = make_folder(folder.parent, root=root) / f".{folder.name}.lock"
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
    except OSError as exc:
        raise OutputError(f"cannot open the lock file: {exc.strerror}", path=lock_path) from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OutputError(
                "another evalkit run is writing this evaluation folder; try again when it ends",
                path=folder,
            ) from None
        yield folder
    finally:
        os.close(fd)  # closing releases the lock
