"""Choosing among runs by cross-validation, checked against choices worked out by hand."""

from __future__ import annotations

from collections import Counter

import pytest

from localjudge._trust.choice import assign_folds, choose_by_cross_validation, row_outcomes
from localjudge.errors import UsageError


def outcomes(right: set[int], rows: int = 4, failed: frozenset[int] = frozenset()) -> dict[str, bool | None]:
    return {str(row): None if row in failed else row in right for row in range(1, rows + 1)}


def test_folds_are_dealt_evenly_and_fixed_by_the_seed():
    ids = [f"row-{n}" for n in range(23)]
    folds = assign_folds(ids, 5, seed=0)
    assert set(folds) == set(ids)
    assert sorted(Counter(folds.values()).values()) == [4, 4, 5, 5, 5]
    assert assign_folds(reversed(ids), 5, seed=0) == folds  # the ids' order does not matter, the seed does
    assert assign_folds(ids, 5, seed=1) != folds
    with pytest.raises(UsageError, match="a seed is 0 or more"):  # random.Random(-1) would deal as Random(1)
        assign_folds(ids, 5, seed=-1)


def test_leaving_one_out_shows_what_choosing_on_the_same_rows_hides():
    """A is right on rows 1 and 2, C on 1 and 4: both look like 0.5 on all four rows.

    Row 1 held out: A 1 on the others, C 1: a tie, the earlier A, right. Row 2: A 1, C 2: C, wrong.
    Row 3: A 2, C 2: A, wrong. Row 4: A 2, C 1: A, wrong. One right in four, held out.
    """
    choice = choose_by_cross_validation({"A": outcomes({1, 2}), "C": outcomes({1, 4})}, folds=4)
    assert choice.right_rows == {"A": 2, "C": 2} and choice.chosen == "A" and choice.tied_with == ["C"]
    assert choice.held_out_right == 1 and choice.held_out_accuracy == 0.25
    assert Counter((f.chosen, f.right) for f in choice.folds) == Counter({("A", 0): 2, ("A", 1): 1, ("C", 0): 1})
    assert {(f.chosen, f.choosing_right) for f in choice.folds} >= {("C", 2), ("A", 1)}
    assert all(f.rows == 1 and f.choosing_rows == 3 for f in choice.folds)


def test_a_run_better_everywhere_is_chosen_in_every_fold():
    good, poor = outcomes(set(range(1, 19)), rows=20), outcomes({1, 2}, rows=20)
    choice = choose_by_cross_validation({"poor": poor, "good": good}, folds=5, seed=3)
    assert [f.chosen for f in choice.folds] == ["good"] * 5
    assert choice.held_out_right == 18 and choice.chosen == "good"
    assert choice.held_out_interval == pytest.approx((0.699, 0.972), abs=1e-3)  # Wilson's, 18 of 20
    assert choice.intervals["poor"] == pytest.approx((0.028, 0.301), abs=1e-3)


def test_a_failed_row_counts_as_wrong_and_rows_some_runs_lack_are_left_out():
    """The fold holding row 4 is chosen on two rows both got right: a tie, so the earlier run, which failed there."""
    first = outcomes({1, 2, 3}, failed=frozenset({4}))
    second = {**outcomes({1, 2, 3, 4}), "5": True}  # row 5: only this run has it
    choice = choose_by_cross_validation({"first": first, "second": second}, folds=2)
    assert choice.rows == 4 and choice.left_out == 1 and choice.missing == {"first": 1, "second": 0}
    assert choice.right_rows == {"first": 3, "second": 4} and choice.failed == {"first": 1, "second": 0}
    assert choice.chosen == "second" and choice.held_out_right == 3
    as_dict = choice.as_dict()
    assert as_dict["held_out_accuracy"] == 0.75 and as_dict["accuracy"] == {"first": 0.75, "second": 1.0}
    assert sorted(row for fold in as_dict["folds"] for row in fold["row_ids"]) == ["1", "2", "3", "4"]


@pytest.mark.parametrize(
    ("runs", "folds", "message"),
    [
        ({"only": outcomes({1})}, 2, "at least two runs"),
        ({"a": outcomes({1}), "b": outcomes({2})}, 1, "at least 2 folds"),
        ({"a": outcomes({1}), "b": outcomes({2})}, 5, "only 4 of the labelled rows .* or ask for 4 folds at most"),
        ({"a": {"1": True, "2": True}, "b": {"3": True, "4": False}}, 2, "only 0 of the labelled rows .* each run$"),
    ],
)
def test_what_cannot_be_chosen_among_is_refused(runs, folds, message):
    with pytest.raises(UsageError, match=message):
        choose_by_cross_validation(runs, folds=folds)


def test_outcomes_are_read_from_records_and_labels():
    records = [
        {"id": "1", "result": {"score": True}},
        {"id": "2", "result": {"score": True}},
        {"id": "3", "error": {"type": "OutputParseError", "message": "cut"}},
        {"id": "4", "result": {"score": False}},  # no label: not a row of the choice
        {"id": "2", "result": {"score": False}},  # the last record of an id counts, as in a results file
    ]
    labels = {"1": 1, "2": 1, "3": 1, "5": 1}  # 0/1 labels read as false/true
    assert row_outcomes(records, labels) == {"1": True, "2": False, "3": None}
    pair = [{"id": "p", "result": {"score": 0.0, "metadata": {"winner": "B", "consistent": True}}}]
    assert row_outcomes(pair, {"p": "b"}) == {"p": True}
