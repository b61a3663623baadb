"""The rows of a dataset file (JSONL, CSV, Parquet) as the variables of a judge's prompt.

Every row comes back, good or bad: a row that cannot be judged as it is
(not JSON, not an object, not UTF-8, an id an earlier row has, a mapped
column absent or empty) carries its error, so a run records it as that
row's result and goes on. Nothing the file holds is changed on the way: a
row's values reach the prompt as they are.
"""

from __future__ import annotations

import csv
import io
import json
import operator
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .. import _bounded_json as bounded_json
from .._wording import Message
from ..errors import (
    BadRowError,
    DuplicateIdError,
    InvalidEncodingError,
    LocalJudgeError,
    MalformedRowError,
    MissingDependencyError,
    MissingValueError,
    UsageError,
)

__all__ = [
    "FORMATS",
    "Reread",
    "Row",
    "Rows",
    "id_of",
    "id_problem",
    "parse_mapping",
    "read_json_lines",
    "read_rows",
    "read_text",
    "row_of",
]

FORMATS = ("jsonl", "csv", "parquet")


@dataclass
class Row:
    """One row: its id, the prompt variables, and where it came from; ``error`` when it cannot be judged."""

    id: str
    values: dict[str, Any] = field(default_factory=dict)
    where: str = ""
    error: BadRowError | None = None


class Rows(Protocol):
    """Rows a run can go over more than once, and how many there are: a list, or :class:`Reread`."""

    def __iter__(self) -> Iterator[Row]: ...

    def __len__(self) -> int: ...


class Reread:
    """Rows read afresh on each pass (their file opened again), and how many: a run holds none of them at once.

    Each pass first checks that ``path`` is the file the first pass read
    (same inode, size and mtime): rows that changed between passes would be
    judged from values other than those counted and stamped.
    """

    def __init__(
        self,
        read: Callable[[], Iterator[Row]],
        count: int,
        path: Path | None = None,
        state: tuple[int, ...] | None = None,
    ) -> None:
        self._read, self._count, self._path, self._state = read, count, path, state

    @staticmethod
    def state_of(path: Path) -> tuple[int, ...]:
        try:
            stat = path.stat()
        except OSError:  # gone: no state, so never the one first read
            return ()
        return (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)

    def __iter__(self) -> Iterator[Row]:
        if self._path is not None and self._state is not None and self.state_of(self._path) != self._state:
            raise LocalJudgeError(
                f"{self._path} changed while the run was going over it; run again to judge the file as it is "
                "now: the rows judged so far are kept"
            )
        return self._read()

    def __len__(self) -> int:
        return self._count


def parse_mapping(text: str | None) -> dict[str, str]:
    """``inputs=question,outputs=answer`` -> {variable: column}."""
    mapping: dict[str, str] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        variable, sep, column = part.partition("=")
        if not sep or not variable.strip() or not column.strip():
            raise UsageError(
                Message(
                    "{mapping:mapping} takes VARIABLE=COLUMN pairs separated by commas, got {part!r}", part=part.strip()
                )
            )
        if variable.strip() in mapping:
            raise UsageError(
                Message("{mapping:mapping} names the variable {variable!r} twice", variable=variable.strip())
            )
        mapping[variable.strip()] = column.strip()
    return mapping


def read_rows(
    path: Path, *, file_format: str | None = None, mapping: Mapping[str, str] | None = None, id_field: str = "id"
) -> Iterator[Row]:
    """Every row of ``path`` in order (format from the suffix unless given); ids are ``id_field`` or the row number.

    An ``id_field`` other than ``id`` that no row has is an error once the rows are read: a misspelt name.
    """
    kind = file_format or _format_of(path)
    records = {"jsonl": _jsonl, "csv": _csv, "parquet": _parquet}[kind](path)
    seen: dict[str, tuple[str, Any]] = {}  # every row's id, a bad row's too: no two records may share one
    objects = named = 0
    for number, where, record in records:
        if isinstance(record, dict):
            objects += 1
            named += id_field in record
        row = _row(number, where, record, mapping or {}, id_field)
        if kind == "csv" and row.error is None:  # an empty cell no mapping asks for is an absent value
            row.values = {name: value for name, value in row.values.items() if value != ""}
        given = record.get(id_field) if isinstance(record, dict) else None
        if row.id in seen:
            row.error = DuplicateIdError(_repeated(row.id, given, *seen[row.id]), where=where)
            row.id = f"{row.id}@{where}"  # its own id in the results, beside the first row's
        seen[row.id] = (where, given)
        yield row
    if id_field != "id" and objects and not named:
        raise UsageError(
            Message(
                "no row of {path} has {field!r}, the {id_field} given; name a field the rows have, "
                "or leave it out to number the rows",
                path=str(path),
                field=id_field,
            )
        )


