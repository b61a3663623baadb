"""The shape a verdict must have for a resumed run to keep it."""

from __future__ import annotations

import pytest

from localjudge._datasets.record_check import kept_record_problem

GOOD = {"key": "score", "score": True, "comment": "fine", "metadata": None}


@pytest.mark.parametrize(
    "record",
    [
        {"id": "a", "result": GOOD, "judged": {"judge": "", "row": "abc"}, "seconds": 0.5},
        {"id": 7, "result": {**GOOD, "score": 0.25}},  # written before stamps; a whole-number id
        {"id": "a", "result": {"verdict": "pass", "score": "A"}},  # another schema's fields, typed as it says
        {"id": "a", "error": "anything"},  # an error is judged again anyway
        {"id": "a", "result": [GOOD, {**GOOD, "key": "other", "score": 0.5}]},  # an evaluator giving several
        {"id": "a", "result": {**GOOD, "score": None}},  # an evaluator may give no score
        {"id": "a", "result": {"key": "team", "name": "x"}},  # another schema with a field called key
    ],
)
def test_records_a_run_writes_are_kept(record):
    assert kept_record_problem(record) is None


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"id": "a", "result": {**GOOD, "score": "banana"}}, "the score of 'a' is text ('banana'), neither"),
        ({"id": "a", "result": "garbage"}, "the result of 'a' is text, not an object"),
        ({"id": "a", "result": [GOOD, "x"]}, "the result of 'a' is text, not an object"),
        ({"id": "a", "result": [{**GOOD, "score": "no"}]}, "the score of 'a' is text ('no')"),
        ({"id": True, "result": GOOD}, "its id is True, neither text nor a whole number"),
        ({"id": "a", "result": GOOD, "judged": "x"}, "the judged stamp of 'a' is text, not an object"),
        ({"id": "a", "result": GOOD, "seconds": "1"}, "the seconds of 'a' are text, not a number"),
    ],
)
def test_a_hand_edited_verdict_says_what_is_wrong(record, problem):
    assert (kept_record_problem(record) or "").startswith(problem)
