"""``agreement`` and ``check-judge``: how far a judge can be trusted, against human labels."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import click

from ..commands.settings import JudgeSettings
from ..errors import UsageError
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

if TYPE_CHECKING:
    from ..commands.check import SetReport
    from ..trust.agreement import AgreementReport, PairedComparison

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
    from ..datasets.results_file import read_results
    from ..trust.agreement import agreement as measure
    from ..trust.agreement import compare_runs

    if plot_file is not None:
        from ..output_plan import Input, Output, check_outputs
        from ..trust.plot import check_matplotlib, is_plot

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
        from ..trust.plot import plot_agreement

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
    from ..commands.runs import judge_inputs
    from ..datasets.judge_file import is_judge_file, judge_file_path
    from ..datasets.results_file import is_results_file
    from ..output_plan import Output, check_outputs
    from ..trust.plot import is_plot

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
    from .. import bounded_json

    document = bounded_json.loads(Path(path).read_text(encoding="utf-8"))
    return isinstance(document, dict) and {"judge", "split", "sets"} <= set(document)


def format_interval(interval: Optional[tuple[float, float]]) -> str:
    """A 95% interval in a table's column: two places, or a dash where there is none."""
    return "-" if interval is None else f"{interval[0]:.2f}-{interval[1]:.2f}"


def load_labels(labels_file: Path, label_field: str, id_field: str) -> dict[str, Any]:
    """Each row's label by id; rows that cannot be read are counted on stderr, not the command's error."""
    from ..trust.agreement import read_labels

    labels, unreadable = read_labels(labels_file, label_field=label_field, id_field=id_field)
    if unreadable:
        click.echo(f"{len(unreadable)} label rows could not be read; the first: {unreadable[0]}", err=True)
    return labels


def warn_of_labels_never_verdicts(report: AgreementReport, results: Path) -> None:
    """Labels that no verdict ever equals mean a wrong column or other words, not a judge that is always wrong."""
    from ..trust.agreement import PAIR_VERDICTS

    labels, verdicts = set(report.label_classes), set(report.verdict_classes)
    if report.compared and not labels & verdicts and not (labels | verdicts) <= PAIR_VERDICTS:  # all ties: a verdict
        click.echo(
            f"warning: in {results}, no label ({', '.join(sorted(labels))}) is ever a verdict "
            f"({', '.join(sorted(verdicts))}); is --label-field the right column?",
            err=True,
        )


def describe_agreement(report: AgreementReport) -> str:
    """The report as a few aligned lines."""

    def number(value: Optional[float]) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    def within(interval: Optional[tuple[float, float]]) -> str:
        return "" if interval is None else f" (95% interval {interval[0]:.3f}-{interval[1]:.3f})"

    lines = [
        f"{report.compared} rows compared ({report.without_label} verdicts without a label, "
        f"{report.without_verdict} labelled rows without a verdict)",
        f"accuracy {number(report.accuracy)}{within(report.accuracy_interval)}   "
        f"Cohen's kappa {number(report.kappa)}{within(report.kappa_interval)}",
    ]
    if report.classes:
        width = max(7, *(len(c) + 2 for c in report.classes))
        lines.append("confusion (rows: label, columns: verdict)")
        lines.append(" " * width + "".join(c.rjust(width) for c in report.classes))
        for name, row in zip(report.classes, report.confusion, strict=True):
            lines.append(name.rjust(width) + "".join(str(n).rjust(width) for n in row))
    if report.with_probabilities:
        lines.append(
            f"calibration: ECE {number(report.ece)} over {report.with_probabilities} verdicts with probabilities"
        )
        lines.append("  confidence   verdicts   mean confidence   share right")
        for b in report.reliability:
            if b.count:
                lines.append(
                    f"  {b.low:.2f}-{b.high:.2f}  {b.count:9d}   {b.mean_confidence:15.3f}   {b.accuracy:11.3f}"
                )
    if report.position_consistency is not None:
        lines.append(
            f"pairwise: position consistency {number(report.position_consistency)}, "
            f"flip rate {number(report.flip_rate)}"
        )
    return "\n".join(lines)


