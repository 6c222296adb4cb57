"""Atomic file writes: a reader sees the old file or the new one, never half of one.

The data goes to a temporary file in the destination's folder (same file
system, so the final rename is atomic), is flushed and fsynced, and then
``os.replace``\\ s the destination. On any failure the temporary file is
removed and the destination is left exactly as it was.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from ..errors import OutputError


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; return the path. Raises OutputError."""
    target = Path(path)
    temp: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # os.open applies the umask, unlike mkstemp's 0600, so the file gets the usual mode.
        while True:
            temp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
            try:
                fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:
                continue
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, target)
        temp = None
    except OSError as exc:
        raise OutputError(f"cannot write: {exc}", path=target) from exc
    finally:
        if temp is not None:
            temp.unlink(missing_ok=True)
    _fsync_dir(target.parent)
    return target


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` as UTF-8 (newlines as given) to ``path`` atomically; return the path."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def _fsync_dir(folder: Path) -> None:
    """Make the rename itself durable where the platform allows it (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
