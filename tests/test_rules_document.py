"""Rules judge: the judge's view of a document, and the quotes it takes from it
(evalkit/judges/rules/document.py)."""

from __future__ import annotations

from tests.rules_cases import judge, one, pln, rich_range, rich_submission

# --------------------------------------------------------------------------- quotes and grounding


def test_every_quote_on_a_rich_sample_passes_grounding():
    verdicts = judge(rich_range(), rich_submission())  # judge() checks every quote
    assert verdicts["CHK-01"].detection["discovery"].quotes[0] == (
        "kworkerd (PID 4127) runs from `/var/tmp/.cache/kworkerd`; it came in after an"
    )
    assert pln(verdicts["CHK-01"], "correctness") == 1
    assert pln(verdicts["CHK-01"], "completeness") == 1
    (flag,) = verdicts["CHK-02"].penalties
    assert flag.rule == "dangerous_advice" and flag.quote == "systemctl stop auditd"


def test_a_line_with_dots_is_quoted_as_written():
    verdicts = judge(rich_range(), rich_submission())  # grounding finds "..." literally
    assert verdicts["CHK-03"].detection["discovery"].quotes == (
        "at 03:18 the service kworkerd started... ok",
    )
    report = "# R\n\n- hash 3f9a...e1c2 of kworkerd seen at /var/tmp/x\n"
    claim = one(report).detection["evidence"]
    assert claim.quotes == ("hash 3f9a...e1c2 of kworkerd seen at /var/tmp/x",)


def test_a_long_line_is_trimmed_to_300_characters_around_the_match():
    long_line = "a " * 300 + "kworkerd" + " b" * 300
    claim = one(f"# R\n\n{long_line}\n").detection["discovery"]
    (quote,) = claim.quotes
    assert len(quote) <= 300 and "kworkerd" in quote


def test_quotes_in_a_list_item_with_a_task_box_are_clean():
    report = "# R\n\n1. [x] `kworkerd.service` enabled\n"
    verdict = one(report, indicators=("kworkerd.service",))
    assert verdict.detection["discovery"].quotes == ("`kworkerd.service` enabled",)
