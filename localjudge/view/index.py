"""A results file as a table that pages, sorts and filters without loading the file whole: sqlite, in memory.

A page asks for 50 rows of perhaps 100,000; the index answers from sqlite
(stdlib, no server), which holds each row's summary (:mod:`.records`) beside
its whole record. The file is read as a run writes it: only whole lines
(a torn last line waits for its newline), from where the last read ended,
so a page over a run in progress follows it. A row's later line replaces
its earlier one as a run reads them (``latest_records``); a file replaced
whole (a run's final rewrite) is read again from its start.

Nothing the file holds becomes a path, a query or markup: values go into
sqlite as bound parameters, and the page shows them as text.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..datasets.results_file import latest_records
from ..errors import UsageError
from ..trust.agreement import agreement
from .records import LOW_CONFIDENCE, summarize

__all__ = ["FILTERS", "SORTS", "Page", "RowQuery", "RunIndex"]

#: the table's filters, each a condition on the index's columns
FILTERS = {
    "all": "1",
    "failed": "failed = 1",
    "wrong": "right = 0",
    "low_confidence": "confidence < :below",
    "disagreeing": "consistent = 0",
    "contradicting": "contradicts = 1",
}
#: the columns a table sorts by
SORTS = {"position": "position", "id": "id", "verdict": "verdict", "confidence": "confidence", "label": "label"}
#: bytes read from a file at once: the lock is held for one chunk, so pages answer between chunks
CHUNK = 1 << 20


@dataclass(frozen=True)
class RowQuery:
    """One page of the table: which rows (a filter and words to find), in what order, from where."""

    filter: str = "all"
    search: str = ""
    sort: str = "position"
    descending: bool = False
    offset: int = 0
    limit: int = 50
    below: float = LOW_CONFIDENCE

    def checked(self) -> RowQuery:
        """Itself, or a UsageError naming what the page asked for that does not exist."""
        if self.filter not in FILTERS:
            raise UsageError(f"no filter {self.filter!r}; the filters: {', '.join(FILTERS)}")
        if self.sort not in SORTS:
            raise UsageError(f"no sort {self.sort!r}; the columns: {', '.join(SORTS)}")
        if not 1 <= self.limit <= 500 or self.offset < 0:
            raise UsageError("a page holds 1 to 500 rows from an offset of 0 or more")
        return self


@dataclass
class Page:
    """The rows of one page and how many rows match in all."""

    total: int
    rows: list[dict[str, Any]] = field(default_factory=list)


_COLUMNS = "position, id, failed, verdict, confidence, consistent, contradicts, label, right, error_type, way, excerpt"


class RunIndex:
    """One results file, indexed; :meth:`refresh` reads what was written since.

    ``labels`` (id -> label) and ``values`` (id -> the row's prompt
    variables, from the data file) are optional; a record's own ``label``
    (``check-judge --results`` writes one) stands in for a missing label.
    ``first``: read only about so many bytes now (a big file's first page
    need not wait for its last row; :meth:`read_in_background` reads on).
    """

    def __init__(
        self,
        path: Path,
        labels: Optional[Mapping[str, Any]] = None,
        values: Optional[Mapping[str, Mapping[str, Any]]] = None,
        *,
        first: Optional[int] = None,
    ) -> None:
        self.path = Path(path)
        self.name = self.path.name  # as the page names the run (open_runs tells apart runs of one name)
        self.labels = {str(k): v for k, v in (labels or {}).items()}
        self.values = {str(k): dict(v) for k, v in (values or {}).items()}
        self.version = 0  # grows whenever the rows change
        self.invalid_lines = 0
        self._lock = threading.Lock()  # one connection, shared by the server's threads one at a time
        self._reading = threading.Lock()  # one reader of the file at a time
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self._create()
        if not self.path.is_file():
            raise UsageError(f"{self.path} is not a file; give a results file (a run's .results.jsonl)")
        self.refresh(first)  # all of it, or the first bytes: read_in_background reads the rest
        if self.invalid_lines and not self.count():
            raise UsageError(
                f"{self.path} is not a results file: none of its lines is a record (a JSON object with an id "
                "and a result or an error); give the results file a run of batch, compare or check-judge wrote"
            )

    def _create(self) -> None:
        self._db.executescript(
            """
            CREATE TABLE rows (
                position INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, failed INTEGER NOT NULL, verdict TEXT,
                confidence REAL, consistent INTEGER, contradicts INTEGER NOT NULL, label TEXT, right INTEGER,
                error_type TEXT, way TEXT, excerpt TEXT NOT NULL, record TEXT NOT NULL, row_values TEXT
            );
            CREATE INDEX rows_verdict ON rows (verdict);
            CREATE INDEX rows_confidence ON rows (confidence);
            """
        )

    # reading the file

    def refresh(self, limit: Optional[int] = None) -> bool:
        """Read the whole lines written since the last read (about ``limit`` bytes at most); True when rows changed.

        One reader at a time: while another reads (the background reader of a
        big file), this returns at once, and the page shows what is read so far.
        """
        if not self._reading.acquire(blocking=False):
            return False
        try:
            return self._read(limit)
        finally:
            self._reading.release()

    def read_all(self) -> None:
        """Everything the file holds now, waiting for a background reader to finish first."""
        with self._reading:
            self._read(None)

    def read_in_background(self) -> None:
        """Read the rest of the file in a thread; pages answer meanwhile from what is read."""
        threading.Thread(target=self.refresh, name=f"reading {self.name}", daemon=True).start()

    @property
    def progress(self) -> tuple[int, int]:
        """Bytes read of the file's bytes: the page says how far a big file's reading has come."""
        try:
            return self._offset, os.stat(self.path).st_size
        except FileNotFoundError:
            return self._offset, self._offset

    def _read(self, limit: Optional[int]) -> bool:
        try:
            status = os.stat(self.path)
        except FileNotFoundError:
            return False  # between a run's rewrite and its rename: the next refresh sees the new file
        identity = (status.st_ino, status.st_dev)
        if self._identity is not None and (identity != self._identity or status.st_size < self._offset):
            with self._lock:
                self._db.execute("DELETE FROM rows")  # replaced whole (a run's final rewrite): read it again
                self._offset = 0
                self.invalid_lines = 0
                self.version += 1
        self._identity = identity
        changed = False
        read = 0
        with open(self.path, "rb") as handle:
            while limit is None or read < limit:
                handle.seek(self._offset)
                data = handle.read(CHUNK)
                end = data.rfind(b"\n") + 1
                if end == 0:
                    if len(data) == CHUNK:  # one line longer than a chunk: read on until its newline
                        data = self._whole_line(handle)
                        end = len(data)
                    if end == 0:
                        break
                lines = [line for line in data[:end].split(b"\n") if line.strip()]
                with self._lock:
                    added = self._add(lines)
                    self._offset += end
                    if added:
                        self.version += 1
                changed |= added
                read += end
        return changed

    def _whole_line(self, handle: Any) -> bytes:
        handle.seek(self._offset)
        line = handle.readline()
        return line if line.endswith(b"\n") else b""

    def _add(self, lines: list[bytes]) -> bool:
        records, texts = [], {}
        for line in lines:
            record = _parse(line)
            if record is None:
                self.invalid_lines += 1
            else:
                records.append(record)
                texts[id(record)] = line.decode("utf-8")
        if not records:
            return False
        known = self._known([str(r["id"]) for r in records])
        merged = latest_records([*known.values(), *records])
        fresh = [r for r in merged if known.get(str(r["id"])) is not r]
        labels = {row_id: label for row_id, label in (self._label(r) for r in fresh) if label is not None}
        right = agreement(fresh, labels, intervals=False).right if labels else {}
        rows = []
        for record in fresh:
            row_id = str(record["id"])
            summary = summarize(record)
            label = labels.get(row_id)
            values = self.values.get(row_id)
            rows.append(
                (
                    row_id,
                    int(summary.failed),
                    summary.verdict,
                    summary.confidence,
                    None if summary.consistent is None else int(summary.consistent),
                    int(summary.contradicts),
                    None if label is None else _text(label),
                    None if row_id not in right else int(right[row_id]),
                    summary.error_type,
                    summary.way,
                    summary.excerpt,
                    texts.get(id(record)) or json.dumps(record, ensure_ascii=False),
                    None if values is None else json.dumps(values, ensure_ascii=False),
                )
            )
        self._db.executemany(
            """INSERT INTO rows (id, failed, verdict, confidence, consistent, contradicts, label, right, error_type,
                   way, excerpt, record, row_values) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (id) DO UPDATE SET failed = excluded.failed, verdict = excluded.verdict,
                   confidence = excluded.confidence, consistent = excluded.consistent,
                   contradicts = excluded.contradicts, label = excluded.label, right = excluded.right,
                   error_type = excluded.error_type, way = excluded.way, excerpt = excluded.excerpt,
                   record = excluded.record, row_values = excluded.row_values""",
            rows,
        )
        return bool(rows)

    def _known(self, ids: list[str]) -> dict[str, Any]:
        """The records the index holds already for ``ids`` (a row written again), asked 500 at a time."""
        known = {}
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            for row_id, text in self._db.execute(f"SELECT id, record FROM rows WHERE id IN ({marks})", part):
                known[row_id] = json.loads(text)
        return known

    def _label(self, record: Mapping[str, Any]) -> tuple[str, Any]:
        row_id = str(record["id"])
        if row_id in self.labels:
            return row_id, self.labels[row_id]
        return row_id, record.get("label")

    # reading the index

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM rows").fetchone()[0])

    def page(self, query: RowQuery) -> Page:
        """The rows of one page: filtered, searched, sorted, in sqlite; only the page's rows leave it."""
        query = query.checked()
        where = [FILTERS[query.filter]]
        parameters: dict[str, Any] = {"below": query.below}
        if query.search:
            where.append("(record LIKE :words ESCAPE '\\' OR row_values LIKE :words ESCAPE '\\')")
            escaped = query.search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            parameters["words"] = f"%{escaped}%"
        condition = " AND ".join(where)
        direction = "DESC" if query.descending else "ASC"
        order = f"{SORTS[query.sort]} IS NULL, {SORTS[query.sort]} {direction}, position"
        with self._lock:
            total = self._db.execute(f"SELECT count(*) FROM rows WHERE {condition}", parameters).fetchone()[0]
            found = self._db.execute(
                f"SELECT {_COLUMNS} FROM rows WHERE {condition} ORDER BY {order} LIMIT :limit OFFSET :offset",
                {**parameters, "limit": query.limit, "offset": query.offset},
            ).fetchall()
        names = _COLUMNS.split(", ")
        rows = []
        for row in found:
            item = dict(zip(names, row, strict=True))
            for flag in ("failed", "consistent", "contradicts", "right"):
                item[flag] = None if item[flag] is None else bool(item[flag])
            rows.append(item)
        return Page(total=int(total), rows=rows)

    def row(self, row_id: str) -> Optional[dict[str, Any]]:
        """One row whole: its record, the data file's values for it, its label and whether its verdict is right."""
        with self._lock:
            found = self._db.execute(
                "SELECT position, record, row_values, label, right FROM rows WHERE id = ?", (row_id,)
            ).fetchone()
        if found is None:
            return None
        position, record, values, label, right = found
        return {
            "id": row_id,
            "position": position,
            "record": json.loads(record),
            "values": None if values is None else json.loads(values),
            "label": label,
            "right": None if right is None else bool(right),
        }

    def records(self) -> Iterator[dict[str, Any]]:
        """Every row's record, in the file's order (read from the index, not the file)."""
        with self._lock:
            texts = [text for (text,) in self._db.execute("SELECT record FROM rows ORDER BY position")]
        for text in texts:
            yield json.loads(text)

    def verdicts(self) -> dict[str, tuple[Optional[str], bool, Optional[str]]]:
        """Each row's verdict, whether it failed, and its label: what comparing two runs needs."""
        with self._lock:
            return {
                row_id: (verdict, bool(failed), label)
                for row_id, verdict, failed, label in self._db.execute("SELECT id, verdict, failed, label FROM rows")
            }

    def labels_in_use(self) -> dict[str, Any]:
        """The labels the rows are measured against: the labels file's, else the records' own."""
        with self._lock:
            return {row_id: label for row_id, label in self._db.execute("SELECT id, label FROM rows") if label}


def _parse(line: bytes) -> Optional[dict[str, Any]]:
    """A line's record, as a run reads it (an object with an id and a result or an error), else None.

    The C decoder, which a 100,000-row file needs: a structure nested too
    deep for it is a RecursionError, and no record.
    """
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or "id" not in record or not ("result" in record or "error" in record):
        return None
    return record


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
