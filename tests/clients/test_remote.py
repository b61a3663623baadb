"""The remote client: URL and key rules, response_format negotiation, local validation, secrets.

The last section runs against a real llama-cpp-python server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from support.fault_server import completion, completion_body, echo_headers, hang, respond
from support.remote_helpers import FAST, LLAMA_REJECTION, O_SERIES_REFUSAL, REQUEST, SCORE_SCHEMA, run

from localjudge._clients.bound import BOUND_FIELD, DEFAULT_MAX_COMPLETION_TOKENS, DEFAULT_MAX_TOKENS
from localjudge._clients.endpoint import Endpoint, resolve_api_key
from localjudge._clients.fallback import FallbackClient
from localjudge._clients.formats import FORMATS, LLAMA_FORM, OPENAI_FORM, is_schema_rejection
from localjudge._clients.remote import AsyncOpenAICompatibleClient, OpenAICompatibleClient
from localjudge._clients.remote_plan import Reply
from localjudge._clients.retry import RetryPolicy, parse_retry_after
from localjudge.errors import (
    AllClientsFailedError,
    OutputParseError,
    RemoteCallError,
    RemoteStatusError,
    TruncatedOutputError,
    UsageError,
)

CANARY = "sk-canary-7f3a9c1e5b2d4680"


# -- base URLs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "chat_url"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1/chat/completions"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1/chat/completions"),
        ("https://gpu.example/openai/v1", "https://gpu.example/openai/v1/chat/completions"),
        ("http://localhost:11434/api", "http://localhost:11434/api/chat/completions"),
        ("http://h:1/v1/chat/completions", "http://h:1/v1/chat/completions"),
        ("https://h/v1?api-version=2", "https://h/v1/chat/completions?api-version=2"),
    ],
)
def test_base_url_rule(given, chat_url):
    assert Endpoint(given).chat_url == chat_url


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1/v1",
        "file:///etc/passwd",
        "127.0.0.1:8000",
        "http:///v1",
        "http://169.254.169.254/latest/meta-data",
        "http://169.254.1.1:8000/v1",
        "http://[fe80::1]:8000/v1",
        "http://[::ffff:169.254.169.254]/v1",
        "http://[64:ff9b::169.254.169.254]/v1",  # NAT64
        "http://[::169.254.169.254]/v1",  # IPv4-compatible
        "http://[fd00:ec2::254]/v1",
        "http://metadata.google.internal/computeMetadata/v1",
        "http://METADATA.google.internal./v1",
        "http://2852039166/v1",  # 169.254.169.254 as one number
        "http://0xA9FEA9FE/v1",
        "http://100.100.100.200/v1",
        "http://127.0.0.1:99999/v1",
    ],
)
def test_refused_urls(url):
    with pytest.raises(UsageError):
        OpenAICompatibleClient(url)


def test_refusal_message_hides_credentials_in_the_url():
    with pytest.raises(UsageError) as info:
        OpenAICompatibleClient(f"ftp://user:{CANARY}@127.0.0.1/v1?key={CANARY}")
    assert CANARY not in str(info.value)


@pytest.mark.parametrize("url", [f"http://user:{CANARY}@127.0.0.1:8000/v1", f"http://{CANARY}@127.0.0.1:8000/v1"])
def test_credentials_in_the_url_are_refused_without_showing_them(url):
    with pytest.raises(UsageError, match=r"holds credentials before its host.*api_key=") as info:
        OpenAICompatibleClient(url)
    assert CANARY not in str(info.value)


def test_a_reply_nested_too_deep_is_that_clients_failure_and_the_chain_moves_on(fault_server):
    from localjudge.testing import ScriptedClient

    server = fault_server(*[respond(200, "[" * 200_000 + "]" * 200_000)] * 3)
    remote = OpenAICompatibleClient(server.base_url, **{**FAST, "max_retries": 0})
    chain = FallbackClient(remote, ScriptedClient(['{"score": true}']))
    answer = chain.chat.completions.create(**REQUEST)
    assert answer.choices[0].message.content == '{"score": true}'
    with pytest.raises(RemoteCallError, match="nested more than 64 levels"):
        remote.chat.completions.create(**REQUEST)


# -- API keys ------------------------------------------------------------------------


def test_api_key_from_argument_then_environment(monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_API_KEY", "from-localjudge")
    monkeypatch.setenv("OPENAI_API_KEY", "from-openai")
    assert resolve_api_key("given").reveal() == "given"
    assert resolve_api_key(None).reveal() == "from-localjudge"
    monkeypatch.delenv("LOCALJUDGE_API_KEY")
    assert resolve_api_key(None).reveal() == "from-openai"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert resolve_api_key(None) is None


def test_key_is_sent_as_bearer_and_absent_when_unset(fault_server, monkeypatch):
    monkeypatch.delenv("LOCALJUDGE_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = fault_server(completion())
    assert run("sync", server.base_url, server, api_key=CANARY).error is None
    assert server.requests[0].headers["authorization"] == f"Bearer {CANARY}"
    assert run("sync", server.base_url, server).error is None
    assert "authorization" not in server.requests[1].headers


def test_repr_never_shows_the_key():
    client = OpenAICompatibleClient("http://127.0.0.1:9/v1", api_key=CANARY, model="m")  # userinfo: refused
    assert CANARY not in repr(client)
    assert CANARY not in repr(client.aio)
    assert CANARY not in repr(client._api_key) and CANARY not in str(client._api_key)
    assert "api_key='***'" in repr(client)


def _assert_clean(exc: BaseException) -> None:
    texts = [str(exc), repr(exc), repr(getattr(exc, "request", None)), str(getattr(exc, "body", ""))]
    texts += list(getattr(exc, "attempts", []))
    texts += [str(getattr(exc, "raw_output", ""))]
    for _, inner in getattr(exc, "errors", []):
        _assert_clean(inner)
    assert exc.__cause__ is None or CANARY not in repr(exc.__cause__)
    for text in texts:
        assert CANARY not in text


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(
    "script",
    [
        pytest.param([echo_headers(401)], id="4xx-echoing-headers"),
        pytest.param([echo_headers(500)], id="5xx-echoing-headers"),
        pytest.param([respond(302, "", {"Location": f"http://elsewhere/v1?key={CANARY}"})], id="redirect"),
        pytest.param([lambda ex: respond(200, f"<html>{ex.headers}</html>")(ex)], id="non-json"),
        pytest.param([lambda ex: respond(200, {"error": str(ex.headers)})(ex)], id="not-a-completion"),
        pytest.param([lambda ex: completion(f"not json {ex.headers}")(ex)], id="output-parse-error"),
        pytest.param([hang()], id="timeout"),
        pytest.param(None, id="connection-refused"),
    ],
)
def test_canary_key_never_leaks(mode, script, fault_server, caplog):
    caplog.set_level(logging.DEBUG)
    server = fault_server(*(script or [completion()]))
    url = server.base_url
    if script is None:
        server.close()
    result = run(mode, url, api_key=CANARY, max_retries=1, read_timeout=0.3)
    assert result.error is not None
    _assert_clean(result.error)
    _assert_logs_clean(caplog)
    # The same failure inside a fallback chain.
    chain = FallbackClient(
        OpenAICompatibleClient(url, api_key=CANARY, **{**FAST, "max_retries": 0, "read_timeout": 0.3})
    )
    with pytest.raises(AllClientsFailedError) as info:
        chain.chat.completions.create(**REQUEST)
    _assert_clean(info.value)
    _assert_logs_clean(caplog)


def _assert_logs_clean(caplog) -> None:
    """Nothing we log holds the key, and httpcore's trace never shows our request headers.

    (httpcore's debug trace prints response headers as received, so a server
    that echoes a key into a header, as the redirect case does, is visible there.)
    """
    assert caplog.records, "the log capture saw nothing"
    for record in caplog.records:
        text = record.getMessage()
        if record.name.startswith("httpcore"):
            assert f"Bearer {CANARY}" not in text
        else:
            assert CANARY not in text, record.name


def test_echoed_key_is_masked_in_a_successful_answer(fault_server):
    server = fault_server(lambda ex: completion(json.dumps({"score": True, "note": ex.headers["authorization"]}))(ex))
    schema = {"type": "object", "properties": {"score": {"type": "boolean"}, "note": {"type": "string"}}}
    request = {**REQUEST, "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": schema}}}
    result = run("sync", server.base_url, server, api_key=CANARY, request=request)
    assert result.error is None, result.error
    assert CANARY not in json.dumps(result.response)


# -- redirects --------------------------------------------------------------------------


def test_redirects_are_not_followed(fault_server):
    other = fault_server(completion())
    server = fault_server(respond(307, "", {"Location": f"{other.base_url}/chat/completions"}))
    result = run("sync", server.base_url, server)
    assert isinstance(result.error, RemoteStatusError)
    assert result.error.status_code == 307
    assert "not followed" in str(result.error)
    assert other.base_url in str(result.error)
    assert len(server.requests) == 1
    assert other.requests == []


# -- response_format negotiation ------------------------------------------------------


def test_rejection_is_recognised_only_for_that_message():
    text = json.dumps(LLAMA_REJECTION)
    assert is_schema_rejection(500, text)
    assert not is_schema_rejection(500, "internal error")
    assert not is_schema_rejection(503, text)
    assert not is_schema_rejection(500, '{"error": "json_object parse failed"}')


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_json_schema_rejection_switches_form_once_and_remembers(mode, fault_server, caplog):
    caplog.set_level(logging.INFO)
    server = fault_server(respond(500, LLAMA_REJECTION), completion(), completion())
    result = run(mode, server.base_url, server, max_retries=0)  # the switch must not need a retry
    assert result.error is None, result.error
    first, second = server.requests[0].json(), server.requests[1].json()
    assert first["response_format"]["type"] == "json_schema"
    assert second["response_format"] == {"type": "json_object", "schema": SCORE_SCHEMA}
    assert FORMATS.get(server.base_url) == LLAMA_FORM
    assert "switching" in caplog.text
    # A new client for the same endpoint sends the accepted form straight away.
    again = run(mode, server.base_url + "/", server, max_retries=0)
    assert again.error is None
    assert len(server.requests) == 3
    assert server.requests[2].json()["response_format"]["type"] == "json_object"


def test_rejection_after_switching_is_an_ordinary_server_error(fault_server):
    server = fault_server(respond(500, LLAMA_REJECTION))
    result = run("sync", server.base_url, server, max_retries=1)
    assert isinstance(result.error, RemoteStatusError)
    assert len(server.requests) == 3  # json_schema, then json_object twice: never an endless loop
    assert "sending json_object" in result.error.attempts[0]


def test_other_500s_do_not_switch_form(fault_server):
    server = fault_server(respond(500, "boom"), completion())
    result = run("sync", server.base_url, server)
    assert result.error is None
    assert FORMATS.get(server.base_url) == OPENAI_FORM
    assert server.requests[1].json()["response_format"]["type"] == "json_schema"


def test_llama_style_request_form_is_accepted(fault_server):
    server = fault_server(completion())
    request = {**REQUEST, "response_format": {"type": "json_object", "schema": SCORE_SCHEMA}}
    assert run("sync", server.base_url, server, request=request).error is None
    sent = server.requests[0].json()["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == SCORE_SCHEMA


@pytest.mark.parametrize("response_format", [None, {"type": "text"}, {"type": "json_object"}])
def test_formats_without_a_schema_pass_through(response_format, fault_server):
    server = fault_server(completion('{"anything": 1}'))
    request = {**REQUEST, "response_format": response_format}
    result = run("sync", server.base_url, server, request=request)
    assert result.error is None
    assert server.requests[0].json().get("response_format") == response_format


# -- local validation of answers ------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_answer_that_ignores_the_schema_is_a_parse_error_with_raw_text(mode, fault_server):
    server = fault_server(completion('{"verdict": "yes"}'))
    result = run(mode, server.base_url, server)
    assert isinstance(result.error, OutputParseError)
    assert result.error.raw_output == '{"verdict": "yes"}'
    assert result.error.schema == SCORE_SCHEMA
    assert len(server.requests) == 1  # the server answered; asking again would not change that


def test_answer_cut_at_max_tokens_is_a_truncation_error(fault_server):
    server = fault_server(completion('{"score": tr', finish_reason="length"))
    result = run("sync", server.base_url, server)
    assert isinstance(result.error, TruncatedOutputError)
    assert result.error.raw_output == '{"score": tr'


def test_json_object_answer_must_be_an_object(fault_server):
    server = fault_server(completion("[1, 2]"))
    result = run("sync", server.base_url, server, request={**REQUEST, "response_format": {"type": "json_object"}})
    assert isinstance(result.error, OutputParseError)


def test_response_keeps_every_field_and_reads_both_ways(fault_server):
    server = fault_server(completion('{"score": false}', finish_reason="stop"))
    response = run("sync", server.base_url, server).response
    assert response.choices[0].finish_reason == "stop"
    assert response["choices"][0]["message"]["content"] == '{"score": false}'
    assert response.usage.total_tokens == 2
    assert response.model_dump() == completion_body('{"score": false}')


def test_configured_model_wins_over_the_request(fault_server):
    server = fault_server(completion())
    run("sync", server.base_url, server, model="served-name", request={**REQUEST, "model": "openai:served-name"})
    assert server.requests[0].json()["model"] == "served-name"
    run("sync", server.base_url, server, request={**REQUEST, "model": "from-request"})
    assert server.requests[1].json()["model"] == "from-request"


@pytest.mark.parametrize(
    "bad",
    [{"stream": True}, {"messages": []}, {"messages": "hi"}, {"timeout": -1}, {"extra_query": {"a": 1}}],
)
def test_bad_requests_are_usage_errors_before_any_network(bad, fault_server):
    server = fault_server(completion())
    result = run("sync", server.base_url, server, request={**REQUEST, **bad})
    assert isinstance(result.error, UsageError)
    assert server.requests == []


def test_extra_body_and_headers_are_sent(fault_server):
    server = fault_server(completion())
    request = {**REQUEST, "extra_body": {"top_k": 5}, "extra_headers": {"X-Trace": "t1"}}
    assert run("sync", server.base_url, server, request=request, headers={"X-Team": "eval"}).error is None
    sent = server.requests[0]
    assert sent.json()["top_k"] == 5
    assert sent.headers["x-trace"] == "t1" and sent.headers["x-team"] == "eval"


@pytest.mark.parametrize("option", [{"timeout": 0}, {"max_retries": -1}, {"backoff": -1}, {"model": ""}])
def test_bad_options_are_usage_errors(option):
    with pytest.raises(UsageError):
        OpenAICompatibleClient("http://127.0.0.1:9/v1", **option)


def test_aio_twin_shares_settings_and_key(fault_server):
    server = fault_server(completion())
    client = OpenAICompatibleClient(server.base_url, api_key=CANARY, model="m", **FAST)
    twin = client.aio
    assert isinstance(twin, AsyncOpenAICompatibleClient)
    assert twin is client.aio
    assert (twin.model, twin.retry, twin.timeout) == (client.model, client.retry, client.timeout)

    async def call():
        try:
            return await twin.chat.completions.create(**REQUEST)
        finally:
            await twin.aclose()

    assert asyncio.run(call()).choices[0].message.content == '{"score": true}'
    assert server.requests[0].headers["authorization"] == f"Bearer {CANARY}"
    client.close()


# -- retry rules, without a network ---------------------------------------------------


def test_retry_after_forms():
    assert parse_retry_after({"Retry-After": "2.5"}) == 2.5
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=lambda: 1445412470.0) == 10.0
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({"Retry-After": "-3"}) is None
    assert parse_retry_after({}) is None


def test_backoff_grows_is_capped_and_jittered():
    policy = RetryPolicy(max_retries=5, backoff=0.5, max_backoff=2.0, max_retry_after=10.0)
    assert [policy.delay(i, rng=lambda: 0.0) for i in range(4)] == [0.5, 1.0, 2.0, 2.0]
    assert policy.delay(1, rng=lambda: 1.0) == 0.75
    assert policy.delay(0, retry_after=3.0) == 3.0
    assert policy.delay(0, retry_after=300.0) == 10.0


# -- a real llama-cpp-python server ---------------------------------------------------

PROMPT = "Is this answer correct?\nQuestion: {inputs}\nAnswer: {outputs}\nRespond in JSON."


@pytest.mark.server
@pytest.mark.model
def test_scores_through_a_real_llama_server(llama_server, caplog):
    caplog.set_level(logging.INFO)
    request = {**REQUEST, "max_tokens": 24, "temperature": 0}
    with OpenAICompatibleClient(llama_server.base_url, model="gemma-3-270m", max_retries=1) as client:
        response = client.chat.completions.create(**request)
        assert isinstance(json.loads(response.choices[0].message.content)["score"], bool)
        assert response.choices[0].finish_reason == "stop"
        # The server rejected json_schema with its 500; the client switched and remembers.
        assert client.response_format_form == LLAMA_FORM
        assert "switching" in caplog.text
    caplog.clear()
    with OpenAICompatibleClient(llama_server.base_url + "/", max_retries=0) as fresh:
        assert isinstance(
            json.loads(fresh.chat.completions.create(**request).choices[0].message.content)["score"], bool
        )
    assert "switching" not in caplog.text


@pytest.mark.server
@pytest.mark.model
def test_our_evaluator_judges_through_the_server(llama_server):
    from localjudge._judges.single import create_llm_as_judge

    with OpenAICompatibleClient(llama_server.base_url, model="gemma-3-270m", max_retries=1) as client:
        evaluator = create_llm_as_judge(prompt=PROMPT, judge=client, use_reasoning=False)
        result = evaluator(inputs="What is 2 + 2?", outputs="4")
    assert result["key"] == "score"
    assert isinstance(result["score"], bool)


@pytest.mark.server
@pytest.mark.model
async def test_async_evaluator_judges_through_the_server(llama_server):
    from localjudge._judges.single import create_async_llm_as_judge

    client = AsyncOpenAICompatibleClient(llama_server.base_url, model="gemma-3-270m", max_retries=1)
    try:
        evaluator = create_async_llm_as_judge(prompt=PROMPT, judge=client, use_reasoning=False)
        result = await evaluator(inputs="What is 2 + 2?", outputs="5")
    finally:
        await client.aclose()
    assert isinstance(result["score"], bool)


@pytest.mark.server
@pytest.mark.model
def test_openai_sdk_client_is_a_judge_for_our_evaluator(llama_server):
    openai = pytest.importorskip("openai")
    from localjudge._judges.single import create_llm_as_judge

    with openai.OpenAI(base_url=llama_server.base_url, api_key="sk-local", max_retries=0) as sdk:
        evaluator = create_llm_as_judge(prompt=PROMPT, judge=sdk, model="gemma-3-270m", use_reasoning=False)
        result = evaluator(inputs="What is 2 + 2?", outputs="4")
    assert isinstance(result["score"], bool)


@pytest.mark.server
@pytest.mark.model
async def test_adapted_async_openai_sdk_client_negotiates_the_form(llama_server):
    openai = pytest.importorskip("openai")
    from localjudge._clients.adapter import AsyncFormatAdapter, adapt_response_format

    async with openai.AsyncOpenAI(base_url=llama_server.base_url, api_key="sk-local", max_retries=0) as sdk:
        judge = adapt_response_format(sdk)
        assert isinstance(judge, AsyncFormatAdapter)
        response = await judge.chat.completions.create(**{**REQUEST, "max_tokens": 24})
    assert isinstance(json.loads(response.choices[0].message.content)["score"], bool)
    assert FORMATS.get(llama_server.base_url) == LLAMA_FORM


@pytest.mark.server
@pytest.mark.model
def test_our_remote_client_is_a_judge_for_openevals(llama_server):
    openevals_llm = pytest.importorskip("openevals.llm")

    with OpenAICompatibleClient(llama_server.base_url, max_retries=1) as client:
        evaluator = openevals_llm.create_llm_as_judge(
            prompt=PROMPT, judge=client, model="gemma-3-270m", use_reasoning=False
        )
        result = evaluator(inputs="What is 2 + 2?", outputs="4")
    assert result["key"] == "score"
    assert isinstance(result["score"], bool)


def test_transport_error_is_fallback_worthy_even_for_4xx(fault_server):
    server = fault_server(respond(401, "bad key"))
    result = run("sync", server.base_url, server)
    assert isinstance(result.error, RemoteCallError) and result.error.retryable


def test_one_client_serves_many_threads_and_tasks(fault_server):
    from concurrent.futures import ThreadPoolExecutor

    server = fault_server(completion())
    with OpenAICompatibleClient(server.base_url, **FAST) as client:
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda _: client.chat.completions.create(**REQUEST), range(8)))

        async def gather():
            try:
                return await asyncio.gather(*(client.aio.chat.completions.create(**REQUEST) for _ in range(8)))
            finally:
                await client.aio.aclose()

        answers += asyncio.run(gather())
    assert len(server.requests) == 16
    assert all(a.choices[0].message.content == '{"score": true}' for a in answers)
    assert server.wait_open_at_most(0) == 0


@pytest.mark.parametrize(
    ("asked", "sent"),
    [({}, 50), ({"max_tokens": 10}, 10), ({"max_completion_tokens": 10}, None)],
)
def test_a_client_max_tokens_is_sent_with_requests_that_set_none(asked, sent):
    request = {k: v for k, v in REQUEST.items() if k != "max_tokens"}
    client = OpenAICompatibleClient("http://127.0.0.1:9/v1", max_tokens=50)
    body = json.loads(client._build({**request, **asked}).content)
    assert body.get("max_tokens") == sent
    assert body.get("max_completion_tokens") == asked.get("max_completion_tokens")  # the caller's, untouched


def test_without_a_bound_of_its_own_a_request_gets_the_default_one():
    request = {k: v for k, v in REQUEST.items() if k != "max_tokens"}
    body = json.loads(OpenAICompatibleClient("http://127.0.0.1:9/v1")._build(request).content)
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS and "max_completion_tokens" not in body
    given = json.loads(OpenAICompatibleClient("http://127.0.0.1:9/v1")._build({**request, "max_tokens": 7}).content)
    assert given["max_tokens"] == 7


def _reply(status: int, body: dict) -> Reply:
    return Reply(status, "X", {}, json.dumps(body).encode())


def _body(call) -> dict:
    return json.loads(call.content)


def test_the_plan_sends_the_bound_as_max_completion_tokens_once_max_tokens_is_refused_and_remembers():
    request = {k: v for k, v in REQUEST.items() if k != "max_tokens"}
    client = OpenAICompatibleClient("http://127.0.0.1:9/v1", model="o-reasoner", max_retries=0)
    plan = client.plan(request)
    first = next(plan)
    assert _body(first)["max_tokens"] == DEFAULT_MAX_TOKENS
    second = plan.send(_reply(400, O_SERIES_REFUSAL))  # no retry is used up: max_retries=0
    assert "max_tokens" not in _body(second)
    assert _body(second)["max_completion_tokens"] == DEFAULT_MAX_COMPLETION_TOKENS
    assert {k: v for k, v in _body(second).items() if k != "max_completion_tokens"} == {
        k: v for k, v in _body(first).items() if k != "max_tokens"
    }
    with pytest.raises(StopIteration) as done:
        plan.send(_reply(200, completion_body('{"score": true}')))
    assert done.value.value.choices[0].message.content == '{"score": true}'
    assert BOUND_FIELD.get("http://127.0.0.1:9/v1#o-reasoner") == "max_completion_tokens"
    assert "max_completion_tokens" in _body(next(client.plan(request)))  # remembered for the endpoint and model
    other = OpenAICompatibleClient("http://127.0.0.1:9/v1", model="chat")
    assert _body(next(other.plan(request)))["max_tokens"] == DEFAULT_MAX_TOKENS  # another model keeps max_tokens


@pytest.mark.parametrize(
    ("request_bound", "client_bound"), [({"max_tokens": 20}, None), ({}, 50), ({"extra_body": {"max_tokens": 9}}, None)]
)
def test_the_plan_never_renames_a_bound_the_caller_gave(request_bound, client_bound):
    request = {**{k: v for k, v in REQUEST.items() if k != "max_tokens"}, **request_bound}
    client = OpenAICompatibleClient("http://127.0.0.1:9/v1", max_retries=0, max_tokens=client_bound)
    plan = client.plan(request)
    sent = _body(next(plan))["max_tokens"]
    assert sent == (client_bound or request_bound.get("max_tokens") or 9)
    with pytest.raises(RemoteStatusError) as caught:
        plan.send(_reply(400, O_SERIES_REFUSAL))
    assert caught.value.status_code == 400 and "max_completion_tokens" in str(caught.value)
    assert BOUND_FIELD.get("http://127.0.0.1:9/v1#judge") == "max_tokens"


def test_a_refusal_after_the_switch_is_the_server_s_error():
    request = {k: v for k, v in REQUEST.items() if k != "max_tokens"}
    plan = OpenAICompatibleClient("http://127.0.0.1:9/v1", max_retries=0).plan(request)
    next(plan)
    plan.send(_reply(400, O_SERIES_REFUSAL))
    with pytest.raises(RemoteStatusError):
        plan.send(_reply(400, O_SERIES_REFUSAL))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_server_that_refuses_max_tokens_gets_max_completion_tokens(mode, fault_server):
    server = fault_server(respond(400, O_SERIES_REFUSAL), completion())
    request = {k: v for k, v in REQUEST.items() if k != "max_tokens"}
    result = run(mode, server.base_url, server, request=request, max_retries=0, model="o-reasoner")
    assert result.error is None, result.error
    sent = [r.json() for r in server.requests]
    assert [(b.get("max_tokens"), b.get("max_completion_tokens")) for b in sent] == [
        (DEFAULT_MAX_TOKENS, None),
        (None, DEFAULT_MAX_COMPLETION_TOKENS),
    ]


def test_max_tokens_reaches_a_server_spec_and_loading_options_do_not():
    from localjudge._clients.resolve import resolve_model
    from localjudge.errors import ModelSpecError

    assert resolve_model("openai:m", base_url="http://127.0.0.1:9/v1", max_tokens=5).max_tokens == 5
    with pytest.raises(UsageError, match="max_tokens"):
        OpenAICompatibleClient("http://127.0.0.1:9/v1", max_tokens=0)
    with pytest.raises(ModelSpecError, match="n_ctx= does not apply"):
        resolve_model("openai:m", base_url="http://127.0.0.1:9/v1", n_ctx=512)


# -- temperature ----------------------------------------------------------------------

#: OpenAI's answer to temperature 0 for a reasoning model, verbatim in shape
TEMPERATURE_REJECTION = {
    "error": {
        "message": "Unsupported value: 'temperature' does not support 0 with this model. "
        "Only the default (1) value is supported.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "unsupported_value",
    }
}


def test_temperature_zero_is_sent_unless_the_caller_or_the_client_says_otherwise(fault_server):
    server = fault_server(completion(), completion(), completion())
    assert run("sync", server.base_url, server).error is None
    assert run("sync", server.base_url, server, request={**REQUEST, "temperature": 0.7}).error is None
    assert run("sync", server.base_url, server, temperature=None).error is None
    sent = [request.json() for request in server.requests]
    assert [body.get("temperature", "absent") for body in sent] == [0.0, 0.7, "absent"]
    assert OpenAICompatibleClient(server.base_url, temperature=0.2).cache_identity()["temperature"] == 0.2
    with pytest.raises(UsageError, match="temperature must be a number from 0 to 2"):
        OpenAICompatibleClient(server.base_url, temperature=5)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_model_that_refuses_temperature_gets_the_request_again_without_it_and_it_is_remembered(mode, fault_server):
    server = fault_server(respond(400, TEMPERATURE_REJECTION), completion(), completion(), completion())
    result = run(mode, server.base_url, server, max_retries=0, model="o-reasoner")  # no retry is used up
    assert result.error is None, result.error
    assert [("temperature" in r.json()) for r in server.requests] == [True, False]
    again = run(mode, server.base_url, server, max_retries=0, model="o-reasoner")
    assert again.error is None and "temperature" not in server.requests[2].json()
    assert run(mode, server.base_url, server, model="chat").error is None
    assert server.requests[3].json()["temperature"] == 0.0  # another model on the endpoint keeps its 0


def test_only_an_error_that_names_temperature_counts_as_refusing_it():
    from localjudge._clients.formats import is_temperature_rejection

    assert is_temperature_rejection(400, json.dumps(TEMPERATURE_REJECTION))
    echoed = {"detail": [{"msg": "unsupported value", "input": {"temperature": 0.0, "messages": []}}]}
    assert not is_temperature_rejection(422, json.dumps(echoed))  # FastAPI's 422 echoes the request
    assert not is_temperature_rejection(400, "temperature unsupported")  # not an error object
    assert not is_temperature_rejection(500, json.dumps(TEMPERATURE_REJECTION))


def test_a_caller_s_own_temperature_refused_is_the_caller_s_error(fault_server):
    server = fault_server(respond(400, TEMPERATURE_REJECTION))
    result = run("sync", server.base_url, server, request={**REQUEST, "temperature": 0.5})
    assert isinstance(result.error, RemoteStatusError) and len(server.requests) == 1
