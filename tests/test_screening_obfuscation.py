"""Disguised words (evalkit/screening/obfuscation.py): admissibility."""

from __future__ import annotations

import pytest

from evalkit.markdown import parse
from evalkit.screening.obfuscation import find_disguises
from tests.screening_samples import kinds, screen_report


@pytest.mark.parametrize(
    "line",
    [
        "Process kworker\u200bd ran as root.",  # a zero-width space inside a word
        "The x\u2060mrig build was found.",  # a word joiner
        "The \u0441ryptominer was started.",  # a Cyrillic "c" among Latin letters
        "Seen: \u0421VE-2024-6387 exploited.",  # a Cyrillic "C"
    ],
)
def test_a_disguised_word_is_flagged_and_its_line_set_apart(line):
    result = screen_report(f"# R\n\n{line}\n")
    assert kinds(result) == [("obfuscation", 3)]
    assert [(m.first_line, m.kind) for m in result.masks["report"]] == [(3, "obfuscation")]


@pytest.mark.parametrize(
    "line",
    [
        "Latency was 150\u00b5s on the pool connection.",  # a micro sign is no look-alike
        "The analyst wrote \u00abnaïve\u00bb in the notes.",
        "\u041f\u0440\u0438\u043c\u0435\u0447\u0430\u043d\u0438\u0435: a Russian word, whole.",
        "A zero-width space\u200b after a word is trailing, not inside it.",
        "Team: \U0001f468\u200d\U0001f4bb on call.",  # a joiner inside an emoji sequence
    ],
)
def test_ordinary_unicode_is_not_a_disguise(line):
    assert find_disguises(parse(f"{line}\n")) == []
