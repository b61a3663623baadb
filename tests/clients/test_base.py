"""clients/base.py: OpenAI-shaped responses, response_format forms, sync/async plumbing, ScriptedClient."""

from __future__ import annotations

import asyncio
import json
import threading
from types import SimpleNamespace

import pytest

from localjudge._clients.base import (
    AsyncChatClient,
    ChatClient,
    ChatResponse,
    Record,
    acall_create,
    call_create,
    make_chat_completion,
    read_response_format,
)
from localjudge.errors import ModelError, UsageError
from localjudge.testing import ScriptedClient

REQUEST = {"messages": [{"role": "user", "content": "hi"}], "model": "m"}


# --- Record / ChatResponse ------------------------------------------------------------


def test_record_reads_by_attribute_and_by_key_at_every_level():
    record = Record({"choices": [{"message": {"content": "x"}}], "n": 1}, extra="e")
    assert record.choices[0].message.content == "x"
    assert record["choices"][0]["message"]["content"] == "x"
    assert record.extra == "e" and record["n"] == 1
    assert isinstance(record, dict)


def test_record_missing_attribute_is_an_attribute_error():
    record = Record({"a": 1})
    with pytest.raises(AttributeError, match="missing"):
        record.missing  # noqa: B018
    assert getattr(record, "missing", "default") == "default"


def test_model_dump_gives_plain_dicts():
    dumped = Record({"a": {"b": [{"c": 1}]}}).model_dump()
    assert dumped == {"a": {"b": [{"c": 1}]}}
    assert type(dumped["a"]) is dict and type(dumped["a"]["b"][0]) is dict
    assert json.loads(json.dumps(Record({"a": {"b": 2}}))) == {"a": {"b": 2}}


def test_make_chat_completion_has_the_openai_shape():
    response = make_chat_completion(
        '{"score": true}',
        model="gemma",
        finish_reason="length",
        prompt_tokens=7,
        completion_tokens=3,
        extra={"localjudge": {"client": "x"}},
    )
    assert isinstance(response, ChatResponse)
    assert response.object == "chat.completion"
    assert response.id.startswith("chatcmpl-")
    assert isinstance(response.created, int)
    assert response.model == "gemma"
    assert response.choices == [
        {"index": 0, "message": {"role": "assistant", "content": '{"score": true}'}, "finish_reason": "length"}
    ]
    assert response.usage == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    assert response.localjudge.client == "x"
    assert make_chat_completion("a", model="m").id != make_chat_completion("a", model="m").id


# --- read_response_format --------------------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"score": {"type": "boolean"}}}


@pytest.mark.parametrize(
    ("response_format", "expected"),
    [
        (None, ("text", None)),
        ({"type": "text"}, ("text", None)),
        ({"type": "json_object"}, ("json_object", None)),
        ({"type": "json_object", "schema": SCHEMA}, ("json_schema", SCHEMA)),
        (
            {"type": "json_schema", "json_schema": {"name": "s", "strict": True, "schema": SCHEMA}},
            ("json_schema", SCHEMA),
        ),
    ],
    ids=["none", "text", "json-object", "llamacpp-schema", "openai-schema"],
)
def test_read_response_format_accepts_every_form(response_format, expected):
    assert read_response_format(response_format) == expected


@pytest.mark.parametrize(
    "response_format",
    [
        "json",
        {"type": "json_schema"},
        {"type": "json_schema", "json_schema": {"name": "s"}},
        {"type": "json_object", "schema": "x"},
        {"type": "yaml"},
        {},
    ],
)
def test_read_response_format_rejects_the_rest(response_format):
    with pytest.raises(UsageError):
        read_response_format(response_format)


# --- ScriptedClient ---------------------------------------------------------------------------------


def test_scripted_client_answers_in_turn_and_records_requests():
    client = ScriptedClient(["one", "two"])
    first = client.chat.completions.create(**REQUEST)
    second = client.chat.completions.create(messages=[], model="other")
    assert first.choices[0].message.content == "one"
    assert second["choices"][0]["message"]["content"] == "two"
    assert first.model == "m" and second.model == "other"
    assert client.requests == [REQUEST, {"messages": [], "model": "other"}]
    with pytest.raises(AssertionError, match="ran out of answers after 2 calls"):
        client.chat.completions.create(**REQUEST)


