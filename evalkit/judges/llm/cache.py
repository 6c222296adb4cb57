"""A content-addressed, on-disk cache of judge responses.

Re-executing an evaluation notebook, or resuming one that crashed, should not
pay for an answer twice. Each *valid* answer is stored as it arrives, under a
key that names everything that could change it::

    key = sha256(canonical JSON of {model, prompt_sha256, request, sample})

where ``request`` is the rendered request body exactly as first sent for the
item (model, system, messages, output_config, max_tokens) and ``sample`` the
repeat index (0 unless a judge draws several samples per item). Canonical JSON
is ``json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False)``
encoded as UTF-8.

Layout: one JSON file per key, ``<cache_dir>/<key[:2]>/<key>.json``, written
atomically (a temporary file in the same folder, fsynced, then
``os.replace``), so a crash leaves either the whole entry or none of it. A file
that cannot be read or parsed is treated as a miss and overwritten by the next
answer.

What is stored: the key's ingredients, the request, the raw response (the
Messages API JSON), and the conversation that led to it when the first answer
had to be corrected. Never a header, never a credential: the request body
holds none, and :meth:`ResponseCache.put` refuses to write a file that
contains the value of ``ANTHROPIC_API_KEY``.

Only answers that passed validation are cached; errors, refusals and
truncated answers are not, so a re-run asks again for exactly those.

A cache folder that cannot be written (a file in its way, a read-only disk, a
link planted in it) does not stop the evaluation: the first failed write says
so once on stderr, and the judge carries on uncached. The warning is said once
for the whole process tree: a kernel or worker started after it inherits
``EVALKIT_UNWRITABLE_CACHES`` and stays silent about the same folder. Entries
are read without following a link out of the cache folder, and within
:mod:`evalkit.bounded`'s bounds; anything else is a miss.

``read=False`` (``use_cache=False``, the CLI's ``--no-cache``) bypasses
lookups but still *writes* each new answer: a ``--no-cache`` run pays for
fresh answers, and those fresh answers replace the old ones, so the next
cached re-run reproduces the latest evaluation. To neither read nor write,
give the judge ``cache_dir=None``.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...bounded import parse_json
from ...errors import EvalkitError, OutputError
from ...fileio import read_confined, write_bytes_atomic

CACHE_FORMAT = 1
# The one definition of the key's variable: the judge and the estimate import it from here
# (this module imports nothing of theirs, so there is no import cycle).
API_KEY_ENV = "ANTHROPIC_API_KEY"


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def cache_key(
    *, model: str, prompt_sha256: str | None, request: Mapping[str, Any], sample: int
) -> str:
    """The sha256 hex digest naming one (request, sample) answer."""
    payload = {
        "model": model,
        "prompt_sha256": prompt_sha256,
        "request": request,
        "sample": sample,
    }
    return hashlib.sha256(canonical_json(payload)).hexdigest()


# The cache folders already warned about as unwritable, in this process or the one that
# started it (path-separator separated, absolute).
UNWRITABLE_ENV = "EVALKIT_UNWRITABLE_CACHES"


def warn_unwritable(root: Path, reason: str) -> None:
    """Say once, on stderr, that the cache folder ``root`` cannot be written."""
    folder = str(Path(os.path.abspath(root)))
    warned = [part for part in os.environ.get(UNWRITABLE_ENV, "").split(os.pathsep) if part]
    if folder in warned:
        return
    os.environ[UNWRITABLE_ENV] = os.pathsep.join([*warned, folder])
    print(
        f"evalkit: warning: the response cache {folder} cannot be written ({reason});"
        " carrying on without caching answers",
        file=sys.stderr,
        flush=True,
    )


class SecretInCacheError(RuntimeError):
    """An entry about to be written contains the API key: it is not written."""


@dataclass(frozen=True)
class CacheEntry:
    key: str
    data: Mapping[str, Any]

    @property
    def response(self) -> Mapping[str, Any]:
        response: Mapping[str, Any] = self.data["response"]
        return response


class ResponseCache:
    """The cache under ``root``; ``read=False`` ignores what is there but still writes."""

    def __init__(
        self,
        root: str | Path,
        *,
        read: bool = True,
        write: bool = True,
        secret_env: str | None = API_KEY_ENV,
    ) -> None:
        self.root = Path(root)
        self.read = read
        self.write = write
        self.secret_env = secret_env  # the env var whose value must never be written

    def path_for(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> CacheEntry | None:
        """The stored answer for ``key``, or None (also when reads are off or the file is bad)."""
        if not self.read:
            return None
        path = self.path_for(key)
        try:
            data = parse_json(read_confined(path, self.root), path=path)
        except (OSError, EvalkitError):
            return None
        if (
            not isinstance(data, dict)
            or data.get("key") != key
            or data.get("format") != CACHE_FORMAT
            or not isinstance(data.get("response"), dict)
        ):
            return None
        return CacheEntry(key=key, data=data)

    def put(self, key: str, entry: Mapping[str, Any]) -> Path | None:
        """Store ``entry`` (JSON-ready) under ``key`` atomically; None when writes are off."""
        if not self.write:
            return None
        data = {"format": CACHE_FORMAT, "key": key, **entry}
        blob = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8")
        secret = os.environ.get(self.secret_env, "").strip() if self.secret_env else ""
        if secret and secret.encode("utf-8") in blob:
            raise SecretInCacheError(f"refusing to cache {key[:12]}: it contains the API key")
        try:
            # The one guarded writer: no symlink below the cache root is followed.
            return write_bytes_atomic(self.path_for(key), blob, root=self.root)
        except OutputError as exc:
            self.unwritable(exc.message)
            return None

    def unwritable(self, reason: str) -> None:
        """Stop writing to this cache, saying so once (:func:`warn_unwritable`)."""
        self.write = False
        warn_unwritable(self.root, reason)

    def check_writable(self) -> bool:
        """Whether the cache folder could be written, told without writing anything: the
        folder, or the nearest folder above it that exists, must be a folder this process
        may write (a file in the way or a read-only disk is not). When it cannot, say so
        once and stop writing. True when writes are off."""
        if not self.write:
            return True
        folder = Path(os.path.abspath(self.root))
        existing = next(path for path in (folder, *folder.parents) if os.path.lexists(path))
        if not existing.is_dir():
            self.unwritable(f"{existing} is not a folder")
            return False
        if not os.access(existing, os.W_OK | os.X_OK):
            self.unwritable(f"{existing} is not writable")
            return False
        return True


__all__ = [
    "API_KEY_ENV",
    "CACHE_FORMAT",
    "UNWRITABLE_ENV",
    "CacheEntry",
    "ResponseCache",
    "SecretInCacheError",
    "cache_key",
    "canonical_json",
    "warn_unwritable",
]
