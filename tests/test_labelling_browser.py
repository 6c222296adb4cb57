"""End to end in a real browser: JupyterLab on 127.0.0.1, the labelling and adjudication
notebooks driven in headless Chromium (Debian's) through the Python playwright package.

Skipped when chromium is missing, except in CI (where .ci/run installs it), where that fails.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.labelling_samples import RANGE, RUN, workspace_with_evaluation, write_rules_evaluation
from tests.samples import REPO, evalkit_command, run_evalkit

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
WAIT_MS = 120_000  # generous: a cold kernel on a busy 2-core machine


def chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing in CI (.ci/run installs it)")
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    pytest.importorskip("playwright", reason="playwright is in the test extra")
    return CHROMIUM


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Lab:
    def __init__(self, root: Path, url: str, token: str) -> None:
        self.root, self.url, self.token = root, url, token

    def notebook(self, name: str) -> str:
        return f"{self.url}/lab/tree/labelling/{name}?token={self.token}&reset"

    @property
    def labels(self) -> Path:
        return self.root / "runs" / RUN / RANGE / "labels"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab started as a labeller starts it, by `evalkit label`, on the workspace's copy
    (labelling/label.ipynb; `evalkit adjudicate --print-only` makes the other copy)."""
    chromium()
    base = tmp_path_factory.mktemp("lab")
    root = workspace_with_evaluation(base / "ws")
    write_rules_evaluation(root, RUN, "ssh-miner")  # a 23-checkpoint pair
    settings = base / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "EVALKIT_WORKSPACE": str(root),
        "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "IPYTHONDIR": str(base / "ipython"),
    }
    made = run_evalkit("adjudicate", "--print-only", cwd=root, env=env)
    assert made.returncode == 0, made.stderr
    command = [
        *evalkit_command(), "label", "--no-browser", "--", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", "--LabApp.news_url=",
        "--LabApp.extension_manager=readonly", "--allow-root",
    ]  # fmt: skip
    log = (base / "jupyterlab.log").open("wb")
    server = subprocess.Popen(command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_server(server, f"{url}/api/status?token={token}", base / "jupyterlab.log")
        yield Lab(root, url, token)
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def wait_for_server(server: subprocess.Popen[bytes], status: str, log: Path) -> None:
    """Until the server answers (it stops the wait by exiting, too)."""
    while True:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited: {log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(status, timeout=10) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)


@pytest.fixture(scope="module")
def browser(lab: Lab) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


def open_and_run(browser: Any, lab: Lab, notebook: str, width: int = 1600) -> Any:
    """A page with ``notebook`` open in JupyterLab and every cell run."""
    page = browser.new_page(viewport={"width": width, "height": 1000 if width >= 1600 else 900})
    page.set_default_timeout(WAIT_MS)
    page.goto(lab.notebook(notebook))
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    wait_for_idle_kernel(page)
    run_all(page)
    page.wait_for_selector(".evk-app")
    return page


def wait_for_idle_kernel(page: Any) -> None:
    page.wait_for_function("() => document.body.innerText.includes('(ipykernel) | Idle')")


def run_all(page: Any) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


def choose(page: Any, app: str, label: str, value: str) -> None:
    dropdown = page.locator(f"{app} .widget-dropdown").filter(has_text=label).locator("select")
    dropdown.select_option(label=value)


def until(check: Callable[[], Any], what: str, page: Any) -> Any:
    """Poll ``check`` until it gives something true (the page's own waits bound it)."""
    for _ in range(WAIT_MS // 100):
        value = check()
        if value:
            return value
        page.wait_for_timeout(100)
    pytest.fail(f"never happened: {what}")


def read_draft(lab: Lab, name: str) -> dict[str, Any] | None:
    path = lab.labels / f"{name}.json.draft"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None


def item(draft: dict[str, Any] | None, chk_id: str) -> dict[str, Any]:
    assert draft is not None
    return next(c for c in draft["checkpoints"] if c["chk_id"] == chk_id)


def test_a_labeller_labels_a_pair_in_jupyterlab(browser: Any, lab: Lab):
    app = ".evk-labelling"
    page = open_and_run(browser, lab, "label.ipynb")
    choose(page, app, "Run", RUN)
    choose(page, app, "Range", RANGE)
    page.locator(f"{app} .evk-labeller input").fill("e2e")
    choose(page, app, "Pre-fill", "judge rules")
    page.locator(f"{app} .evk-open").click()
    page.wait_for_selector(f"{app} .evk-progress:has-text('1 of 12')")
    page.wait_for_selector(f"{app} .evk-message:has-text('pre-filled from judge:rules')")
    # The criteria, the judge's reasons and quotes beside the toggles, numbered documents.
    page.wait_for_selector(f"{app} .evk-criteria-pane:has-text('CHK-01: Redis listening')")
    page.wait_for_selector(f"{app} .evk-row-discovery .evk-quote:has-text('report L38')")
    page.wait_for_selector(f"{app} .evk-source-report [data-line='38']")

    # The mouse sets a sub-score; the draft on disk follows at once.
    evidence = item(read_draft(lab, "e2e"), "CHK-01")["detection"]["evidence"]
    flipped = 1 - evidence
    page.locator(f"{app} .evk-score-evidence button", has_text=str(flipped)).click()
    until(lambda: item(read_draft(lab, "e2e"), "CHK-01")["detection"]["evidence"] == flipped,
          "the mouse click saved", page)  # fmt: skip
    # The keyboard: 2 toggles evidence back, n goes to the next checkpoint.
    page.locator(f"{app} .evk-criteria-pane").click()
    page.keyboard.press("2")
    until(lambda: item(read_draft(lab, "e2e"), "CHK-01")["detection"]["evidence"] == evidence,
          "key 2 toggled evidence", page)  # fmt: skip
    page.keyboard.press("n")
    page.wait_for_selector(f"{app} .evk-progress:has-text('2 of 12')")
    until(lambda: (read_draft(lab, "e2e") or {}).get("position") == "CHK-02", "moved", page)

    # Search: every match marked, the next one jumped to.
    page.locator(f"{app} .evk-search input").fill("6379")
    page.wait_for_selector(f"{app} .evk-search-count:has-text('1 of')")
    page.locator(f"{app} .evk-search-next").click()
    page.wait_for_selector(f"{app} .evk-search-count:has-text('2 of')")
    page.wait_for_selector(f"{app} .evk-doc-scroll[data-jumped] mark.evk-jump")

    # A penalty whose quote is selected with the mouse in the report: found, and added.
    line = page.locator(f"{app} .evk-source-report .evk-line[data-line='38']")
    line.scroll_into_view_if_needed()
    line.click(click_count=3)
    quote = page.locator(f"{app} .evk-penalty-quote textarea")
    until(lambda: "0.0.0.0:6379" in quote.input_value(), "the selection became the quote", page)
    page.wait_for_selector(
        f"{app} .evk-penalty-result:has-text('found verbatim in the report, line 38')"
    )
    page.locator(f"{app} .evk-penalty-detail input").fill("e2e: a quoted listener")
    add = page.locator(f"{app} .evk-penalty-add")
    until(lambda: add.is_enabled(), "Add enabled for a verbatim quote", page)
    add.click()
    until(lambda: len(item(read_draft(lab, "e2e"), "CHK-02")["penalties"]) == 1, "added", page)
    # A quote that is not verbatim is refused before it can be saved.
    quote.fill("LISTEN 0 512 0.0.0.0:6379 as nobody wrote it")
    page.wait_for_selector(
        f"{app} .evk-penalty-result:has-text('not found verbatim in the report')"
    )
    until(lambda: add.is_disabled(), "Add disabled for a quote that is not verbatim", page)

    # A note and the borderline flag.
    page.locator(f"{app} .evk-note textarea").fill("e2e note: borderline on evidence")
    page.locator(f"{app} .evk-borderline input").check()
    until(lambda: item(read_draft(lab, "e2e"), "CHK-02")["borderline"], "flag saved", page)
    until(lambda: item(read_draft(lab, "e2e"), "CHK-02")["note"].startswith("e2e note"),
          "note saved", page)  # fmt: skip

    # Reload the page, restart the kernel, run again: the draft resumes where it stopped.
    page.reload()
    page.wait_for_selector(".jp-Notebook .jp-Cell")
    wait_for_idle_kernel(page)
    page.locator(".lm-MenuBar-itemLabel", has_text="Kernel").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Restart Kernel and Run All Cells").first.click()
    page.locator(".jp-Dialog button", has_text="Restart").click()
    page.wait_for_selector(f"{app} .evk-open")
    choose(page, app, "Run", RUN)
    choose(page, app, "Range", RANGE)
    page.locator(f"{app} .evk-labeller input").fill("e2e")
    page.locator(f"{app} .evk-open").click()
    page.wait_for_selector(
        f"{app} .evk-message:has-text('resumed the draft e2e.json.draft at CHK-02')"
    )
    page.wait_for_selector(f"{app} .evk-progress:has-text('2 of 12')")
    page.wait_for_selector(f"{app} .evk-reason:has-text('e2e: a quoted listener')")
    note = page.locator(f"{app} .evk-note textarea")
    until(lambda: note.input_value().startswith("e2e note"), "the note is back", page)
    until(lambda: page.locator(f"{app} .evk-borderline input").is_checked(), "flag back", page)

    # Finalising too early is refused, and the draft stays.
    page.locator(f"{app} .evk-finalise").click()
    page.wait_for_selector(f"{app} .evk-result:has-text('not yet seen')")
    assert not (lab.labels / "e2e.json").exists()
    # Every checkpoint seen with the keyboard, then finalised.
    page.locator(f"{app} .evk-criteria-pane").click()
    for _ in range(10):
        page.keyboard.press("j")
    page.wait_for_selector(f"{app} .evk-progress:has-text('12 of 12')")
    # CHK-12 is plan-only: its detection sub-scores have no toggle.
    page.wait_for_selector(f"{app} .evk-row-discovery:has-text('N/A (plan-only)')")
    assert page.locator(f"{app} .evk-row-discovery .widget-toggle-buttons").count() == 0
    page.locator(f"{app} .evk-finalise").click()
    page.wait_for_selector(f"{app} .evk-result:has-text('evalkit validate: ok (labels)')")
    written = lab.labels / "e2e.json"
    assert written.is_file() and not (lab.labels / "e2e.json.draft").exists()
    data = json.loads(written.read_text(encoding="utf-8"))
    chk02 = next(c for c in data["checkpoints"] if c["chk_id"] == "CHK-02")
    assert chk02["borderline"] is True and chk02["note"].startswith("e2e note")
    assert data["prefilled_from"] == "judge:rules"
    result = run_evalkit("validate", str(written), cwd=lab.root, env=dict(os.environ))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("ok (labels)")
    page.close()


class Gestures:
    """What a labeller does, counted: each click, key press, field filled or option chosen."""

    def __init__(self, page: Any, app: str) -> None:
        self.page, self.app, self.count = page, app, 0

    def click(self, selector: str) -> None:
        self.page.locator(f"{self.app} {selector}").click()
        self.count += 1

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)
        self.count += 1

    def fill(self, selector: str, text: str) -> None:
        self.page.locator(f"{self.app} {selector}").fill(text)
        self.count += 1

    def choose(self, label: str, value: str) -> None:
        choose(self.page, self.app, label, value)
        self.count += 1


def test_a_23_checkpoint_pair_prefilled_from_the_judge_takes_few_gestures(browser: Any, lab: Lab):
    """Accepting the judge's pre-filled verdicts, flipping some, on every checkpoint of an
    ssh-miner pair: at most 10 clicks or key presses per checkpoint on average, and a label
    that evalkit validate accepts."""
    app = ".evk-labelling"
    page = open_and_run(browser, lab, "label.ipynb")
    act = Gestures(page, app)
    act.choose("Run", RUN)
    act.choose("Range", "ssh-miner")
    act.fill(".evk-labeller input", "fast")
    act.choose("Pre-fill", "judge rules")
    act.click(".evk-open")
    page.wait_for_selector(f"{app} .evk-progress:has-text('1 of 23')")
    act.click(".evk-criteria-pane")  # the keys go to the app from here
    labels = lab.root / "runs" / RUN / "ssh-miner" / "labels"
    judge = json.loads(
        (lab.root / "runs" / RUN / "ssh-miner/evaluations/rules/verdicts.json").read_text()
    )
    flipped = []
    for number in range(1, 24):
        chk_id = f"CHK-{number:02d}"
        if number % 3 == 0:  # disagree with the judge on evidence here
            act.press("2")
            flipped.append(chk_id)
        if number < 23:
            act.press("n")
            page.wait_for_selector(f"{app} .evk-progress:has-text('{number + 1} of 23')")
    act.click(".evk-finalise")
    page.wait_for_selector(f"{app} .evk-result:has-text('evalkit validate: ok (labels)')")
    assert act.count / 23 <= 10, f"{act.count} gestures for 23 checkpoints"
    written = labels / "fast.json"
    result = run_evalkit("validate", str(written), cwd=lab.root, env=dict(os.environ))
    assert result.returncode == 0 and result.stdout.strip().endswith("ok (labels)")
    data = json.loads(written.read_text(encoding="utf-8"))
    assert data["prefilled_from"] == "judge:rules" and len(data["checkpoints"]) == 23
    by_judge = {
        v["chk_id"]: v["detection"]["evidence"]["score"] for v in judge if v.get("detection")
    }
    for entry in data["checkpoints"]:
        expected = by_judge[entry["chk_id"]]
        if entry["chk_id"] in flipped:
            expected = 1 - expected
        assert entry["detection"]["evidence"] == expected, entry["chk_id"]
    page.close()


def test_an_adjudication_resolves_the_disagreements_and_writes_the_label(browser: Any, lab: Lab):
    app = ".evk-adjudication"
    page = open_and_run(browser, lab, "adjudicate.ipynb")
    choose(page, app, "Run", RUN)
    choose(page, app, "Range", RANGE)
    page.locator(f"{app} .evk-sides select").select_option(["a", "b"])
    page.locator(f"{app} .evk-start").click()
    page.wait_for_selector(f"{app} .evk-progress:has-text('0 of')")
    total = int(page.locator(f"{app} .evk-progress").inner_text().split(" of ")[1].split()[0])
    assert total >= 2
    first = (read_draft(lab, "adjudicated") or {})["position"]
    # Side by side: each side's scores with the differing ones marked.
    page.wait_for_selector(f"{app} .evk-side-0 .evk-differs")
    page.wait_for_selector(f"{app} .evk-side-1 .evk-differs")
    page.locator(f"{app} .evk-take-0").click()
    page.wait_for_selector(f"{app} .evk-resolution:has-text('{first}: a')")
    page.locator(f"{app} .evk-resolution").click()
    page.keyboard.press("n")
    until(lambda: (read_draft(lab, "adjudicated") or {}).get("position") != first, "next", page)
    second = (read_draft(lab, "adjudicated") or {})["position"]
    page.locator(f"{app} .evk-take-1").click()
    page.wait_for_selector(f"{app} .evk-resolution:has-text('{second}: b')")
    page.locator(f"{app} .evk-resolution").click()
    page.keyboard.press("5")  # an edit of b's reading: completeness toggled
    page.wait_for_selector(f"{app} .evk-resolution:has-text('{second}: edited')")
    for _ in range(total - 2):
        before = (read_draft(lab, "adjudicated") or {})["position"]
        page.locator(f"{app} .evk-resolution").click()
        page.keyboard.press("n")
        until(lambda b=before: (read_draft(lab, "adjudicated") or {})["position"] != b, "n", page)
        now = (read_draft(lab, "adjudicated") or {})["position"]
        page.wait_for_selector(f"{app} .evk-resolution:has-text('{now}:')")
        page.locator(f"{app} .evk-take-0").click()
        page.wait_for_selector(f"{app} .evk-resolution:has-text('{now}: a')")
    page.wait_for_selector(f"{app} .evk-progress:has-text('{total} of {total} resolved')")
    page.locator(f"{app} .evk-write").click()
    page.wait_for_selector(f"{app} .evk-result:has-text('evalkit validate: ok (labels)')")
    written = lab.labels / "adjudicated.json"
    data = json.loads(written.read_text(encoding="utf-8"))
    assert data["resolves"] == ["a", "b"] and data["blind"] is False
    resolutions = {c["chk_id"]: c["resolution"] for c in data["checkpoints"]}
    assert resolutions[first] == "a" and resolutions[second] == "edited"
    result = run_evalkit("validate", str(written), cwd=lab.root, env=dict(os.environ))
    assert result.returncode == 0, result.stdout + result.stderr
    page.close()


# --------------------------------------------------------------------------- layout at 1400 px

LAYOUT_WIDTH = 1400

# What a reader sees cut off, overlapping or scrolled sideways in an app: every visible
# element outside the window, every box whose content is wider than the box (a button's
# label cut to "sho…", a document wider than its pane), and every element outside the
# document viewer that runs into the viewer's box.
LAYOUT_PROBLEMS = """(app) => {
  const root = document.querySelector(app);
  const tab = root.querySelector('.evk-source-report').closest('.widget-tab');
  const viewer = tab.getBoundingClientRect();
  const problems = [];
  const name = (el) => el.tagName + '.' + String(el.className).split(' ').filter(
    (c) => c.startsWith('evk-') || c.startsWith('widget-')).join('.') + ' "' +
    (el.innerText || el.value || '').trim().slice(0, 40) + '"';
  for (const el of root.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) { continue; }
    if (box.left < -1 || box.right > window.innerWidth + 1) {
      problems.push('outside the window: ' + name(el));
    }
    const overflow = getComputedStyle(el).overflowX;
    if (!['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName)
        && (el.tagName === 'BUTTON' || overflow !== 'visible')
        && el.scrollWidth > el.clientWidth + 1) {
      problems.push('cut off or scrolled sideways (' + el.scrollWidth + ' > ' + el.clientWidth +
        ' px): ' + name(el));
    }
    if (!tab.contains(el) && !el.contains(tab) && box.left < viewer.right - 1
        && box.right > viewer.left + 1 && box.top < viewer.bottom - 1
        && box.bottom > viewer.top + 1) {
      problems.push('runs into the documents: ' + name(el));
    }
  }
  return problems;
}"""

BOX = "(el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }"
STYLE = (
    "(el) => { const s = getComputedStyle(el); return [s.backgroundColor, s.color, s.fontWeight]; }"
)


def box(page: Any, selector: str) -> tuple[float, float, float, float]:
    left, top, right, bottom = page.locator(selector).first.evaluate(BOX)
    return left, top, right, bottom


def rgb(css: str) -> tuple[float, float, float]:
    """``rgb(r, g, b)`` or ``rgba(r, g, b, a)`` (an alpha of 0 is the white page)."""
    parts = [float(p) for p in css[css.index("(") + 1 : css.index(")")].split(",")]
    if len(parts) == 4 and parts[3] == 0:
        return 255.0, 255.0, 255.0
    return parts[0], parts[1], parts[2]


def contrast(first: str, second: str) -> float:
    """WCAG's contrast ratio of two colours (1: the same, 21: black on white)."""

    def luminance(css: str) -> float:
        def channel(value: float) -> float:
            c = value / 255
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

        r, g, b = (channel(v) for v in rgb(css))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def shot(page: Any, lab: Lab, name: str) -> Path:
    """A screenshot of the window, kept with the test's workspace for a person to look at."""
    path = lab.root.parent / "screenshots" / f"{name}.png"
    path.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(path))
    return path


