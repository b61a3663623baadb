"""Public types: the OpenEvals TypedDicts and the ModelClient protocols."""

from __future__ import annotations

import inspect
import typing
from types import SimpleNamespace

import pytest
from typing_extensions import is_typeddict

from localjudge import types
from localjudge.testing import ScriptedClient
from localjudge.types import (
    AsyncChatCompletionsClient,
    AsyncModelClient,
    ChatCompletionMessage,
    ChatCompletionsClient,
    EvaluatorResult,
    FewShotExample,
    ModelClient,
)


def kind_of(value: object) -> str:
    """What a public name of ``localjudge.types`` is: a TypedDict, a Protocol, a function, or something else."""
    if is_typeddict(value):
        return "TypedDict"
    if isinstance(value, type) and getattr(value, "_is_protocol", False):
        return "Protocol"
    if inspect.isfunction(value):
        return "function"
    return type(value).__name__


def test_all_names_are_the_types_defined_here():
    """Each name in ``__all__`` is defined in ``localjudge.types`` itself, under its own name, and is of its kind."""
    kinds = {}
    for name in types.__all__:
        value = getattr(types, name)
        if typing.get_origin(value) is not None:  # an alias: a union, or a callable's shape
            kinds[name] = f"alias of {typing.get_origin(value).__name__}"
            continue
        assert value.__module__ == "localjudge.types" and value.__name__ == name, name
        kinds[name] = kind_of(value)
    assert kinds == {
        "AnyModelClient": "alias of Union",
        "JudgeClient": "alias of Union",
        "OutputSchemaSpec": "alias of Union",
        "Prompt": "alias of Union",
        "PromptCallable": "alias of Callable",
        "ChatModel": "Protocol",
        "RunnablePrompt": "Protocol",
        "ChatCompletion": "TypedDict",
        "ChatCompletionMessage": "TypedDict",
        "EvaluatorResult": "TypedDict",
        "FewShotExample": "TypedDict",
        "JudgeRequest": "TypedDict",
        "AsyncChatCompletionsClient": "Protocol",
        "AsyncModelClient": "Protocol",
        "ChatCompletionsClient": "Protocol",
        "ModelClient": "Protocol",
        "SimpleAsyncEvaluator": "Protocol",
        "SimpleEvaluator": "Protocol",
        "SupportsCacheIdentity": "Protocol",
        "SupportsCheckSchema": "Protocol",
        "SupportsCounters": "Protocol",
        "SupportsCreateMany": "Protocol",
        "SupportsRuntimeInfo": "Protocol",
        "SupportsSmokeDecode": "Protocol",
        "offers": "function",
    }


@pytest.mark.parametrize(
    ("cls", "required", "optional"),
    [
        (ChatCompletionMessage, {"content", "role"}, {"id", "tool_calls"}),
        (FewShotExample, {"inputs", "outputs", "score"}, {"reasoning"}),
        (EvaluatorResult, {"key", "score", "comment"}, {"metadata"}),
    ],
)
def test_typeddict_keys(cls, required, optional):
    assert cls.__required_keys__ == required
    assert cls.__optional_keys__ == optional
    typing.get_type_hints(cls)  # annotations resolve


def test_a_scripted_client_is_a_model_client():
    client = ScriptedClient([])
    assert isinstance(client, ModelClient)
    assert isinstance(client.chat.completions, ChatCompletionsClient)


def test_an_object_of_the_openai_shape_is_a_model_client():
    shaped = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=lambda **kw: {})))
    assert isinstance(shaped, ModelClient)
    assert isinstance(shaped, AsyncModelClient)
    assert isinstance(shaped.chat.completions, AsyncChatCompletionsClient)


@pytest.mark.parametrize("value", [object(), "client", SimpleNamespace(completions=None)])
def test_other_objects_are_not_model_clients(value):
    assert not isinstance(value, ModelClient)


def test_objects_without_create_are_not_completions_clients():
    assert not isinstance(SimpleNamespace(make=lambda: None), ChatCompletionsClient)


def test_few_shot_example_validates_with_pydantic_without_reasoning():
    pydantic = pytest.importorskip("pydantic")
    adapter = pydantic.TypeAdapter(FewShotExample)
    assert adapter.validate_python({"inputs": "q", "outputs": "a", "score": 1.0}) == {
        "inputs": "q",
        "outputs": "a",
        "score": 1.0,
    }


def test_every_request_a_judge_sends_holds_only_the_keys_its_type_names():
    from localjudge import create_llm_as_judge, create_pairwise_judge
    from localjudge._clients.request import SCORE_REPLY_FIELD
    from localjudge.types import JudgeRequest

    assert SCORE_REPLY_FIELD in JudgeRequest.__annotations__  # the local models' extension, typed where it is set
    assert JudgeRequest.__required_keys__ == {"messages"}
    client = ScriptedClient(["4", '{"score": true}', "- Is it 4?", '{"winner": "A"}', '{"winner": "A"}'])
    create_llm_as_judge(
        judge=client, prompt="{inputs} {outputs} {reference_outputs}", self_reference=True, use_reasoning=False
    )(inputs="2+2?", outputs="4")
    create_pairwise_judge(judge=client, way="checklist", use_reasoning=False)(
        inputs="2+2?", outputs_a="4", outputs_b="5"
    )
    assert len(client.requests) == 5
    for request in client.requests:
        assert set(request) <= set(JudgeRequest.__annotations__), set(request)
