"""``batch``: score every row of a data file, here or on a Ray cluster, resumably."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Optional

import click

from .commands.settings import JudgeSettings
from .judging import note
from .options import data_options, judge_options, pair_options
from .output import flag_names, handle_errors

__all__ = ["batch", "describe_summary"]


@click.command()
@data_options
@click.option(
    "--output",
    "-o",
    "results",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Results JSONL (default: DATA with .results.jsonl). Rows already scored there are skipped.",
)
@click.option(
    "--rejudge",
    is_flag=True,
    help="Judge again the rows the results file holds from other values or other judge options "
    "(without it such a run stops before judging); their verdicts there are replaced.",
)
@click.option("--fail-fast", is_flag=True, help="Stop at the first row that fails.")
@click.option(
    "--keep-exchanges",
    is_flag=True,
    help="Keep in each record every request sent to the judge (its messages) and the model's raw answer "
    "(metadata.exchanges; a failed row's under error.exchanges), for `localjudge view` to show: larger files.",
)
@click.option(
    "--output-format",
    type=click.Choice(["jsonl", "csv"]),
    default="jsonl",
    show_default=True,
    help="csv: also write the results flattened into RESULTS with .csv (the JSONL stays, to resume from).",
)
@click.option(
    "--summary", "summary_file", type=click.Path(dir_okay=False, path_type=Path), help="Also write the summary as JSON."
)
@click.option(
    "--overwrite",
    is_flag=True,
    help="Replace an existing file at an output path (-o, the CSV, --summary) that localjudge did not write. "
    "Never the data file, another output, a symbolic link or a result cache.",
)
@click.option(
    "--cache-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The result cache (default: results.sqlite3 in the cache directory).",
)
@click.option(
    "--pairwise",
    is_flag=True,
    help="Judge pairs: each row has outputs_a and outputs_b (and inputs); asked in both orders.",
)
@pair_options
@click.option(
    "--trajectory",
    is_flag=True,
    help="Judge agents' trajectories: each row's outputs (and reference_outputs) is a list of messages, "
    "tool calls included, or an object holding them under messages.",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="ray: score on a Ray cluster ($RAY_ADDRESS, else a local one for the run); needs the ray extra.",
)
@click.option(
    "--actors",
    type=click.IntRange(min=1),
    help="--engine ray: judges in the actor pool, each with its own model loaded and -j rows in flight (default: 2).",
)
@judge_options
@handle_errors
def batch(
    data: Path,
    results: Optional[Path],
    concurrency: int,
    file_format: Optional[str],
    mapping: Optional[str],
    id_field: str,
    rejudge: bool,
    fail_fast: bool,
    keep_exchanges: bool,
    output_format: str,
    no_cache: bool,
    cache_file: Optional[Path],
    summary_file: Optional[Path],
    overwrite: bool,
    engine: str,
    actors: Optional[int],
    settings: JudgeSettings,
) -> None:
    """Score every row of a JSONL, CSV or Parquet file (inputs, outputs, reference_outputs, other variables, an id).

    With --pairwise each row is a pair (inputs, outputs_a, outputs_b), judged in both orders.
    With --trajectory each row's outputs is an agent's messages, judged as a trajectory.

    A row that cannot be judged is an error line in the results; exit 0 when
    every row is scored, 1 when any failed, 2 for misuse. Run the same
    command again after a stop: rows already in the results are skipped,
    unless their values or the judge options changed (see --rejudge).

    \b
    localjudge batch data.jsonl -j 4
    localjudge batch answers.csv --map inputs=question,outputs=answer -o scored.jsonl
    localjudge batch pairs.jsonl --pairwise --no-reasoning --summary summary.json
    localjudge batch rows.parquet --engine ray --actors 4 -j 4
    """
    from .commands.runs import plan_batch

    plan = plan_batch(
        settings,
        data,
        results=results,
        concurrency=concurrency,
        file_format=file_format,
        mapping=mapping,
        id_field=id_field,
        fail_fast=fail_fast,
        use_cache=not no_cache,
        cache_file=cache_file,
        engine=engine,
        actors=actors,
        notify=note,
        rejudge=rejudge,
        keep_exchanges=keep_exchanges,
        csv=output_format == "csv",
        summary_file=summary_file,
        overwrite=overwrite,
    )
    from .._datasets.progress import RunProgress

    try:
        with RunProgress(len(plan.rows)) as progress:
            summary = plan.run(on_record=progress.advance, option_names=flag_names(click.get_current_context()))
    except KeyboardInterrupt:
        message = f"interrupted: {progress.done} rows written to {plan.results}; run the same command again to go on"
        click.echo(f"\n{message}", err=True)
        sys.stderr.flush()
        os._exit(130)  # the file is closed; a second Ctrl-C must not wait for model calls still running
    click.echo(describe_summary(summary, plan.results), err=True)
    if output_format == "csv":
        click.echo(f"flattened into {plan.write_csv()}", err=True)
    plan.write_summary(summary)
    sys.exit(1 if summary.failed else 0)


def describe_summary(summary: Any, results: Path) -> str:
    """The end of a run in a few lines: outcomes, errors by type, scores, speed."""
    errors = ", ".join(f"{count} {kind}" for kind, count in summary.errors.most_common())
    lines = [
        f"{summary.total} rows: {summary.scored} scored"
        + (f" ({summary.cached} judge calls answered from the result cache)" if summary.cached else "")
        + f", {summary.skipped} already in {results}, {summary.failed} failed"
        + (f" ({errors})" if errors else "")
    ]
    if summary.scores:
        scores = ", ".join(f"{score} {count}" for score, count in summary.scores.most_common())
        mean = f"; mean {summary.mean_score:.3f}" if summary.mean_score is not None else ""
        kept = f" (with the {summary.skipped} kept)" if summary.skipped else ""
        lines.append(f"scores{kept}: {scores}{mean}")
    if summary.winners:
        lines.append("winners: " + ", ".join(f"{winner} {count}" for winner, count in summary.winners.most_common()))
    if summary.addressing:
        lines.append(f"{summary.addressing} answers addressed the judge (metadata.addresses_judge)")
    lines.append(
        f"{summary.seconds:.1f} s, {summary.rows_per_second:.2f} rows/s; {summary.model_calls} model calls, "
        f"{summary.prompt_tokens} prompt + {summary.completion_tokens} completion tokens"
    )
    if summary.stopped_early:
        lines.append("stopped at the first failure (--fail-fast)")
    return "\n".join(lines)
