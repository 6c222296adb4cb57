"""HTML a reader can share: an executed notebook without its code, and the batch index.

:func:`export_html` turns ``evaluation.ipynb`` into ``evaluation.html`` beside it
(nbconvert's lab template, input cells left out, no script fetched from the
network: the page is self-contained). :func:`index_html` lists a batch's records
with their headline figures. Every piece of agent or judge text is escaped.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from ..fileio import write_text_atomic

# The lab template with its CDN scripts (RequireJS, MathJax, Mermaid, widgets) removed,
# since the record has none of what they serve, and a page readable at 1280 px.
_RECORD_TEMPLATE = """\
{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
{% block extra_css %}
<style>
  body.jp-Notebook { max-width: 1200px; margin: 0 auto; }
  .jp-OutputArea-output img { max-width: 100%; height: auto; }
  .jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th { white-space: normal; }
  .jp-OutputArea-output pre { white-space: pre-wrap; overflow-wrap: anywhere; }
</style>
{% endblock extra_css %}
"""


@cache
def _exporter() -> Any:
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    return HTMLExporter(  # type: ignore[no-untyped-call]
        extra_loaders=[DictLoader({"evalkit-record.html.j2": _RECORD_TEMPLATE})],
        template_file="evalkit-record.html.j2",
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        # The notebook is validated once, after the preprocessors, not after each of them.
        optimistic_validation=True,
    )


def warm_up() -> None:
    """Import nbconvert and compile the template (about 1 s) ahead of the first export.

    :func:`evalkit.notebook.execute` calls it in a thread while the kernel runs, when this
    process is only waiting.
    """
    import nbformat

    _exporter().from_notebook_node(nbformat.v4.new_notebook())  # type: ignore[no-untyped-call]


def export_html(notebook: str | Path, target: str | Path) -> Path:
    """Write ``notebook`` as a self-contained HTML page without code cells, atomically."""
    body, _ = _exporter().from_filename(str(notebook))
    return write_text_atomic(target, body)


# --------------------------------------------------------------------------- batch index


def _pct(value: Any) -> str:
    return "N/A" if value is None else f"{value:.1f}%"


def _cost(value: Any) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def index_html(rows: Sequence[Mapping[str, Any]], folder: str | Path, title: str) -> str:
    """A page linking every evaluation of ``rows`` (index rows, see :mod:`evalkit.batch`).

    Links are relative to ``folder`` (where the page is written); an evaluation with
    no HTML record links its report instead.
    """
    base = Path(folder)
    body = []
    for row in rows:
        record = row.get("html") or row.get("report")
        name = html.escape(f"{row['run']} / {row['range']}")
        link = (
            f'<a href="{html.escape(os.path.relpath(record, base))}">{name}</a>' if record else name
        )
        complete = "yes" if row.get("complete") else f"no ({row.get('errored_items', '?')} errored)"
        body.append(
            "<tr>"
            f"<td>{link}</td>"
            f"<td>{html.escape(str(row.get('judge') or ''))}</td>"
            f"<td>{html.escape(str(row.get('model') or ''))}</td>"
            f"<td>{_pct(row.get('detection_pct'))}</td>"
            f"<td>{_pct(row.get('plan_pct'))}</td>"
            f"<td>{html.escape(str(row.get('mode') or 'no diagnosis'))}</td>"
            f"<td>{html.escape(complete)}</td>"
            f"<td>{_cost(row.get('cost_usd'))}</td>"
            "</tr>"
        )
    head = "".join(
        f"<th>{name}</th>"
        for name in ("Run / range", "Judge", "Model", "Detection", "Plan", "Mode", "Complete")
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 1200px; margin: 1em auto; padding: 0 1em; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left; }}
</style></head>
<body><h1>{html.escape(title)}</h1>
<table><thead><tr>{head}<th>Cost</th></tr></thead>
<tbody>{"".join(body)}</tbody></table></body></html>
"""


def write_index_html(rows: Sequence[Mapping[str, Any]], path: str | Path, title: str) -> Path:
    target = Path(path)
    return write_text_atomic(target, index_html(rows, target.parent, title))
