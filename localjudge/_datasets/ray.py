"""Score a dataset on a Ray cluster: the rows as a Ray Dataset, a pool of actors each holding one judge.

The rows are read here, by :mod:`localjudge._datasets.rows`, and handed to Ray Data
with ``from_items``: Ray's own readers fail a whole file on one malformed
line, where a bad row must be that row's error (and ids, ``--map`` and
duplicates must mean what they mean in a local run). The records come back
here as blocks finish and go into the same results file, so a Ray run
resumes, caches and sums up exactly as a local one does.

The evaluator travels to each actor by pickle and is called there; build
anything heavy (a loaded model) on its first call, not before.
"""

from __future__ import annotations

import json
import logging
import math
import os
import pickle
import warnings
from collections.abc import Callable, Generator, Iterable, Mapping
from typing import Any

from ..errors import MissingDependencyError, UsageError
from .batch import Scoring, as_rows, error_record, score_rows
from .rows import Row, Rows
from .summary import COUNTERS

__all__ = ["RAY_ADDRESS_ENV", "score_on_ray"]

#: the cluster to join; without it a local cluster is started for the run and stopped after it
RAY_ADDRESS_ENV = "RAY_ADDRESS"


def score_on_ray(
    rows: Iterable[Row | Mapping[str, Any]],
    evaluator: Callable[..., Any],
    *,
    id_field: str = "id",
    concurrency: int = 1,
    fail_fast: bool = False,
    skip: Callable[[str], bool] = lambda row_id: False,
    actors: int = 2,
    rows_per_batch: int | None = None,
    cpus_per_actor: float = 1.0,
    address: str | None = None,
    option_names: Mapping[str, str] | None = None,
) -> Scoring:
    """:func:`~localjudge._datasets.batch.score_rows` on Ray: ``actors`` judges, each scoring ``concurrency`` rows at a time.

    An actor takes ``rows_per_batch`` rows at a time (default: 4 x
    ``concurrency``, at least 8), keeping ``concurrency`` of them in flight.
    ``address`` (else ``$RAY_ADDRESS``) joins a running cluster, whose nodes
    need localjudge and the model installed; without one, a local cluster is
    started and stopped for the run. Needs the ``ray`` extra.
    """
    rows_per_batch = max(8, 4 * concurrency) if rows_per_batch is None else rows_per_batch
    for name, value in (("actors", actors), ("rows_per_batch", rows_per_batch), ("concurrency", concurrency)):
        if not isinstance(value, int) or value < 1:
            raise UsageError(f"{name} must be a whole number of at least 1, got {value!r}")
    if cpus_per_actor <= 0:
        raise UsageError(f"cpus_per_actor must be more than 0, got {cpus_per_actor!r}")
    ray = _import_ray()
    try:
        ray.cloudpickle.dumps(evaluator)  # what Ray will do with it, refused here with a plain message
    except Exception as exc:
        raise UsageError(
            f"The evaluator cannot go to Ray's actors: it does not pickle ({type(exc).__name__}: {exc}). "
            "Pass a callable object that builds its judge on its first call."
        ) from None
    cluster = _Cluster(address or os.environ.get(RAY_ADDRESS_ENV) or None, actors, cpus_per_actor)
    return _RayScoring(
        as_rows(rows, id_field), evaluator, concurrency, fail_fast, skip, cluster, rows_per_batch, option_names
    )


