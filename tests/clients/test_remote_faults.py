"""One test per network fault, through real loopback sockets, for the sync and the async client.

Each fault ends in a success after retrying or in the typed error, within a
loose time budget, and leaves no connection open. Budgets are generous upper
bounds (slow CI machines) plus lower bounds where a wait is the point.
"""

from __future__ import annotations

import email.utils
import json
import time

import pytest
from support.fault_server import completion, completion_body, drip, hang, reset, respond, truncated
from support.remote_helpers import REQUEST, run

from localjudge.errors import JudgeTimeoutError, RemoteCallError, RemoteConnectError, RemoteStatusError

pytestmark = pytest.mark.parametrize("mode", ["sync", "async"])

ANSWER = json.dumps(completion_body('{"score": true}'))


def _score(result) -> bool:
    return json.loads(result.response.choices[0].message.content)["score"]


def test_connection_reset_then_success(mode, fault_server):
    server = fault_server(reset(), completion())
    result = run(mode, server.base_url, server)
    assert result.error is None, result.error
    assert _score(result) is True
    assert len(server.requests) == 2
    assert result.elapsed < 5
    result.assert_no_leaks()


def test_connection_reset_every_time_is_a_transport_error(mode, fault_server):
    server = fault_server(reset())
    result = run(mode, server.base_url, server, max_retries=2)
    assert isinstance(result.error, RemoteCallError)
    assert len(result.error.attempts) == 3
    assert len(server.requests) == 3
    assert "3 attempts" in str(result.error)
    result.assert_no_leaks()


def test_connection_refused_is_a_connect_error(mode, fault_server):
    server = fault_server(completion())
    url = server.base_url
    server.close()  # nothing listens on the port any more
    result = run(mode, url, max_retries=1)
    assert isinstance(result.error, RemoteConnectError)
    assert len(result.error.attempts) == 2
    assert result.elapsed < 5


def test_connect_timeout(mode, blackhole):
    result = run(mode, blackhole.base_url, connect_timeout=0.3, max_retries=1)
    assert isinstance(result.error, JudgeTimeoutError)
    assert "no connection within 0.3 s" in str(result.error)
    assert len(result.error.attempts) == 2
    assert 0.5 <= result.elapsed < 5
    assert result.busy_connections == 0


def test_read_timeout_then_success(mode, fault_server):
    server = fault_server(hang(), completion())
    result = run(mode, server.base_url, server, read_timeout=0.3)
    assert result.error is None, result.error
    assert len(server.requests) == 2
    assert 0.25 <= result.elapsed < 5
    result.assert_no_leaks()


def test_read_timeout_every_time_is_a_timeout_error(mode, fault_server):
    server = fault_server(hang())
    result = run(mode, server.base_url, server, read_timeout=0.3, max_retries=1)
    assert isinstance(result.error, JudgeTimeoutError)
    assert "no data for 0.3 s" in result.error.attempts[0]
    assert 0.5 <= result.elapsed < 5
    result.assert_no_leaks()


def test_server_errors_then_success(mode, fault_server):
    server = fault_server(respond(500), respond(502), respond(503), completion())
    result = run(mode, server.base_url, server, max_retries=3)
    assert result.error is None, result.error
    assert _score(result) is True
    assert len(server.requests) == 4
    assert result.elapsed < 5
    result.assert_no_leaks()


def test_server_errors_every_time_list_each_attempt(mode, fault_server):
    server = fault_server(respond(502, "bad gateway"), respond(503, "overloaded"), respond(500, "boom"))
    result = run(mode, server.base_url, server, max_retries=2)
    assert isinstance(result.error, RemoteStatusError)
    assert result.error.status_code == 500
    assert result.error.body == "boom"
    assert [a.split(" ", 2)[1] for a in result.error.attempts] == ["502", "503", "500"]
    assert "overloaded" in str(result.error)
    result.assert_no_leaks()


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_other_client_errors_are_not_retried(mode, status, fault_server):
    server = fault_server(respond(status, "no"), completion())
    result = run(mode, server.base_url, server)
    assert isinstance(result.error, RemoteStatusError)
    assert result.error.status_code == status
    assert len(server.requests) == 1
    result.assert_no_leaks()


def test_429_waits_as_long_as_retry_after_says(mode, fault_server):
    server = fault_server(respond(429, "slow down", {"Retry-After": "1"}), completion())
    result = run(mode, server.base_url, server, backoff=0.01)
    assert result.error is None, result.error
    assert 0.9 <= result.elapsed < 5
    result.assert_no_leaks()


