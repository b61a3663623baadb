"""One results record as the row of a table: its verdict, confidence and the flags the filters test.

Pure functions over a record as a results file holds it (``{"id", "result"}``
or ``{"id", "error"}``), so the index, the report and the tests all read a
record the same way. Whether a verdict is right against its label is not
decided here: :func:`~localjudge._trust.agreement.agreement` decides it, as
``agreement`` does on the command line.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from .._text import clip
from .._trust.agreement import Judged, judged
from .._trust.contradiction import contradicts

__all__ = [
    "LOW_CONFIDENCE",
    "RowFigures",
    "RowSummary",
    "Tallies",
    "confidence_of",
    "judge_of",
    "kind_of",
    "seconds_of",
    "summarize",
    "verdict_of",
]

#: a verdict given with less probability than this is "low confidence" in the rows' filter
LOW_CONFIDENCE = 0.6
#: what the overview says of a value no record gives
NOT_RECORDED = "not recorded"
#: characters of a comment or an error message shown in the table (the row's page shows all)
EXCERPT = 160


class RowSummary(NamedTuple):
    """What the table shows of a row, what its filters test and what the overview counts; the record stays whole beside it."""

    id: str
    failed: bool
    verdict: Optional[str]  # the score or a pair's winner, as label_text writes it
    confidence: Optional[float]  # the probability the judge gave its verdict
    consistent: Optional[bool]  # a pair asked in both orders: did the orders agree
    contradicts: bool  # the comment states the other verdict
    error_type: Optional[str]
    way: Optional[str]
    excerpt: str  # the comment, or the error's message, clipped
    judged: Optional[Judged] = None  # what the agreement figures read (trust.agreement)
    figures: Optional[RowFigures] = None  # what the overview counts; None for an error
    seconds: Optional[float] = None  # the row's wall-clock seconds, as its record gives them
    judge: Optional[str] = None  # the fingerprint of the judge the record names


class RowFigures(NamedTuple):
    """What the overview counts of a result beside its verdict: each a column of the index, summed or grouped there."""

    key: str
    score: str  # the score as JSON writes it
    winner: Optional[str]
    kind: str
    calibrated: bool
    cached: Optional[bool]  # None: the record does not say
    requests: int


@dataclass
class Tallies:
    """What a run's overview counts over its rows: from summaries (:meth:`of`), or from an index's columns in SQL."""

    rows: int = 0
    errors: Counter[str] = field(default_factory=Counter)  # failed rows by their error's type
    scores: Counter[str] = field(default_factory=Counter)
    winners: Counter[str] = field(default_factory=Counter)
    judges: Counter[str] = field(default_factory=Counter)  # rows by the judge they name
    ways: Counter[str] = field(default_factory=Counter)
    keys: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    calibrated: int = 0
    requests: int = 0
    contradicting: int = 0
    cached: Optional[int] = None  # None: no record says whether it came from the cache
    pairs: int = 0  # asked in both orders
    consistent: int = 0
    seconds: list[float] = field(default_factory=list)  # each timed row's seconds

    @classmethod
    def of(cls, summaries: Iterable[RowSummary]) -> Tallies:
        found = cls()
        for summary in summaries:
            found.rows += 1
            if summary.judge is not None:
                found.judges[summary.judge] += 1
            if summary.seconds is not None:
                found.seconds.append(summary.seconds)
            if summary.figures is None:
                found.errors[summary.error_type or "error"] += 1
                continue
            found.add(summary, summary.figures)
        return found

    def add(self, summary: RowSummary, figures: RowFigures) -> None:
        """One result's counts (an error's are counted by :meth:`of`)."""
        self.kinds[figures.kind] += 1
        self.scores[figures.score] += 1
        self.keys[figures.key] += 1
        self.ways[summary.way or NOT_RECORDED] += 1
        if figures.winner is not None:
            self.winners[figures.winner] += 1
        if summary.consistent is not None:
            self.pairs += 1
            self.consistent += summary.consistent
        self.calibrated += figures.calibrated
        if figures.cached is not None:
            self.cached = (self.cached or 0) + figures.cached
        self.requests += figures.requests
        self.contradicting += summary.contradicts


def _metadata(result: Mapping[str, Any]) -> Mapping[str, Any]:
    found = result.get("metadata")
    return found if isinstance(found, Mapping) else {}


def verdict_of(record: Mapping[str, Any]) -> Optional[str]:
    """A result's verdict as text (a pair's winner, else its score); None for an error."""
    found = judged(record)
    return None if found is None else found.verdict


def confidence_of(record: Mapping[str, Any]) -> Optional[float]:
    """The probability the judge gave its verdict; where the verdict has none, the likeliest value's (as agreement reads it)."""
    found = judged(record)
    return None if found is None or found.confidence is None else found.confidence[1]


def seconds_of(record: Mapping[str, Any]) -> Optional[float]:
    """The wall-clock seconds a record says its row took; None where it says none (or a number no clock gives)."""
    taken = record.get("seconds")
    if isinstance(taken, (int, float)) and not isinstance(taken, bool) and math.isfinite(taken) and taken >= 0:
        return float(taken)
    return None


def judge_of(record: Mapping[str, Any]) -> Optional[str]:
    """The fingerprint of the judge a record names (``judged.judge``), or None."""
    stamp = record.get("judged")
    return str(stamp["judge"]) if isinstance(stamp, Mapping) and stamp.get("judge") else None


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
        found = judged(record)
        return RowSummary(
            id=str(record.get("id")),
            failed=False,
            verdict=None if found is None else found.verdict,
            confidence=None if found is None or found.confidence is None else found.confidence[1],
            consistent=consistent if isinstance(consistent, bool) else None,
            contradicts=contradicts(result),
            error_type=None,
            way=None if way is None else way if isinstance(way, str) else json.dumps(way, ensure_ascii=False),
            excerpt=clip(comment, EXCERPT) if isinstance(comment, str) else "",
            judged=found,
            figures=_figures(record, result, metadata),
            seconds=seconds_of(record),
            judge=judge_of(record),
        )
    found_error: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
    message = found_error.get("message")
    return RowSummary(
        id=str(record.get("id")),
        failed=True,
        verdict=None,
        confidence=None,
        consistent=None,
        contradicts=False,
        error_type=str(found_error.get("type", "error")),
        way=None,
        excerpt=clip(message if isinstance(message, str) else json.dumps(found_error, ensure_ascii=False), EXCERPT),
        seconds=seconds_of(record),
        judge=judge_of(record),
    )


def json_text(value: Any) -> str:
    """``value`` as JSON writes it; true, false and null without a call to the encoder (a row's score, 100,000 times)."""
    if value is True or value is False or value is None:
        return "true" if value else "false" if value is False else "null"
    return json.dumps(value, ensure_ascii=False)


def _count(value: Any) -> int:
    """A count of requests as a run writes it; past 64 bits (hand-edited) it counts none, as sqlite holds no more."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63:
        return value
    return 0


def _figures(record: Mapping[str, Any], result: Mapping[str, Any], metadata: Mapping[str, Any]) -> RowFigures:
    winner = metadata.get("winner")
    cached = metadata.get("cached")
    return RowFigures(
        key=str(result.get("key")),
        score=json_text(result.get("score")),
        winner=winner if isinstance(winner, str) else None,
        kind="pair" if "winner" in metadata else "answer",  # kind_of(record) without the row's values
        calibrated=metadata.get("calibrated") is True,
        cached=None if "cached" not in metadata else cached is True,
        requests=_count(metadata.get("requests")),
    )
