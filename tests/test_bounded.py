"""The bounded readers of untrusted JSON, YAML and names (evalkit/bounded.py)."""

from __future__ import annotations

import pytest

from evalkit.bounded import (
    MAX_DEPTH,
    check_name,
    check_path,
    compose_yaml,
    parse_json,
    parse_yaml,
)
from evalkit.errors import EvalkitError, LabelError


def test_json_within_the_bounds_reads_as_json():
    text = '{"a": [1, 2.5, "x]]]]"], "b": {"c": null}, "d": -12345678901234567890}'
    assert parse_json(text) == {
        "a": [1, 2.5, "x]]]]"],
        "b": {"c": None},
        "d": -12345678901234567890,
    }
    assert parse_json(b'\xef\xbb\xbf{"bom": true}') == {"bom": True}


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_json_nested_too_deep_is_one_line_before_parsing(depth: int):
    with pytest.raises(EvalkitError, match=f"deeper than {MAX_DEPTH}") as error:
        parse_json("[" * depth + "]" * depth, path="v.json")
    assert "\n" not in str(error.value) and str(error.value).startswith("v.json: ")


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = '["' + "[" * 1000 + '\\"' + "{" * 1000 + '"]'
    assert parse_json(text) == ["[" * 1000 + '"' + "{" * 1000]


@pytest.mark.parametrize("number", ["1" + "0" * 5000, "1" * 41, "0." + "1" * 40, "1e" + "9" * 40])
def test_json_numbers_longer_than_the_bound_are_refused(number: str):
    with pytest.raises(EvalkitError, match="a number of"):
        parse_json(f'{{"n": {number}}}')


def test_json_errors_take_the_callers_type_and_name_the_line():
    with pytest.raises(LabelError) as error:
        parse_json('{\n"a": 1,\n}', path="a.json", error=LabelError)
    assert error.value.line == 3 and "not a readable JSON file" in str(error.value)
    with pytest.raises(LabelError, match="not valid UTF-8"):
        parse_json(b"\xff", error=LabelError)


def test_yaml_within_the_bounds_reads_as_yaml():
    assert parse_yaml("judge: rules\nrepeats: 3\nlist: [1, {a: b}]\n") == {
        "judge": "rules",
        "repeats": 3,
        "list": [1, {"a": "b"}],
    }
    assert compose_yaml("a: 1\n").start_mark.line == 0


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a: " + "[" * 100_000 + "]" * 100_000, "deeper than"),
        ("a: &x [1]\nb: *x\n", "aliases are not accepted"),
        ("a: " + "1" * 5000, "a number of 5000 characters"),
        ("a: 1." + "1" * 60, "a number of"),
        ("a: [1\n", "malformed YAML"),
    ],
    ids=["deep", "alias", "int", "float", "syntax"],
)
def test_yaml_beyond_the_bounds_is_one_line(text: str, problem: str):
    with pytest.raises(EvalkitError, match=problem) as error:
        parse_yaml(text, path="run.yaml")
    assert "\n" not in str(error.value)
    if "number" not in problem:  # composing builds no number
        with pytest.raises(EvalkitError, match=problem):
            compose_yaml(text, path="run.yaml")


@pytest.mark.parametrize("name", ["demo", "agent-v2.1", "écho", "n" * 255])
def test_a_usable_name_passes(name: str):
    assert check_name(name) == name


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "empty"),
        ("..", "folder name"),
        (".", "folder name"),
        ("../x", "not a path"),
        ("/abs", "not a path"),
        ("a\\b", "not a path"),
        ("de\nmo", "control character"),
        ("a\x00b", "control character"),
        ("n" * 256, "longer than 255 bytes"),
        ("é" * 128, "longer than 255 bytes"),
    ],
)
def test_an_unusable_name_is_one_line(name: str, problem: str):
    with pytest.raises(EvalkitError, match=problem) as error:
        check_name(name, "run id")
    assert "\n" not in str(error.value) and len(str(error.value)) < 200


def test_a_path_with_a_part_over_255_bytes_is_refused():
    assert str(check_path("runs/demo/" + "n" * 255)) == "runs/demo/" + "n" * 255
    with pytest.raises(EvalkitError, match="longer than 255 bytes"):
        check_path("runs/" + "n" * 256 + "/x", "--runs-dir")
    with pytest.raises(EvalkitError, match="NUL"):
        check_path("a\x00b")
