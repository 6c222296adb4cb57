"""The probe suite: every command `evalkit --help` lists, walked with hostile input.

For each command, each kind of input that applies:

- ``link``: a file or folder reached through a symlink that leads out of the workspace
  (a checklist, a document, a label, a ``scores.json``, ``evaluations/``, ``--out``,
  the response cache ...);
- ``dotdot``: a name with ``..`` (or an absolute path) where one folder name is due;
- ``long``: a name or path part over 255 bytes;
- ``deep``: JSON or YAML nested 100,000 deep.

Each probe checks the promises of docs/workspace.md: the expected exit code (2 for bad
input), at most one line on stderr and no traceback, nothing written to the folder
outside the workspace (compared before and after), and the secret planted there in no
output, no stdout and no stderr. A command without an entry in ``PROBES`` fails
``test_every_command_has_a_probe_of_each_kind``, so a new command cannot skip the layer.
Every probe is refused before any notebook runs, so the suite stays fast.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from evalkit.cli import build_parser
from tests.samples import (
    DEEP_JSON,
    LONG_NAME,
    REPO,
    SECRET_MARKER,
    clean_env,
    copy_samples,
    files_holding,
    plant_link,
    run_evalkit,
    snapshot,
    write_rules_record,
)

KINDS = ("link", "dotdot", "long", "deep")
RULES = "runs/demo/ssh-miner/evaluations/rules"
DEEP_YAML = "model_under_test: " + "[" * 100_000 + "]" * 100_000 + "\n"
FAKE_KEY = {
    "ANTHROPIC_API_KEY": "sk-ant-probe-not-a-key",
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
}

Setup = Callable[[Path, Path], None]


@dataclass(frozen=True)
class Probe:
    """One hostile input: a command line (``{ws}``, ``{outside}`` and ``{long}`` filled in)
    run after ``setup(workspace, outside)``; the exit code it must end with."""

    name: str
    kind: str
    args: tuple[str, ...]
    setup: Setup | None = None
    exit: int = 2
    # batch isolates a bad pair: it lists the failed ones as a table, exit 1.
    table: bool = False
    env: dict[str, str] = field(default_factory=dict)


def link(name: str, target: str) -> Setup:
    """Plant ``workspace/name`` as a link to ``outside/target``."""

    def setup(ws: Path, outside: Path) -> None:
        plant_link(ws, name, outside / target)

    return setup


def write(name: str, text: str) -> Setup:
    def setup(ws: Path, outside: Path) -> None:
        path = ws / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    return setup


def both(*setups: Setup) -> Setup:
    def setup(ws: Path, outside: Path) -> None:
        for one in setups:
            one(ws, outside)

    return setup


def edit_scores(name: str, change: Callable[[dict], None]) -> Setup:
    def setup(ws: Path, outside: Path) -> None:
        path = ws / name / "scores.json"
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))

    return setup


def config(name: str, text: str) -> Setup:
    return write(name, text)


RUN = ("run", "--range", "ssh-miner", "--run", "demo", "--quiet")
ESTIMATE = ("estimate", "--range", "ssh-miner", "--run", "demo")
BATCH = ("batch", "--no-notebook", "--runs", "demo", "--ranges", "ssh-miner", "--quiet")
CALIBRATE = ("calibrate", "--pairs", "demo/ssh-miner", "--quiet")
COMPARE = ("compare", RULES, "copy-b")
AB = ("ab", "a.yaml", "b.yaml", "--pairs", "demo/ssh-miner", "--quiet")
AGENTS = ("agents", "demo", "agent-b", "--ranges", "ssh-miner")
PROMPTS = ("prompts", "--range", "ssh-miner", "--run", "demo", "--out", "requests")
ROBUSTNESS = ("robustness", "--corpus", "corpus", "--attack", "code-block", "--quiet")
CONFIGS = both(write("a.yaml", "judge: rules\n"), write("b.yaml", "judge: rules\n"))


def _copy_b(ws: Path, outside: Path) -> None:
    shutil.copytree(ws / RULES, ws / "copy-b")


COPY_B = _copy_b
RUN_YAML_DEEP = write("runs/demo/run.yaml", DEEP_YAML)
SPLIT = "runs/gold-split.json"

PROBES: dict[str, tuple[Probe, ...]] = {
    "run": (
        Probe("checklist", "link", RUN, link("ranges/ssh-miner/checklist.md", "checklist.md")),
        Probe(
            "report",
            "link",
            RUN,
            link("runs/demo/ssh-miner/intrusion-report.md", "report.md"),
        ),
        Probe("evaluations", "link", RUN, link("runs/demo/ssh-miner/evaluations", "dir")),
        Probe("out", "link", (*RUN, "--out", "out-link"), link("out-link", "dir")),
        Probe("out-sub", "link", (*RUN, "--out", "out-link/sub"), link("out-link", "dir")),
        Probe(
            "cache",
            "link",
            (*RUN, "--judge", "claude"),
            link(".evalkit-cache", "dir"),
            env=FAKE_KEY,
        ),
        Probe("run-id", "dotdot", (*RUN[:4], "../outside-run", "--quiet")),
        Probe("range", "dotdot", ("run", "--range", "../ranges/ssh-miner", "--run", "demo")),
        Probe("run-id", "long", (*RUN[:4], "{long}")),
        Probe("out", "long", (*RUN, "--out", "{long}")),
        Probe("ranges-dir", "long", (*RUN, "--ranges-dir", "{long}")),
        Probe(
            "verdicts",
            "deep",
            (*RUN, "--judge", "file", "--verdicts", "deep.json"),
            write("deep.json", DEEP_JSON),
        ),
        Probe("run-yaml", "deep", RUN, RUN_YAML_DEEP),
    ),
    "estimate": (
        Probe("checklist", "link", ESTIMATE, link("ranges/ssh-miner/checklist.md", "checklist.md")),
        Probe(
            "report", "link", ESTIMATE, link("runs/demo/ssh-miner/intrusion-report.md", "report.md")
        ),
        Probe("run-id", "dotdot", (*ESTIMATE[:4], "../outside-run")),
        Probe("run-id", "long", (*ESTIMATE[:4], "{long}")),
        Probe("run-yaml", "deep", ESTIMATE, RUN_YAML_DEEP),
    ),
    "ranges": (
        Probe(
            "checklist", "link", ("ranges",), link("ranges/ssh-miner/checklist.md", "checklist.md")
        ),
        Probe("ranges-dir", "long", ("ranges", "--ranges-dir", "{long}")),
        # The Markdown reader bounds nesting itself: the range is listed, nothing breaks.
        Probe(
            "checklist-notes",
            "deep",
            ("ranges",),
            lambda ws, outside: (ws / "ranges/ssh-miner/checklist.md").write_text(
                (ws / "ranges/ssh-miner/checklist.md").read_text() + "\n" + ">" * 100_000 + " x\n"
            ),
            exit=0,
        ),
    ),
    "validate": (
        Probe(
            "checklist",
            "link",
            ("validate", "ranges"),
            link("ranges/ssh-miner/checklist.md", "checklist.md"),
        ),
        Probe(
            "label",
            "link",
            ("validate", "runs/demo"),
            link("runs/demo/ssh-miner/labels/a.json", "label.json"),
        ),
        Probe(
            "labels-folder",
            "link",
            ("validate", "runs/demo"),
            link("runs/demo/ssh-miner/labels", "labels"),
        ),
        Probe("path", "long", ("validate", "{long}")),
        Probe(
            "label",
            "deep",
            ("validate", "runs/demo/ssh-miner/labels/a.json"),
            write("runs/demo/ssh-miner/labels/a.json", DEEP_JSON),
        ),
    ),
    "batch": (
        Probe(
            "evaluations",
            "link",
            BATCH,
            link("runs/demo/ssh-miner/evaluations", "dir"),
            exit=1,
            table=True,
        ),
        Probe(
            "scores",
            "link",
            BATCH,
            link(f"{RULES}/scores.json", "scores.json"),
            exit=1,
            table=True,
        ),
        Probe(
            "cache",
            "link",
            (*BATCH, "--judge", "claude"),
            link(".evalkit-cache", "dir"),
            env=FAKE_KEY,
        ),
        Probe("runs-dir", "long", (*BATCH, "--runs-dir", "{long}")),
        # Another run's record, unreadable: left out of the index, nothing breaks.
        Probe(
            "scores",
            "deep",
            BATCH,
            write("runs/agent-b/ssh-miner/evaluations/rules/scores.json", DEEP_JSON),
            exit=0,
        ),
        Probe("run-yaml", "deep", BATCH, RUN_YAML_DEEP, exit=1, table=True),
    ),
    "record": (
        Probe(
            "evaluations",
            "link",
            ("record", RULES),
            link("runs/demo/ssh-miner/evaluations", "run/ssh-miner/evaluations"),
        ),
        Probe("scores", "link", ("record", RULES), link(f"{RULES}/scores.json", "scores.json")),
        Probe(
            "meta-run-id",
            "dotdot",
            ("record", RULES),
            edit_scores(RULES, lambda data: data["meta"].update(run_id="../../outside-run")),
        ),
        Probe("folder", "long", ("record", f"runs/demo/ssh-miner/evaluations/{LONG_NAME}")),
        Probe("scores", "deep", ("record", RULES), write(f"{RULES}/scores.json", DEEP_JSON)),
        Probe("verdicts", "deep", ("record", RULES), write(f"{RULES}/verdicts.json", DEEP_JSON)),
    ),
    "verify": (
        Probe(
            "evaluations",
            "link",
            ("verify", RULES),
            link("runs/demo/ssh-miner/evaluations", "run/ssh-miner/evaluations"),
        ),
        Probe("scores", "link", ("verify", RULES), link(f"{RULES}/scores.json", "scores.json")),
        Probe(
            "meta-run-id",
            "dotdot",
            ("verify", RULES),
            edit_scores(RULES, lambda data: data["meta"].update(run_id="../../outside-run")),
        ),
        Probe("folder", "long", ("verify", f"runs/demo/ssh-miner/evaluations/{LONG_NAME}")),
        Probe("scores", "deep", ("verify", RULES), write(f"{RULES}/scores.json", DEEP_JSON)),
        Probe("verdicts", "deep", ("verify", RULES), write(f"{RULES}/verdicts.json", DEEP_JSON)),
    ),
    "calibrate": (
        Probe("label", "link", CALIBRATE, link("runs/demo/ssh-miner/labels/a.json", "label.json")),
        Probe("labels-folder", "link", CALIBRATE, link("runs/demo/ssh-miner/labels", "labels")),
        Probe("out", "link", (*CALIBRATE, "--out", "out-link"), link("out-link", "dir")),
        Probe(
            "split",
            "dotdot",
            ("calibrate", "--pairs", "tune", "--quiet"),
            write(SPLIT, json.dumps({"tune": ["../../outside-run/ssh-miner"]})),
        ),
        Probe("out", "long", (*CALIBRATE, "--out", "{long}")),
        Probe("label", "deep", CALIBRATE, write("runs/demo/ssh-miner/labels/a.json", DEEP_JSON)),
        Probe(
            "split", "deep", ("calibrate", "--pairs", "tune", "--quiet"), write(SPLIT, DEEP_JSON)
        ),
    ),
    "compare": (
        Probe("scores", "link", COMPARE, both(COPY_B, link("copy-b/scores.json", "scores.json"))),
        Probe(
            "out", "link", (*COMPARE, "--out", "out-link"), both(COPY_B, link("out-link", "dir"))
        ),
        Probe(
            "out-sub",
            "link",
            (*COMPARE, "--out", "out-link/sub"),
            both(COPY_B, link("out-link", "dir")),
        ),
        Probe("folder", "long", ("compare", RULES, "{long}")),
        Probe("scores", "deep", COMPARE, both(COPY_B, write("copy-b/scores.json", DEEP_JSON))),
    ),
    "ab": (
        Probe("out", "link", (*AB, "--out", "out-link"), both(CONFIGS, link("out-link", "dir"))),
        Probe(
            "calibration",
            "link",
            ("ab", "cal-a", "cal-b"),
            both(
                link("cal-a/calibration.json", "scores.json"),
                link("cal-b/calibration.json", "scores.json"),
            ),
        ),
        Probe(
            "cache-dir",
            "dotdot",
            AB,
            both(
                config("a.yaml", "judge: claude\ncache_dir: ../outside/dir\n"),
                write("b.yaml", "judge: rules\n"),
            ),
            env=FAKE_KEY,
        ),
        Probe("name", "long", (*AB, "--name", "{long}"), CONFIGS),
        Probe("config", "deep", AB, both(CONFIGS, write("a.yaml", DEEP_YAML))),
        Probe(
            "calibration",
            "deep",
            ("ab", "cal-a", "cal-b"),
            both(write("cal-a/calibration.json", DEEP_JSON), write("cal-b/calibration.json", "{}")),
        ),
    ),
    "agents": (
        Probe("scores", "link", AGENTS, link(f"{RULES}/scores.json", "scores.json")),
        Probe("out", "link", (*AGENTS, "--out", "out-link"), link("out-link", "dir")),
        Probe("run", "dotdot", ("agents", "demo", "../../outside/run", "--ranges", "ssh-miner")),
        Probe(
            "absolute-run", "dotdot", ("agents", "demo", "{outside}/run", "--ranges", "ssh-miner")
        ),
        Probe("run", "long", ("agents", "demo", "{long}")),
        Probe("scores", "deep", AGENTS, write(f"{RULES}/scores.json", DEEP_JSON)),
    ),
    "prompts": (
        Probe("checklist", "link", PROMPTS, link("ranges/ssh-miner/checklist.md", "checklist.md")),
        Probe("out-items", "link", PROMPTS, link("requests/items", "dir")),
        Probe("out", "link", PROMPTS, link("requests", "dir")),
        Probe(
            "run-id", "dotdot", ("prompts", "--range", "ssh-miner", "--run", "../x", "--out", "r")
        ),
        Probe("out", "long", (*PROMPTS[:5], "--out", "{long}")),
        Probe("run-yaml", "deep", PROMPTS, RUN_YAML_DEEP),
    ),
    "robustness": (
        Probe(
            "clean-document",
            "link",
            ROBUSTNESS,
            link("corpus/clean/ssh-miner/intrusion-report.md", "corpus-report.md"),
        ),
        Probe("out", "link", (*ROBUSTNESS, "--out", "out-link"), link("out-link", "dir")),
        Probe(
            "attack-range",
            "dotdot",
            ROBUSTNESS,
            lambda ws, outside: (ws / "corpus/attacks/code-block.yaml").write_text(
                (ws / "corpus/attacks/code-block.yaml")
                .read_text()
                .replace("range: ssh-miner", "range: ../../outside")
            ),
        ),
        Probe("out", "long", (*ROBUSTNESS, "--out", "{long}")),
        Probe("attack", "deep", ROBUSTNESS, write("corpus/attacks/code-block.yaml", DEEP_YAML)),
    ),
}
# evalkit label and evalkit adjudicate: a planted labelling/ link, a workspace path with a
# part over 255 bytes, and a saved copy nested 100,000 deep are refused before JupyterLab.
for _app, _notebook in (("label", "label.ipynb"), ("adjudicate", "adjudicate.ipynb")):
    PROBES[_app] = (
        Probe("copy-folder", "link", (_app, "--print-only"), link("labelling", "dir")),
        Probe("copy", "link", (_app, "--print-only"), link(f"labelling/{_notebook}", "nb")),
        Probe("workspace", "long", (_app, "--print-only", "--workspace", "{long}")),
        Probe("copy", "deep", (_app, "--print-only"), write(f"labelling/{_notebook}", DEEP_JSON)),
    )

# A kind that cannot apply to a command, and why (every other kind needs a probe).
NOT_APPLICABLE: dict[str, dict[str, str]] = {
    "judges": {kind: "it reads no file, folder or name" for kind in KINDS},
    "estimate": {},
    "ranges": {"dotdot": "its one input is the ranges folder, typed by the user"},
    "validate": {
        "dotdot": "its inputs are paths the user types; a label names no file (its path does),"
        " and a label's resolves are schema-checked names"
    },
    "batch": {"dotdot": "runs and ranges are globs over the runs folder's own entries"},
    "compare": {"dotdot": "its folders are typed by the user; a record names no file"},
    "label": {"dotdot": "its one input is the workspace, typed by the user or discovered"},
    "adjudicate": {"dotdot": "its one input is the workspace, typed by the user or discovered"},
}


def _commands() -> set[str]:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    return set(subparsers.choices)


def test_every_command_has_a_probe_of_each_kind():
    commands = _commands()
    assert commands == {*PROBES, "judges"}, "a command without probes: add it to PROBES"
    for command in commands:
        covered = {probe.kind for probe in PROBES.get(command, ())}
        excused = set(NOT_APPLICABLE.get(command, {}))
        assert covered | excused == set(KINDS), f"{command}: no probe of {set(KINDS) - covered}"


def _cases() -> list[tuple[str, Probe]]:
    return [(command, probe) for command, probes in PROBES.items() for probe in probes]


# --------------------------------------------------------------------------- the fixtures


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with the demo and agent-b runs, each with a rules record of ssh-miner,
    and the adversarial corpus; built once, copied for every probe."""
    ws = copy_samples(tmp_path_factory.mktemp("base") / "ws", runs=("demo", "agent-b"))
    for run in ("demo", "agent-b"):
        write_rules_record(ws, run)
    shutil.copytree(REPO / "evalkit/data/adversarial", ws / "corpus")
    return ws


