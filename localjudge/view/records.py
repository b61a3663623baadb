"""One results record as the row of a table: its verdict, confidence and the flags the filters test.

Pure functions over a record as a results file holds it (``{"id", "result"}``
or ``{"id", "error"}``), so the index, the report and the tests all read a
record the same way. Whether a verdict is right against its label is not
decided here: :func:`~localjudge.trust.agreement.agreement` decides it, as
``agreement`` does on the command line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from .._text import clip
from ..trust.agreement import label_text
from ..trust.contradiction import contradicts

__all__ = ["LOW_CONFIDENCE", "RowSummary", "confidence_of", "kind_of", "summarize", "verdict_of"]

#: a verdict given with less probability than this is "low confidence" in the rows' filter
LOW_CONFIDENCE = 0.6
#: characters of a comment or an error message shown in the table (the row's page shows all)
EXCERPT = 160


@dataclass(frozen=True)
class RowSummary:
    """What the table shows of a row and what its filters test; the whole record stays in the index."""

    id: str
    failed: bool
    verdict: Optional[str]  # the score or a pair's winner, as label_text writes it
    confidence: Optional[float]  # the probability the judge gave its verdict
    consistent: Optional[bool]  # a pair asked in both orders: did the orders agree
    contradicts: bool  # the comment states the other verdict
    error_type: Optional[str]
    way: Optional[str]
    excerpt: str  # the comment, or the error's message, clipped


def _metadata(result: Mapping[str, Any]) -> Mapping[str, Any]:
    found = result.get("metadata")
    return found if isinstance(found, Mapping) else {}


def verdict_of(record: Mapping[str, Any]) -> Optional[str]:
    """A result's verdict as text (a pair's winner, else its score); None for an error."""
    result = record.get("result")
    if not isinstance(result, Mapping):
        return None
    metadata = _metadata(result)
    value = metadata["winner"] if "winner" in metadata else result.get("score")
    return None if value is None else label_text(value)


def confidence_of(record: Mapping[str, Any], verdict: Optional[str] = None) -> Optional[float]:
    """The probability the judge gave its verdict; where the verdict has none, the likeliest value's (as agreement reads it).

    ``verdict``: the record's, where the caller has it already.
    """
    result = record.get("result")
    if not isinstance(result, Mapping):
        return None
    probabilities = _metadata(result).get("probabilities")
    if not isinstance(probabilities, Mapping):
        return None
    given = {
        label_text(k): float(v)
        for k, v in probabilities.items()
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
    if not given:
        return None
    verdict = verdict if verdict is not None else verdict_of(record)
    return given[verdict] if verdict in given else max(given.values())


def kind_of(record: Mapping[str, Any], values: Optional[Mapping[str, Any]] = None) -> str:
    """``pair``, ``trajectory`` or ``answer``: which of the row's views fits the record."""
    result = record.get("result")
    if isinstance(result, Mapping) and "winner" in _metadata(result):
        return "pair"
    if values and ("outputs_a" in values or "outputs_b" in values):
        return "pair"
    outputs = (values or {}).get("outputs")
    if isinstance(outputs, list) or (isinstance(outputs, Mapping) and "messages" in outputs):
        return "trajectory"
    return "answer"


def summarize(record: Mapping[str, Any]) -> RowSummary:
    """The table's view of one record."""
    result = record.get("result")
    error = record.get("error")
    if isinstance(result, Mapping):
        metadata = _metadata(result)
        consistent = metadata.get("consistent")
        comment = result.get("comment")
        way = metadata.get("way")
        verdict = verdict_of(record)
        return RowSummary(
            id=str(record.get("id")),
            failed=False,
            verdict=verdict,
            confidence=confidence_of(record, verdict),
            consistent=consistent if isinstance(consistent, bool) else None,
            contradicts=contradicts(result),
            error_type=None,
            way=way if isinstance(way, str) else None,
            excerpt=clip(comment, EXCERPT) if isinstance(comment, str) else "",
        )
    found: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
    message = found.get("message")
    return RowSummary(
        id=str(record.get("id")),
        failed=True,
        verdict=None,
        confidence=None,
        consistent=None,
        contradicts=False,
        error_type=str(found.get("type", "error")),
        way=None,
        excerpt=clip(message if isinstance(message, str) else json.dumps(found, ensure_ascii=False), EXCERPT),
    )
