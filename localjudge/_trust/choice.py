"""Choosing among ways of judging, and what to expect of the choice: nested cross-validation.

Try five prompts on 100 labelled rows and keep the best, and its accuracy on
those rows flatters it: some of its lead is luck on these very rows. The
honest figure is the accuracy of the choosing itself on rows it never saw.
The rows are dealt into folds; each fold is judged by the way that got the
most rows right on the other folds, and the held-out figure counts the rows
so judged. The way to keep from then on is the one that did best on every
row.

Pure functions over each run's outcomes (row id -> right, wrong, or None
where the run failed on the row): :func:`row_outcomes` reads them from
results records and labels.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .._datasets.results_file import latest_records
from ..errors import UsageError
from .agreement import Interval, accuracy_interval, agreement

__all__ = ["CrossValidatedChoice", "FoldChoice", "assign_folds", "choose_by_cross_validation", "row_outcomes"]

#: a run's outcome on one row: right, wrong, or None where it failed (a way that fails is no better for it)
Outcome = bool | None


@dataclass(frozen=True)
class FoldChoice:
    """One fold (numbered from 1, as printed): the run chosen without it, so that its rows are held out."""

    fold: int
    rows: int
    chosen: str
    choosing_rows: int  # the other folds' rows, which chose
    choosing_right: int  # of those, the chosen run's right ones
    right: int  # the chosen run's right rows in this fold: its part of the held-out figure
    row_ids: list[str] = field(repr=False)  # so that a fold can be checked without dealing again


@dataclass(frozen=True)
class CrossValidatedChoice:
    """Several runs on the same labelled rows: each run's figures, the choice fold by fold, the held-out figure."""

    runs: list[str]
    rows: int  # the labelled rows every run has a record for: runs are compared on the same rows only
    left_out: int  # labelled rows only some runs have a record for
    missing: dict[str, int]  # of those, how many each run lacks
    right_rows: dict[str, int]  # each run's right rows; a failed row is not right
    intervals: dict[str, Interval | None]  # 95%, of each run's accuracy (Wilson's)
    failed: dict[str, int]
    folds: list[FoldChoice]
    seed: int
    held_out_right: int
    held_out_interval: Interval | None
    chosen: str  # the run with the most right rows on every row: the one to keep
    tied_with: list[str]  # the runs with as many right rows as the chosen one, listed after it

    @property
    def held_out_accuracy(self) -> float:
        return self.held_out_right / self.rows

    @property
    def accuracy(self) -> dict[str, float]:
        return {name: right / self.rows for name, right in self.right_rows.items()}

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "accuracy": self.accuracy, "held_out_accuracy": self.held_out_accuracy}


def row_outcomes(records: Iterable[Mapping[str, Any]], labels: Mapping[Any, Any]) -> dict[str, Outcome]:
    """Each labelled row a run has a record for: whether its verdict was right, None where the run failed on it.

    Rows are read as :func:`~localjudge._trust.agreement.agreement` reads them
    (the last record of an id; 0/1 labels against true/false verdicts), so a
    choice and an agreement report never count one row two ways.
    """
    kept = latest_records(records)
    right = agreement(kept, labels, intervals=False).right
    labelled = {str(row_id) for row_id in labels}
    recorded = {str(record.get("id")) for record in kept} & labelled
    return {row_id: right.get(row_id) for row_id in sorted(recorded)}


def assign_folds(row_ids: Iterable[str], folds: int, seed: int = 0) -> dict[str, int]:
    """Each row's fold, 0 to ``folds - 1``: the ids sorted (so a file's order does not change the deal), shuffled
    by ``seed``, then dealt out in turn (so folds differ in size by one at most)."""
    if seed < 0:
        raise UsageError(f"a seed is 0 or more, got {seed}")  # random.Random(-5) deals as Random(5) does
    ordered = sorted(row_ids)
    random.Random(seed).shuffle(ordered)
    return {row_id: position % folds for position, row_id in enumerate(ordered)}


def choose_by_cross_validation(
    runs: Mapping[str, Mapping[str, Outcome]], *, folds: int = 5, seed: int = 0
) -> CrossValidatedChoice:
    """Which run to keep, and the accuracy to expect of choosing so, on rows the choice never saw.

    ``runs`` maps each run's name to its outcomes (:func:`row_outcomes`), in
    order of preference: where two runs got as many rows right, the earlier
    is chosen, so list the simplest or cheapest way first. Only the rows
    every run has a record for are used; the rest are counted as left out.
    """
    names = list(runs)
    if len(names) < 2:
        raise UsageError(f"choosing needs at least two runs on the same rows, got {len(names)}")
    if folds < 2:
        raise UsageError(f"cross-validation needs at least 2 folds, got {folds}")
    recorded = {name: set(outcomes) for name, outcomes in runs.items()}
    shared = set.intersection(*recorded.values())
    if len(shared) < folds:
        fewer = f", or ask for {len(shared)} folds at most" if len(shared) >= 2 else ""
        raise UsageError(
            f"only {len(shared)} of the labelled rows have a record in every run, too few for {folds} folds: "
            f"judge the same labelled rows in each run{fewer}"
        )
    fold_of = assign_folds(shared, folds, seed)
    members: list[list[str]] = [[] for _ in range(folds)]
    for row_id in sorted(shared):
        members[fold_of[row_id]].append(row_id)
    right_in = {name: [sum(runs[name][row_id] is True for row_id in member) for member in members] for name in names}
    choices = []
    for fold, member in enumerate(members):
        others = {name: sum(right_in[name]) - right_in[name][fold] for name in names}
        chosen = _best(others, names)
        choices.append(
            FoldChoice(
                fold + 1, len(member), chosen, len(shared) - len(member), others[chosen], right_in[chosen][fold], member
            )
        )
    held_out = sum(choice.right for choice in choices)
    right = {name: sum(right_in[name]) for name in names}
    everywhere = set.union(*recorded.values())
    chosen = _best(right, names)
    return CrossValidatedChoice(
        runs=names,
        rows=len(shared),
        left_out=len(everywhere - shared),
        missing={name: len(everywhere - recorded[name]) for name in names},
        right_rows=right,
        intervals={name: accuracy_interval(right[name], len(shared)) for name in names},
        failed={name: sum(runs[name][row_id] is None for row_id in shared) for name in names},
        folds=choices,
        seed=seed,
        held_out_right=held_out,
        held_out_interval=accuracy_interval(held_out, len(shared)),
        chosen=chosen,
        tied_with=[name for name in names if name != chosen and right[name] == right[chosen]],
    )


def _best(right: Mapping[str, int], names: Sequence[str]) -> str:
    """The run with the most right rows; of equals the earliest, which the caller listed as the simplest."""
    return max(names, key=right.__getitem__)  # max keeps the first of equals
