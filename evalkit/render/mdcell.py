"""The one escaper for text put into a Markdown table cell: agent text, judge rationales.

Every report evalkit writes in Markdown (``evaluation-report.md``,
``calibration-report.md``, ``compare-report.md``, ``ab-report.md``,
``agents-report.md``, ``robustness.md``) puts untrusted text through
:func:`md_cell`. The text then reads, once rendered, exactly as it was written:

* HTML (``&``, ``<``, ``>``) becomes entities, so an agent's ``<script>`` or
  ``<img onerror>`` shows as text and does nothing, and ``<https://...>`` is no
  autolink;
* the inline Markdown markers are backslash-escaped: ``\\`` first, then
  `````, ``*``, ``[``, ``]``, ``~`` and every ``_`` that could open or close
  emphasis (one between two letters or digits cannot, so ``dangerous_advice``
  stays readable). No code span, emphasis, link, image (``![x](http://tracker)``
  would load a remote picture in a viewer) or strikethrough can start;
* ``|`` is escaped, so the text stays in its cell, and every line break
  becomes ``<br>``, so it stays in its row.

Block markers (``#``, ``>``, ``-``, ``1.``) need nothing: a table cell holds
inline content only. The module imports nothing from evalkit, so renderers and
research code share it without an import cycle.
"""

from __future__ import annotations

import re

__all__ = ["escape_html", "escape_markers", "md_cell"]

# Backslash first, so the escapes added after it are not themselves escaped again.
_ALWAYS = ("\\", "`", "*", "[", "]", "~")
_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")  # not between two letters or digits
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def escape_html(text: str) -> str:
    """``&``, ``<`` and ``>`` as entities: raw HTML in Markdown is live in most viewers."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def escape_markers(text: str) -> str:
    """Backslash-escape every inline Markdown marker that could change how ``text`` renders."""
    for marker in _ALWAYS:
        text = text.replace(marker, "\\" + marker)
    return _UNDERSCORE.sub(r"\\_", text)


def md_cell(value: object) -> str:
    """``value`` (None is empty) made safe for one Markdown table cell; see the module doc."""
    text = escape_markers(escape_html("" if value is None else str(value)))
    return "<br>".join(_LINE_BREAK.split(text.replace("|", "\\|")))