def scroll_to(page: Any, selector: str) -> None:
    page.locator(selector).first.evaluate("(el) => el.scrollIntoView({block: 'start'})")


def layout_problems(page: Any, lab: Lab, app: str, name: str) -> tuple[list[str], Path]:
    """The app's layout problems with its navigation row at the top, and a screenshot."""
    scroll_to(page, f"{app} .evk-progress")
    page.wait_for_timeout(500)
    where = shot(page, lab, name)
    problems: list[str] = page.evaluate(LAYOUT_PROBLEMS, app)
    return problems, where


LABEL_APP, ADJUDICATION_APP = ".evk-labelling", ".evk-adjudication"
DOCUMENTS = ".widget-tab:has(.evk-source-report)"  # the viewer's tabs: report, plan, Facts


@pytest.fixture(scope="module")
def labelling_at_1400(browser: Any, lab: Lab) -> Iterator[Any]:
    """The labelling app at 1400 px (JupyterLab's file browser open beside it), on the first
    checkpoint of a pair pre-filled from the rules judge."""
    app = LABEL_APP
    page = open_and_run(browser, lab, "label.ipynb", width=LAYOUT_WIDTH)
    choose(page, app, "Run", RUN)
    choose(page, app, "Range", RANGE)
    page.locator(f"{app} .evk-labeller input").fill("layout")
    choose(page, app, "Pre-fill", "judge rules")
    page.locator(f"{app} .evk-open").click()
    page.wait_for_selector(f"{app} .evk-progress:has-text('1 of 12')")
    page.wait_for_selector(f"{app} .evk-row-discovery .evk-quote")
    yield page
    page.close()


