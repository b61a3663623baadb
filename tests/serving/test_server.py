"""`localjudge serve`: the request rules as plain functions, then the real server process with real clients."""

from __future__ import annotations

import json
import re
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from support.serve_process import KEY, start_serve

from localjudge._serving import ApiError, Limits, check_request
from localjudge._serving.api_errors import judge_failure
from localjudge._serving.app import authorised
from localjudge.errors import (
    ContextOverflowError,
    ModelError,
    OutputParseError,
    TruncatedOutputError,
    UnsupportedSchemaError,
    UsageError,
)

SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "score": {"type": "boolean"}},
    "required": ["reasoning", "score"],
    "additionalProperties": False,
}
JSON_SCHEMA = {"type": "json_schema", "json_schema": {"name": "verdict", "strict": True, "schema": SCHEMA}}
MESSAGES = [{"role": "user", "content": "Is 2+2=4 the right answer to 'What is 2+2?'? Reply in JSON."}]


# -- the rules ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ([], None, "must be a JSON object"),
        ({"messages": MESSAGES, "stream": True}, "stream", "stream is not supported"),
        ({"messages": MESSAGES, "n": 2}, "n", "n must be 1"),
        ({"messages": MESSAGES, "max_tokens": 5000}, "max_tokens", "allows at most 4096"),
        ({"messages": MESSAGES, "max_completion_tokens": 0}, "max_completion_tokens", "positive integer"),
        ({"messages": MESSAGES, "response_format": {"type": "grammar"}}, "response_format", "'grammar' is not"),
        ({"messages": MESSAGES, "response_format": {"type": "json_schema"}}, "response_format", "needs"),
        ({"messages": MESSAGES, "score_reply": "yes"}, "score_reply", "must be a boolean"),
        ({"messages": MESSAGES, "n": True}, "n", "n must be an integer, got true"),
        ({"messages": MESSAGES, "logprobs": "yes"}, "logprobs", 'logprobs must be a boolean, got "yes"'),
        ({"messages": MESSAGES, "top_logprobs": 2.5}, "top_logprobs", "must be an integer"),
        ({"messages": MESSAGES, "temperature": False}, "temperature", "must be a number, got false"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content", "content must be a string or an array"),
        ({"messages": [{"role": "user", "content": True}]}, "messages[0].content", "got true"),
        ({"messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]}, "messages[0].content[0].text", ""),
        ({"messages": [{"role": "user", "content": "a\ud800"}]}, "messages[0].content", "half a surrogate pair"),
        ({"messages": [{"role": 1, "content": "a"}]}, "messages[0]", "with a role"),
    ],
)
def test_requests_the_server_refuses_say_why(body, param, words):
    with pytest.raises(ApiError) as refused:
        check_request(body, Limits())
    error = refused.value.body()["error"]
    assert refused.value.status == 400 and error["type"] == "invalid_request_error"
    assert error["param"] == param and words in error["message"]


@pytest.mark.parametrize(
    ("body", "param", "words"),
    [
        ({"messages": MESSAGES, "seed": -5}, "seed", "seed must be an integer from 0"),
        ({"messages": MESSAGES, "seed": 10**5000}, "seed", "an integer of about 5001 digits"),
        ({"messages": [1, 2]}, "messages", "messages[0] must be an object with a role"),
        ({"messages": MESSAGES, "frequency_penalty": 3}, "frequency_penalty", "must be between -2 and 2"),
        ({"messages": MESSAGES, "presence_penalty": 10**400}, "presence_penalty", "must be a finite number"),
        ({"messages": MESSAGES, "temperature": "hot"}, "temperature", "temperature must be a number"),
    ],
)
def test_bad_values_are_400s_that_name_the_field(body, param, words):
    """In the message, and in OpenAI's ``param``."""
    """Each reaches the judge's own checks (the same in Python), and comes back as the caller's mistake."""
    from localjudge._clients.request import read_request

    with pytest.raises(UsageError) as refused:
        read_request(body, "the local client")
    error = judge_failure(refused.value)
    assert error.status == 400 and words in error.message and len(error.message) < 300
    assert error.param == param


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'{"messages": [], "frequency_penalty": NaN}', "NaN is not a JSON number"),
        (b'{"messages": [], "seed": ' + b"9" * 5000 + b"}", "an integer of more than 4,300 digits"),
        (b"[" * 5000 + b"]" * 5000, "nested more than 64 levels"),
    ],
)
def test_bodies_json_cannot_hold_are_400s(body, words):
    pytest.importorskip("starlette")
    from localjudge.testing import ScriptedClient

    answer = _app(ScriptedClient(["{}"])).post(
        "/v1/chat/completions", content=body, headers={"Authorization": "Bearer k"}
    )
    assert answer.status_code == 400 and words in answer.json()["error"]["message"]