def test_429_retry_after_as_http_date(mode, fault_server):
    later = email.utils.formatdate(time.time() + 2, usegmt=True)
    server = fault_server(respond(429, "slow down", {"Retry-After": later}), completion())
    result = run(mode, server.base_url, server, backoff=0.01)
    assert result.error is None, result.error
    assert 0.5 <= result.elapsed < 6  # the date has one-second resolution
    result.assert_no_leaks()


def test_429_retry_after_is_capped(mode, fault_server):
    server = fault_server(respond(429, "come back in an hour", {"Retry-After": "3600"}), completion())
    result = run(mode, server.base_url, server, backoff=0.01, max_retry_after=0.4)
    assert result.error is None, result.error
    assert 0.35 <= result.elapsed < 5
    result.assert_no_leaks()


def test_truncated_body_then_success(mode, fault_server):
    server = fault_server(truncated(ANSWER[:60]), completion())
    result = run(mode, server.base_url, server)
    assert result.error is None, result.error
    assert len(server.requests) == 2
    result.assert_no_leaks()


def test_truncated_body_every_time_is_a_transport_error(mode, fault_server):
    server = fault_server(truncated(ANSWER[:60]))
    result = run(mode, server.base_url, server, max_retries=1)
    assert type(result.error) is RemoteCallError
    assert "broke off" in str(result.error)
    result.assert_no_leaks()


def test_cut_off_json_document_is_retried(mode, fault_server):
    # The HTTP framing is complete, but the JSON document inside it stops halfway.
    server = fault_server(respond(200, ANSWER[:60], {"Content-Type": "application/json"}), completion())
    result = run(mode, server.base_url, server)
    assert result.error is None, result.error
    assert len(server.requests) == 2
    result.assert_no_leaks()


def test_non_json_body_is_a_transport_error_with_a_hint(mode, fault_server):
    server = fault_server(
        respond(200, "<html><body>Welcome to the web UI</body></html>", {"Content-Type": "text/html"})
    )
    result = run(mode, server.base_url, server, max_retries=1)
    assert type(result.error) is RemoteCallError
    assert "not JSON" in str(result.error)
    assert "/v1" in str(result.error)
    assert "Welcome" in str(result.error)
    result.assert_no_leaks()


def test_slow_drip_past_the_deadline_is_a_timeout(mode, fault_server):
    # A byte every 50 ms never trips the read timeout; the per-attempt deadline stops it.
    server = fault_server(drip(ANSWER, interval=0.05))
    result = run(mode, server.base_url, server, timeout=0.6, read_timeout=0.5, max_retries=1)
    assert isinstance(result.error, JudgeTimeoutError)
    assert "within the 0.6 s deadline" in str(result.error)
    assert len(result.error.attempts) == 2
    assert 1.1 <= result.elapsed < 5
    result.assert_no_leaks()


def test_drip_within_the_deadline_succeeds(mode, fault_server):
    server = fault_server(drip(ANSWER, interval=0.002))
    result = run(mode, server.base_url, server, timeout=5.0, read_timeout=0.5)
    assert result.error is None, result.error
    assert _score(result) is True
    result.assert_no_leaks()


def test_retries_are_bounded_by_max_retries_zero(mode, fault_server):
    server = fault_server(respond(503), completion())
    result = run(mode, server.base_url, server, max_retries=0)
    assert isinstance(result.error, RemoteStatusError)
    assert len(server.requests) == 1
    assert "1 attempt:" in str(result.error)
    result.assert_no_leaks()


def test_request_body_is_sent_as_given(mode, fault_server):
    server = fault_server(completion())
    result = run(mode, server.base_url, server, request={**REQUEST, "temperature": 0, "seed": 7})
    assert result.error is None
    sent = server.requests[0]
    assert sent.method == "POST"
    assert sent.path == "/v1/chat/completions"
    body = sent.json()
    assert body["temperature"] == 0 and body["seed"] == 7
    assert body["messages"] == REQUEST["messages"]
    assert body["response_format"]["type"] == "json_schema"


def test_per_call_timeout_bounds_the_wait(mode, fault_server):
    server = fault_server(hang())
    result = run(mode, server.base_url, server, request={**REQUEST, "timeout": 0.4}, max_retries=0)
    assert isinstance(result.error, JudgeTimeoutError)
    assert 0.3 <= result.elapsed < 3
    result.assert_no_leaks()
