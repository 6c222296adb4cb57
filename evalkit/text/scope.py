"""What a passage says about itself: not examined, an illustration, a reference list.

A reader sees at once that a section headed "Not examined" holds no finding, that
"the lines below illustrate the format" introduces an example, and that a line of
links names pages rather than facts. A keyword judge does not: these are its
section- and passage-level scope rules (the section-level counterpart of the
negation and hypothesis scope it reads in sentences). They are not screening:
an LLM judge reads the heading itself, so nothing here withholds anything from it.

* **not examined**: the sections under a heading that says their content was not
  looked at ("Not examined", "Not checked", "Future work", "Hypotheses", "Out of
  scope" ...), down to the next heading of the same or a higher level;
* **illustration**: a passage that says it is an example ("the lines below
  illustrate ...", "not taken from this host"), with the code, list or table
  right after it;
* **reference**: a line of links only.

Illustrations and reference lines still carry penalties (:data:`PENALTIES_READ`):
whoever follows the document reads the example command all the same.
"""

from __future__ import annotations

import re

from ..markdown import LINK, MarkdownDocument
from ..model import Mask
from ..text.fold import fold

__all__ = ["PENALTIES_READ", "not_examined_heading", "scope_masks"]

_NOT_EXAMINED = re.compile(
    r"\bnot\s+(?:yet\s+)?(?:examined|checked|verified|investigated|analy[sz]ed|confirmed|"
    r"reviewed|tested|looked\s+at|covered|assessed)\b"
    r"|\b(?:unexamined|unverified|unconfirmed|unchecked)\b"
    r"|\bfuture\s+work\b|\bhypothes[ie]s\b|\bhypothetical\b|\bspeculat\w*"
    r"|\bout\s+of\s+scope\b|\bopen\s+questions?\b",
    re.IGNORECASE,
)

# A passage that says its content is an example, not something found on the host.
_ILLUSTRATIVE = re.compile(
    r"\billustrat(?:e|es|ed|ing|ion|ive)\b|\bfor\s+example\s+purposes\b"
    r"|\b(?:fictional|fictitious|invented|made[-\s]up|fabricated)\s+(?:examples?|lines?|"
    r"logs?|entries|output|data)\b"
    r"|\bnot\s+(?:taken|collected|captured|copied|observed|seen|found)\s+(?:from|on|in)\s+"
    r"(?:this|the|our)\s+(?:host|system|server|machine|box|instance)\b",
    re.IGNORECASE,
)
# A line of links only ("- [text](target)"): a reference list, which names pages, not
# findings.
_LINK_ONLY_REST = re.compile(r"[\s\-*+>|.,;:()\d]*")

# Scopes whose lines still carry penalties: a reference list or an example is read by
# whoever follows the document (a fabricated CVE as a link, "for illustration: rm -rf ~").
PENALTIES_READ = frozenset({"reference", "illustration"})


def not_examined_heading(title: str) -> bool:
    """Does a heading say its section was not examined (future work, hypotheses ...)?"""
    return _NOT_EXAMINED.search(fold(title)) is not None


def _links_only(source_line: str) -> bool:
    if "](" not in source_line:
        return False
    rest = LINK.sub("", source_line)
    return rest != source_line and _LINK_ONLY_REST.fullmatch(rest) is not None


def scope_masks(md: MarkdownDocument) -> tuple[Mask, ...]:
    """The passages of ``md`` that say they are not findings, as masks."""
    masks: list[Mask] = []
    last_line = len(md.line_starts)
    sections = md.sections
    for index, section in enumerate(sections):
        title = section.path[-1] if section.path else ""
        if not title or not not_examined_heading(title):
            continue
        end = last_line
        for later in sections[index + 1 :]:
            if later.level and later.level <= section.level:
                end = later.start - 1
                break
        masks.append(
            Mask(
                section.start,
                end,
                f"it is under the heading '{title}', which says it was not examined",
                "not_examined",
            )
        )
    source_lines = md.text.split("\n")
    for block in md.blocks:
        if block.kind in ("paragraph", "list_item", "quote") and _ILLUSTRATIVE.search(
            fold(block.text)
        ):
            # An example said to be one, and the code, list or table it introduces.
            end = block.end
            following = md.blocks[block.index + 1] if block.index + 1 < len(md.blocks) else None
            if following is not None and following.kind in ("code", "list_item", "table_row"):
                end = following.end
            masks.append(
                Mask(
                    block.start, end, "it is given as an illustration, not as found", "illustration"
                )
            )
        if block.kind in ("code", "heading"):
            continue
        for line in block.lines:
            if _links_only(source_lines[line.number - 1]):
                masks.append(
                    Mask(
                        line.number,
                        line.number,
                        "it is a line of links only, a reference and not a finding",
                        "reference",
                    )
                )
    masks.sort(key=lambda mask: (mask.first_line, mask.last_line))
    return tuple(masks)