def test_requests_in_flight_are_bounded_and_a_stop_answers_each_one():
    from localjudge._serving import InFlight
    from localjudge.errors import RequestCancelledError

    in_flight = InFlight(limit=2)
    first, second = in_flight.admit(), in_flight.admit()
    with pytest.raises(ApiError) as busy:
        in_flight.admit()
    assert (busy.value.status, busy.value.code) == (503, "busy")
    assert in_flight.stop() == 2
    with pytest.raises(ApiError) as stopping:
        in_flight.admit()
    assert stopping.value.code == "shutting_down"
    in_flight.finish(first, None)  # answered within the grace period
    in_flight.cancel_all("the server is stopping")
    assert second.is_set() and second.reason == "the server is stopping" and not first.is_set()
    in_flight.finish(second, RequestCancelledError("The request was cancelled: the server is stopping"))
    assert (in_flight.answered_while_stopping, in_flight.cancelled_at_stop) == (1, 1)
    assert judge_failure(RequestCancelledError("cancelled")).status == 503


def test_a_busy_server_says_when_to_retry_and_a_trailing_slash_is_not_redirected():
    pytest.importorskip("starlette")
    from localjudge.testing import ScriptedClient

    app = _app(ScriptedClient(["{}"], repeat=True), max_in_flight=0)
    busy = _ask(app, {"messages": MESSAGES})
    assert busy.status_code == 503 and busy.headers["Retry-After"] == "1" and busy.json()["error"]["code"] == "busy"
    for path in ("/v1/chat/completions/", "/v1/models/"):
        headers = {"Authorization": "Bearer k", "Host": "evil.example"}
        slashed = app.post(path, json={}, headers=headers, follow_redirects=False)
        assert slashed.status_code in (404, 405) and "location" not in slashed.headers


def test_content_that_is_not_text_is_the_callers_400_through_the_app_never_a_500():
    pytest.importorskip("starlette")
    from localjudge.testing import ScriptedClient

    app = _app(ScriptedClient(["{}"], repeat=True))
    for content in (5, True, 1.5):
        answer = _ask(app, {"messages": [{"role": "user", "content": content}]})
        assert answer.status_code == 400 and answer.json()["error"]["param"] == "messages[0].content"
    half = app.post(
        "/v1/chat/completions",
        content=b'{"messages": [{"role": "user", "content": "\\udce9"}]}',
        headers={"Authorization": "Bearer k", "Content-Type": "application/json"},
    )
    assert half.status_code == 400 and half.json()["error"]["param"] == "messages[0].content"


def test_a_prompt_past_the_context_is_the_callers_400():
    error = judge_failure(ContextOverflowError("The prompt (900 tokens) and max_tokens (200) exceed n_ctx 1024"))
    assert (error.status, error.param, error.code) == (400, "max_tokens", "context_length_exceeded")


def test_requests_within_the_rules_pass_unchanged():
    body = {"messages": MESSAGES, "response_format": JSON_SCHEMA, "max_tokens": 64, "model": "x"}
    assert check_request(body, Limits()) == body
    assert check_request({"messages": MESSAGES, "response_format": {"type": "json_object"}}, Limits())


def test_a_judge_failure_is_the_callers_mistake_or_the_models():
    keyword = judge_failure(UnsupportedSchemaError("Schema keyword 'patternProperties' cannot be enforced",
                                                   keyword="patternProperties"))  # fmt: skip
    assert (keyword.status, keyword.param) == (400, "response_format") and "patternProperties" in keyword.message
    assert judge_failure(UsageError("messages must be a list")).status == 400
    cut = judge_failure(TruncatedOutputError("stopped at max_tokens", raw_output='{"reasoning": "Four'))
    assert (cut.status, cut.code, cut.body()["error"]["raw_output"]) == (422, "output_truncated", '{"reasoning": "Four')
    assert judge_failure(OutputParseError("not JSON", raw_output="hm")).code == "output_invalid"
    assert judge_failure(ModelError("the model would not load")).status == 500


