"""Gold label files: schema, loading, the checks against checklist and documents, and validate."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from evalkit.checklist import load_range
from evalkit.errors import EvalkitError, LabelError
from evalkit.gold_labels import (
    check_labels,
    check_penalty,
    find_label_files,
    find_labels,
    label_data,
    label_from_data,
    labelled_pairs,
    load_labels,
    validate_label_files,
)
from evalkit.grounding import Sources
from evalkit.runs import load_submission
from tests.samples import REPO, copy_samples, run_evalkit

SAMPLE_RANGES = ("redis-exposed", "ssh-miner", "weak-baseline")


def label_path(root: Path, run: str = "demo", range_id: str = "redis-exposed") -> Path:
    return root / "runs" / run / range_id / "labels" / "a.json"


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def write(path: Path, data: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def problems_of(root: Path, data: dict[str, Any], *, name: str = "a.json") -> list[str]:
    """check_labels on ``data`` written as the label file ``name`` of demo/redis-exposed."""
    path = write(label_path(root).with_name(name), data)
    rng = load_range(root / "ranges", "redis-exposed")
    submission = load_submission(root / "runs", "demo", rng)
    return check_labels(load_labels(path), rng, submission)


@pytest.fixture
def samples(tmp_path: Path) -> Path:
    return copy_samples(tmp_path)


@pytest.fixture
def good(samples: Path) -> dict[str, Any]:
    return read(label_path(samples))


def checkpoint(data: dict[str, Any], chk_id: str) -> dict[str, Any]:
    return next(c for c in data["checkpoints"] if c["chk_id"] == chk_id)


# --------------------------------------------------------------------------- schema


def test_schema_is_valid_draft_2020_12_and_shipped_in_the_package():
    from importlib.resources import files

    schema = json.loads(files("evalkit").joinpath("schemas/labels.schema.json").read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_shipped_label_files_load_and_pass_every_check():
    pairs = labelled_pairs(REPO / "runs")
    assert len(pairs) >= 9
    for run_id, range_id in pairs:
        rng = load_range(REPO / "ranges", range_id)
        submission = load_submission(REPO / "runs", run_id, rng)
        for labels in find_labels(REPO / "runs", run_id, range_id):
            assert check_labels(labels, rng, submission) == [], labels.path


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (lambda d: d.pop("checklist_sha256"), "$"),
        (lambda d: d.update(schema_version=2), "$.schema_version"),
        (lambda d: d.update(labeller="Labeller A"), "$.labeller"),
        (lambda d: d["checkpoints"][0]["detection"].update(evidence=2), "$.checkpoints[0]"),
        (lambda d: d["checkpoints"][0]["detection"].pop("attribution"), "$.checkpoints[0]"),
        (lambda d: d["checkpoints"][0]["plan"].update(extra=1), "$.checkpoints[0]"),
        (lambda d: d["checkpoints"][0].update(penalties=[{"rule": "rude"}]), "$.checkpoints[0]"),
        (lambda d: d.update(created="30/11/2026"), "$.created"),
    ],
)
def test_schema_refuses_malformed_files(samples: Path, good: dict[str, Any], mutate, where):
    data = copy.deepcopy(good)
    mutate(data)
    path = write(label_path(samples), data)
    with pytest.raises(LabelError) as caught:
        load_labels(path)
    assert caught.value.path == str(path)
    assert any(where in problem for problem in caught.value.problems)
    assert isinstance(caught.value, EvalkitError)


def test_not_json_is_a_label_error_with_the_line(samples: Path):
    path = label_path(samples)
    path.write_text('{\n  "schema_version": 1,\n  oops\n}\n')
    with pytest.raises(LabelError) as caught:
        load_labels(path)
    assert caught.value.line == 3
    assert str(path) in str(caught.value)


# --------------------------------------------------------------------------- loading


def test_load_labels_reads_items_before_penalties(samples: Path):
    labels = load_labels(label_path(samples, "demo", "weak-baseline"))
    assert (labels.labeller, labels.range_id, labels.run_id, labels.blind) == (
        "a",
        "weak-baseline",
        "demo",
        False,
    )
    item = labels.item("CHK-12")
    assert item.detection == {"discovery": 1, "evidence": 1, "attribution": 0}
    assert item.plan is None
    assert [p.rule for p in item.penalties] == ["fabrication"]
    with pytest.raises(LabelError, match="CHK-99"):
        labels.item("CHK-99")


def test_find_labels_sorts_by_labeller_and_labelled_pairs_lists_pairs(samples: Path):
    data = read(label_path(samples))
    data["labeller"] = "0-first"
    write(label_path(samples).with_name("0-first.json"), data)
    found = find_labels(samples / "runs", "demo", "redis-exposed")
    assert [labels.labeller for labels in found] == ["0-first", "a", "b"]
    assert find_labels(samples / "runs", "demo", "no-such-range") == ()
    pairs = labelled_pairs(samples / "runs")
    assert pairs == sorted(pairs)
    assert ("demo", "redis-exposed") in pairs
    assert labelled_pairs(samples / "missing") == []


# --------------------------------------------------------------------------- checks


def test_good_labels_have_no_problems(samples: Path, good: dict[str, Any]):
    assert problems_of(samples, good) == []


def test_stale_checklist_hash_is_refused(samples: Path, good: dict[str, Any]):
    good["checklist_sha256"] = "0" * 64
    assert any("stale label" in p for p in problems_of(samples, good))


def test_editing_the_checklist_makes_existing_labels_stale(samples: Path, good: dict[str, Any]):
    checklist = samples / "ranges" / "redis-exposed" / "checklist.md"
    checklist.write_text(checklist.read_text() + "\n")
    assert any("stale label" in p for p in problems_of(samples, good))


def test_missing_duplicate_and_unknown_checkpoints(samples: Path, good: dict[str, Any]):
    chk_03 = checkpoint(good, "CHK-03")
    good["checkpoints"] = [c for c in good["checkpoints"] if c["chk_id"] != "CHK-03"]
    good["checkpoints"].append(copy.deepcopy(checkpoint(good, "CHK-01")))
    good["checkpoints"].append({**chk_03, "chk_id": "CHK-42"})
    problems = problems_of(samples, good)
    assert "CHK-03: missing (every checkpoint of the checklist needs a label)" in problems
    assert "CHK-01: labelled more than once" in problems
    assert "CHK-42: not a checkpoint of the redis-exposed checklist" in problems


def test_nulls_must_match_the_scope(samples: Path, good: dict[str, Any]):
    checkpoint(good, "CHK-04")["plan"] = {"correctness": 1, "completeness": 0}  # detection-only
    checkpoint(good, "CHK-12")["detection"] = {"discovery": 0, "evidence": 0, "attribution": 0}
    checkpoint(good, "CHK-01")["plan"] = None  # both
    problems = problems_of(samples, good)
    assert "CHK-04: plan must be null for a detection-only checkpoint" in problems
    assert "CHK-12: detection must be null for a plan-only checkpoint" in problems
    assert "CHK-01: plan must be the two sub-scores for a both checkpoint" in problems


def test_penalty_quotes_must_be_verbatim_in_their_document(samples: Path, good: dict[str, Any]):
    penalty = {"rule": "fabrication", "source": "report", "quote": "", "detail": "d"}
    checkpoint(good, "CHK-01")["penalties"] = [
        # Markdown and line breaks are forgiven, as for judge quotes.
        {**penalty, "quote": "The packaged default (bind 127.0.0.1 ::1) was replaced"},
        {**penalty, "quote": "The packaged default was replaced"},
        {**penalty, "source": "plan", "quote": "Secure Redis"},
        {**penalty, "source": "plan", "quote": "Update the Redis configuration"},
        {**penalty, "rule": "dangerous_advice", "source": "plan", "quote": "bind 127.0.0.1"},
    ]
    problems = problems_of(samples, good)
    missing = "'The packaged default was replaced'"
    assert problems == [f"CHK-01: penalty quote not found verbatim in the report: {missing}"]


def test_penalty_source_and_scope_must_fit_the_rule(samples: Path, good: dict[str, Any]):
    checkpoint(good, "CHK-02")["penalties"] = [
        {"rule": "wrong_attribution", "source": "plan", "quote": "Secure Redis", "detail": "d"}
    ]
    checkpoint(good, "CHK-04")["penalties"] = [
        {"rule": "dangerous_advice", "source": "report", "quote": "CONFIG SET", "detail": "d"}
    ]
    problems = problems_of(samples, good)
    assert "CHK-02: a wrong_attribution penalty quotes the report, not the plan" in problems
    assert (
        "CHK-04: a dangerous_advice penalty acts on the plan, N/A for a detection-only checkpoint"
        in problems
    )


def test_pair_and_folder_must_match(samples: Path, good: dict[str, Any]):
    good["run_id"] = "other-run"
    problems = problems_of(samples, good, name="b.json")
    assert any(p.startswith("run_id/range other-run/redis-exposed do not match") for p in problems)
    assert any("run_id 'other-run' but the file is under" in p for p in problems)
    assert "labeller 'a' but the file is named b.json" in problems


def test_range_must_match_the_checklist(samples: Path, good: dict[str, Any]):
    good["range"] = "ssh-miner"
    problems = problems_of(samples, good)
    assert "range is 'ssh-miner' but the checklist is 'redis-exposed'" in problems


# --------------------------------------------------------------------------- validate


def test_find_label_files_under_a_folder_or_given_directly(samples: Path):
    under = find_label_files(samples / "runs" / "demo")
    assert [p.relative_to(samples / "runs/demo").as_posix() for p in under] == [
        f"{r}/labels/{labeller}.json" for r in SAMPLE_RANGES for labeller in ("a", "b")
    ]
    assert find_label_files(label_path(samples)) == [label_path(samples)]
    assert find_label_files(samples / "ranges") == []


def test_validate_label_files_names_each_file(samples: Path, good: dict[str, Any]):
    good["checklist_sha256"] = "f" * 64
    bad = write(label_path(samples), good)
    ok = label_path(samples, "demo", "ssh-miner")
    lines, failed = validate_label_files([bad, ok])
    assert failed == 1
    assert lines[0].startswith(f"{bad}: stale label")
    assert lines[-1] == f"{ok}: ok (labels)"


def cli(*args: str, cwd: Path):
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    return run_evalkit(*args, cwd=cwd, env=env)


@pytest.mark.e2e
def test_cli_validate_accepts_the_shipped_labels(samples: Path):
    result = cli("validate", "runs", "ranges", cwd=samples)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "runs/demo/ssh-miner/labels/a.json: ok (labels)" in result.stdout
    assert "ranges/ssh-miner/checklist.md: ok" in result.stdout


def test_cli_validate_takes_a_labels_folder_itself(samples: Path):
    result = cli("validate", "runs/demo/ssh-miner/labels", cwd=samples)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "runs/demo/ssh-miner/labels/a.json: ok (labels)",
        "runs/demo/ssh-miner/labels/b.json: ok (labels)",
    ]


@pytest.mark.e2e
def test_cli_validate_on_a_bad_label_file_prints_one_line_per_problem(
    samples: Path, good: dict[str, Any]
):
    good["checklist_sha256"] = "0" * 64
    good["checkpoints"] = [c for c in good["checkpoints"] if c["chk_id"] != "CHK-05"]
    checkpoint(good, "CHK-06")["plan"] = {"correctness": 0, "completeness": 0}
    write(label_path(samples), good)
    name = "runs/demo/redis-exposed/labels/a.json"
    before = label_path(samples).read_bytes()

    result = cli("validate", name, cwd=samples)

    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    assert all(line.startswith(f"{name}: ") for line in lines)
    assert any("stale label" in line for line in lines)
    assert any("CHK-05: missing" in line for line in lines)
    assert any("CHK-06: plan must be null" in line for line in lines)
    assert label_path(samples).read_bytes() == before  # validate overwrites nothing


@pytest.mark.e2e
def test_cli_validate_on_a_schema_breaking_label_file(samples: Path, good: dict[str, Any]):
    good["blind"] = "no"
    good["checkpoints"][0]["detection"]["discovery"] = 3
    write(label_path(samples), good)
    result = cli("validate", "runs/demo", cwd=samples)
    assert result.returncode == 2
    bad = [line for line in result.stdout.splitlines() if "redis-exposed/labels/a" in line]
    assert len(bad) == 2
    assert all(line.startswith("runs/demo/redis-exposed/labels/a.json: schema: $.") for line in bad)


# --------------------------------------------------------------------------- optional fields


def test_old_files_without_the_optional_fields_stay_valid_and_read_as_defaults(samples: Path):
    labels = load_labels(label_path(samples))
    assert (labels.prefilled_from, labels.resolves) == (None, ())
    assert {(item.borderline, item.resolution) for item in labels.items} == {(False, None)}


def test_label_data_is_the_inverse_of_reading_and_omits_what_says_nothing(
    samples: Path, good: dict[str, Any]
):
    path = label_path(samples)
    assert label_data(load_labels(path)) == good
    data = copy.deepcopy(good)
    checkpoint(data, "CHK-02")["borderline"] = True
    data["prefilled_from"] = "judge:rules"
    assert label_data(label_from_data(data, path)) == data


def test_borderline_is_a_boolean(samples: Path, good: dict[str, Any]):
    data = copy.deepcopy(good)
    checkpoint(data, "CHK-02")["borderline"] = True
    assert problems_of(samples, data) == []
    assert load_labels(label_path(samples)).item("CHK-02").borderline is True
    checkpoint(data, "CHK-02")["borderline"] = "yes"
    with pytest.raises(LabelError, match="borderline"):
        label_from_data(data, label_path(samples))


def test_a_label_prefilled_from_another_label_is_not_blind(samples: Path, good: dict[str, Any]):
    data = copy.deepcopy(good)
    data.update(prefilled_from="judge:rules", blind=True)
    assert problems_of(samples, data) == []  # a judge is not another label
    data.update(prefilled_from="b")
    assert problems_of(samples, data) == [
        "blind is true, but the label was pre-filled from label 'b'"
    ]


def adjudicated(samples: Path, resolves: list[str]) -> dict[str, Any]:
    """An adjudicated label of demo/redis-exposed: a's reading, every checkpoint 'a'."""
    data = copy.deepcopy(read(label_path(samples)))
    data.update(labeller="adjudicated", resolves=resolves, blind=False)
    for raw in data["checkpoints"]:
        raw["resolution"] = "a"
    return data


