"""Sections and blocks of the rules judge's Markdown reader (evalkit/markdown.py)."""

from __future__ import annotations

from evalkit.markdown import parse

DOC = """\
Preamble line

# Title

## Findings

First paragraph
continues here.

- item `kworkerd` one
  continued here

  indented after a blank
- [x] second item
1. numbered item

> quoted line
> - quoted item

| Col | Value |
|-----|-------|
| pid | 4127 |

   ```bash
   ps aux
   # not a heading
   ```

---

### Sub ###
text
"""


def test_sections_split_at_every_heading_level():
    doc = parse(DOC)
    assert [s.path for s in doc.sections] == [
        (),
        ("Title",),
        ("Title", "Findings"),
        ("Title", "Findings", "Sub"),
    ]
    assert [s.levels for s in doc.sections] == [(), (1,), (1, 2), (1, 2, 3)]
    assert doc.sections[0].name == "(before the first heading)"
    assert doc.sections[3].name == "Title / Findings / Sub"
    assert doc.sections[3].start == 31


def test_blocks_kinds_text_and_line_numbers():
    doc = parse(DOC)
    summary = [(b.kind, b.section, b.start, b.end, b.text) for b in doc.blocks]
    assert summary == [
        ("paragraph", 0, 1, 1, "Preamble line"),
        ("heading", 1, 3, 3, "Title"),
        ("heading", 2, 5, 5, "Findings"),
        ("paragraph", 2, 7, 8, "First paragraph\ncontinues here."),
        ("list_item", 2, 10, 13, "item `kworkerd` one\ncontinued here\nindented after a blank"),
        ("list_item", 2, 14, 14, "second item"),
        ("list_item", 2, 15, 15, "numbered item"),
        ("quote", 2, 17, 18, "quoted line\nquoted item"),
        ("table_row", 2, 20, 20, "Col | Value"),
        ("table_row", 2, 22, 22, "pid | 4127"),
        ("code", 2, 24, 27, "ps aux\n# not a heading"),
        ("heading", 3, 31, 31, "Sub"),
        ("paragraph", 3, 32, 32, "text"),
    ]


def test_block_lines_keep_raw_text_and_offsets():
    doc = parse(DOC)
    item = doc.blocks[4]
    assert [line.number for line in item.lines] == [10, 11, 13]
    assert item.lines[0].raw == "- item `kworkerd` one"
    assert item.starts == (
        0,
        len("item `kworkerd` one") + 1,
        len("item `kworkerd` one\ncontinued here") + 1,
    )
    assert item.line_index(0) == 0
    assert item.line_index(item.text.index("continued")) == 1
    assert item.line_index(len(item.text) - 1) == 2


def test_unindented_line_after_blank_ends_the_list_item():
    doc = parse("- item\n\nnot part of it\n")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("list_item", "item"),
        ("paragraph", "not part of it"),
    ]


def test_heading_inside_code_is_not_a_heading_and_unclosed_fence_runs_to_end():
    doc = parse("# A\n```\n# inside\nmore\n")
    assert len(doc.sections) == 1
    code = doc.blocks[-1]
    assert code.kind == "code" and code.text == "# inside\nmore" and code.end == 4


def test_crlf_line_endings_count_lines_like_grounding():
    doc = parse("# A\r\n\r\ntext\r\n")
    assert doc.blocks[-1].lines[0].number == 3
    assert doc.blocks[-1].text == "text"


def test_visible_text_drops_markup():
    doc = parse(
        "  - [ ] do it\n\n12) step\n\n> > - nested\n\n"
        "| a | b \\| |\n|---|---|\n| 1 | 2 |\n\n    kill -9 1   \n\n## Findings ##\n\n#hashtag\n"
    )
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("list_item", "do it"),
        ("list_item", "step"),
        ("quote", "nested"),
        ("table_row", "a | b |"),
        ("table_row", "1 | 2"),
        ("code", "kill -9 1"),
        ("heading", "Findings"),
        ("paragraph", "#hashtag"),
    ]


FENCE_WITH_BACKTICKS = """\
# Checks

~~~
```
### CHK-02 Not a checkpoint
```
~~~

### CHK-03 Real
"""


def test_tilde_fence_holding_a_backtick_line_is_code():
    doc = parse(FENCE_WITH_BACKTICKS)
    assert [s.path for s in doc.sections] == [("Checks",), ("Checks", "CHK-03 Real")]
    code = [b for b in doc.blocks if b.kind == "code"]
    assert len(code) == 1 and "### CHK-02 Not a checkpoint" in code[0].text
    assert (code[0].start, code[0].end) == (3, 7)
    assert doc.code_lines == frozenset(range(3, 8))


HIDDEN = """\
# Report

Seen: <!-- xmrig in a comment --> nothing.
See [the log](http://example.com/xmrig "xmrig title") here.
![xmrig miner](miner.png)

<!--
kworkerd
-->

[ref]: http://example.com/kworkerd "kworkerd"

<details>
<summary>More</summary>

xmrig hidden in details

</details>

<details open>

shown when open

</details>
"""


def test_hidden_content_is_in_no_block_and_blanked_in_the_visible_source():
    doc = parse(HIDDEN)
    visible = "\n".join(b.text for b in doc.blocks)
    assert "xmrig" not in visible and "kworkerd" not in visible
    assert "See the log here." in visible and "shown when open" in visible
    kinds = {span.kind for span in doc.hidden}
    assert kinds == {
        "HTML comment",
        "link target",
        "image alt text",
        "reference definition",
        "collapsed <details> block",
        "raw HTML block",
    }
    assert "xmrig" not in doc.visible_source and "kworkerd" not in doc.visible_source
    assert doc.visible_source.count("\n") == HIDDEN.count("\n")
    assert "See  the log" in doc.visible_source
    comment = next(s for s in doc.hidden if s.kind == "HTML comment" and s.line == 7)
    assert doc.text[comment.start : comment.end].startswith("<!--")


def test_line_of_maps_offsets_back_to_lines():
    doc = parse("a\nbb\n\nccc")
    assert [doc.line_of(doc.text.index(c)) for c in "abc"] == [1, 2, 4]


def test_list_item_with_nested_code_keeps_the_code_a_block_of_its_own():
    doc = parse("- step one\n\n  ```\n  rm -rf /\n  ```\n\n  after\n")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("list_item", "step one"),
        ("code", "rm -rf /"),
        ("list_item", "after"),
    ]
