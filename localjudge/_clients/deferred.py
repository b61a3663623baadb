"""A client that loads its model on first use.

In a fallback chain the first model may be missing or broken; loading it
lazily turns a load failure into an ordinary, retryable call failure, so the
chain moves on instead of failing before it starts. The loader is handed in
(the spec resolver passes one), so this module knows nothing of specs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from ..types import SupportsCacheIdentity, offers
from .base import ChatClient, ChatResponse, call_create


class DeferredClient(ChatClient):
    """``DeferredClient(name, load)``: ``load()`` builds the real client on the first call.

    ``local=True`` says the client will decode under our grammar, so the
    schema refusals of local decoding apply before anything is loaded.
    """

    def __init__(self, name: str, load: Callable[[], Any], *, local: bool = True) -> None:
        super().__init__()
        self.name = name
        self._load = load
        self._local = local
        self._client: Any = None
        self._lock = threading.Lock()

    def resolve(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._load()
            return self._client

    def cache_identity(self) -> dict[str, Any] | None:
        client = self.resolve()
        return client.cache_identity() if offers(client, SupportsCacheIdentity) else None

    def check_schema(self, schema: Mapping[str, Any]) -> None:
        if self._local:
            from .._decoding import check_schema

            check_schema(schema)

    def _complete(self, request: dict[str, Any]) -> ChatResponse:
        response: ChatResponse = call_create(self.resolve(), request)
        return response
