"""The shared record: evaluation.html, read in headless Chromium at 1280 px."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

import evalkit
from evalkit.notebook import execute
from evalkit.render.html import index_html
from evalkit.runplan import RunPlan
from tests.samples import REPO

WIDTH = 1280
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Written into the page once it has loaded, then read back from the dumped DOM.
MEASURE = """<script>
window.addEventListener("load", () => {
  document.body.setAttribute("data-scroll-width", document.documentElement.scrollWidth);
});
</script>"""


def render_in_chromium(page: Path, profile: Path) -> str:
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing in CI (.ci/run installs it)")
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    result = subprocess.run(
        [
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-background-networking", "--no-first-run", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={profile}", f"--window-size={WIDTH},900",
            "--virtual-time-budget=5000", "--dump-dom", page.as_uri(),
        ],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.mark.e2e
def test_the_html_record_reads_at_1280px_with_everything_in_it(workspace: Path, tmp_path: Path):
    plan = RunPlan.build(
        range_id="ssh-miner",
        run_id="demo",
        judge="rules",
        ranges_dir=workspace / "ranges",
        runs_dir=workspace / "runs",
        base=workspace,
    )
    run = execute(plan, progress=False, workspace=workspace)
    text = run.html.read_text(encoding="utf-8")
    for local in {
        str(workspace),
        str(REPO),
        str(tmp_path.parent),
        str(Path(evalkit.__file__).parent),
    }:
        assert local not in text, f"absolute path {local} in the record"
    assert "<script src=" not in text  # self-contained: nothing fetched from the network
    assert "evalkit.load_range" not in text  # code cells are left out
    assert "output_stderr" not in text  # progress is not shown as an error block
    # Nor kept at all: the bar was streamed to the terminal; the record has no bar line.
    assert "item/s" not in text and "judging ssh-miner" not in text
    record = nbformat.read(run.notebook, as_version=4)
    streams = [o for c in record.cells if c.cell_type == "code" for o in c.outputs
               if o.output_type == "stream"]  # fmt: skip
    assert streams and all(o.text.strip() and "judging " not in o.text for o in streams)

    page = tmp_path / "page.html"
    page.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dom = render_in_chromium(page, tmp_path / "profile")

    width = re.search(r'data-scroll-width="(\d+)"', dom)
    assert width, "the measuring script did not run"
    assert int(width.group(1)) <= WIDTH
    assert "Overall mode" in dom or "Diagnosis" in dom
    assert "Summary" in dom
    rng = evalkit.load_range(workspace / "ranges", "ssh-miner")
    for checkpoint in rng.checkpoints:
        assert f'id="card-{checkpoint.id}"' in dom, checkpoint.id
    assert len(re.findall(r'<img[^>]+src="data:image/png;base64,', dom)) == 3
    assert "**" not in re.sub(r"<[^>]+>", "", dom.split('class="evalkit-cards"')[1])


def test_index_html_escapes_and_links_relative(tmp_path: Path):
    rows = [
        dict(run="<b>r</b>", range="x", judge="rules", model="rules-v1", detection_pct=50.0,
             plan_pct=None, mode=None, complete=False, errored_items=2, cost_usd=None,
             html=str(tmp_path / "runs/r/x/evaluations/rules/evaluation.html"), report=None),
    ]  # fmt: skip
    page = index_html(rows, tmp_path / "runs", "evaluations")
    assert "&lt;b&gt;r&lt;/b&gt;" in page and "<b>r</b>" not in page
    assert 'href="r/x/evaluations/rules/evaluation.html"' in page
    assert "N/A" in page and "no (2 errored)" in page and "unknown" in page
