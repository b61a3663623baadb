"""The runs over a data file that the commands start, as library calls that return data.

Each run is planned first and run second: :func:`plan_batch` and
:func:`plan_calibration` read the rows and check every option, the data and
the judge before the first row is judged, and return a plan that says how
many rows it will judge (for a progress bar) and runs with ``run``. Nothing
here prints or exits; options that do not fit raise
:class:`~localjudge.errors.OptionError`, which names them by the keywords
these functions take.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

from ..._datasets.batch import BatchSummary, run_batch, score_rows, write_csv
from ..._datasets.results_file import replace_atomically
from ..._datasets.rows import Reread, Row, Rows, parse_mapping, read_rows
from ..._judges.ways import WAYS
from ..._output_plan import Input, Output, check_outputs
from ..._specs import parse_spec
from ...errors import OptionError, UsageError
from .judging import Notify
from .row_judge import RowJudge, absolute_paths
from .settings import JudgeSettings
from .way_resolution import resolve_way

__all__ = [
    "CPUS_PER_ACTOR",
    "DEFAULT_ACTORS",
    "BatchPlan",
    "CalibrationPlan",
    "CalibrationResult",
    "batch_outputs",
    "csv_path",
    "judge_inputs",
    "plan_batch",
    "plan_calibration",
]

#: actors in a Ray run's pool unless ``actors`` says otherwise, and the CPUs each reserves (and decodes with)
DEFAULT_ACTORS = 2
CPUS_PER_ACTOR = 1

OnRecord = Callable[[dict[str, Any]], None]


def judge_inputs(settings: JudgeSettings) -> list[Input]:
    """The files the judge reads: its prompt, examples and schema, and a model given as a file."""
    found = [
        Input(said, path)
        for said, path in (
            ("{prompt_file}", settings.prompt_file),
            ("{few_shot}", settings.few_shot),
            ("{output_schema}", settings.output_schema),
        )
        if path is not None
    ]
    for spec in (settings.model_spec, *settings.ensemble_specs, *settings.fallbacks):
        named = Path(spec.split(":", 1)[1] if spec.startswith(("gguf:", "hf:")) else spec)
        if named.is_file():
            found.append(Input("the model file", named))
    return found


def batch_outputs(
    results: Path, *, csv: bool = False, summary_file: Optional[Path] = None, cache_file: Optional[Path] = None
) -> list[Output]:
    """Every file a batch run writes, each with the test that tells a file it wrote itself."""
    from ..._clients.result_cache import is_result_cache
    from ..._datasets.judge_file import is_judge_file, judge_file_path
    from ..._datasets.outputs import is_results_csv, is_summary_file
    from ..._datasets.results_file import is_results_file

    outputs = [
        Output("{results}", results, "a results file", is_results_file),
        Output(
            "the judge's description beside the results",
            judge_file_path(results),
            "a judge's description",
            is_judge_file,
        ),
    ]
    if csv:
        in_csv = functools.partial(is_results_csv, results=results)
        outputs.append(
            Output("the CSV beside the results ({output_format} csv)", csv_path(results), "a CSV of results", in_csv)
        )
    if summary_file is not None:
        outputs.append(Output("{summary_file}", summary_file, "a run's summary", is_summary_file))
    if cache_file is not None:
        outputs.append(Output("{cache_file}", cache_file, "a result cache", is_result_cache, replaceable=False))
    return outputs


def csv_path(results: Path) -> Path:
    """Where a run's results are flattened into CSV: beside them, with ``.csv``."""
    return results.with_suffix(".csv")


def _read(data: Path, file_format: Optional[str], mapping: Optional[str], id_field: str) -> list[Row]:
    return list(read_rows(data, file_format=file_format, mapping=parse_mapping(mapping), id_field=id_field))


def _stream(
    data: Path, file_format: Optional[str], mapping: Optional[str], id_field: str
) -> tuple[Rows, set[tuple[bool, bool]]]:
    """The rows of ``data``, read again on each pass, and the prompt shapes of the good ones.

    This first pass counts them (the progress total) and finds the file's own
    errors; no row is kept, so a run's memory does not grow with its rows.
    """
    columns = parse_mapping(mapping)

    def read() -> Iterator[Row]:
        return read_rows(data, file_format=file_format, mapping=columns, id_field=id_field)

    if not data.is_file():  # a pipe, /dev/stdin: read once, so its rows are kept
        rows = list(read())
        return rows, {RowJudge.shape(row.values) for row in rows if row.error is None}
    count, shapes, state = 0, set[tuple[bool, bool]](), Reread.state_of(data)
    for row in read():
        count += 1
        if row.error is None:
            shapes.add(RowJudge.shape(row.values))
    return Reread(read, count, data, state), shapes