def test_an_adjudicated_label_records_the_side_taken_per_checkpoint(samples: Path):
    data = adjudicated(samples, ["a", "b"])
    assert problems_of(samples, data, name="adjudicated.json") == []
    labels = load_labels(label_path(samples).with_name("adjudicated.json"))
    assert labels.resolves == ("a", "b")
    assert {item.resolution for item in labels.items} == {"a"}


def test_an_adjudicated_label_must_fit_the_labels_it_resolves(samples: Path):
    a = read(label_path(samples))
    b = read(label_path(samples).with_name("b.json"))
    differ = next(
        x["chk_id"]
        for x, y in zip(a["checkpoints"], b["checkpoints"], strict=True)
        if (x["detection"], x["plan"]) != (y["detection"], y["plan"])
    )
    same = next(
        x["chk_id"]
        for x, y in zip(a["checkpoints"], b["checkpoints"], strict=True)
        if x["chk_id"] != "CHK-01"
        and (x["detection"], x["plan"], [p["rule"] for p in x["penalties"]])
        == (y["detection"], y["plan"], [p["rule"] for p in y["penalties"]])
    )
    data = adjudicated(samples, ["a", "b", "c", "judge:rules"])
    data["blind"] = True
    checkpoint(data, differ)["resolution"] = "b"  # but it holds a's reading
    checkpoint(data, same)["resolution"] = "agreed"  # true: a and b read it alike
    checkpoint(data, "CHK-01").pop("resolution")
    problems = problems_of(samples, data, name="adjudicated.json")
    assert "an adjudicated label (resolves) cannot be blind" in problems
    assert "resolves 'c', but there is no c.json beside it" in problems
    assert "CHK-01: no resolution (agreed, edited or the side taken)" in problems
    assert any(p.startswith(f"{differ}: resolution 'b', but label 'b' reads it") for p in problems)
    assert not any(p.startswith(f"{same}:") for p in problems)
    checkpoint(data, differ)["resolution"] = "agreed"
    problems = problems_of(samples, data, name="adjudicated.json")
    assert any(p.startswith(f"{differ}: resolution 'agreed', but label 'b'") for p in problems)
    checkpoint(data, differ)["resolution"] = "judge:rules"  # not checked: the folder may be gone
    checkpoint(data, same)["resolution"] = "x"
    problems = problems_of(samples, data, name="adjudicated.json")
    assert not any(p.startswith(f"{differ}:") for p in problems)
    assert f"{same}: resolution 'x' is not a side it resolves" in problems


