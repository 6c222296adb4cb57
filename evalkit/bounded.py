"""The one bounded reader of each untrusted format: JSON, YAML, and names.

Every file a run folder holds is written by the agent under test, and other
inputs (verdicts, labels, calibration records) come from elsewhere; none is
trusted. Python's own parsers fail on hostile input with exceptions of their
own (``RecursionError`` on deep nesting, ``ValueError`` on a 5,000-digit
integer) that would surface as tracebacks. These readers bound what they
accept, before or while parsing, and refuse the rest with an
:class:`~evalkit.errors.EvalkitError` (or the subclass the caller names): one
line, exit 2.

- :func:`parse_json` / :func:`json_decoder`: nesting at most :data:`MAX_DEPTH`
  levels, numbers at most :data:`MAX_NUMBER_CHARS` characters, text at most
  :data:`MAX_TEXT_BYTES`.
- :func:`parse_yaml` / :func:`compose_yaml`: the safe loader, with the same
  depth and number bounds, and no aliases (``*name``: a handful of them expands
  into an exponential structure).
- :func:`check_name`: a folder or file name (run id, label name, ``--name``):
  one path part, at most 255 bytes, no separator, control character or ``..``.
- :func:`check_path`: a path the user typed: every part at most 255 bytes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from .errors import EvalkitError

__all__ = [
    "MAX_DEPTH",
    "MAX_NAME_BYTES",
    "MAX_NUMBER_CHARS",
    "MAX_PATH_BYTES",
    "MAX_TEXT_BYTES",
    "check_json",
    "check_name",
    "check_path",
    "compose_yaml",
    "json_decoder",
    "parse_json",
    "parse_yaml",
    "shown",
]

# Far deeper than any file evalkit reads or writes (scores.json nests 6 levels), far below
# Python's recursion limit, which json and jsonschema would otherwise meet.
MAX_DEPTH = 200
# A number longer than this is no score, count or cost: refused before int() sees it.
MAX_NUMBER_CHARS = 40
# Above the largest document evalkit reads (50 MB), so a real record always fits.
MAX_TEXT_BYTES = 64 * 1024 * 1024
# The usual file-system limits of one path part and of a whole path.
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 4096

ErrorType = type[EvalkitError]

# A JSON string, unrolled so long strings cost no backtracking.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def shown(value: str, limit: int = 60) -> str:
    """``value`` as a short repr for a one-line message."""
    return repr(value if len(value) <= limit else value[:limit] + "...")


# --------------------------------------------------------------------------- JSON


def _number(kind: type[int] | type[float]) -> Any:
    def parse(text: str) -> int | float:
        if len(text) > MAX_NUMBER_CHARS:
            raise ValueError(f"a number of {len(text)} characters (at most {MAX_NUMBER_CHARS})")
        return kind(text)

    return parse


def json_decoder() -> json.JSONDecoder:
    """A decoder refusing numbers longer than :data:`MAX_NUMBER_CHARS` (``ValueError``);
    for callers that decode piece by piece (``raw_decode``) after :func:`check_json`."""
    return json.JSONDecoder(parse_int=_number(int), parse_float=_number(float))


def check_json(
    text: str,
    *,
    path: str | Path | None = None,
    what: str = "JSON file",
    error: ErrorType = EvalkitError,
) -> None:
    """Refuse ``text`` when it is longer than :data:`MAX_TEXT_BYTES` or nests deeper than
    :data:`MAX_DEPTH` (brackets inside strings do not count)."""
    if len(text) > MAX_TEXT_BYTES:
        raise error(f"{what} is larger than {MAX_TEXT_BYTES // 2**20} MB", path=path)
    depth = deepest = 0
    for bracket in _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_DEPTH:
                raise error(f"{what} nests deeper than {MAX_DEPTH} levels", path=path)


def parse_json(
    text: str | bytes,
    *,
    path: str | Path | None = None,
    what: str = "JSON file",
    error: ErrorType = EvalkitError,
) -> Any:
    """``text`` parsed as JSON within the bounds; anything else is ``error`` (one line,
    naming ``path`` and, for a syntax error, the line)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise error(f"{what} is not valid UTF-8 (byte {exc.start})", path=path) from None
    check_json(text, path=path, what=what, error=error)
    try:
        return json_decoder().decode(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as exc:
        raise error(f"not a readable {what}: {exc.msg}", path=path, line=exc.lineno) from None
    except (ValueError, RecursionError) as exc:
        raise error(f"not a readable {what}: {exc}", path=path) from None


# --------------------------------------------------------------------------- YAML


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, refusing aliases, deep nesting and over-long numbers."""

    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.YAMLError(f"line {event.start_mark.line + 1}: aliases are not accepted")
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise yaml.YAMLError(
                    f"line {event.start_mark.line + 1}: nests deeper than {MAX_DEPTH} levels"
                )
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_yaml_int(self, node: Any) -> Any:
        if len(str(node.value)) > MAX_NUMBER_CHARS:
            raise yaml.YAMLError(
                f"line {node.start_mark.line + 1}: a number of {len(node.value)} characters"
                f" (at most {MAX_NUMBER_CHARS})"
            )
        return super().construct_yaml_int(node)

    def construct_yaml_float(self, node: Any) -> Any:
        if len(str(node.value)) > MAX_NUMBER_CHARS:
            raise yaml.YAMLError(
                f"line {node.start_mark.line + 1}: a number of {len(node.value)} characters"
                f" (at most {MAX_NUMBER_CHARS})"
            )
        return super().construct_yaml_float(node)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)
_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _BoundedLoader.construct_yaml_float)


def _yaml_error(exc: yaml.YAMLError, what: str, path: str | Path | None, error: ErrorType) -> Any:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return error(f"malformed {what}: {problem}", path=path, line=line)


def _check_yaml_text(text: str, what: str, path: str | Path | None, error: ErrorType) -> None:
    if len(text) > MAX_TEXT_BYTES:
        raise error(f"{what} is larger than {MAX_TEXT_BYTES // 2**20} MB", path=path)


def parse_yaml(
    text: str,
    *,
    path: str | Path | None = None,
    what: str = "YAML",
    error: ErrorType = EvalkitError,
) -> Any:
    """``text`` loaded by the safe loader within the bounds; anything else is ``error``."""
    _check_yaml_text(text, what, path, error)
    try:
        return yaml.load(text, Loader=_BoundedLoader)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, what, path, error) from None
    except (ValueError, RecursionError) as exc:
        raise error(f"malformed {what}: {exc}", path=path) from None


def compose_yaml(
    text: str,
    *,
    path: str | Path | None = None,
    what: str = "YAML",
    error: ErrorType = EvalkitError,
) -> Any:
    """The node tree of ``text`` (for line numbers), within the same bounds."""
    _check_yaml_text(text, what, path, error)
    try:
        return yaml.compose(text, Loader=_BoundedLoader)
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, what, path, error) from None
    except RecursionError as exc:
        raise error(f"malformed {what}: {exc}", path=path) from None


# --------------------------------------------------------------------------- names


def check_name(name: str, what: str = "name", *, error: ErrorType = EvalkitError) -> str:
    """``name`` when it is one usable folder or file name; else ``error`` (one line)."""
    problem = None
    if not name:
        problem = "it is empty"
    elif name in {".", ".."}:
        problem = "a folder name is expected"
    elif "/" in name or "\\" in name:
        problem = "a folder name is expected, not a path"
    elif _CONTROL.search(name):
        problem = "it holds a control character (a line break, a tab, a NUL ...)"
    elif len(name.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
        problem = f"it is longer than {MAX_NAME_BYTES} bytes"
    if problem:
        raise error(f"invalid {what} {shown(name)}: {problem}")
    return name


def check_path(path: str | Path, what: str = "path", *, error: ErrorType = EvalkitError) -> Path:
    """``path`` as a Path when every part fits a file system; else ``error`` (one line)."""
    text = str(path)
    if "\x00" in text:
        raise error(f"invalid {what} {shown(text)}: it holds a NUL byte")
    if len(text.encode("utf-8", "surrogateescape")) > MAX_PATH_BYTES:
        raise error(f"invalid {what} {shown(text)}: it is longer than {MAX_PATH_BYTES} bytes")
    for part in Path(text).parts:
        if len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES:
            raise error(
                f"invalid {what} {shown(text)}: a part of it is longer than {MAX_NAME_BYTES} bytes"
            )
    return Path(text)