@dataclass
class BatchPlan:
    """A checked batch run: its rows, its judge, where its results go; :meth:`run` scores them."""

    rows: Rows  # read afresh on each pass (Reread): a run never holds them all
    judge: RowJudge
    results: Path
    concurrency: int
    fail_fast: bool
    scorer: Callable[..., Any] = score_rows
    fingerprint: str = ""  # the judge's, stamped on each record (JudgeSettings.fingerprint)
    rejudge: bool = False
    described: Optional[dict[str, Any]] = None  # the judge, written beside the results (datasets.judge_file)
    inputs: tuple[Input, ...] = ()  # what the run reads, checked again before a file is written beside the results
    overwrite: bool = False
    summary_file: Optional[Path] = None
    cache_file: Optional[Path] = None

    def run(
        self, on_record: OnRecord = lambda record: None, option_names: Mapping[str, str] | None = None
    ) -> BatchSummary:
        """Score every row not yet in the results file; the summary says how it went.

        A row's error names options as ``option_names`` says (a command line's flags), else by keyword.
        """
        return run_batch(
            self.rows,
            self.judge,
            self.results,
            concurrency=self.concurrency,
            fail_fast=self.fail_fast,
            on_record=on_record,
            scorer=self.scorer,
            judge=self.fingerprint,
            rejudge=self.rejudge,
            option_names=option_names,
            described=self.described,
        )

    def write_csv(self) -> Path:
        """The results flattened into a CSV beside the JSONL (which stays, to resume from)."""
        self._check(csv=True)
        target = csv_path(self.results)
        write_csv(self.results, target)
        return target

    def write_summary(self, summary: BatchSummary) -> Optional[Path]:
        """The run's summary as JSON in ``summary_file`` (written whole), if the plan has one."""
        if self.summary_file is None:
            return None
        self._check(csv=False)
        text = json.dumps(summary.as_dict(), indent=2) + "\n"
        replace_atomically(self.summary_file, lambda out: out.write(text))
        return self.summary_file

    def _check(self, *, csv: bool) -> None:
        """The rule on outputs again, just before writing beside the results: what is there may have changed."""
        planned = batch_outputs(self.results, csv=csv, summary_file=self.summary_file, cache_file=self.cache_file)
        check_outputs(self.inputs, planned, overwrite=self.overwrite)


def plan_batch(
    settings: JudgeSettings,
    data: Path,
    *,
    results: Optional[Path] = None,
    concurrency: int = 1,
    file_format: Optional[str] = None,
    mapping: Optional[str] = None,
    id_field: str = "id",
    fail_fast: bool = False,
    use_cache: bool = True,
    cache_file: Optional[Path] = None,
    engine: str = "local",
    actors: Optional[int] = None,
    notify: Notify | None = None,
    rejudge: bool = False,
    keep_exchanges: bool = False,
    csv: bool = False,
    summary_file: Optional[Path] = None,
    overwrite: bool = False,
) -> BatchPlan:
    """A batch run of ``data`` with the judge ``settings`` describe, here (``engine="local"``) or on Ray.

    ``results`` defaults to DATA with ``.results.jsonl``. On Ray each actor
    loads its own judge, so only what needs no loaded model is checked here.
    ``rejudge``: rows the results file holds from other values or another
    judge are judged again, instead of stopping the run. ``keep_exchanges``:
    each record keeps the requests sent and the model's raw answers.
    ``csv`` and ``summary_file``: the run also writes those (see
    :meth:`BatchPlan.write_csv` and :meth:`BatchPlan.write_summary`). No
    output may be an input, another output, a symlink or a special file,
    nor (unless ``overwrite``) a file that is not what it writes
    (:mod:`localjudge._output_plan`): refused here, before anything is read.
    """
    fingerprint = settings.fingerprint()  # of the options as given: a Ray run's rewritten paths are the same judge
    results = results or data.with_name(data.stem + ".results.jsonl")
    if results.suffix.lower() == ".csv":
        fix = (
            "give {results} a .jsonl path: {output_format} csv already writes the CSV beside it, at {csv}"
            if csv
            else "give {results} a .jsonl path and add {output_format} csv for a CSV beside it"
        )
        raise OptionError(
            "{results} {path}: the results file is JSONL (a run resumes from it); " + fix,
            path=str(results),
            csv=str(csv_path(results.with_suffix(".jsonl"))),
        )
    inputs = (Input("the data file", data), *judge_inputs(settings))
    planned = batch_outputs(results, csv=csv, summary_file=summary_file, cache_file=cache_file if use_cache else None)
    check_outputs(inputs, planned, overwrite=overwrite)
    rows, shapes = _stream(data, file_format, mapping, id_field)
    settings = settings.with_parallel_for(concurrency)
    scorer: Callable[..., Any] = score_rows
    if engine == "ray":
        from ..._datasets.ray import score_on_ray

        if settings.way_flags.calibrated:
            raise OptionError(
                "{calibrated} is for the local engine: a Ray actor cannot see this machine's calibrations"
            )
        settings = absolute_paths(settings)
        if parse_spec(settings.model_spec).runs_here:  # as many threads as Ray gives the actor CPUs, not every core
            settings = replace(settings, model_options=settings.model_options.with_default("n_threads", CPUS_PER_ACTOR))
        judge = RowJudge(
            settings,
            use_cache=use_cache,
            cache_file=cache_file.resolve() if cache_file else None,
            keep_exchanges=keep_exchanges,
        )
        judge.check(shapes)  # each actor loads its own model; nothing is loaded here
        scorer = functools.partial(score_on_ray, actors=actors or DEFAULT_ACTORS, cpus_per_actor=CPUS_PER_ACTOR)
    elif engine == "local":
        if actors is not None:
            raise OptionError(
                "{actors} is for {engine} ray; with the local engine, {concurrency} sets the rows in flight"
            )
        judge = RowJudge(
            settings, use_cache=use_cache, cache_file=cache_file, notify=notify, keep_exchanges=keep_exchanges
        )
        judge.prepare(shapes)  # a bad option or model stops the run before its first row
    else:
        raise OptionError("{engine} is local or ray, not {given}", given=repr(engine))
    described = judge.describe(sorted(shapes))
    cache_file = cache_file if use_cache else None
    return BatchPlan(
        rows,
        judge,
        results,
        concurrency,
        fail_fast,
        scorer,
        fingerprint,
        rejudge,
        described,
        inputs,
        overwrite,
        summary_file,
        cache_file,
    )


