"""The one failure policy, as the table in its docstring: (failure, retry here, another client, another server)."""

from __future__ import annotations

import httpx
import pytest

from localjudge._clients.failure_policy import another_client, another_server, retry_endpoint
from localjudge.errors import (
    ContextOverflowError,
    JudgeTimeoutError,
    ModelLoadError,
    OutputParseError,
    RemoteCallError,
    RemoteConnectError,
    RemoteStatusError,
    RequestCancelledError,
    TruncatedOutputError,
    UsageError,
)


def status(code: int) -> RemoteStatusError:
    """What the remote client raises after its last attempt."""
    return RemoteStatusError(f"HTTP {code}", status_code=code, retryable=True)


class ForeignStatus(Exception):
    """Another library's status error (the openai SDK's shape: a status_code attribute)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"HTTP {code}")
        self.status_code = code


TABLE = [
    # failure, another client, another server
    (RemoteConnectError("connection refused"), True, True),
    (JudgeTimeoutError("no answer in 30 s"), True, True),
    (RemoteCallError("HTTP 200 answer is not a chat completion"), True, True),
    (status(408), True, True),
    (status(409), True, True),
    (status(429), True, True),
    (status(500), True, True),
    (status(503), True, True),
    (status(400), True, False),
    (status(401), True, False),
    (status(403), True, False),
    (status(404), True, False),
    (status(422), True, False),
    (OutputParseError("not JSON", raw_output="oops"), True, False),
    (TruncatedOutputError("cut", raw_output='{"score": tr'), True, False),
    (ModelLoadError("not a GGUF"), True, True),
    (ContextOverflowError("prompt too long"), False, False),
    (RequestCancelledError("the client disconnected"), False, False),
    (UsageError("bad call"), False, False),
    (ForeignStatus(503), True, True),
    (ForeignStatus(400), True, False),
    (httpx.ConnectError("refused"), True, True),
    (ConnectionResetError("reset"), True, True),
    (ValueError("a bug"), False, False),
]


@pytest.mark.parametrize(("failure", "client", "server"), TABLE, ids=lambda v: getattr(v, "args", [""])[0] or "")
def test_each_failure_answers_both_questions(failure, client, server):
    assert another_client(failure) is client
    assert another_server(failure) is server


@pytest.mark.parametrize(
    ("code", "again"),
    [
        (400, False),
        (401, False),
        (404, False),
        (408, True),
        (409, True),
        (429, True),
        (500, True),
        (503, True),
        (599, True),
    ],
)
def test_retrying_the_same_endpoint_is_for_what_passes_by_itself(code, again):
    assert retry_endpoint(code) is again


def test_a_pool_member_that_refuses_the_request_is_not_rested():
    """Once a pool rested a member that answered 400 and sent the row to the next server (the remote client's
    last error said retryable=True whatever the status)."""
    from localjudge._clients.pool import PoolClient
    from localjudge.testing import ScriptedClient

    class Refusing(ScriptedClient):
        def _complete(self, request):
            raise status(400)

    other = ScriptedClient(['{"score": true}'])
    pool = PoolClient(Refusing([]), other, rest=60)
    with pytest.raises(RemoteStatusError):
        pool.chat.completions.create(messages=[{"role": "user", "content": "x"}])
    assert other.requests == [] and pool._state.resting_until == [0.0, 0.0]
