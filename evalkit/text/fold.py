"""Unicode folding for matching: the one place that decides which characters compare equal.

Grounding, screening and the offline ``rules`` judge (terms, CVE ids, Facts)
compare text only after :func:`fold`, so an agent cannot hide a word from a
check, or slip one past it, by writing it with look-alike characters:

* NFKC (fullwidth letters, ligatures, ``…`` -> ``...``, superscripts ...);
* format characters removed (zero-width space/joiners, soft hyphen, BOM ...:
  Unicode category Cf);
* hyphens, dashes and the minus sign folded to ``-`` (category Pd and U+2212);
* spaces folded to `` `` (category Zs, and the line/paragraph separators, which
  editors do not show as line breaks);
* typographic quotes folded to ``'`` and ``"``;
* Cyrillic and Greek letters that look like Latin ones folded to the Latin
  letter (:data:`CONFUSABLES`, an explicit table: every entry has a test).

Folding never adds or removes a ``\\n``, so a line number in the folded text
is the line number in the original. ASCII text is returned unchanged, at once.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["CONFUSABLES", "fold"]

# Look-alikes of Latin letters, by the Latin letter they are read as.
CONFUSABLES: dict[str, str] = {
    # Cyrillic capitals
    "\u0410": "A",  # А
    "\u0412": "B",  # В
    "\u0421": "C",  # С
    "\u0415": "E",  # Е
    "\u041d": "H",  # Н
    "\u0406": "I",  # І
    "\u0408": "J",  # Ј
    "\u041a": "K",  # К
    "\u041c": "M",  # М
    "\u041e": "O",  # О
    "\u0420": "P",  # Р
    "\u0405": "S",  # Ѕ
    "\u0422": "T",  # Т
    "\u0425": "X",  # Х
    "\u0423": "Y",  # У
    # Cyrillic small letters
    "\u0430": "a",  # а
    "\u0441": "c",  # с
    "\u0501": "d",  # ԁ
    "\u0435": "e",  # е
    "\u04bb": "h",  # һ
    "\u0456": "i",  # і
    "\u0458": "j",  # ј
    "\u043e": "o",  # о
    "\u0440": "p",  # р
    "\u051b": "q",  # ԛ
    "\u0455": "s",  # ѕ
    "\u051d": "w",  # ԝ
    "\u0445": "x",  # х
    "\u0443": "y",  # у
    # Greek capitals
    "\u0391": "A",  # Α
    "\u0392": "B",  # Β
    "\u0395": "E",  # Ε
    "\u0396": "Z",  # Ζ
    "\u0397": "H",  # Η
    "\u0399": "I",  # Ι
    "\u039a": "K",  # Κ
    "\u039c": "M",  # Μ
    "\u039d": "N",  # Ν
    "\u039f": "O",  # Ο
    "\u03a1": "P",  # Ρ
    "\u03a4": "T",  # Τ
    "\u03a5": "Y",  # Υ
    "\u03a7": "X",  # Χ
    # Greek small letters
    "\u03b9": "i",  # ι
    "\u03bd": "v",  # ν
    "\u03bf": "o",  # ο
}

_QUOTES = {
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u201b": "'",
    "\u2032": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u201f": '"',
    "\u2033": '"',
}

# A non-ASCII run, with the character before it (a combining mark composes with it).
_NON_ASCII = re.compile(r"[\x00-\x7f]?[^\x00-\x7f]+")


@lru_cache(maxsize=8192)
def _fold_char(char: str) -> str:
    if char in CONFUSABLES:
        return CONFUSABLES[char]
    if char in _QUOTES:
        return _QUOTES[char]
    category = unicodedata.category(char)
    if category == "Cf":
        return ""
    if category == "Pd" or char == "\u2212":
        return "-"
    if category in ("Zs", "Zl", "Zp"):
        return " "
    return char


def _fold_run(match: re.Match[str]) -> str:
    composed = unicodedata.normalize("NFKC", match.group(0))
    # NFKC may itself produce a confusable or a dash ("－" -> "-" is fine; "Ⅽ" -> "C").
    return "".join(_fold_char(char) if not char.isascii() else char for char in composed)


def fold(text: str) -> str:
    """``text`` folded for matching (see the module docstring); ASCII is unchanged."""
    if text.isascii():
        return text
    return _NON_ASCII.sub(_fold_run, text)
