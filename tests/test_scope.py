"""What a passage says about itself (evalkit/text/scope.py): the keyword judge's scope reading."""

from __future__ import annotations

import pytest

from evalkit.markdown import parse
from evalkit.text.scope import PENALTIES_READ, not_examined_heading, scope_masks


def _spans(text: str) -> list[tuple[int, int, str]]:
    return [(m.first_line, m.last_line, m.kind) for m in scope_masks(parse(text))]


@pytest.mark.parametrize(
    "heading",
    [
        "Not examined",
        "Future work (not checked)",
        "Hypotheses",
        "Out of scope",
        "Open questions",
        "Areas not yet investigated",
        "Unverified leads",
    ],
)
def test_not_examined_headings(heading):
    assert not_examined_heading(heading)


@pytest.mark.parametrize("heading", ["Findings", "Timeline", "Scope of the analysis", "Checks"])
def test_ordinary_headings_are_examined(heading):
    assert not not_examined_heading(heading)


def test_a_not_examined_section_is_masked_down_to_the_next_peer_heading():
    report = (
        "# R\n\n## Findings\n\nkworkerd ran.\n\n## Future work (not checked)\n\n"
        "xmrig may be present.\n\n### Sub\n\nmore\n\n## Timeline\n\n03:00 login\n"
    )
    (mask,) = scope_masks(parse(report))
    assert (mask.first_line, mask.last_line, mask.kind) == (7, 14, "not_examined")
    assert "Future work (not checked)" in mask.reason


def test_a_line_of_links_only_is_a_reference():
    report = (
        "# R\n\n- [Miner kworkerd](https://example.invalid/a)\n"
        "- See [the xmrig docs](https://example.invalid/b): kworkerd ran from /tmp.\n"
    )
    assert _spans(report) == [(3, 3, "reference")]


def test_an_example_said_to_be_one_is_masked_with_the_code_it_introduces():
    report = (
        "# R\n\nThese lines illustrate what a miner leaves behind.\n\n"
        "```\nApr 11 03:02:11 web-01 kworkerd[42]: started\n```\n\n"
        "kworkerd ran from /var/tmp/.cache/kworkerd.\n"
    )
    assert _spans(report) == [(3, 7, "illustration")]


def test_lines_not_taken_from_the_host_are_examples():
    report = "# R\n\nThe log below was not taken from this host.\n\n- kworkerd[42]: started\n"
    assert _spans(report) == [(3, 5, "illustration")]


def test_references_and_examples_still_carry_penalties_but_not_examined_does_not():
    assert PENALTIES_READ == {"reference", "illustration"}