def test_at_1400_px_nothing_in_the_labelling_app_is_cut_off_or_overlapping(
    labelling_at_1400: Any, lab: Lab
):
    page, app = labelling_at_1400, LABEL_APP
    # A penalty listed, with its buttons ("show in report", "remove").
    page.locator(f"{app} .evk-penalty-quote textarea").fill("0.0.0.0:6379")
    page.locator(f"{app} .evk-penalty-detail input").fill("layout: a quoted listener")
    add = page.locator(f"{app} .evk-penalty-add")
    until(lambda: add.is_enabled(), "Add enabled", page)
    add.click()
    page.wait_for_selector(f"{app} .evk-penalty-remove")
    problems, where = layout_problems(page, lab, app, "label-1400")
    assert problems == [], f"{len(problems)} layout problem(s), see {where}: {problems[:12]}"
    scroll_to(page, f"{app} .evk-penalty-remove")
    shot(page, lab, "label-1400-penalty-listed")


def test_at_1400_px_the_documents_sit_beside_the_sub_score_toggles(
    labelling_at_1400: Any, lab: Lab
):
    page, app = labelling_at_1400, LABEL_APP
    scroll_to(page, f"{app} .evk-progress")
    viewer = box(page, f"{app} {DOCUMENTS}")
    for name in ("discovery", "evidence", "attribution", "correctness", "completeness"):
        toggle = box(page, f"{app} .evk-score-{name}")
        assert toggle[2] <= viewer[0], f"{name}'s toggle {toggle} is not left of {viewer}"
        assert viewer[1] <= (toggle[1] + toggle[3]) / 2 <= viewer[3], (
            f"{name}'s toggle {toggle} is not level with the documents {viewer}"
        )


