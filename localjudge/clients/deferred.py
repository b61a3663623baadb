"""A client that resolves its model spec on first use.

In a fallback chain the first model may be missing or broken; resolving it
lazily turns a load failure into an ordinary, retryable call failure, so the
chain moves on instead of failing before it starts.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

from .base import ChatClient, ChatCompletion, call_create


class DeferredClient(ChatClient):
    def __init__(self, spec: str, *, base_url: Optional[str] = None, **options: Any) -> None:
        super().__init__()
        self.spec = spec
        self.name = spec
        self._options = {"base_url": base_url, **options}
        self._client: Any = None
        self._lock = threading.Lock()

    def resolve(self) -> Any:
        with self._lock:
            if self._client is None:
                from ..models import resolve_model

                self._client = resolve_model(self.spec, **self._options)
            return self._client

    def check_schema(self, schema: dict[str, Any]) -> None:
        """Local specs decode under our grammar, so their schema rules apply before loading."""
        if not self.spec.startswith("openai:"):
            from ..decoding import check_schema

            check_schema(schema)

    def _complete(self, request: dict[str, Any]) -> ChatCompletion:
        return call_create(self.resolve(), request)