def test_resolutions_need_resolves_and_a_label_cannot_resolve_itself(
    samples: Path, good: dict[str, Any]
):
    data = copy.deepcopy(good)
    checkpoint(data, "CHK-01")["resolution"] = "edited"
    assert problems_of(samples, data) == [
        "CHK-01: a resolution ('edited') but the label resolves nothing (no resolves)"
    ]
    data = adjudicated(samples, ["adjudicated", "b"])
    assert "label 'adjudicated' cannot resolve itself" in problems_of(
        samples, data, name="adjudicated.json"
    )
    data = adjudicated(samples, ["a"])  # one side is nothing to adjudicate
    with pytest.raises(LabelError, match="resolves"):
        label_from_data(data, label_path(samples))


def test_check_penalty_is_the_schema_then_the_checks_of_a_file(samples: Path):
    rng = load_range(samples / "ranges", "redis-exposed")
    submission = load_submission(samples / "runs", "demo", rng)
    sources = Sources.of(submission)
    line = next(ln for ln in submission.plan.text.splitlines() if len(ln.strip()) > 20).strip()
    good = {"rule": "dangerous_advice", "source": "plan", "quote": line, "detail": "risky"}
    assert check_penalty("CHK-01", good, "both", sources) == []
    assert check_penalty("CHK-01", {**good, "detail": ""}, "both", sources) == [
        "CHK-01: $.detail: '' should be non-empty"
    ]
    assert check_penalty("CHK-04", good, "detection-only", sources) == [
        "CHK-04: a dangerous_advice penalty acts on the plan, N/A for a detection-only checkpoint"
    ]
    problems = check_penalty("CHK-01", {**good, "quote": line + " and more"}, "both", sources)
    assert problems == [
        f"CHK-01: penalty quote not found verbatim in the plan: {line + ' and more'!r}"
    ]
