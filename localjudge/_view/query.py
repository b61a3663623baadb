"""What one page of the run's table asks for (a filter, words to find, an order, a window) and what it gets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import UsageError
from .records import LOW_CONFIDENCE

__all__ = ["FILTERS", "SORTS", "Page", "RowQuery"]

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
