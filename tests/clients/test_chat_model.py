"""A localjudge client as a LangChain chat model: messages in OpenAI's shape, bounded free text, an id per reply."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from localjudge import LocalChatModel
from localjudge._clients.base import make_chat_completion
from localjudge.testing import ScriptedClient


def test_a_reply_is_the_clients_free_text_asked_greedily_and_bounded():
    client = ScriptedClient(["Hello, I need help with my order."])
    model = LocalChatModel(client=client, max_tokens=32)
    reply = model.invoke([SystemMessage("You are a customer."), HumanMessage("Start."), AIMessage("Hi!")], stop=["\n"])
    assert reply.content == "Hello, I need help with my order."
    (request,) = client.requests
    assert request["messages"] == [
        {"role": "system", "content": "You are a customer."},
        {"role": "user", "content": "Start."},
        {"role": "assistant", "content": "Hi!"},
    ]
    assert (request["temperature"], request["max_tokens"], request["stop"]) == (0.0, 32, ["\n"])
    assert "response_format" not in request  # free text, not a verdict
    assert reply.response_metadata["finish_reason"] == "stop"


def test_each_reply_has_an_id_of_its_own_and_a_cut_reply_says_so():
    cut = make_chat_completion("I would like to ask ab", model="scripted", finish_reason="length")
    model = LocalChatModel(client=ScriptedClient(["one", cut]))
    first, second = model.invoke("a"), model.invoke("b")
    assert first.id and second.id and first.id != second.id  # a conversation merged by id keeps both
    assert second.content == "I would like to ask ab" and second.response_metadata["finish_reason"] == "length"


def test_it_answers_async_too():
    model = LocalChatModel(client=ScriptedClient(["async hello"]))
    assert asyncio.run(model.ainvoke("hi")).content == "async hello"


@pytest.mark.model
def test_a_model_named_is_loaded_once_and_answers(tiny_gguf):
    model = LocalChatModel(model="tiny", max_tokens=8)
    first = model.invoke("Say hello.")
    assert isinstance(first.content, str) and first.content.strip()
    assert model._client() is model._client()


def test_options_given_to_one_call_are_used_and_others_refused_by_name():
    from localjudge.errors import UsageError

    client = ScriptedClient(["short"])
    model = LocalChatModel(client=client)
    assert model.bind(max_tokens=8).invoke("hi", temperature=0.5).content == "short"
    (request,) = client.requests
    assert (request["max_tokens"], request["temperature"]) == (8, 0.5)
    with pytest.raises(UsageError, match="not top_p"):
        model.invoke("hi", top_p=0.9)
    assert len(client.requests) == 1  # refused before anything was sent


def test_without_langchain_it_names_the_extra_to_install(monkeypatch):
    import importlib
    import sys

    from localjudge.errors import MissingDependencyError

    monkeypatch.setitem(sys.modules, "langchain_core.language_models.chat_models", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "localjudge._clients.chat_model")
    with pytest.raises(
        MissingDependencyError, match=r"LocalChatModel needs the package 'langchain-core'.*localjudge\[langchain\]"
    ):
        importlib.import_module("localjudge._clients.chat_model")
