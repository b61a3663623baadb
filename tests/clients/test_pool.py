"""PoolClient: requests spread over servers of one model, moving on when one fails, nothing lost."""

from __future__ import annotations

import json
import threading

import httpx
import pytest
from support.remote_helpers import FAST, REQUEST

from localjudge._clients.fallback import FALLBACK_FIELD
from localjudge._clients.pool import AsyncPoolClient, PoolClient, pool_order
from localjudge._clients.remote import OpenAICompatibleClient
from localjudge.errors import (
    AllClientsFailedError,
    JudgeTimeoutError,
    ModelSpecError,
    OutputParseError,
    RemoteConnectError,
    RemoteStatusError,
    TruncatedOutputError,
    UsageError,
)
from localjudge.testing import ScriptedClient

ANSWER = '{"score": true}'


def _member(name: str, *contents: object, repeat: bool = True) -> ScriptedClient:
    client = ScriptedClient(list(contents) or [ANSWER], repeat=repeat)
    client.name = name
    return client


# -- the order: pure ---------------------------------------------------------------


def test_equally_loaded_members_take_turns():
    assert [pool_order([0, 0, 0], [0, 0, 0], now=5.0, turn=t)[0] for t in range(4)] == [0, 1, 2, 0]


def test_the_least_loaded_member_goes_first():
    assert pool_order([2, 0, 1], [0, 0, 0], now=5.0, turn=0) == [1, 2, 0]


def test_resting_members_come_last_least_loaded_first():
    assert pool_order([0, 0, 0], [9.0, 0.0, 7.0], now=5.0, turn=0) == [1, 0, 2]
    assert pool_order([3, 0, 0], [9.0, 0.0, 7.0], now=5.0, turn=0) == [1, 2, 0]
    assert pool_order([3, 1, 2], [9.0, 8.0, 7.0], now=5.0, turn=0) == [1, 2, 0]  # all resting: still by load
    assert pool_order([0, 0, 0], [9.0, 0.0, 7.0], now=10.0, turn=0) == [0, 1, 2]  # both are back


# -- the client -----------------------------------------------------------------------


def test_requests_spread_over_the_members():
    a, b = _member("a"), _member("b")
    pool = PoolClient(a, b)
    answered = [pool.chat.completions.create(**REQUEST)[FALLBACK_FIELD]["client"] for _ in range(4)]
    assert sorted(answered) == ["a", "a", "b", "b"]
    assert len(a.requests) == len(b.requests) == 2


def test_a_failing_member_hands_the_request_on_and_then_rests():
    dead, alive = _member("dead", RemoteConnectError("connection refused")), _member("alive")
    pool = PoolClient(dead, alive, rest=60)
    first = pool.chat.completions.create(**REQUEST)
    later = [pool.chat.completions.create(**REQUEST) for _ in range(3)]
    assert all(r[FALLBACK_FIELD]["client"] == "alive" for r in [first, *later])
    assert len(dead.requests) == 1  # resting: never tried first again while another member answers
    assert all(r[FALLBACK_FIELD]["failures"] == [] for r in later)


def test_a_member_back_from_rest_is_used_again():
    flaky = _member("flaky", RemoteConnectError("down"), ANSWER, ANSWER, repeat=False)
    steady = _member("steady")
    pool = PoolClient(flaky, steady, rest=0)
    names = [pool.chat.completions.create(**REQUEST)[FALLBACK_FIELD]["client"] for _ in range(4)]
    assert "flaky" in names[1:]


def test_a_request_fails_only_when_every_member_failed_it():
    pool = PoolClient(_member("a", RemoteConnectError("a down")), _member("b", RemoteConnectError("b down")))
    with pytest.raises(AllClientsFailedError) as caught:
        pool.chat.completions.create(**REQUEST)
    assert sorted(name for name, _ in caught.value.errors) == ["a", "b"]
    assert caught.value.backend == "pool"