def test_scripted_client_items_of_every_kind():
    error = ModelError("boom")
    given = make_chat_completion("given", model="g")
    client = ScriptedClient(
        [error, given, {"choices": [{"message": {"content": "mapped"}}]}, lambda request: f"for {request['model']}"]
    )
    with pytest.raises(ModelError) as info:
        client.chat.completions.create(**REQUEST)
    assert info.value is error
    assert client.chat.completions.create(**REQUEST) == given
    mapped = client.chat.completions.create(**REQUEST)
    assert mapped.choices[0].message.content == "mapped"
    assert client.chat.completions.create(**REQUEST).choices[0].message.content == "for m"


def test_scripted_client_callable_may_raise_or_return_a_completion():
    client = ScriptedClient(
        [lambda request: ModelError("from callable"), lambda request: make_chat_completion("c", model="x")]
    )
    with pytest.raises(ModelError, match="from callable"):
        client.chat.completions.create(**REQUEST)
    assert client.chat.completions.create(**REQUEST).model == "x"


def test_scripted_client_repeat_and_finish_reason():
    client = ScriptedClient(["a", "b"], repeat=True, finish_reason="length")
    contents = [client.chat.completions.create(**REQUEST).choices[0].message.content for _ in range(5)]
    assert contents == ["a", "b", "a", "b", "a"]
    assert client.chat.completions.create(**REQUEST).choices[0].finish_reason == "length"
    assert len(client.requests) == 6


def test_scripted_client_without_model_names_itself():
    assert ScriptedClient(["x"]).chat.completions.create(messages=[]).model == "scripted"


# --- ChatClient / AsyncChatClient -----------------------------------------------------------------


class Echo(ChatClient):
    name = "echo"

    def __init__(self):
        super().__init__()
        self.threads = []

    def _complete(self, request):
        self.threads.append(threading.get_ident())
        return make_chat_completion(request["messages"][-1]["content"], model=request.get("model", "echo"))


class AsyncEcho(AsyncChatClient):
    name = "async-echo"

    async def _acomplete(self, request):
        await asyncio.sleep(0)
        return make_chat_completion("async " + request["messages"][-1]["content"], model="a")


def test_chat_client_create_passes_the_request_through():
    assert Echo().chat.completions.create(**REQUEST).choices[0].message.content == "hi"
    assert repr(Echo()) == "Echo(name='echo')"


def test_base_clients_must_implement_their_method():
    with pytest.raises(NotImplementedError):
        ChatClient().chat.completions.create(**REQUEST)
    with pytest.raises(NotImplementedError):
        asyncio.run(AsyncChatClient().chat.completions.create(**REQUEST))


async def test_aio_twin_runs_the_sync_client_in_a_worker_thread():
    client = Echo()
    twin = client.aio
    assert isinstance(twin, AsyncChatClient)
    assert twin.name == "echo"
    response = await twin.chat.completions.create(**REQUEST)
    assert response.choices[0].message.content == "hi"
    assert client.threads and client.threads[0] != threading.get_ident()


def test_call_create_with_a_sync_client():
    assert call_create(Echo(), REQUEST).choices[0].message.content == "hi"


def test_call_create_refuses_an_async_client_without_leaking_the_coroutine(recwarn):
    with pytest.raises(UsageError, match="AsyncEcho is an async client"):
        call_create(AsyncEcho(), REQUEST)
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


async def test_acall_create_awaits_an_async_client():
    assert (await acall_create(AsyncEcho(), REQUEST)).choices[0].message.content == "async hi"


async def test_acall_create_runs_a_sync_client_in_a_thread():
    client = Echo()
    assert (await acall_create(client, REQUEST)).choices[0].message.content == "hi"
    assert client.threads[0] != threading.get_ident()


async def test_acall_create_awaits_what_a_plain_function_returns():
    """Clients like openai's whose async create is wrapped in a plain function still work."""

    async def real_create(**request):
        return {"choices": [{"message": {"content": "wrapped"}}]}

    def wrapper(**request):
        return real_create(**request)

    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=wrapper)))
    assert (await acall_create(client, REQUEST))["choices"][0]["message"]["content"] == "wrapped"