def test_the_key_is_checked_only_when_there_is_one():
    assert authorised(None, None) and authorised("Bearer anything", "")
    assert authorised("Bearer s3cret", "s3cret") and authorised("bearer s3cret", "s3cret")
    assert not authorised("Bearer s3cre", "s3cret") and not authorised(None, "s3cret")
    assert not authorised("Basic s3cret", "s3cret")


# -- the app, over scripted judges -------------------------------------------------------------


class Exploding:
    """A judge whose library fails in its own way (not one of our errors)."""

    class chat:
        class completions:
            @staticmethod
            def create(**_):
                raise RuntimeError("socket closed")


def _app(judge, **limits):
    from starlette.testclient import TestClient

    from localjudge._serving import create_app

    return TestClient(create_app(judge, model_id="m", api_key="k", limits=Limits(**limits)))


def _ask(app, body, key="k"):
    return app.post("/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"})


def test_the_app_answers_in_openai_shape_and_sends_json_alone():
    pytest.importorskip("starlette")
    from localjudge.testing import ScriptedClient

    app = _app(ScriptedClient(['Sure! ```json\n{"reasoning": "ok", "score": true}\n```']))
    answer = _ask(app, {"messages": MESSAGES, "response_format": JSON_SCHEMA, "model": "anything"}).json()
    assert answer["model"] == "m" and answer["object"] == "chat.completion"
    assert json.loads(answer["choices"][0]["message"]["content"]) == {"reasoning": "ok", "score": True}
    assert answer["choices"][0]["message"]["content"] == '{"reasoning": "ok", "score": true}'  # the object alone


def test_the_app_refuses_what_would_get_past_its_limits_and_shapes_every_error():
    pytest.importorskip("starlette")
    from localjudge._clients.fallback import FallbackClient
    from localjudge.testing import ScriptedClient

    app = _app(ScriptedClient(["{}"], repeat=True), max_body_bytes=2000, max_tokens=64)
    sneaky = _ask(app, {"messages": MESSAGES, "extra_body": {"max_tokens": 100000, "model": "o1-pro"}})
    assert sneaky.status_code == 400 and "extra_body" in sneaky.json()["error"]["message"]
    assert _ask(app, {"messages": MESSAGES}, key="wrong").status_code == 401
    assert _ask(app, {"messages": [{"role": "user", "content": "x" * 3000}]}).status_code == 413
    missing = app.get("/v1/nothing", headers={"Authorization": "Bearer k"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert app.get("/v1/chat/completions").status_code == 405
    deep = _app(ScriptedClient(["{}"])).post(
        "/v1/chat/completions", content=b"[" * 5000 + b"]" * 5000, headers={"Authorization": "Bearer k"}
    )
    assert deep.status_code == 400 and "not JSON" in deep.json()["error"]["message"]
    broken = _ask(_app(Exploding()), {"messages": MESSAGES})
    assert broken.status_code == 500 and broken.json()["error"] == {
        "message": "The judge failed: RuntimeError",
        "type": "server_error",
        "param": None,
        "code": "RuntimeError",
    }
    chain = FallbackClient(ScriptedClient(["nope"], repeat=True), ScriptedClient(["still no"], repeat=True))
    both_bad = _ask(_app(chain), {"messages": MESSAGES, "response_format": JSON_SCHEMA})
    assert both_bad.status_code == 422 and both_bad.json()["error"]["raw_output"] == "still no"


# -- the real server ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    process, base, log = start_serve(
        tmp_path_factory.mktemp("serve"), "--max-tokens-limit", "512", "--max-body-bytes", "20000", "--parallel", "2"
    )
    yield process, base, log
    if process.poll() is None:
        process.kill()
        process.wait(10)


def _post(base, body, *, key=KEY, timeout=120, **kwargs):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.post(f"{base}/v1/chat/completions", headers=headers, timeout=timeout, **kwargs, json=body)


@pytest.mark.model
def test_the_openai_sdk_gets_schema_valid_json(served):
    openai = pytest.importorskip("openai")
    _, base, _ = served
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=KEY)
    assert [m.id for m in client.models.list().data] == ["tiny"]
    for response_format in (JSON_SCHEMA, {"type": "json_object", "schema": SCHEMA}):
        reply = client.chat.completions.create(
            model="default", messages=MESSAGES, response_format=response_format, max_tokens=200
        )
        answer = json.loads(reply.choices[0].message.content)
        assert set(answer) == {"reasoning", "score"} and isinstance(answer["score"], bool)
    text = client.chat.completions.create(model="default", messages=MESSAGES, max_tokens=8)
    assert isinstance(text.choices[0].message.content, str)


