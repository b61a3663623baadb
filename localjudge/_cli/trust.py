"""``agreement`` and ``check-judge``: how far a judge can be trusted, against human labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import click

from ..errors import UsageError
from .commands.settings import JudgeSettings
from .judging import note
from .options import (
    CALIBRATED,
    CHECKLIST,
    CONCURRENCY,
    FILE,
    LIKELIHOOD,
    NO_CACHE,
    ON_DISAGREEMENT,
    POINTWISE,
    REASONING,
    SCREEN,
    SELF_REFERENCE,
    WAY,
    labels_options,
    model_options,
)
from .output import handle_errors
from .trust_text import describe_agreement, describe_check, describe_comparison, describe_way, format_interval

if TYPE_CHECKING:
    from .._trust.agreement import AgreementReport

__all__ = [
    "agreement",
    "check_judge",
    "describe_agreement",
    "describe_check",
    "describe_comparison",
    "describe_way",
    "format_interval",
    "load_labels",
    "warn_of_labels_never_verdicts",
]


@click.command()
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@labels_options
@click.option("--bins", type=click.IntRange(min=1, max=100), default=10, show_default=True, help="Calibration bins.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False, path_type=Path), help="Draw the report as a PNG.")
@click.option(
    "--against",
    "other_results",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Another run's results on the same rows: whether the two differ beyond chance (McNemar's exact test).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--overwrite", is_flag=True, help="Replace an existing file at --plot that localjudge did not draw.")
@handle_errors
def agreement(
    results: Path,
    labels_file: Path,
    label_field: str,
    id_field: str,
    bins: int,
    plot_file: Optional[Path],
    other_results: Optional[Path],
    as_json: bool,
    overwrite: bool,
) -> None:
    """How well a run's verdicts agree with human labels: accuracy, kappa, confusion, calibration, position bias.

    \b
    localjudge agreement data.results.jsonl --labels data.jsonl
    localjudge agreement data.results.jsonl --labels data.jsonl --label-field human --plot agreement.png
    localjudge agreement pairs.results.jsonl --labels pairs.jsonl --json
    localjudge agreement new.results.jsonl --labels data.jsonl --against old.results.jsonl
    """
    from .._datasets.results_file import read_results
    from .._trust.agreement import agreement as measure
    from .._trust.agreement import compare_runs

    if plot_file is not None:
        from .._output_plan import Input, Output, check_outputs
        from .._trust.plot import check_matplotlib, is_plot

        check_matplotlib()  # before any output: a missing package is the whole command's error
        given = [Input("the results file", results), Input("{labels_file}", labels_file)]
        if other_results is not None:
            given.append(Input("{other_results}", other_results))
        check_outputs(given, [Output("{plot_file}", plot_file, "a plot", is_plot)], overwrite=overwrite)
    labels = load_labels(labels_file, label_field, id_field)
    report = measure(read_results(results), labels, bins=bins)
    if not report.compared:
        raise UsageError(
            f"no verdict in {results} has a label in {labels_file} ({report.without_label} verdicts, "
            f"{report.without_verdict} labelled rows): do their ids match? --id-field names the labels' id column"
        )
    warn_of_labels_never_verdicts(report, results)
    comparison = None
    if other_results is not None:
        comparison = compare_runs(report, measure(read_results(other_results), labels, bins=bins))
    if as_json:
        found = report.as_dict()
        if comparison is not None:
            found["against"] = {"results": str(other_results), **comparison.as_dict()}
        click.echo(json.dumps(found, indent=2))
    else:
        click.echo(describe_agreement(report))
        if comparison is not None:
            click.echo(describe_comparison(comparison, against=str(other_results)))
    if plot_file is not None:
        from .._trust.plot import plot_agreement

        click.echo(f"drawn in {plot_agreement(report, plot_file, title=results.name)}", err=True)


def _check_outputs(
    names: list[str],
    settings: JudgeSettings,
    json_file: Optional[Path],
    results_dir: Optional[Path],
    plot_dir: Optional[Path],
    overwrite: bool,
) -> None:
    """check-judge's files, refused now where one would overwrite what was given or a file not ours."""
    from .._datasets.judge_file import is_judge_file, judge_file_path
    from .._datasets.results_file import is_results_file
    from .._output_plan import Output, check_outputs
    from .._trust.plot import is_plot
    from .commands.runs import judge_inputs

    outputs = [] if json_file is None else [Output("{json_file}", json_file, "a check's report", _is_check_report)]
    for name in names:
        if results_dir is not None:
            records = results_dir / f"{name}.results.jsonl"
            outputs.append(Output("{results_dir}", records, "a results file", is_results_file))
            outputs.append(Output("{results_dir}", judge_file_path(records), "a judge's description", is_judge_file))
        if plot_dir is not None:
            outputs.append(Output("{plot_dir}", plot_dir / f"{name}.png", "a plot", is_plot))
    check_outputs(judge_inputs(settings), outputs, overwrite=overwrite)


def _is_check_report(path: Path) -> bool:
    from .. import _bounded_json as bounded_json

    document = bounded_json.loads(Path(path).read_text(encoding="utf-8"))
    return isinstance(document, dict) and {"judge", "split", "sets"} <= set(document)


def load_labels(labels_file: Path, label_field: str, id_field: str) -> dict[str, Any]:
    """Each row's label by id; rows that cannot be read are counted on stderr, not the command's error."""
    from .._trust.agreement import read_labels

    labels, unreadable = read_labels(labels_file, label_field=label_field, id_field=id_field)
    if unreadable:
        click.echo(f"{len(unreadable)} label rows could not be read; the first: {unreadable[0]}", err=True)
    return labels


