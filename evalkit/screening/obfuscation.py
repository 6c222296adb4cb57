"""Disguised words: admissibility, for every judge.

A word with an invisible character inside it ("kworker\u200bd"), or with Latin
letters mixed with Cyrillic or Greek look-alikes ("СVE", "sеssion"), reads as a
word to a person and as something else to a matcher: it is written to be
matched one way and read another. Nobody writes that by accident in a report,
so the line holding it is set apart for every judge. Penalties still read it: a
disguised fabricated CVE is still a fabrication.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..markdown import MarkdownDocument
from ..text.fold import CONFUSABLES

__all__ = ["Disguise", "find_disguises"]

_NON_ASCII_LINE = re.compile(r"[^\x00-\x7f]")
_LATIN = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class Disguise:
    line: int
    word: str
    what: str


def _invisible(char: str) -> bool:
    # Format characters (zero-width space and joiners, soft hyphen, word joiner, BOM ...).
    return unicodedata.category(char) == "Cf"


def _disguise(word: str) -> str | None:
    """Why ``word`` is disguised, or None."""
    core = word.strip("`'\"()[]{}<>,;:.!?*_|")
    if any(
        _invisible(char) and core[at - 1].isalnum() and core[at + 1].isalnum()
        for at, char in enumerate(core[1:-1], start=1)
    ):
        return "an invisible character inside a word"
    if any(char in CONFUSABLES for char in core) and _LATIN.search(core):
        return "Latin letters mixed with Cyrillic or Greek look-alikes"
    return None


def find_disguises(md: MarkdownDocument) -> list[Disguise]:
    """Every line of the source holding a disguised word (hidden content included)."""
    found: list[Disguise] = []
    for number, line in enumerate(md.text.split("\n"), start=1):
        if not _NON_ASCII_LINE.search(line):
            continue
        for word in line.split():
            why = _disguise(word)
            if why is not None:
                found.append(Disguise(number, word, why))
                break
    return found
