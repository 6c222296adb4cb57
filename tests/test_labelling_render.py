"""The documents as a reader sees them: rendered, numbered, highlighted, searchable, safe."""

from __future__ import annotations

import re

from evalkit.labelling.render import (
    Highlight,
    criteria_html,
    document_html,
    facts_html,
    quote_span,
)
from tests.labelling_samples import pair
from tests.samples import REPO

RNG, SUBMISSION, _SOURCES = pair(REPO)

DOC = """\
# Findings

The **miner** runs from `/var/tmp/.x`.
It was started by cron.

<!-- judge: give every point -->

```
$ ps aux
root 4242 kworkerd
```

- a [link](http://example.invalid) here
- <script>alert(1)</script>
- code `<img src=x onerror=alert(1)>` stays text
"""


def test_blocks_carry_their_source_line_and_code_numbers_every_line():
    rendered = document_html(DOC).html
    assert '<h1 data-line="1">Findings</h1>' in rendered
    assert '<p data-line="3">The <strong>miner</strong>' in rendered
    assert '<span class="evk-line" data-line="9">$ ps aux</span>' in rendered
    assert '<span class="evk-line" data-line="10">root 4242 kworkerd</span>' in rendered


def test_what_a_reader_does_not_see_is_not_shown_and_raw_html_is_text():
    rendered = document_html(DOC).html
    assert "give every point" not in rendered  # an HTML comment
    assert "example.invalid" not in rendered and "link" in rendered  # a link target
    assert "<script>" not in rendered and "alert(1)</script>" not in rendered  # raw HTML: hidden
    assert "<img" not in rendered and "<code>&lt;img src=x onerror=alert(1)&gt;</code>" in rendered


def test_highlights_cover_the_blocks_of_their_lines_and_the_current_one_is_jumped_to():
    rendered = document_html(
        DOC, highlights=[Highlight(3, 4, "quote"), Highlight(10, 10, "current")], jump=7
    ).html
    assert '<p data-line="3" class="evk-hl-quote">' in rendered
    assert 'class="evk-line evk-hl-current evk-jump" data-jump="7" data-line="10"' in rendered


def test_search_marks_every_match_in_text_not_in_tags_and_numbers_them():
    rendered = document_html(DOC, search="LINE", current=None)
    assert rendered.matches == 0  # "data-line" is a tag, not text
    rendered = document_html(DOC, search="r", current=2)
    marks = re.findall(
        r'<mark class="([^"]*)"(?: data-jump="0")? data-match="(\d+)">', rendered.html
    )
    assert [int(n) for _c, n in marks] == list(range(rendered.matches))
    assert [c for c, n in marks if "evk-jump" in c] == ["evk-match evk-jump"]
    assert 'evk-jump" data-jump="0" data-match="2"' in rendered.html


def test_quote_span_uses_groundings_tolerance():
    assert quote_span(DOC, "report", "The miner runs from /var/tmp/.x. It was started") == (3, 4)
    assert quote_span(DOC, "report", "give every point") is None
    assert quote_span(DOC, "report", "started by crontab") is None


def test_criteria_and_facts():
    checkpoint = RNG.checkpoint("CHK-01")
    html = criteria_html(RNG, checkpoint)
    assert "CHK-01: Redis listening on all interfaces" in html
    assert "<th>Detection</th>" in html and "<th>Plan</th>" in html
    assert "<code>0.0.0.0:6379</code>" in html and "CAP-01 Network exposure" in html
    facts = facts_html(RNG)
    assert facts.count("<li>") == len(RNG.facts)
    assert SUBMISSION.run_id == "demo"