def warn_of_labels_never_verdicts(report: AgreementReport, results: Path) -> None:
    """Labels that no verdict ever equals mean a wrong column or other words, not a judge that is always wrong."""
    from .._trust.agreement import PAIR_VERDICTS

    labels, verdicts = set(report.label_classes), set(report.verdict_classes)
    if report.compared and not labels & verdicts and not (labels | verdicts) <= PAIR_VERDICTS:  # all ties: a verdict
        click.echo(
            f"warning: in {results}, no label ({', '.join(sorted(labels))}) is ever a verdict "
            f"({', '.join(sorted(verdicts))}); is --label-field the right column?",
            err=True,
        )


@click.command("check-judge")
@click.option(
    "--set",
    "set_names",
    multiple=True,
    metavar="NAME",
    help="A labelled set to judge (repeatable; default: every set): answers, answers-reference, graded, "
    "llmbar-natural, adversarial, llmbar-adversarial, conciseness, hallucination, answer-relevance, groundedness, "
    "retrieval-relevance, helpfulness.",
)
@click.option(
    "--split",
    type=click.Choice(["dev", "test", "all"]),
    default="all",
    show_default=True,
    help="Which rows: choose a way of judging on dev, report it on test.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N rows of each set.")
@CONCURRENCY
@REASONING
@click.option("--system", help="System message placed before each prompt.")
@WAY
@ON_DISAGREEMENT
@POINTWISE
@LIKELIHOOD
@CALIBRATED
@SELF_REFERENCE
@SCREEN
@CHECKLIST
@click.option(
    "--few-shot",
    type=FILE,
    help="JSONL file of judged examples shown to the judge (with one --set, as its rows are shaped: "
    "inputs, outputs, score; or inputs, outputs_a, outputs_b, winner).",
)
@click.option("--few-shot-first", is_flag=True, help="Put the examples before the prompt instead of after it.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), help="Write the report as JSON.")
@click.option(
    "--results",
    "results_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write each set's records (verdict or error, and the label) here, as SET.results.jsonl, and its judge "
    "(model, checksum, way, prompt, schema, timing) as SET.results.judge.json.",
)
@click.option(
    "--plot", "plot_dir", type=click.Path(file_okay=False, path_type=Path), help="Draw each set's report as a PNG here."
)
@NO_CACHE
@click.option(
    "--overwrite",
    is_flag=True,
    help="Replace existing files at --json, --results and --plot that localjudge did not write.",
)
@model_options
@handle_errors
def check_judge(
    set_names: tuple[str, ...],
    split: str,
    limit: Optional[int],
    concurrency: int,
    json_file: Optional[Path],
    results_dir: Optional[Path],
    plot_dir: Optional[Path],
    no_cache: bool,
    overwrite: bool,
    settings: JudgeSettings,
) -> None:
    """Judge labelled sets shipped with localjudge and print how far this judge can be trusted.

    For each set: accuracy and Cohen's kappa against the labels, calibration
    error (ECE), the accuracy of the verdict the probabilities favour,
    position consistency and ties for pairs, failed rows and speed. Any judge
    spec works: a local model, a server, a fallback chain, an ensemble.

    \b
    localjudge check-judge                               # the default judge, every set
    localjudge check-judge -m tiny --set answers --limit 10
    localjudge check-judge --split test --no-reasoning --json report.json --plot plots/
    localjudge check-judge --set answers --split dev --few-shot my_examples.jsonl
    """
    from .._datasets.progress import RunProgress
    from .commands.check import CHECK_SETS, find_set, load_set
    from .commands.check import check_judge as run_check

    sets = [find_set(name) for name in set_names or tuple(CHECK_SETS)]  # every name checked before judging
    _check_outputs([check_set.name for check_set in sets], settings, json_file, results_dir, plot_dir, overwrite)
    if settings.few_shot is not None and len(sets) != 1:
        raise click.UsageError("--few-shot examples fit one set's rows: give exactly one --set with them")
    if plot_dir is not None:
        from .._trust.plot import check_matplotlib

        check_matplotlib()
    reports = []
    for check_set in sets:
        with RunProgress(len(load_set(check_set, split, limit))) as progress:
            reports += run_check(
                settings,
                [check_set.name],
                split=split,
                limit=limit,
                concurrency=concurrency,
                use_cache=not no_cache,
                on_record=progress.advance,
                notify=note,
            )
    judge = ",".join((settings.model_spec, *settings.ensemble_specs, *settings.fallbacks))
    click.echo(describe_check(reports, judge=judge, split=split, limit=limit))
    if json_file is not None:
        document = {"judge": judge, "split": split, "limit": limit, "sets": [r.as_dict() for r in reports]}
        json_file.parent.mkdir(parents=True, exist_ok=True)  # a run's figures are not lost to a missing folder
        json_file.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        click.echo(f"written to {json_file}", err=True)
    if results_dir is not None:
        from .._datasets.judge_file import record_judge

        results_dir.mkdir(parents=True, exist_ok=True)
        for report in reports:
            lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in report.records)
            written = results_dir / f"{report.name}.results.jsonl"
            written.write_text(lines, encoding="utf-8")
            judge_of = report.judge
            record_judge(written, judge_of["fingerprint"], judge_of["described"], judge_of["run"], alone=True)
        click.echo(f"records in {results_dir}, each set's judge described beside them (.judge.json)", err=True)
    if plot_dir is not None:
        from .._trust.plot import plot_agreement

        for report in reports:
            drawn = plot_agreement(report.agreement, plot_dir / f"{report.name}.png", title=f"{judge}: {report.name}")
            click.echo(f"drawn in {drawn}", err=True)