def _outside(folder: Path, ws: Path) -> Path:
    """The folder outside the workspace: a secret in every shape a probe links to."""
    folder.mkdir()
    (folder / "dir").mkdir()
    checklist = (ws / "ranges/ssh-miner/checklist.md").read_text()
    (folder / "checklist.md").write_text(checklist.replace("title:", f"title: {SECRET_MARKER}", 1))
    report = (ws / "runs/demo/ssh-miner/intrusion-report.md").read_text()
    (folder / "report.md").write_text(f"{report}\n{SECRET_MARKER}\n")
    # The corpus's own clean report with the secret: every attack still applies to it.
    clean = (ws / "corpus/clean/ssh-miner/intrusion-report.md").read_text()
    (folder / "corpus-report.md").write_text(f"{clean}\n{SECRET_MARKER}\n")
    scores = json.loads((ws / RULES / "scores.json").read_text())
    scores["meta"]["model_under_test"] = SECRET_MARKER
    (folder / "scores.json").write_text(json.dumps(scores))
    label = json.loads((ws / "runs/demo/ssh-miner/labels/a.json").read_text())
    label["checkpoints"][0]["note"] = SECRET_MARKER
    (folder / "label.json").write_text(json.dumps(label))
    (folder / "labels").mkdir()
    (folder / "labels/a.json").write_text(json.dumps(label))
    shutil.copytree(ws / "runs/demo", folder / "run")
    (folder / "run/ssh-miner/evaluations/rules/scores.json").write_text(json.dumps(scores))
    return folder


@pytest.mark.parametrize(
    ("command", "probe"), _cases(), ids=[f"{c}-{p.kind}-{p.name}" for c, p in _cases()]
)
def test_probe(command: str, probe: Probe, base: Path, tmp_path: Path):
    ws = tmp_path / "ws"
    shutil.copytree(base, ws, symlinks=True)
    outside = _outside(tmp_path / "outside", ws)
    if probe.setup is not None:
        probe.setup(ws, outside)
    before = snapshot(outside)
    args = [a.format(ws=ws, outside=outside, long=LONG_NAME) for a in probe.args]
    result = run_evalkit(*args, cwd=ws, env=clean_env(**probe.env), timeout=300)
    said = result.stdout + result.stderr
    assert result.returncode == probe.exit, said
    assert "Traceback" not in said, said
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    if not probe.table:
        assert len(lines) <= 1, result.stderr
    assert SECRET_MARKER not in said
    assert snapshot(outside) == before, "something was written outside the workspace"
    assert files_holding(ws, SECRET_MARKER) == [], "a secret from outside reached an output"