@pytest.mark.model
def test_unmodified_openevals_scores_through_it(served):
    openai = pytest.importorskip("openai")
    openevals_llm = pytest.importorskip("openevals.llm")
    _, base, _ = served
    evaluator = openevals_llm.create_llm_as_judge(
        prompt="Is this answer correct?\n<question>{inputs}</question>\n<answer>{outputs}</answer>",
        judge=openai.OpenAI(base_url=f"{base}/v1", api_key=KEY),
        model="openai:default",
        use_reasoning=False,  # the verdict alone: a 270M model's reasoning can run past any limit
    )
    for outputs in ("4", "5", "banana"):
        result = evaluator(inputs="What is 2+2?", outputs=outputs)
        assert isinstance(result["score"], bool), result


@pytest.mark.model
def test_our_own_client_judges_through_it_and_requests_run_side_by_side(served):
    from localjudge import OpenAICompatibleClient, create_llm_as_judge

    _, base, _ = served
    judge = OpenAICompatibleClient(f"{base}/v1", api_key=KEY, model="default", max_tokens=64)
    evaluator = create_llm_as_judge(prompt="Is {outputs} the answer to {inputs}?", judge=judge, use_reasoning=False)
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda o: evaluator(inputs="2+2?", outputs=o), ["4", "5", "22"]))
    assert all(isinstance(r["score"], bool) for r in results)
    judge.close()


@pytest.mark.model
def test_a_pair_judged_by_likelihood_through_it_gets_the_figures_the_model_gives_here(served):
    from localjudge import OpenAICompatibleClient
    from localjudge._judges.pairwise import create_pairwise_judge

    _, base, _ = served
    pair = {
        "inputs": "What is the capital of France?",
        "outputs_a": "The capital of Italy is Rome.",
        "outputs_b": "Paris is the capital of France.",
    }
    judge = OpenAICompatibleClient(f"{base}/v1", api_key=KEY, model="default")
    remote = create_pairwise_judge(judge=judge, way="likelihood")(**pair)
    here = create_pairwise_judge(model="tiny", way="likelihood")(**pair)
    assert remote["metadata"]["winner"] == here["metadata"]["winner"] == "B"
    assert remote["metadata"]["likelihood_gain"] == pytest.approx(here["metadata"]["likelihood_gain"], rel=1e-9)
    judge.close()


@pytest.mark.model
def test_bad_requests_get_openai_shaped_errors(served):
    _, base, _ = served
    assert _post(base, {"messages": MESSAGES}, key="wrong").status_code == 401
    assert _post(base, {"messages": MESSAGES}, key=None).json()["error"]["code"] == "invalid_api_key"
    unsupported = {"type": "object", "patternProperties": {"^a": {"type": "string"}}}
    refused = _post(base, {"messages": MESSAGES, "response_format": {
        "type": "json_schema", "json_schema": {"name": "x", "schema": unsupported}}})  # fmt: skip
    assert refused.status_code == 400 and "patternProperties" in refused.json()["error"]["message"]
    assert _post(base, {"messages": MESSAGES, "max_tokens": 513}).status_code == 400
    assert _post(base, {"messages": [{"role": "user", "content": "x" * 30_000}]}).status_code == 413
    not_json = httpx.post(f"{base}/v1/chat/completions", content=b"{nope", headers={"Authorization": f"Bearer {KEY}"})
    assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]["message"]
    cut = _post(base, {"messages": MESSAGES, "response_format": JSON_SCHEMA, "max_tokens": 3})
    assert cut.status_code == 422 and cut.json()["error"]["code"] == "output_truncated"
    assert cut.json()["error"]["raw_output"].startswith("{")
    assert httpx.get(f"{base}/health").json() == {"status": "ok", "model": "tiny"}  # open, for probes


@pytest.mark.model
def test_sigterm_stops_it_cleanly(served):
    process, _, log = served
    process.send_signal(signal.SIGTERM)
    # uvicorn shuts down gracefully, then ends by the signal it caught, as a supervisor expects
    assert process.wait(timeout=30) in (0, -signal.SIGTERM)
    assert "stopped serving tiny: 0 request(s) in flight answered, 0 cancelled" in log.read_text()
    assert KEY not in log.read_text()