def _refusing_server(status: int) -> OpenAICompatibleClient:
    """The real remote client in front of a server that answers every request with ``status``."""
    body = {"error": {"message": f"refused with {status}", "type": "invalid_request_error"}}
    client = OpenAICompatibleClient("http://judge.invalid/v1", api_key="key", model="judge", **FAST)
    client._http = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(status, json=body)))
    return client


@pytest.mark.parametrize(
    "error",
    [
        UsageError("bad request"),
        OutputParseError("not JSON", raw_output="oops"),  # another server of the model would write it too
        TruncatedOutputError("stopped at max_tokens", raw_output='{"score": tr'),
    ],
)
def test_an_error_another_server_would_repeat_is_the_request_error_at_once(error):
    first, other = _member("a", error), _member("b")
    pool = PoolClient(first, other, rest=60)
    with pytest.raises(type(error)) as caught:
        pool.chat.completions.create(**REQUEST)  # the first request of a pool goes to its first member
    assert caught.value is error and other.requests == []
    assert pool.chat.completions.create(**REQUEST)[FALLBACK_FIELD]["client"] == "b"  # and "a" was not rested:
    assert pool._state.resting_until == [0.0, 0.0] and pool._state.in_flight == [0, 0]


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_a_member_that_refuses_the_request_fails_it_without_resting(status):
    """The error as the real client raises it (retryable for a fallback chain), not one built for the test."""
    refusing, other = _refusing_server(status), _member("b")
    pool = PoolClient(refusing, other, rest=60)
    with pytest.raises(RemoteStatusError) as caught:
        pool.chat.completions.create(**REQUEST)  # the first request of a pool goes to its first member
    assert caught.value.status_code == status and len(caught.value.attempts) == 1  # and not retried there
    assert other.requests == []
    assert pool._state.resting_until == [0.0, 0.0] and pool._state.in_flight == [0, 0]


def test_a_member_that_answers_5xx_rests_and_the_request_moves_on():
    failing, other = _refusing_server(503), _member("b")
    pool = PoolClient(failing, other, rest=60)
    answered = pool.chat.completions.create(**REQUEST)
    assert answered[FALLBACK_FIELD]["client"] == "b"
    assert answered[FALLBACK_FIELD]["failures"][0]["error"] == "RemoteStatusError"
    assert pool._state.resting_until[0] > 0.0 and pool._state.resting_until[1] == 0.0


@pytest.mark.parametrize("error", [RemoteStatusError("busy", status_code=503), JudgeTimeoutError("no answer in 1 s")])
def test_server_failures_move_on(error):
    pool = PoolClient(_member("a", error), _member("b"))
    assert pool.chat.completions.create(**REQUEST)[FALLBACK_FIELD]["failures"][0]["error"] == type(error).__name__
    assert pool._state.in_flight == [0, 0]


def test_members_in_flight_are_counted_so_new_requests_go_elsewhere():
    arrived, release = threading.Event(), threading.Event()

    class Slow(ScriptedClient):
        def _complete(self, request):
            arrived.set()
            release.wait(5)
            return super()._complete(request)

    slow, quick = Slow([ANSWER], repeat=True), _member("quick")
    slow.name = "slow"
    pool = PoolClient(slow, quick)
    busy = threading.Thread(target=lambda: pool.chat.completions.create(**REQUEST))
    busy.start()
    assert arrived.wait(5)
    try:
        answered = [pool.chat.completions.create(**REQUEST)[FALLBACK_FIELD]["client"] for _ in range(3)]
    finally:
        release.set()
        busy.join()
    assert answered == ["quick"] * 3


class Identified(ScriptedClient):
    def __init__(self, url, model="m"):
        super().__init__([ANSWER])
        self.url, self.model = url, model

    def cache_identity(self):
        return {"engine": "openai-compatible", "base_url": self.url, "model": self.model}


