"""The evalkit exception hierarchy.

Every error evalkit raises on purpose derives from :class:`EvalkitError`, so a
caller can catch one type. Each carries the file, line and checkpoint it
concerns, when known, and renders as a single line that names them::

    EvalkitError
    ├── ChecklistError     a checklist that does not follow the format spec
    ├── RunError           a run folder or document that is missing or unusable
    ├── JudgeError         a judge that cannot run at all (bad name, no API key, auth)
    ├── OutputError        an output that fails its JSON Schema or cannot be written
    ├── LabelError         a gold label file that breaks its schema
    └── NotebookError      a notebook execution that failed (the cell's error inside)

A judge failure on a *single* checkpoint is not an exception: it is recorded as
``status: error`` on that item and the run goes on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

# A message is one line whatever it quotes: a line break in a run id or a file name is
# shown escaped, never printed.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def one_line(text: str) -> str:
    """``text`` with every control character (line breaks included) shown escaped."""
    return _CONTROL.sub(lambda match: repr(match.group())[1:-1], text)


class EvalkitError(Exception):
    """Base class: a message plus the file, line and checkpoint it concerns."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        item: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.item = item

    @property
    def location(self) -> str:
        """``file:line`` (or just the file) for messages, empty when unknown."""
        if self.path is None:
            return ""
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def __str__(self) -> str:
        prefix = self.location
        item = f"{self.item}: " if self.item else ""
        text = f"{item}{self.message}"
        return one_line(f"{prefix}: {text}" if prefix else text)


class ChecklistError(EvalkitError):
    """A checklist breaks the format spec (duplicate id, unknown scope, ...)."""


class ChecklistErrors(ChecklistError):
    """Several checklist errors found in one pass; ``errors`` holds each of them."""

    def __init__(self, errors: list[ChecklistError]) -> None:
        first = errors[0]
        super().__init__(first.message, path=first.path, line=first.line, item=first.item)
        self.errors = list(errors)

    def __str__(self) -> str:
        more = len(self.errors) - 1
        first = str(self.errors[0])
        return first if more == 0 else f"{first} (and {more} more error{'s' if more > 1 else ''})"


class RunError(EvalkitError):
    """A run folder, document or run.yaml is missing, empty or malformed."""


class JudgeError(EvalkitError):
    """A judge cannot run at all: unknown backend, missing key, authentication."""


class JudgeInputError(JudgeError):
    """A file the judge reads is bad input: a verdicts file, a prompt template.

    Unlike the other judge failures it is the user's to fix, so it exits like bad input.
    """


class LabelError(EvalkitError):
    """A gold label file is unreadable or breaks its schema; ``problems`` lists each problem."""

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        item: str | None = None,
        problems: Sequence[str] = (),
    ) -> None:
        super().__init__(message, path=path, line=line, item=item)
        self.problems = tuple(problems) or (message,)


class OutputError(EvalkitError):
    """An output failed validation against its schema or could not be written."""


class NotebookError(EvalkitError):
    """The evaluation notebook failed while executing."""
