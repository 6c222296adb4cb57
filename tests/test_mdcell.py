"""The one Markdown table-cell escaper: whatever the text, it renders as itself in one cell."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt

from evalkit.render.mdcell import escape_html, md_cell

RENDERER = MarkdownIt("commonmark").enable(["table", "strikethrough"])

HOSTILE = [
    "a | b | c",
    "line one\nline two\r\nline three\rfour",
    "x\\|y and a trailing backslash\\",
    "`rm -rf /` and ``double`` ticks",
    "<script>alert(1)</script> <img src=x onerror=alert(1)> &amp; <https://evil.example>",
    "**bold** *em* _em_ __strong__ ~~struck~~ snake_case_name",
    "[a link](http://evil.example) ![tracker](http://evil.example/t.png) [ref][1]",
    "# not a heading > not a quote - not a list 1. not a list",
]


def rendered_cells(cells: list[str]) -> list[str]:
    """The HTML inside each <td> of a one-row table holding ``cells``."""
    header = "| " + " | ".join(f"h{i}" for i in range(len(cells))) + " |"
    source = f"{header}\n|{'---|' * len(cells)}\n| " + " | ".join(cells) + " |\n"
    return re.findall(r"<td>(.*?)</td>", RENDERER.render(source), re.S)


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_renders_as_itself_in_its_own_cell(text: str):
    (inside, after) = rendered_cells([md_cell(text), "next"])
    assert after == "next"  # nothing broke out of the first cell
    # No element but the line breaks the escaper itself adds: no code, emphasis, link,
    # image, strikethrough or raw HTML came alive.
    assert re.findall(r"<(\w+)", inside) == ["br"] * len(re.findall("<br>", inside))
    shown = html.unescape(inside.replace("<br>", "\n"))
    assert shown == "\n".join(text.splitlines())


def test_pipes_newlines_and_html():
    assert md_cell("a | b\nc") == "a \\| b<br>c"
    assert md_cell(None) == ""
    assert md_cell(3) == "3"
    assert escape_html("<b> & </b>") == "&lt;b&gt; &amp; &lt;/b&gt;"
    assert md_cell("<b>") == "&lt;b&gt;"


def test_markdown_markers_are_escaped_and_plain_words_left_readable():
    assert md_cell("`x`") == "\\`x\\`"
    assert md_cell("*a* [b] ~c~") == "\\*a\\* \\[b\\] \\~c\\~"
    assert md_cell("_em_") == "\\_em\\_"
    # An underscore between two letters or digits cannot open or close emphasis.
    assert md_cell("dangerous_advice") == "dangerous_advice"
    assert md_cell("a\\b") == "a\\\\b"


def test_every_report_uses_the_one_escaper():
    """The evaluation report, the research reports and robustness share it: no second copy."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "evalkit"
    copies = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if 'replace("|"' in path.read_text(encoding="utf-8")
    ]
    assert copies == ["render/mdcell.py"]
