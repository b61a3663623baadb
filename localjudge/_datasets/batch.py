"""Score a dataset: one result line per row, never lost, never twice, resumable after any interruption.

Each finished row is appended to the results file at once as a whole line
(:class:`~localjudge._datasets.results_file.ResultsFile`), so a run that stops (Ctrl-C,
a crash, a kill in the middle of a write) loses nothing already scored;
running it again skips the rows whose results are there and retries the
ones that failed. When a run ends, the file holds each id exactly once.

Each record says what it was judged from (``judged``: the judge's
fingerprint and a digest of the row's values), so a run never skips a row
whose values, or whose judge, changed since: it stops before judging and
says so, unless told to judge those rows again (``rejudge``).

A row that cannot be judged (bad input, a judge failure) is that row's
error line; the run goes on unless ``fail_fast``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sized
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import closing
from pathlib import Path
from typing import Any, TextIO

from .._wording import Message, shown
from ..errors import DuplicateIdError, LocalJudgeError, UsageError
from ..types import SupportsCounters, offers
from .judge_file import JudgeRun
from .results_file import ResultsFile, replace_atomically
from .rows import Row, Rows, row_of
from .summary import BatchSummary

__all__ = [
    "BatchSummary",
    "Scoring",
    "as_rows",
    "error_record",
    "evaluator_counters",
    "flatten_record",
    "row_stamp",
    "run_batch",
    "score_rows",
    "stale_ids",
    "write_csv",
]


#: a record's wall-clock seconds of judging its row (rows in flight together overlap; a cached answer takes ~0);
#: beside ``result``, not in it, and not part of the ``judged`` stamp: nothing that compares verdicts reads it
SECONDS = "seconds"


def error_record(row_id: str, exc: LocalJudgeError, option_names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A row's error line: its type, message, hint, and the model's raw output, each when there is one.

    The options the message names are shown as ``option_names`` says (a command line's flags), else by keyword.
    """
    names = option_names or {}
    error = {"type": type(exc).__name__, "message": exc.headline(names)}
    hint = getattr(exc, "hint_wording", None)
    if hint:
        error["hint"] = shown(hint, names)
    raw_output = getattr(exc, "raw_output", None)
    if raw_output is not None:
        error["raw_output"] = raw_output
    exchanges = getattr(exc, "exchanges", None)  # kept where the run asked (RowJudge's keep_exchanges)
    if exchanges:
        error["exchanges"] = exchanges
    return {"id": row_id, "error": error}


def score_rows(
    rows: Iterable[Row | Mapping[str, Any]],
    evaluator: Callable[..., Any],
    *,
    id_field: str = "id",
    concurrency: int = 1,
    fail_fast: bool = False,
    skip: Callable[[str], bool] = lambda row_id: False,
    option_names: Mapping[str, str] | None = None,
) -> Scoring:
    """Score rows (dicts of prompt variables, or :class:`~localjudge._datasets.rows.Row`) with ``evaluator(**row)``.

    The records come as rows finish: ``{"id", "result"}`` or ``{"id",
    "error"}``, a bad row or a judge failure being that row's error, and a
    judged row's with ``seconds``, how long its judging took (:data:`SECONDS`);
    ``fail_fast`` stops at the first. A dict's id is its ``id_field``, else
    its position from 1. Rows run ``concurrency`` at a time (a local model
    decodes them side by side; a server takes several); ``skip(id)`` leaves
    a row out. The summary is ``.summary``, complete once the records are.
    Any exception other than the judge's stops it. An error names options
    as ``option_names`` says (:func:`error_record`).
    """
    if concurrency < 1:
        raise UsageError(f"concurrency must be at least 1, got {concurrency}")
    return Scoring(as_rows(rows, id_field), evaluator, concurrency, fail_fast, skip, option_names)


def as_rows(rows: Iterable[Row | Mapping[str, Any]], id_field: str) -> Rows:
    """Rows with ids no two share: a later row with an earlier one's id is its own DuplicateIdError.

    Checked as each pass goes over them, so rows read afresh on each pass
    (:class:`~localjudge._datasets.rows.Reread`) are never all held at once;
    rows that can be gone over only once (a generator) are kept in a list.
    """
    return _Checked(rows, id_field)


