"""A batch run's summary, counted as rows finish: running totals, never the records themselves.

Its memory is bounded by the number of distinct scores, winners and error
types a run meets, not by its rows: a million rows cost what ten do.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["COUNTERS", "BatchSummary", "addresses_judge"]

#: what an evaluator may count of its own work (its ``counters()``), summed into a run's summary
COUNTERS = ("cached", "model_calls", "prompt_tokens", "completion_tokens")


@dataclass
class BatchSummary:
    """What a run did: rows by outcome, errors by type, the scores of its rows, how long it took.

    ``scores`` and ``winners`` count every verdict the rows have, those a
    resumed run kept (``skipped``) among them: a summary of the data, not of
    the last run's share of it.
    """

    total: int = 0
    skipped: int = 0
    scored: int = 0
    failed: int = 0
    cached: int = 0  # answers that came from the result cache (set by the caller that has the cache)
    model_calls: int = 0  # answers the model gave in this run, and the tokens they took (set by the caller that meters)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    errors: Counter[str] = field(default_factory=Counter)  # error type -> rows
    scores: Counter[str] = field(default_factory=Counter)  # a score as JSON text ("true", "0.5") -> rows
    winners: Counter[str] = field(default_factory=Counter)  # a pair's metadata.winner ("A", "B", "tie") -> rows
    addressing: int = 0  # verdicts whose answer spoke to the judge (metadata.addresses_judge)
    seconds: float = 0.0
    stopped_early: bool = False  # fail_fast stopped the run

    def count(self, record: Mapping[str, Any]) -> None:
        """Count one finished row's record."""
        if "result" in record:
            self.scored += 1
            self.count_verdict(record["result"])
        else:
            self.failed += 1
            self.errors[record["error"]["type"]] += 1

    def count_verdict(self, result: Any) -> None:
        """Count a verdict's score (and a pair's winner): one judged now, or one kept from an earlier run."""
        self.scores[json.dumps(result.get("score") if isinstance(result, Mapping) else None)] += 1
        winner = _winner(result)
        if winner is not None:
            self.winners[winner] += 1
        if addresses_judge(result):
            self.addressing += 1

    def add_counters(self, counters: Mapping[str, int]) -> None:
        """Add an evaluator's counters (:data:`COUNTERS`)."""
        for name in COUNTERS:
            setattr(self, name, getattr(self, name) + int(counters.get(name, 0)))

    @property
    def mean_score(self) -> float | None:
        """The mean of the numeric scores counted (true counts 1, false 0); None when there were none."""
        values = [(float(json.loads(text)), n) for text, n in self.scores.items() if _is_number(text)]
        count = sum(n for _, n in values)
        return sum(v * n for v, n in values) / count if count else None

    @property
    def rows_per_second(self) -> float:
        done = self.scored + self.failed
        return done / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows": self.total,
            "scored": self.scored,
            "cached": self.cached,
            "model_calls": self.model_calls,
            "tokens": {"prompt": self.prompt_tokens, "completion": self.completion_tokens},
            "skipped": self.skipped,
            "failed": self.failed,
            "errors": dict(self.errors.most_common()),
            "scores": dict(self.scores.most_common()),
            "winners": dict(self.winners.most_common()),
            "addresses_judge": self.addressing,
            "mean_score": self.mean_score,
            "seconds": round(self.seconds, 3),
            "rows_per_second": round(self.rows_per_second, 3),
            "stopped_early": self.stopped_early,
        }


def addresses_judge(result: Any) -> bool:
    """Whether a verdict's answer spoke to the judge (``metadata.addresses_judge``, set where a judge screens it)."""
    metadata = result.get("metadata") if isinstance(result, Mapping) else None
    return isinstance(metadata, Mapping) and metadata.get("addresses_judge") is True


def _winner(result: Any) -> str | None:
    """A pair's verdict as its metadata names it, or None for a result that is not a pair's."""
    metadata = result.get("metadata") if isinstance(result, Mapping) else None
    winner = metadata.get("winner") if isinstance(metadata, Mapping) else None
    return winner if isinstance(winner, str) else None


def _is_number(text: str) -> bool:
    value = json.loads(text)
    return isinstance(value, (bool, int, float))