def test_cache_identity_is_the_model_whichever_servers_serve_it():
    pool = PoolClient(Identified("http://a"), Identified("http://b"))
    assert pool.cache_identity() == {"pool": {"engine": "openai-compatible", "model": "m"}}
    assert PoolClient(Identified("http://c"), Identified("http://a"), Identified("http://b")).cache_identity() == (
        pool.cache_identity()
    )
    mixed = PoolClient(Identified("http://a", "m"), Identified("http://b", "other"))
    assert (
        mixed.cache_identity()
        == PoolClient(Identified("http://b", "other"), Identified("http://a", "m")).cache_identity()
    )
    assert mixed.cache_identity() != pool.cache_identity()
    assert PoolClient(_member("a"), _member("b")).cache_identity() is None  # a member that cannot say who it is


def test_bad_rest_is_refused():
    with pytest.raises(UsageError, match="rest"):
        PoolClient(_member("a"), rest=-1)


async def test_async_twin_spreads_hands_on_and_shares_the_pool_health():
    dead, alive = _member("dead", RemoteConnectError("refused")), _member("alive")
    pool = PoolClient(dead, alive, rest=60)
    twin = pool.aio
    assert isinstance(twin, AsyncPoolClient)
    responses = [await twin.chat.completions.create(**REQUEST) for _ in range(3)]
    assert {r[FALLBACK_FIELD]["client"] for r in responses} == {"alive"}
    assert pool.chat.completions.create(**REQUEST)[FALLBACK_FIELD]["failures"] == []  # it knows "dead" rests
    assert pool.aio._state is pool._state and len(dead.requests) == 1


def test_several_base_urls_make_a_pool_and_a_repeated_one_is_refused():
    from localjudge._clients.resolve import resolve_model

    pool = resolve_model("openai:m", base_url=["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"])
    assert isinstance(pool, PoolClient)
    assert [c.base_url for c in pool.clients] == ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"]
    assert all(c.retry.max_retries == 1 for c in pool.clients)  # another server is the better retry
    with pytest.raises(ModelSpecError, match="twice"):
        resolve_model("openai:m", base_url=["http://127.0.0.1:9", "http://127.0.0.1:9/v1/"])
    assert not isinstance(resolve_model("openai:m", base_url=["", "http://127.0.0.1:9/v1"]), PoolClient)


# -- real servers ---------------------------------------------------------------------


@pytest.mark.server
@pytest.mark.model
def test_a_server_killed_mid_run_loses_no_row(llama_server, disposable_llama_server, tmp_path):
    """Two llama.cpp servers behind one judge; one is killed after two rows: every row is still scored, once."""
    from localjudge._clients.resolve import resolve_model
    from localjudge._datasets.batch import run_batch
    from localjudge._judges.single import create_llm_as_judge

    pool = resolve_model(
        "openai:gemma-3-270m", base_url=[llama_server.base_url, disposable_llama_server.base_url], max_retries=0
    )
    evaluator = create_llm_as_judge(
        prompt="Is this answer correct?\nQuestion: {inputs}\nAnswer: {outputs}", judge=pool, use_reasoning=False
    )
    rows = [{"id": f"r{i}", "inputs": f"What is {i} + {i}?", "outputs": str(2 * i)} for i in range(12)]
    done = []

    def kill_after_two(record):
        done.append(record)
        if len(done) == 2:
            disposable_llama_server.kill()

    results = tmp_path / "results.jsonl"
    summary = run_batch(rows, evaluator, results, concurrency=4, on_record=kill_after_two)

    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["id"] for r in records] == [row["id"] for row in rows]  # each row once, in order
    assert all("result" in r and isinstance(r["result"]["score"], bool) for r in records), records
    assert summary.scored == 12 and summary.failed == 0
    labels = [r["result"]["metadata"] for r in records]
    killed = next(c.name for c in pool.clients if c.base_url == disposable_llama_server.base_url)
    assert any(f["client"] == killed for label in labels for f in label["failures"])  # requests moved off it
    assert all(label["client"] != killed for label in labels[-4:])  # resting, it answers nothing later
