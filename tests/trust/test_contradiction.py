"""A comment that states the opposite of its verdict is found; one that states none contradicts nothing."""

from __future__ import annotations

import pytest

from localjudge._trust.contradiction import contradicts, stated_verdict


@pytest.mark.parametrize(
    ("comment", "stated"),
    [
        ("The answer '5' is correct because 2 + 2 equals 5. Thus, the score should be: 1.", True),
        ("It names the wrong city. Thus, the score should be: false.", False),
        ("Thus, the score should be: **true**", True),
        ("The score should be: 0", False),
        ("The answer matches the reference. So the answer is correct.", True),
        ("The reference says Paris, but the answer is not correct.", False),
        ("The response is wrong about the date.", False),
        ("It matches the reference exactly.", None),
        ("", None),
    ],
)
def test_the_verdict_a_comment_states_outright(comment, stated):
    assert stated_verdict(comment, boolean=True) == stated


def test_the_last_closing_sentence_wins_and_numbers_are_read_for_scores():
    assert stated_verdict("score should be: 0. On reflection the score should be: 1", boolean=True) is True
    assert stated_verdict("Thus, the score should be: 0.5.", boolean=False) == 0.5
    assert stated_verdict("The answer is correct.", boolean=False) is None  # words say nothing of a number


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"score": False, "comment": "2 + 2 equals 5. Thus, the score should be: true."}, True),
        ({"score": True, "comment": "2 + 2 equals 4. Thus, the score should be: true."}, False),
        ({"score": 0.5, "comment": "Half of it. Thus, the score should be: 1."}, True),
        ({"score": 1.0, "comment": "All of it. Thus, the score should be: 1."}, False),
        ({"score": False, "comment": None}, False),
        ({"score": False, "comment": "A different result from the judge's own answer: 4"}, False),
        ({"score": {"odd": 1}, "comment": "score should be: 1"}, False),
    ],
)
def test_contradicts_compares_the_stated_verdict_with_the_score(result, expected):
    assert contradicts(result) is expected
