"""Score a JSONL dataset: one result line per row, resumable after an interruption.

Each finished row is appended to the results file at once, so a run that
stops (Ctrl-C, a crash, a killed job) loses nothing already scored; running
it again skips the rows whose results are there and retries the ones that
failed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import LocalJudgeError, UsageError

__all__ = ["BatchSummary", "read_jsonl", "read_rows", "run_batch", "scored_ids"]

Row = tuple[str, dict[str, Any]]


@dataclass
class BatchSummary:
    total: int = 0
    skipped: int = 0
    scored: int = 0
    failed: int = 0


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line; a bad line is an error naming it."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{path}:{number} is not valid JSON: {exc.msg}") from exc


def read_rows(path: Path) -> list[Row]:
    """``(id, row)`` pairs; the id is the row's ``"id"`` or else its line number."""
    rows: list[Row] = []
    seen: set[str] = set()
    for number, row in read_jsonl(path):
        if not isinstance(row, dict):
            raise UsageError(f"{path}:{number} must be a JSON object with inputs/outputs, got {type(row).__name__}")
        row_id = str(row.pop("id", number))
        if row_id in seen:
            raise UsageError(f"{path}:{number} repeats the id {row_id!r}; ids must be unique to resume a run")
        seen.add(row_id)
        rows.append((row_id, row))
    return rows


def scored_ids(results: Path) -> set[str]:
    """Ids that already have a result (not an error) in ``results``."""
    if not results.exists():
        return set()
    done = set()
    for line in results.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by an interruption: that row is scored again
        if isinstance(record, dict) and "result" in record:
            done.add(str(record.get("id")))
    return done


def _error_record(row_id: str, exc: LocalJudgeError) -> dict[str, Any]:
    error = {"type": type(exc).__name__, "message": getattr(exc, "message", str(exc))}
    if getattr(exc, "raw_output", None) is not None:
        error["raw_output"] = exc.raw_output
    return {"id": row_id, "error": error}


def run_batch(
    rows: Iterable[Row],
    evaluate: Callable[[dict[str, Any]], Any],
    results: Path,
    *,
    concurrency: int = 1,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> BatchSummary:
    """Evaluate every row not yet scored in ``results``, appending one JSON line per row.

    Rows run ``concurrency`` at a time (local models queue on their lock; a
    server can take several). A judge failure becomes an error line; anything
    else stops the run after what finished is written.
    """
    if concurrency < 1:
        raise UsageError(f"concurrency must be at least 1, got {concurrency}")
    rows = list(rows)
    done = scored_ids(results)
    todo = [(row_id, row) for row_id, row in rows if row_id not in done]
    summary = BatchSummary(total=len(rows), skipped=len(rows) - len(todo))

    def score(row_id: str, row: dict[str, Any]) -> dict[str, Any]:
        try:
            return {"id": row_id, "result": evaluate(row)}
        except LocalJudgeError as exc:
            return _error_record(row_id, exc)

    results.parent.mkdir(parents=True, exist_ok=True)
    with results.open("a", encoding="utf-8") as out, ThreadPoolExecutor(max_workers=concurrency) as pool:
        for record in _in_completion_order(pool, score, todo, concurrency):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.flush()
            if "result" in record:
                summary.scored += 1
            else:
                summary.failed += 1
            if on_record is not None:
                on_record(record)
    return summary


def _in_completion_order(
    pool: ThreadPoolExecutor, score: Callable[..., dict[str, Any]], todo: list[Row], limit: int
) -> Iterator[dict[str, Any]]:
    """At most ``limit`` rows in flight, so a stop leaves little work half done."""
    pending: set[Future[dict[str, Any]]] = set()
    queue = iter(todo)
    try:
        while True:
            for row_id, row in queue:
                pending.add(pool.submit(score, row_id, row))
                if len(pending) >= limit:
                    break
            if not pending:
                return
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                yield future.result()
    finally:
        for future in pending:
            future.cancel()
