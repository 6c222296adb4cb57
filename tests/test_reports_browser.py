"""The research pages a person reads, in headless Chromium at 1280 px: calibration.html and
compare.html fit the page (no element past its right edge, however deep), show no progress
bar as an error block, no raw Python mapping and no row numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.labelled import labelled_workspace
from tests.samples import run_evalkit
from tests.test_html import WIDTH, render_in_chromium
from tests.test_research_cli import environment

pytestmark = pytest.mark.e2e

# The right edge of the widest element, written into the page once it has loaded: a table
# in a scrolling output area runs off the page without widening the document itself.
MEASURE = """<script>
window.addEventListener("load", () => {
  let right = 0;
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    if (box.width > 0) right = Math.max(right, box.right);
  }
  document.body.setAttribute("data-right-edge", Math.ceil(right));
});
</script>"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = labelled_workspace(tmp_path_factory.mktemp("reports"))
    env = environment()
    for out in ("cal-a", "cal-b"):
        result = run_evalkit("calibrate", "--out", out, "--quiet", cwd=root, env=env)
        assert result.returncode == 0, result.stderr
    result = run_evalkit("compare", "cal-a", "cal-b", "--out", "cmp", cwd=root, env=env)
    assert result.returncode == 0, result.stderr
    return {"calibration": root / "cal-a/calibration.html", "compare": root / "cmp/compare.html"}


@pytest.mark.parametrize("name", ["calibration", "compare"])
def test_the_page_reads_at_1280px(pages: dict[str, Path], name: str, tmp_path: Path) -> None:
    text = pages[name].read_text(encoding="utf-8")
    assert "output_stderr" not in text  # no progress bar (or any output) as an error block
    assert "item/s" not in text  # nor any progress bar line at all: the record keeps none
    page = tmp_path / "page.html"
    page.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = render_in_chromium(page, tmp_path / "profile")
    edge = re.search(r'data-right-edge="(\d+)"', dom)
    assert edge, "the measuring script did not run"
    assert int(edge.group(1)) <= WIDTH, f"something reaches {edge.group(1)} px"
    shown = re.sub(r"<[^>]+>", " ", dom)
    assert "{'" not in shown and "&#x27;:" not in dom  # no raw Python mapping
    # No table shows pandas' row numbers (a row heading 0, 1, 2 ... of a RangeIndex).
    assert not re.search(r'<th[^>]*class="row_heading[^"]*"[^>]*>\s*0\s*</th>', dom)


def test_a_table_of_long_quotes_fits_the_page(tmp_path: Path) -> None:
    # A quote may hold a long word (a path, a command line without spaces): the disagreement
    # table of a calibration ran 1,673 px wide on the hard gold pairs.
    import pandas as pd

    from evalkit.research.report_format import styled

    frame = pd.DataFrame(
        {
            "run": ["hard", "hard"],
            "range": ["redis-exposed", "redis-exposed"],
            "chk_id": ["CHK-08", "CHK-09"],
            "judge_quotes": ["/etc/systemd/system/" + "x" * 300, "grep -E '^(" + "|port" * 60],
            "label_note": ["a note in words " * 20, "short"],
        }
    )
    page = tmp_path / "table.html"
    page.write_text(
        f"<html><body>{styled(frame).to_html()}{MEASURE}</body></html>", encoding="utf-8"
    )
    dom = render_in_chromium(page, tmp_path / "profile")
    edge = re.search(r'data-right-edge="(\d+)"', dom)
    assert edge and int(edge.group(1)) <= WIDTH, edge and edge.group(1)
    assert "redis-exposed" in re.sub(r"<[^>]+>", "", dom)  # the range is kept whole