@dataclass
class CalibrationResult:
    """A fitted calibration, the samples it was fitted on, and the file that keeps it."""

    fit: Any  # localjudge._trust.correction.Fit
    samples: Any  # localjudge._trust.fit.Samples
    path: Path


#: the options a calibration does not take: the name an error gives it, its field, and why where it is not plain
_NOT_FOR_CALIBRATION = (
    ("calibrated", "calibrated", ""),
    ("ensemble", "ensemble_specs", " (calibrate each model on its own)"),
    ("fallbacks", "fallbacks", ""),
    ("base_urls", "base_urls", ""),
    ("output_schema", "output_schema", ""),
    ("allow_ties", "allow_ties", " (a content-free pair is a tie by rights, so it cannot show a bias)"),
    ("pointwise", "pointwise", " (it has no positions to correct)"),
)


@dataclass
class CalibrationPlan:
    """A checked calibration: the labelled rows to judge; :meth:`run` judges them and fits."""

    rows: list[Row]
    labels: dict[str, int]
    judge: RowJudge
    evaluator: Any
    classes: tuple[str, ...]
    settings: JudgeSettings
    data: Path
    pairwise: bool
    concurrency: int
    folds: int

    def run(self, on_record: OnRecord = lambda record: None) -> CalibrationResult:
        """Judge the rows and a content-free input, fit the corrections, keep the best in its file."""
        from ..._trust.calibration_file import calibration_path, write_calibration
        from ..._trust.fit import calibration_key, content_free_prior, fit_calibration, labelled_samples

        path = calibration_path(calibration_key(self.evaluator))
        variables = set(self.rows[0].values) - {"outputs", "outputs_a", "outputs_b"}
        if self.evaluator.core.self_reference is not None:  # content-free: its own reference a placeholder too
            variables.add("reference_outputs")
        if self.evaluator.core.checklist is not None:  # and its checks
            variables.add("checks")
        prior = None  # a pair read by likelihood shows no question to empty, and reads two empty replies as equal
        if self.settings.judging_way().pairs != "likelihood":
            from ..._judges.screen import asking_always

            with asking_always(self.evaluator):  # the placeholders reach the judge: its bias is what is read
                prior = content_free_prior(self.evaluator, variables, self.classes, pairwise=self.pairwise)
        records = []
        for record in score_rows(self.rows, self.judge, concurrency=self.concurrency):
            on_record(record)
            records.append(record)
        order = {row.id: number for number, row in enumerate(self.rows)}
        records.sort(key=lambda record: order[str(record["id"])])  # folds by the data's order, not finishing order
        samples = labelled_samples(records, self.labels, self.classes, pairwise=self.pairwise)
        # mirrored pairs leave no side to learn: a bias would fit 0, so the temperature alone is weighed
        only = ("temperature",) if self.settings.judging_way().pairs == "likelihood" else None
        fit = fit_calibration(samples, self.classes, prior, folds=self.folds, only=only)
        about = {"model": self.settings.model_spec, "data": str(self.data.resolve()), "pairwise": self.pairwise}
        if self.settings.judging_way().pairs == "likelihood":
            about["likelihood"] = True
        write_calibration(path, fit, about)
        return CalibrationResult(fit, samples, path)