class _Cluster:
    """Where the actors run, and how many."""

    def __init__(self, address: str | None, actors: int, cpus_per_actor: float) -> None:
        self.address, self.actors, self.cpus_per_actor = address, actors, cpus_per_actor

    def start(self) -> bool:
        """Join (or start) the cluster; True when this call started it, so the caller stops it."""
        import ray

        if ray.is_initialized():
            return False
        # Ray's own log lines (INFO on each dataset, a note on token authentication, an error-level note
        # on every actor that Ray Data gives constructor arguments, the workers' and raylets' lines)
        # would break the run's progress display. Failures still come through as exceptions; the
        # actors' logs stay in Ray's session directory (/tmp/ray/session_latest/logs).
        self._levels = {name: logging.getLogger(name).level for name in ("ray", "ray.data")}
        for name in self._levels:
            logging.getLogger(name).setLevel(logging.ERROR)
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        if self.address is None:  # "local": a cluster of our own, never one a `ray start` left running here
            options["num_cpus"] = max(os.cpu_count() or 1, math.ceil(self.actors * self.cpus_per_actor))
        quiet = "RAY_BACKEND_LOG_LEVEL" not in os.environ
        if quiet:
            os.environ["RAY_BACKEND_LOG_LEVEL"] = "fatal"
        try:
            ray.init(address=self.address or "local", **options)
        finally:
            if quiet:
                del os.environ["RAY_BACKEND_LOG_LEVEL"]
        return True

    def stop(self) -> None:
        """Stop the cluster :meth:`start` started, and give Ray's loggers back their levels."""
        import ray

        ray.shutdown()
        for name, level in self._levels.items():
            logging.getLogger(name).setLevel(level)


class _RayScoring(Scoring):
    def __init__(
        self,
        rows: Rows,
        evaluator: Callable[..., Any],
        concurrency: int,
        fail_fast: bool,
        skip: Callable[[str], bool],
        cluster: _Cluster,
        rows_per_batch: int,
        option_names: Mapping[str, str] | None,
    ) -> None:
        super().__init__(rows, evaluator, concurrency, fail_fast, skip, option_names)
        self._cluster = cluster
        self._rows_per_batch = rows_per_batch

    def _records(self, todo: Iterable[Row]) -> Generator[dict[str, Any], None, None]:
        todo = list(todo)  # gone over twice: the bad rows' records first, then the good rows go to Ray
        good = [row for row in todo if row.error is None]
        for row in todo:
            if row.error is not None:  # known bad before any model sees it: no actor needed
                yield error_record(row.id, row.error, self.option_names)
        if not good:
            return
        import ray
        import ray.data

        started = self._cluster.start()
        try:
            context = ray.data.DataContext.get_current()
            context.enable_progress_bars = False  # the run shows its own progress
            context.print_on_execution_start = False
            items = [{"id": row.id, "values": pickle.dumps(row.values)} for row in good]
            # enough blocks for every actor to have work, each at least a batch when there are rows for it
            blocks = min(len(items), max(self._cluster.actors, math.ceil(len(items) / self._rows_per_batch)))
            dataset = ray.data.from_items(items, override_num_blocks=blocks).map_batches(
                _JudgeActor,
                fn_constructor_args=(self._evaluator, self._concurrency, self.option_names),
                batch_size=self._rows_per_batch,
                batch_format="numpy",
                compute=ray.data.ActorPoolStrategy(size=self._cluster.actors),
                num_cpus=self._cluster.cpus_per_actor,
            )
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "The minimum number of concurrent actors", UserWarning)  # few rows
                for item in dataset.iter_rows():
                    self.summary.add_counters(json.loads(item["counters"]))
                    yield json.loads(item["record"])
        finally:
            if started:
                self._cluster.stop()


def _import_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as exc:
        raise MissingDependencyError("Scoring on Ray", "ray[data]", "ray") from exc
    return ray


class _JudgeActor:
    """One judge in one Ray actor, scoring a batch of rows at a time as a local run does."""

    def __init__(self, evaluator: Callable[..., Any], concurrency: int, option_names: Mapping[str, str]) -> None:
        self.evaluator, self.concurrency, self.option_names = evaluator, concurrency, option_names

    def __call__(self, batch: Mapping[str, Any]) -> dict[str, list[str]]:
        rows = [
            Row(str(row_id), pickle.loads(values)) for row_id, values in zip(batch["id"], batch["values"], strict=True)
        ]
        scoring = score_rows(rows, self.evaluator, concurrency=self.concurrency, option_names=self.option_names)
        records = {record["id"]: record for record in scoring}
        counted = {name: getattr(scoring.summary, name) for name in COUNTERS}
        nothing = {name: 0 for name in COUNTERS}
        return {
            "id": [row.id for row in rows],
            "record": [json.dumps(records[row.id], ensure_ascii=False) for row in rows],
            # the batch's counts ride on its first row, so each is added once
            "counters": [json.dumps(counted if i == 0 else nothing) for i in range(len(rows))],
        }
