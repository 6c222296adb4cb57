"""The escapes of issue 8 through the command line: each one failed before confinement.

A hostile run folder may plant symlinks and hostile names; nothing may be read from
or written to outside the runs folder, two runs may not mix their outputs, a failed
run changes no earlier file, and the kernel stops when its CLI dies.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import time
from pathlib import Path

import nbformat
import pytest

from evalkit import fileio
from tests.samples import (
    REPO,
    SECRET_MARKER,
    clean_env,
    copy_samples,
    evalkit_command,
    files_holding,
    plant_link,
    run_evalkit,
    snapshot,
    write_rules_record,
)


def run_cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    return run_evalkit(*args, cwd=cwd, env={**environment, **env})


def lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


RUN = ("run", "--range", "ssh-miner", "--run", "demo", "--quiet")
EVALUATIONS = Path("runs/demo/ssh-miner/evaluations")


@pytest.mark.e2e
def test_a_symlink_planted_in_the_evaluation_folder_is_never_written_through(workspace: Path):
    victim = workspace / "victim.txt"
    victim.write_text("precious\n")
    out = workspace / EVALUATIONS / "rules"
    out.mkdir(parents=True)
    for name in (".evaluation.running.ipynb", "scores.json", "evaluation.ipynb"):
        (out / name).symlink_to(victim)
    result = run_cli(*RUN, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == "precious\n"
    assert not (out / "scores.json").is_symlink()
    assert json.loads((out / "scores.json").read_text())["meta"]["judge"] == "rules"


def test_an_evaluation_folder_that_is_a_symlink_is_refused(workspace: Path):
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir()
    (workspace / EVALUATIONS).mkdir(parents=True)
    (workspace / EVALUATIONS / "rules").symlink_to(elsewhere, target_is_directory=True)
    result = run_cli(*RUN, cwd=workspace)
    assert result.returncode == 2
    assert len(lines(result.stderr)) == 1 and "symlink" in result.stderr
    assert list(elsewhere.iterdir()) == []


def test_an_evaluations_folder_that_is_a_symlink_is_refused(workspace: Path):
    elsewhere = workspace / "elsewhere"
    elsewhere.mkdir()
    (workspace / EVALUATIONS).symlink_to(elsewhere, target_is_directory=True)
    result = run_cli(*RUN, cwd=workspace)
    assert result.returncode == 2 and "symlink" in result.stderr
    assert list(elsewhere.iterdir()) == []


def test_a_report_linked_to_a_file_outside_the_run_is_not_read(workspace: Path):
    secret = workspace / "secret.txt"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    report = workspace / "runs/demo/ssh-miner/intrusion-report.md"
    report.unlink()
    report.symlink_to(secret)
    result = run_cli(*RUN, cwd=workspace)
    assert result.returncode == 2
    assert len(lines(result.stderr)) == 1 and "outside" in result.stderr
    assert not (workspace / EVALUATIONS).exists()


@pytest.mark.e2e
def test_allow_outside_inputs_reads_it_and_the_record_says_so(workspace: Path):
    report = workspace / "runs/demo/ssh-miner/intrusion-report.md"
    moved = workspace / "moved-report.md"
    report.rename(moved)
    report.symlink_to(moved)
    result = run_cli(*RUN, "--allow-outside-inputs", cwd=workspace)
    assert result.returncode == 0, result.stderr
    scores = json.loads((workspace / EVALUATIONS / "rules/scores.json").read_text())
    assert scores["meta"]["inputs_outside"] is True


def test_a_hostile_model_name_cannot_leave_the_run(workspace: Path):
    # No key: the run stops at the preflight, after the plan (and its folder) were built.
    result = run_cli(
        *RUN, "--judge", "claude", "--model", "x/../../../../escaped", "--no-cache", cwd=workspace
    )
    assert result.returncode != 0
    assert not list(workspace.rglob("escaped"))
    from evalkit.runplan import RunPlan

    plan = RunPlan.build(
        range_id="ssh-miner",
        run_id="demo",
        judge="claude",
        ranges_dir="ranges",
        runs_dir="runs",
        judge_settings={"model": "x/../../../../escaped"},
        base=workspace,
    )
    assert plan.out_dir.parent == workspace / EVALUATIONS


def test_a_second_run_into_a_locked_folder_fails_in_one_line(workspace: Path):
    out = workspace / EVALUATIONS / "rules"
    with fileio.evaluation_lock(out, root=workspace / "runs"):
        result = run_cli(*RUN, cwd=workspace)
    assert result.returncode == 1
    assert len(lines(result.stderr)) == 1 and "another evalkit run" in result.stderr
    assert not (out / "scores.json").exists()


def _broken_notebook(workspace: Path, after_outputs: bool) -> Path:
    notebook = nbformat.read(REPO / "notebooks/evaluate.ipynb", as_version=4)
    failing = nbformat.v4.new_code_cell("raise RuntimeError('boom after writing')")
    if after_outputs:
        notebook.cells.append(failing)
    else:
        notebook.cells.insert(3, failing)
    path = workspace / "broken.ipynb"
    nbformat.write(notebook, path)
    return path


@pytest.mark.e2e
def test_a_run_failing_after_its_outputs_leaves_every_earlier_file(workspace: Path):
    assert run_cli(*RUN, cwd=workspace).returncode == 0
    out = workspace / EVALUATIONS / "rules"
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    broken = _broken_notebook(workspace, after_outputs=True)
    result = run_cli(*RUN, "--notebook", str(broken), cwd=workspace)
    assert result.returncode == 1
    after = {p.name: p.read_bytes() for p in out.iterdir() if p.name != "evaluation.failed.ipynb"}
    assert after == before
    assert (out / "evaluation.failed.ipynb").exists()
    leftovers = [p.name for p in out.parent.iterdir() if "staging" in p.name or "old" in p.name]
    assert leftovers == []


def _heartbeat_notebook(workspace: Path, beat: Path) -> Path:
    notebook = nbformat.read(REPO / "notebooks/evaluate.ipynb", as_version=4)
    loop = (
        "import time\n"
        "from pathlib import Path\n"
        "for _ in range(3000):\n"
        f"    Path({str(beat)!r}).write_text(str(time.time()))\n"
        "    time.sleep(0.1)"
    )
    notebook.cells.insert(3, nbformat.v4.new_code_cell(loop))
    path = workspace / "heartbeat.ipynb"
    nbformat.write(notebook, path)
    return path


@pytest.mark.e2e
def test_the_kernel_stops_when_its_cli_dies(workspace: Path):
    beat = workspace / "beat.txt"
    notebook = _heartbeat_notebook(workspace, beat)
    environment = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    # The kernel's connection file (ports, HMAC key) lands here, where the test can see it.
    private = workspace.parent / "tmp"
    private.mkdir()
    environment["TMPDIR"] = str(private)
    cli = subprocess.Popen(
        [*evalkit_command(), *RUN, "--notebook", str(notebook)],
        cwd=workspace,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(1200):
            if beat.exists():
                break
            time.sleep(0.1)
        assert beat.exists(), "the notebook never started"
        cli.send_signal(signal.SIGKILL)
        cli.wait()
        # The loop would beat for five minutes; the kernel must stop long before that.
        last = None
        for _ in range(600):
            time.sleep(0.5)
            current = beat.read_text()
            if current == last:
                break
            last = current
        time.sleep(1.0)
        assert beat.read_text() == last, "the kernel kept running after its CLI died"
        assert list(private.glob("*.json")) == [], "the kernel left its connection file"
        # The next run cleans what the killed one had staged.
        assert list((workspace / EVALUATIONS).glob(".rules.staging-*"))
        assert run_cli(*RUN, cwd=workspace).returncode == 0
        assert not list((workspace / EVALUATIONS).glob(".rules.staging-*"))
    finally:
        if cli.poll() is None:
            cli.kill()


# --------------------------------------------------------------------------- issue 18
# One confined workspace for every command: each test below failed before it.


@pytest.fixture
def evaluated(tmp_path: Path) -> Path:
    """A workspace of the demo and agent-b runs, each with a rules record of ssh-miner."""
    ws = copy_samples(tmp_path / "ws", runs=("demo", "agent-b"))
    for run in ("demo", "agent-b"):
        write_rules_record(ws, run)
    return ws


@pytest.fixture
def outside(tmp_path: Path, evaluated: Path) -> Path:
    """A folder outside the workspace, with secrets a planted link can point to."""
    folder = tmp_path / "outside"
    (folder / "dir").mkdir(parents=True)
    checklist = (evaluated / "ranges/ssh-miner/checklist.md").read_text()
    (folder / "checklist.md").write_text(checklist.replace("title:", f"title: {SECRET_MARKER}", 1))
    scores = json.loads((evaluated / RECORD / "scores.json").read_text())
    scores["meta"]["model_under_test"] = SECRET_MARKER
    (folder / "scores.json").write_text(json.dumps(scores))
    label = json.loads((evaluated / "runs/demo/ssh-miner/labels/a.json").read_text())
    label["checkpoints"][0]["note"] = SECRET_MARKER
    (folder / "labels").mkdir()
    (folder / "labels/a.json").write_text(json.dumps(label))
    return folder


RECORD = Path("runs/demo/ssh-miner/evaluations/rules")


def one_line_refusal(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert len(lines(result.stderr)) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return run_evalkit(*args, cwd=cwd, env=clean_env(**env))


# Finding 1 ---------------------------------------------------------------------------


@pytest.mark.parametrize("planted", ["evaluations", "evaluations/rules"])
@pytest.mark.parametrize(
    "command",
    [
        ("batch", "--runs", "demo", "--ranges", "ssh-miner", "--quiet"),
        ("batch", "--no-notebook", "--runs", "demo", "--ranges", "ssh-miner", "--quiet"),
        ("record", str(RECORD)),
    ],
    ids=["batch", "batch-no-notebook", "record"],
)
def test_batch_and_record_never_write_through_a_planted_evaluations_link(
    evaluated: Path, tmp_path: Path, command: tuple[str, ...], planted: str
):
    # The agent moved the record out and left a link in its place.
    elsewhere = tmp_path / "elsewhere"
    shutil.move(evaluated / "runs/demo/ssh-miner" / planted, elsewhere)
    (evaluated / "runs/demo/ssh-miner" / planted).symlink_to(elsewhere, target_is_directory=True)
    before = snapshot(elsewhere)
    result = cli(*command, cwd=evaluated)
    assert snapshot(elsewhere) == before, "written through the planted link"
    assert "Traceback" not in result.stderr and "symlink" in result.stderr
    if command[0] == "record":
        one_line_refusal(result)
    else:  # the pair fails as bad input; the batch goes on with the others
        assert result.returncode == 1
        assert not list(tmp_path.glob(".*.lock")) and not list(elsewhere.parent.glob(".*.lock"))


# Finding 2 ---------------------------------------------------------------------------


@pytest.mark.e2e
def test_the_response_cache_is_never_written_through_a_planted_link(evaluated: Path, outside: Path):
    from tests.fake_messages_api import FakeMessagesAPI, canned_verdicts

    (evaluated / ".evalkit-cache").symlink_to(outside / "dir", target_is_directory=True)
    with FakeMessagesAPI(canned_verdicts) as api:
        result = cli(
            *RUN, "--judge", "claude", cwd=evaluated,
            ANTHROPIC_API_KEY="sk-ant-test-cache-link", ANTHROPIC_BASE_URL=api.url,
        )  # fmt: skip
    assert list((outside / "dir").iterdir()) == [], "cache entries written through the link"
    assert "symlink" in one_line_refusal(result)


@pytest.mark.e2e
def test_an_ab_configuration_cannot_put_the_cache_outside_the_workspace(
    evaluated: Path, outside: Path
):
    from tests.fake_messages_api import FakeMessagesAPI, canned_verdicts

    (evaluated / "a.yaml").write_text("judge: claude\ncache_dir: ../outside/cache\n")
    (evaluated / "b.yaml").write_text("judge: rules\n")
    with FakeMessagesAPI(canned_verdicts) as api:
        result = cli(
            "ab", "a.yaml", "b.yaml", "--pairs", "demo/ssh-miner", "--quiet", cwd=evaluated,
            ANTHROPIC_API_KEY="sk-ant-test-ab-cache", ANTHROPIC_BASE_URL=api.url,
        )  # fmt: skip
    assert not (outside / "cache").exists(), "the configuration wrote its cache outside"
    assert "outside the workspace" in one_line_refusal(result)


# Finding 3 ---------------------------------------------------------------------------

OUT_COMMANDS = {
    "run": RUN,
    "prompts": ("prompts", "--range", "ssh-miner", "--run", "demo"),
    "robustness": ("robustness", "--attack", "code-block", "--quiet"),
    "agents": ("agents", "demo", "agent-b", "--ranges", "ssh-miner"),
    "ab": ("ab", "a.yaml", "b.yaml", "--pairs", "demo/ssh-miner", "--quiet"),
    "compare": ("compare", str(RECORD), "copy"),
    "calibrate": ("calibrate", "--pairs", "demo/ssh-miner", "--quiet"),
}


@pytest.mark.parametrize("sub", ["", "/sub"], ids=["LINK", "LINK-sub"])
@pytest.mark.parametrize("command", sorted(OUT_COMMANDS))
def test_every_command_refuses_an_out_through_a_link(
    evaluated: Path, outside: Path, command: str, sub: str
):
    (evaluated / "a.yaml").write_text("judge: rules\n")
    (evaluated / "b.yaml").write_text("judge: rules\n")
    shutil.copytree(evaluated / RECORD, evaluated / "copy")
    (evaluated / "link").symlink_to(outside / "dir", target_is_directory=True)
    result = cli(*OUT_COMMANDS[command], "--out", f"link{sub}", cwd=evaluated)
    assert list((outside / "dir").iterdir()) == [], "written through --out"
    assert "symlink" in one_line_refusal(result)


@pytest.mark.e2e
def test_run_out_dot_writes_nothing_beside_the_folder(evaluated: Path):
    here = evaluated / "results"
    here.mkdir()
    before = snapshot(evaluated.parent)
    result = cli(*RUN, "--ranges-dir", "../ranges", "--runs-dir", "../runs", "--out", ".", cwd=here)
    assert result.returncode == 0, result.stderr
    assert (here / "scores.json").is_file()
    after = snapshot(evaluated.parent)
    beside = {name for name in set(after) - set(before) if not name.startswith("ws/results/")}
    assert beside == set(), f"written beside --out .: {sorted(beside)}"


# Finding 4 ---------------------------------------------------------------------------

CHECKLIST_READERS = {
    "estimate": ("estimate", "--range", "ssh-miner", "--run", "demo"),
    "prompts": ("prompts", "--range", "ssh-miner", "--run", "demo", "--out", "requests"),
    "ranges": ("ranges",),
    "validate": ("validate", "ranges"),
}


@pytest.mark.parametrize("command", sorted(CHECKLIST_READERS))
def test_a_linked_checklist_is_never_read_nor_shown(evaluated: Path, outside: Path, command: str):
    plant_link(evaluated, "ranges/ssh-miner/checklist.md", outside / "checklist.md")
    result = cli(*CHECKLIST_READERS[command], cwd=evaluated)
    assert result.returncode == 2, result.stdout + result.stderr
    assert SECRET_MARKER not in result.stdout + result.stderr
    assert "outside" in result.stdout + result.stderr
    assert files_holding(evaluated, SECRET_MARKER) == []


def test_robustness_never_reads_a_linked_corpus_document(evaluated: Path, outside: Path):
    shutil.copytree(REPO / "evalkit/data/adversarial", evaluated / "corpus")
    # The corpus's own clean report with a secret: every attack still applies to it.
    secret = outside / "report.md"
    clean = (evaluated / "corpus/clean/ssh-miner/intrusion-report.md").read_text()
    secret.write_text(f"{clean}\n{SECRET_MARKER}\n")
    plant_link(evaluated, "corpus/clean/ssh-miner/intrusion-report.md", secret)
    result = cli("robustness", "--corpus", "corpus", "--attack", "code-block", cwd=evaluated)
    assert "outside" in one_line_refusal(result)
    assert files_holding(evaluated, SECRET_MARKER) == []


@pytest.mark.parametrize(
    "where", ["../../outside/run", "{outside}/run"], ids=["dotdot", "absolute"]
)
def test_agents_reads_no_run_outside_the_runs_folder(evaluated: Path, outside: Path, where: str):
    shutil.copytree(evaluated / "runs/agent-b", outside / "run")
    (outside / "run/ssh-miner/evaluations/rules/scores.json").write_text(
        (outside / "scores.json").read_text()
    )
    run = where.format(outside=outside)
    result = cli("agents", "demo", run, "--ranges", "ssh-miner", cwd=evaluated)
    assert "invalid run id" in one_line_refusal(result)
    assert SECRET_MARKER not in result.stdout and files_holding(evaluated, SECRET_MARKER) == []


SCORES_READERS = {
    "batch": (
        *("batch", "--no-notebook", "--runs", "demo", "agent-b", "--ranges", "ssh-miner"),
        "--quiet",
    ),
    "verify": ("verify", str(RECORD)),
    "agents": ("agents", "demo", "agent-b", "--ranges", "ssh-miner"),
    "compare": ("compare", str(RECORD), "runs/agent-b/ssh-miner/evaluations/rules"),
}


@pytest.mark.parametrize("command", sorted(SCORES_READERS))
def test_a_linked_scores_json_is_never_read(evaluated: Path, outside: Path, command: str):
    plant_link(evaluated, str(RECORD / "scores.json"), outside / "scores.json")
    result = cli(*SCORES_READERS[command], cwd=evaluated)
    assert "Traceback" not in result.stderr
    assert result.returncode != 0, result.stdout
    assert SECRET_MARKER not in result.stdout + result.stderr
    # batch: never "up to date", never copied into runs/index.csv and index.json.
    assert files_holding(evaluated, SECRET_MARKER) == []


@pytest.mark.parametrize("planted", ["labels/a.json", "labels"])
@pytest.mark.parametrize(
    "command",
    [("calibrate", "--pairs", "demo/ssh-miner", "--quiet"), ("validate", "runs/demo")],
    ids=["calibrate", "validate"],
)
def test_a_linked_label_file_or_folder_is_never_read(
    evaluated: Path, outside: Path, command: tuple[str, ...], planted: str
):
    target = outside / "labels" if planted == "labels" else outside / "labels/a.json"
    plant_link(evaluated, f"runs/demo/ssh-miner/{planted}", target)
    result = cli(*command, cwd=evaluated)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "outside" in result.stdout + result.stderr
    assert SECRET_MARKER not in result.stdout + result.stderr
    assert files_holding(evaluated, SECRET_MARKER) == []


# Finding 5 ---------------------------------------------------------------------------


def test_prompts_checks_every_target_before_writing_the_first(evaluated: Path, outside: Path):
    (evaluated / "requests").mkdir()
    (evaluated / "requests/items").symlink_to(outside / "dir", target_is_directory=True)
    result = cli(
        "prompts", "--range", "ssh-miner", "--run", "demo", "--out", "requests", cwd=evaluated
    )
    assert "symlink" in one_line_refusal(result)
    assert [p.name for p in (evaluated / "requests").iterdir()] == ["items"]
    assert list((outside / "dir").iterdir()) == []


# Finding 6 ---------------------------------------------------------------------------


@pytest.mark.e2e
def test_a_less_complete_evaluation_never_replaces_a_complete_record(workspace: Path):
    assert run_cli(*RUN, cwd=workspace).returncode == 0
    out = workspace / EVALUATIONS / "rules"
    before = (out / "scores.json").read_bytes()
    rng_items = json.loads(before)["checkpoints"]
    errors = workspace / "unreachable.jsonl"
    errors.write_text(
        "".join(
            json.dumps({"chk_id": c["chk_id"], "error": "unreachable"}) + "\n" for c in rng_items
        )
    )
    judge_file = (*RUN, "--judge", "file", "--verdicts", str(errors), "--out", str(out))
    result = run_cli(*judge_file, cwd=workspace)
    assert result.returncode == 1, result.stderr
    assert len(lines(result.stderr)) == 1 and "more complete" in result.stderr
    assert (out / "scores.json").read_bytes() == before
    kept = list((workspace / EVALUATIONS).glob(".rules.incomplete-*"))
    assert (
        len(kept) == 1 and json.loads((kept[0] / "scores.json").read_text())["summary"]["errored"]
    )
    forced = run_cli(*judge_file, "--force", cwd=workspace)
    assert forced.returncode == 3, forced.stderr
    assert (out / "scores.json").read_bytes() != before


# Finding 7 ---------------------------------------------------------------------------


@pytest.mark.e2e
def test_publishing_keeps_the_users_links_and_fifos(workspace: Path):
    assert run_cli(*RUN, cwd=workspace).returncode == 0
    out = workspace / EVALUATIONS / "rules"
    (out / "notes.md").write_text("mine\n")
    (out / "latest").symlink_to("evaluation.html")
    os.mkfifo(out / "pipe")
    result = run_cli(*RUN, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert (out / "notes.md").read_text() == "mine\n"
    assert (out / "latest").is_symlink() and os.readlink(out / "latest") == "evaluation.html"
    assert stat.S_ISFIFO(os.lstat(out / "pipe").st_mode)
