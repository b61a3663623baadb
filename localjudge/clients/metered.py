"""Any judge client, counting the tokens its answers took: what a dataset run's summary reports.

Put it inside the result cache (``CachedClient(MeteredClient(judge))``) and
it counts only what the model actually read and wrote in this run.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from .base import WrappingClient, call_create

__all__ = ["MeteredClient"]


class MeteredClient(WrappingClient):
    """``client`` (a blocking ModelClient) with ``calls``, ``prompt_tokens`` and ``completion_tokens`` counted."""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.calls = self.prompt_tokens = self.completion_tokens = 0
        self._lock = threading.Lock()

    def _complete(self, request: dict[str, Any]) -> Any:
        response = call_create(self.client, request)
        usage = _field(response, "usage")
        with self._lock:
            self.calls += 1
            self.prompt_tokens += _count(_field(usage, "prompt_tokens"))
            self.completion_tokens += _count(_field(usage, "completion_tokens"))
        return response


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def _count(value: Any) -> int:
    """A token count as reported; a server that reports none (or nonsense) counts 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