def test_the_chosen_0_or_1_stands_out(labelling_at_1400: Any, lab: Lab):
    """Its colour against the other's at least 3:1 (WCAG's contrast for the parts of a
    control), its label readable on it (4.5:1), and bold."""
    page, app = labelling_at_1400, LABEL_APP
    chosen = page.locator(f"{app} .evk-score-evidence button.mod-active")
    other = page.locator(f"{app} .evk-score-evidence button:not(.mod-active)")
    chosen_bg, chosen_fg, weight = chosen.evaluate(STYLE)
    other_bg = other.evaluate(STYLE)[0]
    assert contrast(chosen_bg, other_bg) >= 3, (chosen_bg, other_bg)
    assert contrast(chosen_bg, chosen_fg) >= 4.5, (chosen_bg, chosen_fg)
    assert int(weight) >= 600, weight


def test_the_documents_follow_the_current_checkpoint(labelling_at_1400: Any, lab: Lab):
    """On moving to a checkpoint, the document of the judge's first quote is shown, scrolled
    to it, even when it is far down the document."""
    page, app = labelling_at_1400, LABEL_APP
    scroll_to(page, f"{app} .evk-progress")
    page.locator(f"{app} .evk-criteria-pane").click()
    far, first, pane = False, "", ""
    start = int(page.locator(f"{app} .evk-progress").inner_text().split(" of")[0])
    for number in range(start, 13):
        page.wait_for_selector(f"{app} .evk-progress:has-text('{number} of 12')")
        page.wait_for_timeout(300)
        quotes = page.locator(f"{app} .evk-quote")
        if quotes.count():
            first = quotes.first.inner_text()
            source, line = first.split(":")[0].split(" L")
            pane = f"{app} .evk-source-{source}"
            far = page.locator(f"{pane} [data-line='{line}']").first.evaluate(
                "(el) => el.offsetTop > el.closest('.evk-doc-scroll').clientHeight"
            )
            if far and number > 1:
                break
        page.keyboard.press("n")
    assert far, "no checkpoint of the pair has its first quote below the fold"
    page.wait_for_timeout(600)  # the browser script scrolls every 200 ms
    where = shot(page, lab, "label-1400-followed")
    jump = page.locator(f"{pane} .evk-jump")
    assert jump.count() == 1, f"{first}: nothing in the {pane} is marked to scroll to, {where}"
    visible = jump.evaluate(
        """(el) => { const pane = el.closest('.evk-doc-scroll').getBoundingClientRect();
                     const b = el.getBoundingClientRect();
                     return pane.height > 0 && b.top >= pane.top && b.top < pane.bottom; }"""
    )
    assert visible, f"{first}: the passage is not in view, see {where}"


