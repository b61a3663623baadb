"""Whether a verdict found in a results file has the shape a run writes, so that resuming may keep it.

A results file is plain text, and a hand-edited line (``"score": "banana"``,
``"result": "garbage"``) would otherwise count as judged: resuming would skip
its row and the summary would count a verdict no judge gave.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["kept_record_problem", "say_set_aside"]


def kept_record_problem(record: Mapping[str, Any]) -> str | None:
    """What is wrong with a verdict's record as a run writes it, or None: an error's record is judged again anyway.

    A run writes ``id`` (text or a whole number), ``result`` (an object, or
    a list of them from an evaluator that gives several; an OpenEvals result,
    the one with a ``key``, holds a boolean or numeric ``score``, or none),
    and since stamps were added ``judged`` (an object) and ``seconds`` (a
    number). A result of another schema is an object of that schema's
    fields, whose types are its own.
    """
    if "result" not in record:
        return None
    row_id, result = record.get("id"), record["result"]
    if isinstance(row_id, bool) or not isinstance(row_id, str | int):
        return f"its id is {row_id!r}, neither text nor a whole number"
    results = result if isinstance(result, list) else [result]  # an evaluator may give several results
    for one in results:
        if not isinstance(one, Mapping):
            return f"the result of {row_id!r} is {_json_kind(one)}, not an object"
        score = one.get("score")
        if "key" in one and (isinstance(score, str) or not isinstance(score, bool | int | float | None)):
            return f"the score of {row_id!r} is {_json_kind(score)} ({score!r}), neither a boolean nor a number"
    if "judged" in record and not isinstance(record["judged"], Mapping):
        return f"the judged stamp of {row_id!r} is {_json_kind(record['judged'])}, not an object"
    seconds = record.get("seconds", 0)
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return f"the seconds of {row_id!r} are {_json_kind(seconds)}, not a number"
    return None


def say_set_aside(path: Path, problems: Sequence[str]) -> None:
    """One line on stderr for the verdicts of ``path`` that resuming judges again rather than keeps."""
    if problems:
        print(
            f"{path}: {len(problems)} record(s) set aside and judged again, not kept: the first because {problems[0]}",
            file=sys.stderr,
        )


def _json_kind(value: Any) -> str:
    kinds = {bool: "a boolean", int: "a number", float: "a number", str: "text", list: "a list", dict: "an object"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)