def describe_comparison(comparison: PairedComparison, *, against: str) -> str:
    """This run against another on the same labelled rows: the rows that tell them apart, and whether beyond chance."""
    left_out = ""
    if comparison.first_unmatched or comparison.second_unmatched:
        left_out = (
            f" ({comparison.first_unmatched} rows with a verdict only in this run and "
            f"{comparison.second_unmatched} only in the other are left out)"
        )
    if comparison.p_value is None:
        return f"against {against}: no labelled row has a verdict in both runs, so they cannot be compared{left_out}"
    if comparison.p_value < 0.05:
        verdict = "a split this lopsided is unlikely to be chance"
    else:
        verdict = "the rows do not tell the two runs apart"
    return (
        f"against {against}, on the {comparison.rows} rows both runs judged{left_out}: "
        f"{comparison.first_right} right in this run, {comparison.second_right} in the other; "
        f"{comparison.first_only} right only in this run, {comparison.second_only} only in the other; "
        f"McNemar's exact p {comparison.p_value:.3f} ({verdict})"
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
    from ..commands.check import CHECK_SETS, find_set, load_set
    from ..commands.check import check_judge as run_check
    from ..datasets.progress import RunProgress

    sets = [find_set(name) for name in set_names or tuple(CHECK_SETS)]  # every name checked before judging
    _check_outputs([check_set.name for check_set in sets], settings, json_file, results_dir, plot_dir, overwrite)
    if settings.few_shot is not None and len(sets) != 1:
        raise click.UsageError("--few-shot examples fit one set's rows: give exactly one --set with them")
    if plot_dir is not None:
        from ..trust.plot import check_matplotlib

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
        from ..datasets.judge_file import record_judge

        results_dir.mkdir(parents=True, exist_ok=True)
        for report in reports:
            lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in report.records)
            written = results_dir / f"{report.name}.results.jsonl"
            written.write_text(lines, encoding="utf-8")
            judge_of = report.judge
            record_judge(written, judge_of["fingerprint"], judge_of["described"], judge_of["run"], alone=True)
        click.echo(f"records in {results_dir}, each set's judge described beside them (.judge.json)", err=True)
    if plot_dir is not None:
        from ..trust.plot import plot_agreement

        for report in reports:
            drawn = plot_agreement(report.agreement, plot_dir / f"{report.name}.png", title=f"{judge}: {report.name}")
            click.echo(f"drawn in {drawn}", err=True)


def describe_way(way: Mapping[str, Any]) -> str:
    """How a set was judged (:func:`~localjudge.commands.check.way_record`) in a few words."""
    parts = []
    if way.get("name"):
        parts.append(f"{way['name']} ({'the default' if way.get('default') else 'as asked'})")
    if way.get("pairs") != "likelihood":
        parts.append("with reasoning" if way.get("reasoning") else "verdict only")
    if way.get("described"):
        parts.append(str(way["described"]))
    if way.get("few_shot"):
        placed = "before" if way.get("few_shot_first") else "after"
        parts.append(f"examples from {way['few_shot']}, {placed} the prompt")
    if way.get("system"):
        parts.append("a system message")
    return ", ".join(parts)


def describe_check(reports: list[SetReport], *, judge: str, split: str, limit: Optional[int] = None) -> str:
    """One aligned line per set."""

    def number(value: Optional[float]) -> str:
        return "-" if value is None else f"{value:.2f}"

    header = (
        "set",
        "rows",
        "failed",
        "accuracy",
        "95% interval",
        "kappa",
        "ECE",
        "by prob.",
        "consistent",
        "ties",
        "contradicting",
        "s/row",
        "cached",
    )
    table = [header]
    for r in reports:
        pairwise = r.agreement.position_consistency is not None
        table.append(
            (
                r.name,
                str(r.rows),
                str(r.failed),
                number(r.agreement.accuracy),
                format_interval(r.agreement.accuracy_interval),
                number(r.agreement.kappa),
                number(r.agreement.ece),
                number(r.accuracy_by_probability),
                number(r.agreement.position_consistency),
                str(r.ties) if pairwise else "-",
                str(r.contradictions),
                f"{r.seconds_per_row:.2f}",
                str(r.cached),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [f"judge {judge}, {split} rows" + (f", the first {limit} of each set" if limit is not None else "")]
    ways: dict[str, list[str]] = {}
    for r in reports:
        ways.setdefault(describe_way(r.way), []).append(r.name)
    lines += [f"{', '.join(names)}: {way}" for way, names in ways.items()]
    for row in table:
        lines.append(
            "  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))])
        )
    legend = [
        "95% interval: where the accuracy on rows like these lies, given how few were judged (Wilson's)",
        "by prob.: accuracy of the value the judge's probabilities favour (a pair: both orders averaged)",
    ]
    if any(r.agreement.position_consistency is not None for r in reports):  # only pairs asked in both orders have these
        legend.append(
            "consistent: pairs whose two orders agreed; ties: pairs whose orders disagreed (a tie unless "
            "--on-disagreement probabilities decided them)"
        )
    legend.append("contradicting: comments that state the opposite of their verdict")
    legend.append(
        "s/row: seconds per row, rows in flight together; cached: judge calls answered from the result "
        "cache (--no-cache to time the model)"
    )
    lines.append("; ".join(legend))
    addressing = [f"{r.name} {r.addressing}" for r in reports if r.addressing]
    if addressing:
        lines.append("answers that addressed the judge (metadata.addresses_judge): " + ", ".join(addressing))
    return "\n".join(lines)
