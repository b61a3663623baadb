"""What a failure means for the next try: the one policy of the retry loop, fallback chains and pools.

Two questions, asked of every failure:

- **retry this endpoint?** (the remote client's retry loop, with backoff):
  only what passes by itself, a timeout, a dropped connection or a busy
  server;
- **move on?** to *another client* (a fallback chain: another model or
  provider, which may accept what this one refused) or to *another server
  of the same model* (a pool: it gets the same request and writes the same
  answer, so only a failure of the server itself is worth it).

| failure | retry here | another client | another server |
| --- | --- | --- | --- |
| refused or dropped connection, timeout | yes | yes | yes |
| HTTP 408, 409, 429, 5xx | yes | yes | yes |
| HTTP 400, 401, 403, 404, 422 and other 4xx | no | yes | no |
| a reply that is not a chat completion | yes | yes | yes |
| an answer that is not JSON or off the schema, cut at max_tokens | - | yes | no |
| a local model that failed to load or run | - | yes | yes |
| a prompt too long for the context, a bad call (``UsageError``) | - | no | no |

Errors of other libraries (the openai SDK, httpx) are read by their class
names and ``status_code``, so neither library has to be installed.
"""

from __future__ import annotations

import builtins

from ..errors import JudgeRuntimeError, LocalJudgeError, ModelError, RemoteCallError

__all__ = ["RETRY_STATUSES", "another_client", "another_server", "network_failed", "retry_endpoint"]

#: request timeout, conflict (a busy lock upstream), rate limit; and every 5xx
RETRY_STATUSES = frozenset({408, 409, 429})

# Exception classes of other libraries that mean the endpoint failed, matched by name.
_FOREIGN_TRANSPORT_ERRORS = frozenset(
    {"APIConnectionError", "APITimeoutError", "APIStatusError", "APIError", "HTTPError", "TransportError"}
)


def retry_endpoint(status_code: int) -> bool:
    """Whether an HTTP status is worth the same request to the same endpoint again, after a wait."""
    return status_code in RETRY_STATUSES or 500 <= status_code <= 599


def network_failed(exc: BaseException) -> bool:
    """Another library's error about the network: a refused or dropped connection, a timeout."""
    if isinstance(exc, (ConnectionError, builtins.TimeoutError)):
        return True
    return any(cls.__name__ in _FOREIGN_TRANSPORT_ERRORS for cls in type(exc).__mro__)


def another_client(exc: BaseException) -> bool:
    """Whether another client (a fallback chain's next) may succeed where this one failed.

    Our runtime errors say so with ``retryable``; usage errors never move on
    (the next client would get the same bad call).
    """
    if isinstance(exc, JudgeRuntimeError):
        return bool(exc.retryable)
    if isinstance(exc, LocalJudgeError):
        return False
    return isinstance(getattr(exc, "status_code", None), int) or network_failed(exc)


def another_server(exc: BaseException) -> bool:
    """Whether another server of the same model (a pool's next member) may succeed: only if this server failed."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and not isinstance(status, bool):
        return retry_endpoint(status)
    if isinstance(exc, (RemoteCallError, ModelError)):
        return bool(exc.retryable)
    if isinstance(exc, LocalJudgeError):
        return False
    return network_failed(exc)