# -- hostile clients, against real processes ------------------------------------------------

STORY = {"messages": [{"role": "user", "content": "Write a very long story about a lighthouse."}], "max_tokens": 2000}
SHORT = {"messages": MESSAGES, "max_tokens": 4}


@pytest.fixture
def serving(tmp_path):
    """A fresh server per test, for tests that stop it or fill its one sequence."""
    started = []

    def start(*options):
        started.append(start_serve(tmp_path, *options))
        return started[-1]

    yield start
    for process, _, _ in started:
        if process.poll() is None:
            process.kill()
            process.wait(10)


@pytest.mark.model
def test_a_client_that_hangs_up_frees_the_model_for_the_next_request(serving):
    """One sequence: a story of 2,000 tokens holds it for a minute, unless hanging up cancels it."""
    _, base, log = serving("--parallel", "1")
    with pytest.raises(httpx.ReadTimeout):
        _post(base, STORY, timeout=1.5)  # the client gives up and closes its connection
    started = time.monotonic()
    answer = _post(base, SHORT)
    waited = time.monotonic() - started
    assert answer.status_code == 200 and waited < 5, waited
    assert "cancelled a request: the client disconnected" in log.read_text()


@pytest.mark.model
def test_slow_and_idle_connections_are_closed_and_never_starve_health(serving):
    import socket

    _, base, _ = serving("--header-timeout", "2")
    host, port = base.removeprefix("http://").split(":")
    loris = []
    for _ in range(64):
        sock = socket.create_connection((host, int(port)))
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")  # and never the rest
        loris.append(sock)
    for _ in range(4):
        assert httpx.get(f"{base}/health", timeout=2).status_code == 200
        for sock in loris:
            sock.sendall(b"X-Slow: 1\r\n")  # a header line now and then keeps no connection alive
        time.sleep(0.4)
    time.sleep(2.5)
    for sock in loris:
        sock.settimeout(2)
        assert sock.recv(100) == b""  # closed by the server
        sock.close()
    assert httpx.get(f"{base}/health", timeout=2).status_code == 200


@pytest.mark.model
def test_sigterm_with_sixteen_in_flight_answers_each_with_its_verdict_or_a_503(serving):
    process, base, log = serving("--parallel", "2", "--graceful-timeout", "3")
    body = {"messages": MESSAGES, "max_tokens": 300}
    with ThreadPoolExecutor(16) as pool:
        answers = [pool.submit(_post, base, body) for _ in range(16)]
        time.sleep(1.5)
        stopped_at = time.monotonic()
        process.send_signal(signal.SIGTERM)
        statuses = [answer.result().status_code for answer in answers]
        replies = [answer.result().json() for answer in answers]
    assert set(statuses) <= {200, 503} and 503 in statuses, statuses
    for status, reply in zip(statuses, replies, strict=True):
        if status == 503:
            assert reply["error"]["type"] == "server_error" and "stopping" in reply["error"]["message"]
    assert process.wait(timeout=30) in (0, -signal.SIGTERM)
    assert time.monotonic() - stopped_at < 15
    text = log.read_text()
    answered, cancelled = map(int, re.search(r"(\d+) request\(s\) in flight answered, (\d+) cancelled", text).groups())
    assert cancelled == statuses.count(503) and answered + cancelled <= 16
    assert re.search(r"stopping: \d+ request\(s\) in flight get up to 3 s", text)


@pytest.mark.model
def test_a_second_signal_cancels_what_is_left_at_once_still_in_openai_shape(serving):
    process, base, log = serving("--parallel", "2", "--graceful-timeout", "60")
    with ThreadPoolExecutor(4) as pool:
        answers = [pool.submit(_post, base, STORY) for _ in range(4)]
        time.sleep(1.5)
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        stopped_at = time.monotonic()
        process.send_signal(signal.SIGINT)  # Ctrl-C twice: do not wait out the grace period
        replies = [answer.result() for answer in answers]
    assert [reply.status_code for reply in replies] == [503] * 4
    assert all(reply.json()["error"]["code"] == "cancelled" for reply in replies)
    assert process.wait(timeout=30) is not None and time.monotonic() - stopped_at < 15
    assert "stopped serving tiny: 0 request(s) in flight answered, 4 cancelled" in log.read_text()
    assert "Traceback" not in log.read_text()