def test_a_penalty_problem_shows_in_an_error_colour(labelling_at_1400: Any, lab: Lab):
    page, app = labelling_at_1400, LABEL_APP
    page.locator(f"{app} .evk-penalty-detail input").fill("")
    page.locator(f"{app} .evk-penalty-quote textarea").fill("0.0.0.0:6379")
    page.wait_for_selector(f"{app} .evk-penalty-result:has-text('$.detail')")
    error = page.locator(f"{app} .evk-penalty-result *:has-text('$.detail')").last
    error.scroll_into_view_if_needed()
    where = shot(page, lab, "label-1400-error")
    red, green, blue = rgb(error.evaluate(STYLE)[1])
    assert red > green + 60 and red > blue + 60, f"not an error colour: {red, green, blue}, {where}"


@pytest.fixture(scope="module")
def adjudication_at_1400(browser: Any, lab: Lab) -> Iterator[Any]:
    """The adjudication app at 1400 px, labels a and b, on their first disagreement."""
    app = ADJUDICATION_APP
    page = open_and_run(browser, lab, "adjudicate.ipynb", width=LAYOUT_WIDTH)
    choose(page, app, "Run", RUN)
    choose(page, app, "Range", RANGE)
    page.locator(f"{app} .evk-sides select").select_option(["a", "b"])
    page.locator(f"{app} .evk-name input").fill("layout-adjudicated")
    page.locator(f"{app} .evk-start").click()
    page.wait_for_selector(f"{app} .evk-progress:has-text('0 of')")
    page.wait_for_selector(f"{app} .evk-side-1 .evk-differs")
    yield page
    page.close()


