"""How a batch run tells the files it writes beside its results from files it did not write: by content.

The rule that keeps a run off the user's files (:mod:`localjudge._output_plan`)
lets an output replace a file only where that output wrote it. The results
file and the judge's description say so themselves
(:func:`~localjudge._datasets.results_file.is_results_file`,
:func:`~localjudge._datasets.judge_file.is_judge_file`); here are the CSV the
results are flattened into and the run's summary.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from .. import _bounded_json as bounded_json
from .batch import flatten_record
from .results_file import read_results

__all__ = ["SUMMARY_FIELDS", "is_results_csv", "is_summary_file"]

#: the fields every summary has (:meth:`~localjudge._datasets.batch.BatchSummary.as_dict`)
SUMMARY_FIELDS = frozenset({"rows", "scored", "skipped", "failed", "errors", "seconds"})
#: the largest summary a reader takes: a summary counts things, it holds no rows
_SUMMARY_BYTES = 1 << 20
#: the columns of a flattened record from the default score schema, besides those under metadata. and error.
_COLUMNS = frozenset({"id", "key", "score", "comment"})


def is_results_csv(path: Path, results: Path) -> bool:
    """Whether ``path`` is a CSV of flattened results: an ``id`` column first, and only columns a record gives.

    A record's columns are the default schema's, ``metadata.*`` and
    ``error.*``, or any column a record of ``results`` flattens to (a schema
    of one's own); a data file's ``inputs`` and ``outputs`` are none of them.
    """
    try:
        with Path(path).open(encoding="utf-8", newline="") as handle:
            header = next(csv.reader(handle), [])
    except csv.Error:
        return False
    if not header or header[0] != "id":
        return False
    known = set(_COLUMNS)
    if Path(results).is_file():
        known.update(name for record in read_results(results) for name in flatten_record(record))
    return all(name in known or name.startswith(("metadata.", "error.")) for name in header)


def is_summary_file(path: Path) -> bool:
    """Whether ``path`` holds a run's summary as JSON: an object with every field a summary has."""
    with Path(path).open("rb") as handle:
        data = handle.read(_SUMMARY_BYTES + 1)
    if len(data) > _SUMMARY_BYTES:
        return False
    try:
        document = bounded_json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(document, dict) and SUMMARY_FIELDS <= set(document)
