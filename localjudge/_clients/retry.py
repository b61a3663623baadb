"""How long to wait before trying a remote call again (whether to: :mod:`.failure_policy`).

Kept free of I/O so the sync and async clients make identical decisions and the
rules can be tested without a network.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["RetryPolicy", "parse_retry_after"]


def parse_retry_after(headers: Mapping[str, str], now: Callable[[], float] = time.time) -> float | None:
    """Seconds the server asks us to wait, from ``retry-after-ms`` or ``Retry-After``.

    ``Retry-After`` may be a number of seconds or an HTTP date. Unreadable or
    negative values are ignored (None), a date in the past means "now" (0).
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = -1.0
        if value >= 0 and value == value:  # not NaN
            return value
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        return max(0.0, when.timestamp() - now())
    if value != value or value < 0 or value == float("inf"):
        return None
    return value


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter; a server's ``Retry-After`` wins, up to a cap.

    ``max_retries`` counts extra attempts: 2 means at most 3 requests.
    """

    max_retries: int = 2
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ValueError("max_retries must be an integer >= 0")
        for name in ("backoff", "max_backoff", "max_retry_after"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")

    @property
    def attempts(self) -> int:
        return self.max_retries + 1

    def delay(
        self, retry_index: int, retry_after: float | None = None, rng: Callable[[], float] = random.random
    ) -> float:
        """Seconds to wait before retry number ``retry_index`` (0 for the first retry)."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        base = min(self.max_backoff, self.backoff * (2**retry_index))
        # Jitter down by up to a quarter so many clients don't retry in lockstep.
        return float(base * (1.0 - 0.25 * rng()))
