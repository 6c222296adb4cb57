"""Tests for evalkit.runs: reading a run folder into a Submission."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import RunError
from evalkit.model import Checkpoint, Range
from evalkit.runs import list_runs, load_submission, run_purpose

RANGE = Range(
    id="ssh-miner",
    title="SSH miner",
    report="intrusion-report",
    checkpoints=(Checkpoint(id="CHK-01", name="Miner", detection_criteria="d", plan_criteria="p"),),
)


def _make_run(
    root: Path,
    run_id: str = "run-1",
    *,
    report: str | bytes | None = "# Report\nFound xmrig.\n",
    plan: str | bytes | None = "# Plan\nKill it.\n",
    run_yaml: str | None = None,
    rng: Range = RANGE,
) -> Path:
    folder = root / run_id / rng.id
    folder.mkdir(parents=True)
    for name, content in ((rng.report_filename, report), ("remediation-plan.md", plan)):
        if isinstance(content, bytes):
            (folder / name).write_bytes(content)
        elif content is not None:
            (folder / name).write_text(content, encoding="utf-8")
    if run_yaml is not None:
        (root / run_id / "run.yaml").write_text(run_yaml, encoding="utf-8")
    return folder


def test_load_submission_reads_report_and_plan_as_documents(tmp_path):
    folder = _make_run(tmp_path)
    sub = load_submission(tmp_path, "run-1", RANGE)
    assert (sub.run_id, sub.range_id) == ("run-1", "ssh-miner")
    assert (sub.report.kind, sub.report.path) == ("report", str(folder / "intrusion-report.md"))
    assert (sub.plan.kind, sub.plan.path) == ("plan", str(folder / "remediation-plan.md"))
    assert sub.report.text == "# Report\nFound xmrig.\n"
    assert sub.plan.text == "# Plan\nKill it.\n"
    assert (sub.model_under_test, sub.notes) == (None, None)


def test_report_filename_follows_the_range_report_kind(tmp_path):
    rng = Range(id="web", title="Web", report="vuln-report", checkpoints=RANGE.checkpoints)
    folder = _make_run(tmp_path, rng=rng)
    sub = load_submission(tmp_path, "run-1", rng)
    assert sub.report.path == str(folder / "vuln-report.md")


def test_missing_run_folder_is_reported_with_available_runs(tmp_path):
    _make_run(tmp_path, "run-2")
    _make_run(tmp_path, "run-10")
    with pytest.raises(RunError) as info:
        load_submission(tmp_path, "run-3", RANGE)
    assert info.value.path == str(tmp_path / "run-3")
    assert "is missing" in info.value.message
    assert "available runs: run-2, run-10" in info.value.message


def test_missing_range_folder_is_reported(tmp_path):
    (tmp_path / "run-1" / "other-range").mkdir(parents=True)
    with pytest.raises(RunError, match="is missing") as info:
        load_submission(tmp_path, "run-1", RANGE)
    assert info.value.path == str(tmp_path / "run-1" / "ssh-miner")


@pytest.mark.parametrize(
    ("missing", "filename"),
    [("report", "intrusion-report.md"), ("plan", "remediation-plan.md")],
)
def test_missing_document_is_reported_with_its_path(tmp_path, missing, filename):
    folder = _make_run(tmp_path, **{missing: None})
    with pytest.raises(RunError, match="is missing") as info:
        load_submission(tmp_path, "run-1", RANGE)
    assert info.value.path == str(folder / filename)


@pytest.mark.parametrize("content", ["", "  \n\t\n", "\u200b\u200d\n\ufeff\u2060 \u00ad\n"])
@pytest.mark.parametrize(
    ("which", "filename"),
    [("report", "intrusion-report.md"), ("plan", "remediation-plan.md")],
)
def test_empty_or_whitespace_only_document_is_reported(tmp_path, which, filename, content):
    folder = _make_run(tmp_path, **{which: content})
    with pytest.raises(RunError, match="is empty") as info:
        load_submission(tmp_path, "run-1", RANGE)
    assert info.value.path == str(folder / filename)


def test_document_that_is_a_directory_is_reported(tmp_path):
    folder = _make_run(tmp_path, plan=None)
    (folder / "remediation-plan.md").mkdir()
    with pytest.raises(RunError, match="is not a file"):
        load_submission(tmp_path, "run-1", RANGE)


def test_non_utf8_document_is_reported_with_its_path(tmp_path):
    folder = _make_run(tmp_path, report=b"caf\xe9\n")
    with pytest.raises(RunError, match="not valid UTF-8") as info:
        load_submission(tmp_path, "run-1", RANGE)
    assert info.value.path == str(folder / "intrusion-report.md")


def test_crlf_and_bom_are_normalised_like_text_mode_reading(tmp_path):
    _make_run(tmp_path, report=b"\xef\xbb\xbfline 1\r\nline 2\r\n")
    sub = load_submission(tmp_path, "run-1", RANGE)
    assert sub.report.text == "line 1\nline 2\n"


def test_run_yaml_provides_model_under_test_and_notes(tmp_path):
    _make_run(tmp_path, run_yaml="model_under_test: agent-v2\nnotes: |\n  first try\nextra: 1\n")
    sub = load_submission(tmp_path, "run-1", RANGE)
    assert (sub.model_under_test, sub.notes) == ("agent-v2", "first try")


def test_model_under_test_argument_overrides_run_yaml(tmp_path):
    _make_run(tmp_path, run_yaml="model_under_test: agent-v2\n")
    sub = load_submission(tmp_path, "run-1", RANGE, model_under_test="agent-v3")
    assert sub.model_under_test == "agent-v3"


def test_model_under_test_argument_without_run_yaml(tmp_path):
    _make_run(tmp_path)
    assert load_submission(tmp_path, "run-1", RANGE, model_under_test="m").model_under_test == "m"


@pytest.mark.parametrize("text", ["", "# only a comment\n"])
def test_empty_run_yaml_means_no_metadata(tmp_path, text):
    _make_run(tmp_path, run_yaml=text)
    sub = load_submission(tmp_path, "run-1", RANGE)
    assert (sub.model_under_test, sub.notes) == (None, None)


def test_malformed_run_yaml_is_reported_with_path_and_line(tmp_path):
    _make_run(tmp_path, run_yaml="model_under_test: a\nnotes: [unclosed\nother: 1\n")
    with pytest.raises(RunError, match="malformed YAML") as info:
        load_submission(tmp_path, "run-1", RANGE)
    assert info.value.path == str(tmp_path / "run-1" / "run.yaml")
    assert info.value.line == 3
    assert f"{info.value.path}:3: " in str(info.value)


def test_run_yaml_that_is_not_a_mapping_is_reported(tmp_path):
    _make_run(tmp_path, run_yaml="- agent-v2\n")
    with pytest.raises(RunError, match="must be a mapping") as info:
        load_submission(tmp_path, "run-1", RANGE)
    assert (info.value.path, info.value.line) == (str(tmp_path / "run-1" / "run.yaml"), 1)


def test_run_yaml_non_string_model_is_reported_at_its_line(tmp_path):
    _make_run(tmp_path, run_yaml="notes: ok\nmodel_under_test: [a, b]\n")
    with pytest.raises(RunError, match="model_under_test must be a string") as info:
        load_submission(tmp_path, "run-1", RANGE)
    assert info.value.line == 2


def test_non_utf8_run_yaml_is_reported_with_its_path(tmp_path):
    _make_run(tmp_path)
    (tmp_path / "run-1" / "run.yaml").write_bytes(b"notes: caf\xe9\n")
    with pytest.raises(RunError, match="not valid UTF-8") as info:
        load_submission(tmp_path, "run-1", RANGE)
    assert info.value.path == str(tmp_path / "run-1" / "run.yaml")


@pytest.mark.parametrize("run_id", ["", "..", "a/b", "..\\x"])
def test_run_id_must_be_a_plain_folder_name(tmp_path, run_id):
    with pytest.raises(RunError, match="invalid run id"):
        load_submission(tmp_path, run_id, RANGE)


def test_run_error_str_is_one_line_naming_the_path(tmp_path):
    folder = _make_run(tmp_path, plan="   ")
    with pytest.raises(RunError) as info:
        load_submission(tmp_path, "run-1", RANGE)
    text = str(info.value)
    assert "\n" not in text
    assert text.startswith(str(folder / "remediation-plan.md") + ": ")


def test_list_runs_natural_order_skipping_files_and_hidden_folders(tmp_path):
    for run_id in ("run-10", "run-2", "run-1", ".ipynb_checkpoints"):
        (tmp_path / run_id).mkdir()
    (tmp_path / "notes.txt").write_text("x")
    assert list_runs(tmp_path) == ["run-1", "run-2", "run-10"]
    assert list_runs(tmp_path / "absent") == []


def test_document_hash_is_the_hash_of_the_file_as_stored(tmp_path):
    import hashlib

    from evalkit.model import Checkpoint, Range
    from evalkit.runs import load_submission

    folder = tmp_path / "r1" / "mini"
    folder.mkdir(parents=True)
    raw = "\ufeff# Report\r\nThe miner ran.\r\n".encode()
    (folder / "intrusion-report.md").write_bytes(raw)
    (folder / "remediation-plan.md").write_text("# Plan\nKill it.\n")
    rng = Range(
        id="mini",
        title="t",
        report="intrusion-report",
        checkpoints=(Checkpoint(id="CHK-1", name="x", detection_criteria="d", plan_criteria="p"),),
    )
    submission = load_submission(tmp_path, "r1", rng)
    assert submission.report.text == "# Report\nThe miner ran.\n"
    assert submission.report.sha256 == hashlib.sha256(raw).hexdigest()


@pytest.mark.parametrize(
    ("which", "filename"),
    [("report", "intrusion-report.md"), ("plan", "remediation-plan.md")],
)
def test_a_nul_byte_in_a_document_is_reported_with_its_line(tmp_path, which, filename):
    folder = _make_run(tmp_path, **{which: "# Doc\nline two\nbad\x00byte\n"})
    with pytest.raises(RunError, match="NUL byte") as info:
        load_submission(tmp_path, "run-1", RANGE)
    assert (info.value.path, info.value.line) == (str(folder / filename), 3)


def test_a_document_above_the_size_limit_is_refused_before_it_is_read(tmp_path):
    folder = _make_run(tmp_path, report="# Report\n" + "x" * 2000 + "\n")
    with pytest.raises(RunError, match="above the limit") as info:
        load_submission(tmp_path, "run-1", RANGE, max_document_bytes=1000)
    assert info.value.path == str(folder / "intrusion-report.md")
    assert "\n" not in str(info.value)
    assert load_submission(tmp_path, "run-1", RANGE, max_document_bytes=10_000).report.text


# --------------------------------------------------------------------------- confinement


def test_a_report_linked_outside_the_runs_folder_is_refused(tmp_path):
    runs = tmp_path / "runs"
    folder = _make_run(runs, report=None)
    secret = tmp_path / "secret.txt"
    secret.write_text("ANTHROPIC_API_KEY=sk-ant-do-not-read\n")
    (folder / "intrusion-report.md").symlink_to(secret)
    with pytest.raises(RunError, match="outside"):
        load_submission(runs, "run-1", RANGE)


def test_a_plan_or_run_yaml_linked_outside_is_refused(tmp_path):
    runs = tmp_path / "runs"
    folder = _make_run(runs, plan=None)
    outside = tmp_path / "plan.md"
    outside.write_text("# Plan\n")
    (folder / "remediation-plan.md").symlink_to(outside)
    with pytest.raises(RunError, match="outside"):
        load_submission(runs, "run-1", RANGE)
    (folder / "remediation-plan.md").unlink()
    (folder / "remediation-plan.md").write_text("# Plan\n")
    (tmp_path / "run.yaml").write_text("model_under_test: m\n")
    (runs / "run-1" / "run.yaml").symlink_to(tmp_path / "run.yaml")
    with pytest.raises(RunError, match="outside"):
        load_submission(runs, "run-1", RANGE)


def test_links_inside_the_runs_folder_are_fine_and_outside_can_be_allowed(tmp_path):
    runs = tmp_path / "runs"
    folder = _make_run(runs, report=None)
    (runs / "shared.md").write_text("# Report\nFound xmrig.\n")
    (folder / "intrusion-report.md").symlink_to(runs / "shared.md")
    assert not load_submission(runs, "run-1", RANGE).inputs_outside
    (folder / "intrusion-report.md").unlink()
    (tmp_path / "out.md").write_text("# Report\nFound xmrig.\n")
    (folder / "intrusion-report.md").symlink_to(tmp_path / "out.md")
    sub = load_submission(runs, "run-1", RANGE, allow_outside_inputs=True)
    assert sub.inputs_outside
    assert sub.report.text.startswith("# Report")


def test_run_yaml_purpose_says_gold_pairs_apart_from_agents(tmp_path):
    _make_run(tmp_path, run_yaml="purpose: gold\n")
    assert run_purpose(tmp_path, "run-1") == "gold"
    _make_run(tmp_path, run_id="run-2")  # no run.yaml: an agent's run
    assert run_purpose(tmp_path, "run-2") == "agent"
    assert run_purpose(tmp_path, "../elsewhere") == "agent"


def test_an_unknown_purpose_is_bad_input_at_its_line(tmp_path):
    _make_run(tmp_path, run_yaml="notes: x\npurpose: golden\n")
    with pytest.raises(RunError, match="purpose must be agent or gold, not 'golden'") as info:
        load_submission(tmp_path, "run-1", RANGE)
    assert info.value.line == 2