class _Checked:
    """:func:`as_rows`: each pass numbers the rows, makes a Row of each mapping and finds repeated ids again."""

    def __init__(self, rows: Iterable[Row | Mapping[str, Any]], id_field: str) -> None:
        if not isinstance(rows, Sized) or isinstance(rows, Iterator):  # one pass only, or no count without one: kept
            rows = list(rows)
        self._rows: Iterable[Row | Mapping[str, Any]] = rows
        self._count = len(rows)
        self._id_field = id_field

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Row]:
        seen: set[int] = set()  # 8-byte digests of the ids: a pass over many rows keeps no id text
        for number, row in enumerate(self._rows, 1):
            if not isinstance(row, Row):
                row = row_of(row, self._id_field, number)
            digest = _id_digest(row.id)
            if digest in seen:
                error = DuplicateIdError(f"repeats the id {row.id!r} of an earlier row", where=row.where)
                row = Row(f"{row.id}@{row.where or number}", where=row.where, error=error)
                digest = _id_digest(row.id)
            seen.add(digest)
            yield row


def _id_digest(row_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(row_id.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


class Scoring:
    """The records of a scoring run as rows finish; ``summary`` as it goes."""

    def __init__(
        self,
        rows: Rows,
        evaluator: Callable[..., Any],
        concurrency: int,
        fail_fast: bool,
        skip: Callable[[str], bool],
        option_names: Mapping[str, str] | None = None,
    ) -> None:
        self.rows = rows
        self.option_names = dict(option_names or {})
        self.summary = BatchSummary(total=len(rows))
        self._evaluator = evaluator
        self._concurrency = concurrency
        self._fail_fast = fail_fast
        self._skip = skip
        self._in_flight: set[Future[dict[str, Any]]] = set()
        # the id last handed on: the only record the drain can find again once counted (_in_completion_order
        # lets a record's future go as the next is asked for), so no set of every id is kept
        self._handed: str | None = None

    def _score(self, row: Row) -> dict[str, Any]:
        if row.error is not None:
            return error_record(row.id, row.error, self.option_names)
        started = time.monotonic()
        try:
            result = self._evaluator(**row.values)
            dump = getattr(result, "model_dump", None)  # a Pydantic output_schema's instance, as its JSON
            record = {"id": row.id, "result": dump(mode="json") if callable(dump) else result}
        except LocalJudgeError as exc:
            record = error_record(row.id, exc, self.option_names)
        record[SECONDS] = round(time.monotonic() - started, 3)
        return record

    def _records(self, todo: Iterable[Row]) -> Generator[dict[str, Any], None, None]:
        """The records of ``todo`` as they finish; here, in a pool of threads."""
        pool = ThreadPoolExecutor(max_workers=self._concurrency)
        try:
            yield from _in_completion_order(pool, self._score, todo, self._concurrency, self._in_flight)
        finally:
            pool.shutdown(wait=False, cancel_futures=True)  # what runs still is drain()'s to wait for

    def drain(self) -> list[dict[str, Any]]:
        """After an interrupt, the records of the rows being judged, once they finish: their answers are paid for.

        A second interrupt stops the wait. Rows not yet started are not started.
        """
        running = {future for future in self._in_flight if not future.cancel()}
        self._in_flight.clear()
        finished, _ = wait(running)
        records = [f.result() for f in finished if not f.cancelled() and f.exception() is None]
        for record in records:
            if record["id"] != self._handed:
                self.summary.count(record)
        return records

    def __iter__(self) -> Iterator[dict[str, Any]]:
        summary, started = self.summary, time.monotonic()
        rows = iter(self.rows)  # one pass: the rows to judge are taken as the pool has room for them
        counted_before = evaluator_counters(self._evaluator)
        try:
            with closing(self._records(self._not_skipped(rows))) as records:
                for record in records:
                    summary.count(record)
                    self._handed = record["id"]
                    yield record
                    if self._fail_fast and "error" in record:
                        summary.stopped_early = True
                        summary.skipped += sum(1 for row in rows if self._skip(row.id))  # the rest, as if judged
                        return
        finally:
            summary.seconds = time.monotonic() - started
            counted = evaluator_counters(self._evaluator)
            summary.add_counters({name: counted[name] - counted_before.get(name, 0) for name in counted})

    def _not_skipped(self, rows: Iterator[Row]) -> Iterator[Row]:
        """The rows to judge, counting those ``skip`` leaves out as they pass."""
        for row in rows:
            if self._skip(row.id):
                self.summary.skipped += 1
            else:
                yield row


def evaluator_counters(evaluator: Any) -> dict[str, int]:
    """What an evaluator counts of its own work (``counters()``: cache hits, model calls, tokens); {} if nothing."""
    return dict(evaluator.counters()) if offers(evaluator, SupportsCounters) else {}


def row_stamp(row: Row, judge: str = "") -> dict[str, str]:
    """What a record is judged from: the judge's fingerprint (empty: not known) and a digest of the row's values."""
    values = json.dumps(row.values, sort_keys=True, ensure_ascii=False, default=repr)
    return {"judge": judge, "row": hashlib.sha256(values.encode("utf-8")).hexdigest()[:16]}


def _differences(judged: Any, stamp: Mapping[str, str]) -> tuple[bool, bool]:
    """Whether a record's stamp names another judge, and other row values, than ``stamp``; unknowns differ in nothing."""
    if not isinstance(judged, Mapping):  # written before records had a stamp
        return False, False
    judges = judged.get("judge"), stamp["judge"]
    return all(judges) and judges[0] != judges[1], judged.get("row") != stamp["row"]


def stale_ids(
    records: Mapping[str, Mapping[str, Any]], stamps: Mapping[str, Mapping[str, str]]
) -> dict[str, tuple[bool, bool]]:
    """The rows whose verdict was judged by another judge, or from other values, than ``stamps`` say: which differs.

    In the rows' order. An error is no verdict: its row is judged again anyway.
    """
    found = {}
    for row_id, stamp in stamps.items():
        if "result" in records.get(row_id, {}):
            differences = _differences(records[row_id].get("judged"), stamp)
            if any(differences):
                found[row_id] = differences
    return found


def _stamp(judge: str, digest: int) -> dict[str, str]:
    """:func:`row_stamp` again from the digest of the row's values."""
    return {"judge": judge, "row": f"{digest:016x}"}


def _stale_in(out: ResultsFile, stamps: Mapping[str, int], judge: str) -> dict[str, tuple[bool, bool]]:
    """:func:`stale_ids` of the results file: only records whose stamp differs are read back."""
    found = {}
    for row_id, digest in stamps.items():
        stamp = _stamp(judge, digest)
        if out.differs(row_id, stamp):
            found.update(stale_ids({row_id: out.record(row_id) or {}}, {row_id: stamp}))
    return found


def refuse_stale(results: Path, stale: Mapping[str, tuple[bool, bool]]) -> None:
    """Verdicts for rows that changed, or from another judge, are never kept as if they were this run's."""
    if not stale:
        return
    reasons = [
        ("with other judge options", any(judge for judge, _ in stale.values())),
        ("from other values of those rows", any(row for _, row in stale.values())),
    ]
    ids = list(stale)
    shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
    raise UsageError(
        Message(
            "{path} holds verdicts for {count} of these rows ({shown}) judged {why}; judge them again with "
            "{rejudge:rejudge=True} (their verdicts there are replaced), or write to another results file "
            "({results:results=})",
            path=str(results),
            count=len(ids),
            shown=shown,
            why=" or ".join(reason for reason, holds in reasons if holds),
        )
    )


def run_batch(
    rows: Iterable[Row | Mapping[str, Any]],
    evaluator: Callable[..., Any],
    results: Path,
    *,
    concurrency: int = 1,
    fail_fast: bool = False,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    scorer: Callable[..., Any] = score_rows,
    judge: str = "",
    rejudge: bool = False,
    option_names: Mapping[str, str] | None = None,
    described: Mapping[str, Any] | None = None,
) -> BatchSummary:
    """Rows scored into a results file: rows scored there are skipped, each record appended as it comes.

    ``scorer`` does the scoring: :func:`score_rows` in this process, or
    another with its signature (``functools.partial(score_on_ray, actors=4)``).
    ``judge`` fingerprints the judge (:meth:`JudgeSettings.fingerprint`);
    a row scored there from other values or by another judge stops the run
    before it judges anything, unless ``rejudge``, which judges it again.
    ``option_names``: how a row's error names options (a command line's flags).
    ``described``: what the judge is (model, prompt, schema, way; JSON-ready),
    written beside the results with this run's times and speed, under
    ``judge`` (:mod:`~localjudge._datasets.judge_file`); a symlink there stops
    the run before it judges.
    Any exception stops the run after what finished is written (on Ctrl-C,
    also the rows being judged, unless a second Ctrl-C comes); either way the
    file is left with each id once, in the order of ``rows``.
    """
    out = ResultsFile(results)
    judge_run = None if described is None else JudgeRun(results, judge or "unknown", described)
    stale: set[str] = set()
    scoring = scorer(
        rows,
        evaluator,
        concurrency=concurrency,
        fail_fast=fail_fast,
        skip=lambda row_id: out.scored(row_id) and row_id not in stale,
        option_names=option_names,
    )
    # per row only its id and the digest of its values (an int); the records stay in the file (ResultsFile.index)
    stamps = {row.id: int(row_stamp(row, judge)["row"], 16) for row in scoring.rows}
    out.open()

    def write(done: dict[str, Any]) -> None:
        done = {**done, "judged": _stamp(judge, stamps[done["id"]])}
        out.append(done)
        if judge_run is not None:
            judge_run.count()
        if on_record is not None:
            on_record(done)

    try:
        found = _stale_in(out, stamps, judge)
        if not rejudge:
            refuse_stale(results, found)
        stale.update(found)
        if judge_run is not None:
            judge_run.start()  # before the first row: a judge file that cannot be written stops the run here
        for record in scoring:
            write(record)
        for row_id in stamps:  # the verdicts kept from an earlier run: scored then, and not judged again
            if out.scored(row_id) and out.earlier(row_id) and row_id not in stale:
                scoring.summary.count_verdict((out.record(row_id) or {}).get("result"))
    except KeyboardInterrupt:
        for record in scoring.drain():  # rows already being judged are finished and written first
            write(record)
        raise
    finally:
        try:
            if judge_run is not None and judge_run.started:
                judge_run.finish()
        finally:
            out.close(order=stamps)
    return scoring.summary


def flatten_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """One results line as one CSV row: nested fields as dotted names (``metadata.probabilities.true``).

    An error's fields become ``error.type``, ``error.message``, ``error.hint``, ``error.raw_output``; lists stay JSON text.
    """
    flat: dict[str, Any] = {"id": record.get("id")}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping) and value:
            for name, inner in value.items():
                walk(f"{prefix}.{name}" if prefix else str(name), inner)
        elif isinstance(value, (list, Mapping)):
            flat[prefix] = json.dumps(value, ensure_ascii=False)
        else:
            flat[prefix] = value

    walk("", record.get("result") if "result" in record else {"error": record.get("error")})
    return flat


def write_csv(results: Path, target: Path) -> None:
    """The records of a results file, flattened into a CSV (atomically): the columns are every field any row has."""
    rows = [flatten_record(json.loads(line)) for line in results.read_text(encoding="utf-8").splitlines() if line]
    columns = list(dict.fromkeys(name for row in rows for name in row))

    def write(out: TextIO) -> None:
        writer = csv.DictWriter(out, fieldnames=columns)
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)

    replace_atomically(target, write, newline="")


def _in_completion_order(
    pool: ThreadPoolExecutor,
    score: Callable[[Row], dict[str, Any]],
    todo: Iterable[Row],
    limit: int,
    in_flight: set[Future[dict[str, Any]]],
) -> Iterator[dict[str, Any]]:
    """At most ``limit`` rows in flight, so a stop leaves little work half done.

    ``in_flight`` holds every row submitted and not yet handed on, for
    :meth:`Scoring.drain` to finish after an interrupt. A record leaves it
    only once its consumer asks for the next: an interrupt while it is being
    written leaves it there for the drain (a record written twice is kept
    once, as the results file keeps each id once).
    """
    queue = iter(todo)
    while True:
        for row in queue:
            in_flight.add(pool.submit(score, row))
            if len(in_flight) >= limit:
                break
        if not in_flight:
            return
        finished, _ = wait(in_flight, return_when=FIRST_COMPLETED)
        for future in finished:
            yield future.result()
            in_flight.discard(future)
