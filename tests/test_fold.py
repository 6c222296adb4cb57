"""Unicode folding for matching (evalkit/text/fold.py)."""

from __future__ import annotations

import unicodedata

import pytest

from evalkit.text.fold import CONFUSABLES, fold


@pytest.mark.parametrize(
    "written",
    [
        "CVE-2024-6387",
        "CVE\u20102024\u20106387",  # U+2010 hyphen
        "CVE\u20112024\u20136387",  # non-breaking hyphen, en dash
        "CVE\u22122024\u22126387",  # minus sign
        "\u0421VE-2024-6387",  # Cyrillic С
        "CVE-2024\u200b-6387",  # zero-width space
        "C\u00adVE-2024-6387",  # soft hyphen
        "\uff23\uff36\uff25-2024-6387",  # fullwidth letters
        "\ufeffCVE-2024-6387",
    ],
)
def test_disguised_cve_ids_fold_to_the_ascii_id(written):
    assert fold(written) == "CVE-2024-6387"


@pytest.mark.parametrize(("look_alike", "latin"), sorted(CONFUSABLES.items()))
def test_every_confusable_folds_to_its_latin_letter(look_alike, latin):
    assert unicodedata.category(look_alike).startswith("L")
    assert fold(f"x{look_alike}y") == f"x{latin}y"


def test_spaces_quotes_and_ellipsis_fold():
    assert fold("a\u00a0b\u2003c\u202fd") == "a b c d"
    assert fold("\u201cdon\u2019t\u201d\u2026") == '"don\'t"...'


def test_folding_keeps_line_breaks_and_composes_accents():
    text = "line one\u2028still one\nl\u0456ne two\ncafe\u0301"
    folded = fold(text)
    assert folded.count("\n") == text.count("\n") == 2
    assert folded == "line one still one\nline two\ncaf\u00e9"


def test_ascii_is_returned_as_is():
    text = "plain ascii, even with \x00 and \t"
    assert fold(text) is text
