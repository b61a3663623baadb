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
from pathlib import Path
from typing import Any, Optional

from .._datasets.results_file import latest_records
from .._trust.agreement import Judged, agreement_of
from ..errors import UsageError
from .lines import parse_record
from .query import FILTERS, SORTS, Page, RowQuery
from .records import NOT_RECORDED, RowSummary, Tallies, json_text, summarize

__all__ = ["FILTERS", "SORTS", "Page", "RowQuery", "RunIndex"]

#: bytes read from a file at once: the lock is held for one chunk, so pages answer between chunks
CHUNK = 1 << 20


#: what the index holds of each row, in the order :meth:`RunIndex._row` gives it
_STORED = (
    "position", "id", "failed", "verdict", "confidence", "consistent", "contradicts", "label", "right", "error_type",
    "way", "excerpt", "seconds", "judge", "stands_for", "flipped", "key", "score", "winner", "kind",
    "calibrated", "cached", "requests",
)  # fmt: skip
#: a row written again replaces its earlier one in its place (the index knows each id's position)
_INSERT = f"INSERT OR REPLACE INTO rows ({', '.join(_STORED)}) VALUES ({', '.join('?' * len(_STORED))})"
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
        self._positions: dict[str, int] = {}  # each id indexed and its place: a row written again is looked up
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
                position INTEGER PRIMARY KEY, id TEXT NOT NULL, failed INTEGER NOT NULL, verdict TEXT,
                confidence REAL, consistent INTEGER, contradicts INTEGER NOT NULL, label TEXT, right INTEGER,
                error_type TEXT, way TEXT, excerpt TEXT NOT NULL,
                seconds REAL, judge TEXT, stands_for TEXT, flipped INTEGER, key TEXT, score TEXT, winner TEXT,
                kind TEXT, calibrated INTEGER, cached INTEGER, requests INTEGER
            );
            CREATE TABLE texts (position INTEGER PRIMARY KEY, record TEXT NOT NULL, row_values TEXT);
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
                self._db.execute("DELETE FROM texts")
                self._positions.clear()
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
            record = parse_record(line)
            if record is None:
                self.invalid_lines += 1
            else:
                records.append(record)
                texts[id(record)] = line.decode("utf-8")
        if not records:
            return False
        ids = [str(r["id"]) for r in records]
        known = self._known([row_id for row_id in ids if row_id in self._positions])
        merged = latest_records([*known.values(), *records]) if known or len(set(ids)) < len(ids) else records
        fresh = [r for r in merged if known.get(str(r["id"])) is not r]
        summaries = [summarize(record) for record in fresh]
        labels = {row_id: label for row_id, label in (self._label(r) for r in fresh) if label is not None}
        judged = [summary.judged for summary in summaries if summary.judged is not None]
        right = agreement_of(judged, labels, intervals=False).right if labels else {}
        rows, whole = [], []
        for summary, record in zip(summaries, fresh, strict=True):
            position = self._positions.setdefault(
                summary.id, len(self._positions) + 1
            )  # a row written again keeps its place
            rows.append(self._row(position, summary, labels.get(summary.id), right.get(summary.id)))
            values = self.values.get(summary.id)
            whole.append(
                (
                    position,
                    texts.get(id(record)) or json.dumps(record, ensure_ascii=False),
                    None if values is None else json.dumps(values, ensure_ascii=False),
                )
            )
        self._db.executemany(_INSERT, rows)
        self._db.executemany("INSERT OR REPLACE INTO texts (position, record, row_values) VALUES (?, ?, ?)", whole)
        return bool(rows)

    @staticmethod
    def _row(position: int, summary: RowSummary, label: Any, right: Optional[bool]) -> tuple[Any, ...]:
        """One row of the index, in the order of :data:`_STORED`."""
        judged, figures = summary.judged, summary.figures
        return (
            position,
            summary.id,
            int(summary.failed),
            summary.verdict,
            summary.confidence,
            None if summary.consistent is None else int(summary.consistent),
            int(summary.contradicts),
            None if label is None else _text(label),
            None if right is None else int(right),
            summary.error_type,
            summary.way,
            summary.excerpt,
            summary.seconds,
            summary.judge,
            None if judged is None or judged.confidence is None else judged.confidence[0],
            None if judged is None else int(judged.flipped),
            *(
                (None,) * 7
                if figures is None
                else (
                    figures.key,
                    figures.score,
                    figures.winner,
                    figures.kind,
                    int(figures.calibrated),
                    None if figures.cached is None else int(figures.cached),
                    figures.requests,
                )
            ),
        )

    def _known(self, ids: list[str]) -> dict[str, Any]:
        """The records the index holds already for ``ids`` (a row written again), asked 500 at a time."""
        known = {}
        for start in range(0, len(ids), 500):
            part = [self._positions[row_id] for row_id in ids[start : start + 500]]
            marks = ",".join("?" * len(part))
            for row_id, text in self._db.execute(
                f"SELECT id, record FROM rows JOIN texts USING (position) WHERE position IN ({marks})", part
            ):
                known[row_id] = json.loads(text)
        return known

    def _label(self, record: Mapping[str, Any]) -> tuple[str, Any]:
        row_id = str(record["id"])
        if row_id in self.labels:
            return row_id, self.labels[row_id]
        return row_id, record.get("label")

    # reading the index

    def ids(self) -> frozenset[str]:
        """The ids of the rows indexed so far: what tells whether two runs judged the same rows."""
        with self._lock:
            return frozenset(self._positions)

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM rows").fetchone()[0])

    def page(self, query: RowQuery) -> Page:
        """The rows of one page: filtered, searched, sorted, in sqlite; only the page's rows leave it."""
        query = query.checked()
        where = [FILTERS[query.filter]]
        parameters: dict[str, Any] = {"below": query.below}
        if query.search:
            where.append(
                "position IN (SELECT position FROM texts WHERE record LIKE :words ESCAPE '\\' "
                "OR row_values LIKE :words ESCAPE '\\')"
            )
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
                "SELECT position, record, row_values, label, right FROM rows JOIN texts USING (position) "
                "WHERE position = ?",
                (self._positions.get(row_id),),
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
            texts = [text for (text,) in self._db.execute("SELECT record FROM texts ORDER BY position")]
        for text in texts:
            yield json.loads(text)

    def verdicts(self) -> dict[str, tuple[Optional[str], bool, Optional[str]]]:
        """Each row's verdict, whether it failed, and its label: what comparing two runs needs."""
        with self._lock:
            return {
                row_id: (verdict, bool(failed), label)
                for row_id, verdict, failed, label in self._db.execute("SELECT id, verdict, failed, label FROM rows")
            }

    def judged(self) -> list[Judged]:
        """Each result as the agreement figures read it (trust.agreement's Judged), from the index's columns."""
        with self._lock:
            found = self._db.execute(
                "SELECT id, verdict, stands_for, confidence, consistent, flipped FROM rows WHERE failed = 0"
            ).fetchall()
        return [
            Judged(
                row_id,
                verdict,
                None if stands_for is None else (stands_for, confidence),
                None if consistent is None else bool(consistent),
                bool(flipped),
            )
            for row_id, verdict, stands_for, confidence, consistent, flipped in found
        ]

    def tallies(self) -> Tallies:
        """What the overview counts, counted by sqlite over the index's columns (no record is read again)."""
        found = Tallies()
        with self._lock:
            run = self._db.execute
            found.rows = run("SELECT count(*) FROM rows").fetchone()[0]
            found.errors.update(dict(run("SELECT error_type, count(*) FROM rows WHERE failed = 1 GROUP BY 1")))
            for name in ("score", "winner", "judge", "key", "kind"):
                grouped = run(f"SELECT {name}, count(*) FROM rows WHERE {name} IS NOT NULL GROUP BY 1")
                getattr(found, name + "s").update(dict(grouped))
            found.ways.update(
                dict(run(f"SELECT coalesce(way, '{NOT_RECORDED}'), count(*) FROM rows WHERE failed = 0 GROUP BY 1"))
            )
            sums = run(
                "SELECT total(calibrated), total(requests), total(contradicts), count(cached), total(cached), "
                "count(consistent), total(consistent) FROM rows WHERE failed = 0"
            ).fetchone()
            found.seconds = [seconds for (seconds,) in run("SELECT seconds FROM rows WHERE seconds IS NOT NULL")]
        calibrated, requests, contradicting, cache_recorded, cached, pairs, consistent = map(int, sums)
        found.calibrated, found.requests, found.contradicting = calibrated, requests, contradicting
        found.cached = cached if cache_recorded else None
        found.pairs, found.consistent = pairs, consistent
        return found

    def labels_in_use(self) -> dict[str, Any]:
        """The labels the rows are measured against: the labels file's, else the records' own."""
        with self._lock:
            return {row_id: label for row_id, label in self._db.execute("SELECT id, label FROM rows") if label}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json_text(value)
