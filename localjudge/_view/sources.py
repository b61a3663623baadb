"""What a page shows beside the verdicts: the labels, and the rows that were judged.

A results file holds verdicts, not the rows they judged. The rows come from
the data file (given as the labels file: it has both), or, for the records
``check-judge --results`` wrote (``SET.results.jsonl``), from the shipped
set of that name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

from .._cli.commands.check import CHECK_SETS, load_set
from .._datasets.rows import read_rows
from ..errors import UsageError
from .index import RunIndex

__all__ = ["FIRST_BYTES", "open_runs", "read_data", "shipped_rows"]

#: what a page reads of a big file before it answers (about 5,000 rows); the rest is read behind it
FIRST_BYTES = 2 << 20


def read_data(path: Path, *, label_field: str = "label", id_field: str = "id") -> tuple[dict[str, Any], dict[str, Any]]:
    """The labels (id -> label) and the rows' values (id -> variables) of a data or labels file."""
    if not Path(path).is_file():
        raise UsageError(f"{path} is not a file; give the data file that was judged, or a file of ids and labels")
    labels: dict[str, Any] = {}
    values: dict[str, Any] = {}
    for row in read_rows(Path(path), id_field=id_field):
        if row.error is not None:
            continue
        found = dict(row.values)
        label = found.pop(label_field, None)
        if label not in (None, ""):
            labels[row.id] = label
        if found:
            values[row.id] = found
    if not labels and not values:
        raise UsageError(f"{path} has no row that could be read (JSONL, CSV or Parquet rows with an {id_field!r})")
    return labels, values


def shipped_rows(results: Path) -> Optional[dict[str, Any]]:
    """The rows of the shipped check set a ``check-judge --results`` file is named after, or None."""
    name = Path(results).name.removesuffix(".results.jsonl")
    if name not in CHECK_SETS:
        return None
    rows = load_set(CHECK_SETS[name])
    return {str(row.pop("id")): {k: v for k, v in row.items() if k != "label"} for row in rows}


def open_runs(
    paths: Sequence[Path],
    labels: Optional[Mapping[str, Any]] = None,
    values: Optional[Mapping[str, Any]] = None,
    *,
    background: bool = False,
) -> list[RunIndex]:
    """Each results file indexed, with the rows from ``values`` or else the shipped set it is named after.

    ``background``: read the first megabytes now and the rest in a thread (a page opens at once on a big file).
    """
    runs = []
    for path in paths:
        rows = values if values else shipped_rows(path)
        index = RunIndex(Path(path), labels=labels, values=rows, first=FIRST_BYTES if background else None)
        if background:
            index.read_in_background()
        runs.append(index)
    names = [index.name for index in runs]
    for index in runs:
        if names.count(index.name) > 1:  # two runs of one set: named by their folders too
            index.name = f"{index.path.parent.name}/{index.path.name}"
    return runs