def plan_calibration(
    settings: JudgeSettings,
    data: Path,
    *,
    label_field: str = "label",
    pairwise: bool = False,
    file_format: Optional[str] = None,
    mapping: Optional[str] = None,
    id_field: str = "id",
    concurrency: int = 1,
    folds: int = 5,
    use_cache: bool = True,
) -> CalibrationPlan:
    """A calibration of one local model's verdicts on the rows of ``data`` that have a ``label_field``.

    Every option, row and label is checked before the first row is judged.
    """
    from ..._judges.ensemble import EnsembleEvaluator
    from ..._trust.correction import check_enough_rows
    from ..._trust.fit import label_index

    values = {**vars(settings), **vars(settings.way_flags)}
    given = [f"{{{name}}}{why}" for name, attribute, why in _NOT_FOR_CALIBRATION if values[attribute]]
    if given:
        raise OptionError(f"calibrate fits one local model's verdicts; it does not take {', '.join(given)}")
    if parse_spec(settings.model_spec).kind != "local":
        raise UsageError(
            "calibrate needs one local model (the default, a GGUF file or an hf: model): "
            "a server gives no probabilities"
        )
    settings = replace(settings, pairwise=pairwise, allow_ties=False)
    rows = [
        row for row in _read(data, file_format, mapping, id_field) if row.error is None and label_field in row.values
    ]
    if not rows:
        raise OptionError(
            "{path}: no row has a {field} field ({label_field} names the labels' column)",
            path=str(data),
            field=repr(label_field),
        )
    shapes = {RowJudge.shape(row.values) for row in rows}
    if len(shapes) > 1:
        raise UsageError(
            "a calibration is for one prompt, but some rows have inputs or a reference and others not: "
            "calibrate each kind of row on its own"
        )
    from ..._judges.checklist import CHECKS_FIELD

    if settings.judging_way().checklist and any(row.values.get(CHECKS_FIELD) is not None for row in rows):
        raise OptionError(  # the fit is kept for a judge that writes its checks, and would be used for one
            "calibrate {checklist} fits the judge that writes its own checks, and these rows bring theirs "
            "(a checks column): leave the column out"
        )
    (shape,) = shapes
    # the way these rows are judged (a question's default too), fitted as it judges before any calibration
    asked, shown = settings, {"has_inputs": shape[0], "has_reference": shape[1]}
    settings, way, defaulted = resolve_way(asked, **shown)
    if defaulted and way.pairs in ("pointwise", "weighed"):  # pairs' default has its own fit: calibrate the plain
        settings, way, _ = resolve_way(replace(asked, way=WAYS["plain"]), **shown)  # way, as --calibrated asks it
    if way.pairs in ("pointwise", "weighed"):
        raise OptionError(f"calibrate does not fit the {way.pairs} way: it has no one verdict's positions to correct")
    uncalibrated = replace(settings.way_flags, calibrated=False)
    settings = replace(settings, way=way.uncalibrated(), way_flags=uncalibrated).with_parallel_for(concurrency)
    judge = RowJudge(settings, use_cache=use_cache)
    evaluator = judge.evaluator(shape)
    if isinstance(evaluator, EnsembleEvaluator):  # refused above; an ensemble has no one core to calibrate
        raise UsageError("calibrate fits one model, not an ensemble")
    classes = tuple(evaluator.core.verdict_values())
    labels = {}
    for row in rows:  # every label is checked before the first row is judged
        try:
            index = label_index(row.values.pop(label_field), classes, pairwise=pairwise)
        except UsageError as exc:
            raise UsageError(f"{data}, row {row.id}: {exc}") from None
        if index is not None:
            labels[row.id] = index
    labelled = [row for row in rows if row.id in labels]
    check_enough_rows(len(labelled), folds, str(data))  # now, not after every row was judged
    return CalibrationPlan(labelled, labels, judge, evaluator, classes, settings, data, pairwise, concurrency, folds)
