"""Passages in another language: suspicion, a warning for every judge.

The documents are written in English. A passage in another language is read by
an LLM judge but by none of the screening rules, which read English: a request
to the scoring written in German or French passes them all. The passage is not
evidence of anything wrong (an analyst may quote a client's e-mail), so it only
warns: a person or an LLM judge reads it in context.

A passage is in another language when its words are mostly some other
language's function words rather than English ones ("der", "und", "nicht";
"les", "est", "pour"; "los", "para", "está" ...), or when most of its letters
are of another script (Cyrillic, Greek, CJK, Arabic ...). Function words, not
vocabulary: product names, paths and log lines in a passage do not move it. A
short passage (a table cell, a bullet of indicators) is never one: it has too
few words to tell.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..markdown import MarkdownDocument

__all__ = ["OtherLanguage", "find_other_language"]

MIN_WORDS = 12  # fewer words than this cannot tell a language
MIN_FOREIGN_SHARE = 0.15  # of the passage's words that are another language's function words
MIN_FOREIGN_WORDS = 3  # distinct ones
MIN_SCRIPT_LETTERS = 20
MIN_SCRIPT_SHARE = 0.5  # of the letters that are of another script

# Function words of other languages that are not English words, nor common in paths,
# hosts or settings ("die", "an", "in", "was", "am", "so", "man", "also", "on" are
# English; "de", "en", "la", "le", "do" are too often parts of names to count alone,
# but a passage in another language holds many others).
_FOREIGN = frozenset(
    # German
    "der des dem den und ist sind nicht mit auf für von bei eine einer eines einem einen"
    " wurde wurden werden wird auch oder sich nach noch nur über dass aus diese dieser"
    " dieses kein keine alle sowie durch zum zur vom im bitte unsere unser haben hatte"
    " bereits wir sie ihr zu"
    # French
    " les des une est sont dans pour par avec sur pas qui que cette ces nous vous ils"
    " elle été aux au leur mais donc très déjà comme sans tous toutes notre votre merci"
    # Spanish and Portuguese
    " el los las del una es son está están por para con sin pero fue han hay al su sus"
    " este esta estos muy ya también uma não são em foi pelo pela dos das nosso"
    # Italian
    " il gli della delle dei degli è sono che non nel nella questo questa anche stato"
    " hanno"
    # Dutch
    " het een van niet zijn wordt werd met voor ook dat deze dit naar bij wij zij".split()
)
_ENGLISH = frozenset(
    "the a an of and to in is was for on with that by as at from it be are this not or"
    " were has have had we our no but which its after before than then there these those"
    " all any each only also into over under out up been can will would should could may"
    " so if when while who what how where why they their them he she his her you your"
    " i my me us do does did done being one two more most other such same some".split()
)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_CODE_SPAN = re.compile(r"`[^`\n]*`")


@dataclass(frozen=True)
class OtherLanguage:
    line: int  # the passage's first line
    first_line: int
    last_line: int
    what: str  # which evidence: function words, or script


def _script_share(text: str) -> tuple[int, float]:
    letters = other = 0
    for char in text:  # counted, not listed: a report may be one 30 MB paragraph
        if char.isalpha():
            letters += 1
            if char > "\u024f" and not unicodedata.name(char, "LATIN").startswith("LATIN"):
                other += 1
    return letters, (other / letters if letters else 0.0)


def other_language(text: str) -> str | None:
    """Why ``text`` reads as a passage in another language than English, or None."""
    text = _CODE_SPAN.sub(" ", text)
    if not text.isascii():  # ASCII letters are all Latin
        letters, share = _script_share(text)
        if letters >= MIN_SCRIPT_LETTERS and share >= MIN_SCRIPT_SHARE:
            return "mostly letters of another script than Latin"
    words = foreign = english = 0
    distinct: set[str] = set()
    for match in _WORD.finditer(text):
        word = match.group().lower()
        words += 1
        if word in _FOREIGN:
            foreign += 1
            distinct.add(word)
        elif word in _ENGLISH:
            english += 1
    if (
        words >= MIN_WORDS
        and len(distinct) >= MIN_FOREIGN_WORDS
        and foreign >= MIN_FOREIGN_SHARE * words
        and foreign > english
    ):
        return "mostly function words of another language than English"
    return None


def find_other_language(md: MarkdownDocument) -> list[OtherLanguage]:
    """Every prose block (and hidden span) of ``md`` written in another language."""
    found: list[OtherLanguage] = []
    for block in md.blocks:
        if block.kind in ("code", "heading"):
            continue  # transcripts quote tools' output; a heading is too short to tell
        why = other_language(block.text)
        if why is not None:
            found.append(OtherLanguage(block.start, block.start, block.end, why))
    for span in md.hidden:
        why = other_language(md.text[span.start : span.end])
        if why is not None:
            last = md.line_of(max(span.start, span.end - 1))
            found.append(OtherLanguage(span.line, span.line, last, why))
    return found