def test_at_1400_px_nothing_in_the_adjudication_app_is_cut_off_or_overlapping(
    adjudication_at_1400: Any, lab: Lab
):
    page, app = adjudication_at_1400, ADJUDICATION_APP
    problems, where = layout_problems(page, lab, app, "adjudicate-1400")
    assert problems == [], f"{len(problems)} layout problem(s), see {where}: {problems[:12]}"
    scroll_to(page, f"{app} .evk-resolution")
    shot(page, lab, "adjudicate-1400-write")
    scroll_to(page, f"{app} .evk-progress")
    viewer = box(page, f"{app} {DOCUMENTS}")
    for name in ("discovery", "completeness"):
        toggle = box(page, f"{app} .evk-score-{name}")
        middle = (toggle[1] + toggle[3]) / 2
        assert toggle[2] <= viewer[0] and viewer[1] <= middle <= viewer[3], (name, where)


def test_take_shows_what_was_taken(adjudication_at_1400: Any, lab: Lab):
    """The side taken is marked, in its column and on its button, and what it set is said,
    in view where the click was."""
    page, app = adjudication_at_1400, ADJUDICATION_APP
    differs = page.locator(f"{app} .evk-side-0 tr.evk-differs td").all_inner_texts()
    page.locator(f"{app} .evk-take-0").click()
    page.wait_for_selector(f"{app} .evk-resolution:has-text(': a')")
    page.wait_for_timeout(500)
    where = shot(page, lab, "adjudicate-1400-taken")
    button = page.locator(f"{app} .evk-take-0")
    assert "taken" in button.inner_text().lower(), (button.inner_text(), where)
    said = page.locator(f"{app} .evk-resolution").inner_text()
    assert "took a" in said and f"{differs[0]} {differs[1]}" in said, (differs, said, where)
    taken, other = (
        page.locator(f"{app} .evk-side-{index}").evaluate(
            "(el) => getComputedStyle(el).borderTopColor"
        )
        for index in (0, 1)
    )
    assert contrast(taken, other) >= 1.5, (taken, other, where)
    top, bottom = box(page, f"{app} .evk-take-0")[1::2]
    assert 0 <= top and bottom <= page.viewport_size["height"], ("Take scrolled away", where)
    problems, where = layout_problems(page, lab, app, "adjudicate-1400-after-take")
    assert problems == [], f"{len(problems)} layout problem(s), see {where}: {problems[:12]}"


