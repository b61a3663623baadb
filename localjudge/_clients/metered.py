"""Any judge client, counting the tokens its answers took: what a dataset run's summary reports.

Put it inside the result cache (``CachedClient(MeteredClient(judge))``) and
it counts only what the model actually read and wrote in this run.
"""

from __future__ import annotations

import threading
from typing import Any

from ..types import AnyModelClient
from .base import WrappingClient, call_create, field_of

__all__ = ["MeteredClient"]


class MeteredClient(WrappingClient):
    """``client`` (a blocking ModelClient) with ``calls``, ``prompt_tokens`` and ``completion_tokens`` counted."""

    def __init__(self, client: AnyModelClient) -> None:
        super().__init__(client)
        self.calls = self.prompt_tokens = self.completion_tokens = 0
        self._lock = threading.Lock()

    def _complete(self, request: dict[str, Any]) -> Any:
        response = call_create(self.client, request)
        usage = field_of(response, "usage")
        with self._lock:
            self.calls += 1
            self.prompt_tokens += _count(field_of(usage, "prompt_tokens"))
            self.completion_tokens += _count(field_of(usage, "completion_tokens"))
        return response


def _count(value: object) -> int:
    """A token count as reported; a server that reports none (or nonsense) counts 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
