"""``choose``: which of several runs on the same labelled rows to keep, and what to expect of it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import click

from ..errors import UsageError
from .options import labels_options
from .output import handle_errors
from .trust import format_interval, load_labels, warn_of_labels_never_verdicts

if TYPE_CHECKING:
    from .._trust.agreement import AgreementReport
    from .._trust.choice import CrossValidatedChoice

__all__ = ["choose", "describe_choice"]


@click.command()
@click.argument("runs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@labels_options
@click.option(
    "--folds", type=click.IntRange(min=2, max=100), default=5, show_default=True, help="Cross-validation folds."
)
@click.option(
    "--seed", type=click.IntRange(min=0), default=0, show_default=True, help="How the rows are dealt into folds."
)
@click.option("--json", "as_json", is_flag=True, help="Print the choice as JSON.")
@handle_errors
def choose(
    runs: tuple[Path, ...], labels_file: Path, label_field: str, id_field: str, folds: int, seed: int, as_json: bool
) -> None:
    """Which of several runs on the same labelled rows to keep, and the accuracy to expect of it.

    Each RUN is a results file of one way of judging (another prompt, model
    or option) on the same labelled rows. The best run's accuracy on those
    rows flatters it: it was chosen on them. So the rows are dealt into
    folds, each fold is judged by the run that did best on the other folds,
    and the held-out accuracy counts only rows the choosing never saw.

    A failed row counts as wrong; rows that only some runs have are left
    out, and counted; ids are compared as text. Of two runs as good, the one
    listed first is kept, so list the simplest first.

    \b
    localjudge choose plain.results.jsonl strict.results.jsonl --labels data.jsonl
    localjudge choose a/llmbar-natural.results.jsonl b/llmbar-natural.results.jsonl \\
        --labels a/llmbar-natural.results.jsonl --folds 10 --json
    """
    from .._datasets.results_file import read_results
    from .._trust.agreement import agreement
    from .._trust.choice import choose_by_cross_validation, row_outcomes

    if len(runs) < 2:
        raise UsageError("choosing needs two or more results files of the same labelled rows")
    seen: dict[Path, Path] = {}
    for run in runs:
        if run.resolve() in seen:
            raise UsageError(f"{run} is the file {seen[run.resolve()]} again; give each run once")
        seen[run.resolve()] = run
    labels = load_labels(labels_file, label_field, id_field)
    outcomes = {}
    for run in runs:
        records = read_results(run)
        outcomes[str(run)] = found = row_outcomes(records, labels)
        if not found:
            raise UsageError(
                f"no record in {run} has a label in {labels_file}: do their ids match? "
                "--id-field names the labels' id column"
            )
        report = agreement(records, labels, intervals=False)
        warn_of_labels_never_verdicts(report, run)
        note_unmatched(run, report, unrecorded=len(labels) - len(found))
    choice = choose_by_cross_validation(outcomes, folds=folds, seed=seed)
    if as_json:
        click.echo(json.dumps(choice.as_dict(), indent=2))
    else:
        click.echo(describe_choice(choice, labels_file=labels_file))


def note_unmatched(run: Path, report: AgreementReport, *, unrecorded: int) -> None:
    """Rows that take no part, said once per run: a mismatch of ids is otherwise a silently smaller choice."""
    if report.without_label:
        click.echo(f"{run}: {_rows(report.without_label, 'record')} without a label, not used", err=True)
    if unrecorded:
        click.echo(f"{run}: no record for {_rows(unrecorded, 'labelled row')}, left out of the choice", err=True)


def describe_choice(choice: CrossValidatedChoice, *, labels_file: Optional[Path] = None) -> str:
    """The choice as a person reads it: each run, the folds, the held-out figure, and which run to keep."""

    def share(right: int, rows: int) -> str:
        return f"{right / rows:.2f} ({right}/{rows})"

    name_width = max(len("run"), *(len(name) for name in choice.runs))
    share_width = len(share(choice.rows, choice.rows))
    lines = [f"{len(choice.runs)} runs on the same labelled rows: {choice.rows}"]
    if choice.left_out:
        lacking = ", ".join(f"{name} lacks {count}" for name, count in choice.missing.items() if count)
        lines[0] += f" (left out: {_rows(choice.left_out, 'row')} that only some runs have; {lacking})"
    lines.append(f"{'run'.ljust(name_width)}  {'accuracy'.rjust(share_width)}  95% interval  failed")
    for name in choice.runs:
        lines.append(
            f"{name.ljust(name_width)}  {share(choice.right_rows[name], choice.rows).rjust(share_width)}  "
            f"{format_interval(choice.intervals[name]):>12}  {choice.failed[name]:6d}"
        )
    lines.append(
        f"{len(choice.folds)}-fold cross-validation (seed {choice.seed}): "
        "each fold judged by the run with the most right rows on the other folds"
    )
    others, this = "on the other folds", "on this fold"
    others_width, this_width = max(len(others), share_width), max(len(this), share_width)
    lines.append(f"fold  {'chosen'.ljust(name_width)}  {others.rjust(others_width)}  {this.rjust(this_width)}")
    for fold in choice.folds:
        lines.append(
            f"{fold.fold:4d}  {fold.chosen.ljust(name_width)}  "
            f"{share(fold.choosing_right, fold.choosing_rows).rjust(others_width)}  "
            f"{share(fold.right, fold.rows).rjust(this_width)}"
        )
    lines.append(
        f"held out: {share(choice.held_out_right, choice.rows)}, 95% interval {format_interval(choice.held_out_interval)}: "
        "the accuracy of choosing this way, on rows the choosing never saw"
    )
    keep = (
        f"keep {choice.chosen}: the most right rows on all {choice.rows} "
        f"({choice.accuracy[choice.chosen]:.2f} on the rows it was chosen on; expect the held-out figure on new rows)"
    )
    if choice.tied_with:
        keep += f"; tied with {', '.join(choice.tied_with)}, kept as listed first"
    lines.append(keep)
    chosen_in_folds = Counter(fold.chosen for fold in choice.folds)
    if len(chosen_in_folds) > 1:
        rival = next(name for name, _ in chosen_in_folds.most_common() if name != choice.chosen)
        labels = labels_file or "LABELS"
        lines.append(
            f"the folds chose {len(chosen_in_folds)} different runs, so these rows do not single one out; "
            f"`localjudge agreement {choice.chosen} --labels {labels} --against {rival}` tests two of them "
            "(on the rows both judged)"
        )
    return "\n".join(lines)


def _rows(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