def code_outputs(path: Path) -> list[Any]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [output for cell in cells if cell["cell_type"] == "code" for output in cell["outputs"]]


def test_labelling_runs_in_the_workspace_copy_and_saves_only_there(browser: Any, lab: Lab):
    """`evalkit label` opened JupyterLab on labelling/label.ipynb: what JupyterLab saves goes
    into the workspace's copy, and the shipped notebooks stay as committed. (Last: a notebook
    saved with its outputs shows them when it is opened again.)"""
    shipped = {path: path.read_bytes() for path in (REPO / "notebooks").glob("*.ipynb")}
    copy = lab.root / "labelling" / "label.ipynb"
    # What JupyterLab opens in a browser (the fixture starts it with --no-browser): the copy.
    opens = list((lab.root.parent / "runtime").glob("jpserver-file-to-run-*-open.html"))
    assert len(opens) == 1 and "/lab/tree/labelling/label.ipynb" in opens[0].read_text()
    page = open_and_run(browser, lab, "label.ipynb")
    page.wait_for_selector(".evk-labelling .evk-open")
    page.locator(".jp-Notebook .jp-Cell").first.click()
    page.keyboard.press("Control+s")
    until(lambda: code_outputs(copy), "JupyterLab saved the outputs into the copy", page)
    assert {path: path.read_bytes() for path in shipped} == shipped
    assert not (lab.root / "notebooks").exists()
    page.close()
