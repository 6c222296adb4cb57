"""The checkpoint fields a checklist may name, their spellings, and the fields it may not.

Field names are case-insensitive; a field evalkit does not know is kept and shown,
never an error, and :func:`unknown_field_warnings` says so with the known field it
most resembles ("Indicaters" -> "did you mean 'Indicators'?").
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Protocol

from .model import Scope

__all__ = [
    "CANONICAL_FIELDS",
    "DID_YOU_MEAN_CUTOFF",
    "FIELD_ALIASES",
    "INFORMATIONAL_FIELDS",
    "SCOPES",
    "normalize_name",
    "unknown_field_warnings",
]


class Field(Protocol):
    name: str  # as written
    line: int


# Canonical field -> accepted spellings (compared lower-cased, spaces collapsed).
FIELD_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("chk", "id", "chk id"),
    "name": ("name",),
    "caps": ("cap", "caps"),
    "scope": ("scope",),
    "detection": ("detection", "detection criteria"),
    "plan": ("plan", "plan criteria"),
    "indicators": ("indicators",),
    "attribution": ("attribution",),
    "remediation": ("remediation",),
}
CANONICAL_FIELDS = {alias: key for key, aliases in FIELD_ALIASES.items() for alias in aliases}
# Documented fields that inform and do not score: kept as written (shown to a judge as a
# hint, like any field it does not read) and never warned about.
INFORMATIONAL_FIELDS: tuple[str, ...] = ("severity",)
SCOPES: dict[str, Scope] = {
    "both": "both",
    "detection-only": "detection-only",
    "detection only": "detection-only",
    "plan-only": "plan-only",
    "plan only": "plan-only",
}


def normalize_name(name: str) -> str:
    return " ".join(name.strip().strip("*_").split()).lower()


# The spellings a misspelt field is matched against, and how close it must be.
_FIELD_SPELLINGS: dict[str, str] = {
    alias: alias.title() if alias != "cap" else "CAP"
    for aliases in FIELD_ALIASES.values()
    for alias in aliases
    if alias not in ("chk", "id", "chk id", "caps")
}
DID_YOU_MEAN_CUTOFF = 0.75


def unknown_field_warnings(fields: Iterable[Field]) -> list[tuple[str, int]]:
    """A warning per field evalkit does not know: kept as written, but maybe misspelt.

    Unknown fields are allowed (they are kept and shown), so this never fails the
    checklist; but "Indicaters" silently costs an item its indicators, so the author
    is told, with the nearest known field.
    """
    warnings: list[tuple[str, int]] = []
    seen: set[str] = set()
    for fld in fields:
        name = normalize_name(fld.name)
        if name in seen or name in INFORMATIONAL_FIELDS:
            continue
        seen.add(name)
        close = difflib.get_close_matches(name, _FIELD_SPELLINGS, n=1, cutoff=DID_YOU_MEAN_CUTOFF)
        hint = f"; did you mean {_FIELD_SPELLINGS[close[0]]!r}?" if close else ""
        warnings.append(
            (
                f"unknown field {fld.name!r}, kept as written and not used for scoring{hint}",
                fld.line,
            )
        )
    return warnings