def read_json_lines(path: Path) -> list[Any]:
    """The values of a small JSONL file (few-shot examples); its first bad line is the error."""
    values = []
    for _, _, value in _jsonl(path, str(path)):
        if isinstance(value, BadRowError):
            raise value
        values.append(value)
    return values


def read_text(path: Path) -> str:
    """A UTF-8 text file (a prompt template); not UTF-8 is an error that says where."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InvalidEncodingError(f"is not UTF-8 (line {line}); save it as UTF-8", where=str(path)) from None


def id_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a row's id, or None: an id is text or a whole number, written as it is.

    Anything else would reach the results as Python's spelling of it
    (``True``, ``['a']``), which names no row of the file.
    """
    if isinstance(value, str) or _whole_number(value) is not None:
        return None
    kinds = {
        bool: "a boolean",
        float: "a number with a fraction",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }
    kind = kinds.get(type(value), type(value).__name__)
    return f"is {json.dumps(value, ensure_ascii=False, default=repr)} ({kind})"


def _whole_number(value: Any) -> int | None:
    """An integer of any library (numpy's, say: ``operator.index`` takes it), a boolean not counted."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def id_of(values: Mapping[str, Any], id_field: str, number: int) -> str:
    """A row's id as text: its ``id_field`` (text, or an integer's digits), else (absent, null or "") the row number.

    Raises ValueError, saying what the id is, for any other value.
    """
    if id_field not in values or values[id_field] is None or values[id_field] == "":
        return str(number)
    problem = id_problem(values[id_field])
    if problem is not None:
        raise ValueError(
            f"its {id_field!r} {problem}, which cannot be an id: an id is text or a whole number; "
            f"give the row one of those, or leave {id_field!r} out to number the row"
        )
    whole = _whole_number(values[id_field])
    return str(values[id_field] if whole is None else whole)


def row_of(values: Mapping[str, Any], id_field: str, number: int) -> Row:
    """A row given as a mapping (``score_rows``): its id as :func:`id_of` says, the rest its values."""
    where = f"row {number}"
    try:
        ident = id_of(values, id_field, number)
    except ValueError as exc:
        return Row(f"{number}@{where}", where=where, error=MalformedRowError(str(exc), where=where))
    return Row(ident, {name: value for name, value in values.items() if name != id_field}, where=where)


def _repeated(row: str, given: Any, first: str, first_given: Any) -> str:
    """The duplicate's message; ``1`` and ``"1"`` are the same id, which it says when the two are spelt apart."""
    if id_problem(given) or id_problem(first_given) or type(given) is type(first_given):
        return f"repeats the id {row!r} of {first}"
    mine, theirs = json.dumps(given, ensure_ascii=False), json.dumps(first_given, ensure_ascii=False)
    return (
        f"has the id {mine}, and {first} has {theirs}: ids are compared as text, so these are the same id; "
        "give every row an id of its own"
    )


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower().lstrip(".")
    kind = {"jsonl": "jsonl", "ndjson": "jsonl", "json": "jsonl", "csv": "csv", "parquet": "parquet"}.get(suffix)
    if kind is None:
        raise UsageError(
            Message(
                "{path}: cannot tell the format from {suffix!r}; name it with {file_format} {formats}",
                path=str(path),
                suffix=path.suffix,
                formats="|".join(FORMATS),
            )
        )
    return kind


