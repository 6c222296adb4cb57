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


def open_and_run(browser: Any, lab: Lab, notebook: str) -> Any:
    """A page with ``notebook`` open in JupyterLab and every cell run."""
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
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


def code_outputs(path: Path) -> list[Any]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [output for cell in cells if cell["cell_type"] == "code" for output in cell["outputs"]]


def test_labelling_runs_in_the_workspace_copy_and_saves_only_there(browser: Any, lab: Lab):
    """`evalkit label` opened JupyterLab on labelling/label.ipynb: what JupyterLab saves goes
    into the workspace's copy, and the shipped notebooks stay as committed."""
    shipped = {path: path.read_bytes() for path in (REPO / "notebooks").glob("*.ipynb")}
    copy = lab.root / "labelling" / "label.ipynb"
    page = open_and_run(browser, lab, "label.ipynb")
    page.wait_for_selector(".evk-labelling .evk-open")
    page.locator(".jp-Notebook .jp-Cell").first.click()
    page.keyboard.press("Control+s")
    until(lambda: code_outputs(copy), "JupyterLab saved the outputs into the copy", page)
    assert {path: path.read_bytes() for path in shipped} == shipped
    assert not (lab.root / "notebooks").exists()
    page.close()


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