def _row(number: int, where: str, record: Any, mapping: Mapping[str, str], id_field: str) -> Row:
    if isinstance(record, BadRowError):
        return Row(str(number), where=where, error=record)
    if not isinstance(record, dict):
        error: BadRowError = MalformedRowError(f"is a JSON {type(record).__name__}, not an object", where=where)
        return Row(str(number), where=where, error=error)
    if _has_lone_surrogate(record):
        return Row(
            str(number), where=where, error=InvalidEncodingError("holds text that is not valid Unicode", where=where)
        )
    try:
        row_id = id_of(record, id_field, number)
    except ValueError as exc:  # its own id, never the number a row may have as its id
        return Row(f"{number}@{where}", where=where, error=MalformedRowError(str(exc), where=where))
    mapped = {}
    for variable, column in mapping.items():  # read from the row as given, so one column may feed two variables
        if column not in record:
            error = MissingValueError(f"has no column {column!r} (mapped to {variable})", where=where)
            return Row(row_id, where=where, error=error)
        if record[column] is None or record[column] == "":
            error = MissingValueError(f"the {column!r} cell is empty (mapped to {variable})", where=where)
            return Row(row_id, where=where, error=error)
        mapped[variable] = record[column]
    values = {name: value for name, value in record.items() if name != id_field and name not in mapping.values()}
    return Row(row_id, {**values, **mapped}, where)


def _has_lone_surrogate(value: Any) -> bool:
    """JSON may spell half a surrogate pair (\\ud83d); such text cannot be written as UTF-8."""
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _jsonl(path: Path, name: str | None = None) -> Iterator[tuple[int, str, Any]]:
    with path.open("rb") as data:
        for number, line in enumerate(data, 1):
            where = f"{name or path.name}:{number}"
            if not line.strip():
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield (
                    number,
                    where,
                    InvalidEncodingError(f"is not UTF-8 (byte {exc.start + 1} of the line)", where=where),
                )
                continue
            try:
                yield number, where, bounded_json.loads(text.removeprefix("\ufeff") if number == 1 else text)
            except bounded_json.JSONLimitError as exc:
                yield number, where, MalformedRowError(f"is valid JSON, but {exc.msg}; flatten the row", where=where)
            except json.JSONDecodeError as exc:
                at = "at the end of the line" if exc.pos >= len(text.rstrip()) else f"at character {exc.pos + 1}"
                yield number, where, MalformedRowError(f"is not valid JSON: {exc.msg} ({at})", where=where)


def _csv(path: Path) -> Iterator[tuple[int, str, Any]]:
    """Rows of a CSV with a header line, every cell a string (an empty one included)."""
    text = path.read_bytes().decode("utf-8", errors="surrogateescape")  # bad bytes stay visible, row by row
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff"), newline=""), strict=True)
    try:
        if reader.fieldnames is None:
            return
    except csv.Error as exc:
        raise _unclosed(path, 1, exc) from None
    records = _strictly(reader, path)
    header = len(reader.fieldnames)
    for number, record in enumerate(records, 1):  # ids count data rows; "where" names the file's line
        where = f"{path.name}:{reader.line_num}"
        cells = [*record.values(), *(record.get(None) or [])]
        if any(isinstance(cell, str) and _has_bad_bytes(cell) for cell in cells):
            yield number, where, InvalidEncodingError("is not UTF-8", where=where)
        elif None in record:
            yield number, where, MalformedRowError(f"has more cells than the header's {header}", where=where)
        else:
            yield number, where, record


def _strictly(reader: csv.DictReader, path: Path) -> Iterator[dict[Any, Any]]:
    """The reader's records; a quote left open is an error naming its line, never rows merged into one cell.

    A lenient reader takes an unbalanced quote as the start of one cell that
    runs to the end of the file (or to the next quote), and the rows in
    between silently become its text.
    """
    while True:
        start = reader.line_num + 1
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise _unclosed(path, start, exc) from None
        yield record


def _unclosed(path: Path, line: int, error: csv.Error) -> UsageError:
    return UsageError(
        Message(
            "{path}:{line}: the CSV cannot be read past this line ({why}): a quote opened there is not "
            'closed where a cell ends. Close it, or write a quote inside a quoted cell twice ("")',
            path=str(path),
            line=line,
            why=str(error),
        )
    )


def _has_bad_bytes(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def _parquet(path: Path) -> Iterator[tuple[int, str, Any]]:
    try:
        import pyarrow.parquet as parquet
    except ImportError as exc:
        raise MissingDependencyError("Reading Parquet", "pyarrow") from exc
    table = parquet.read_table(path)
    for number, record in enumerate(table.to_pylist(), 1):
        yield number, f"{path.name}:row {number}", record
