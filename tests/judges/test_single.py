"""create_llm_as_judge / create_async_llm_as_judge against the scripted client."""

from __future__ import annotations

import asyncio
import json
import threading
import typing
from types import SimpleNamespace
from typing import Any

import pydantic
import pytest
import typing_extensions

import localjudge._clients.resolve
from localjudge import (
    AsyncChatClient,
    ChatClient,
    ModelError,
    OutputParseError,
    TruncatedOutputError,
    UsageError,
    create_async_llm_as_judge,
    create_llm_as_judge,
)
from localjudge._clients.base import make_chat_completion
from localjudge._prompts.prompting import format_few_shot_examples
from localjudge._prompts.schema import default_output_schema
from localjudge._specs.options import LIBRARY_PARALLEL
from localjudge._trust.correction import Correction
from localjudge.errors import JudgeRuntimeError, MissingTemplateVariableError
from localjudge.testing import ScriptedClient

PROMPT = "Is the answer correct?\nQuestion: {inputs}\nAnswer: {outputs}"
REASON = "The answer is right. Thus, the score should be: true."


def answer(score: Any, reasoning: str | None = REASON) -> str:
    body: dict[str, Any] = {}
    if reasoning is not None:
        body["reasoning"] = reasoning
    body["score"] = score
    return json.dumps(body)


def evaluate_sync(client: Any, **create: Any) -> Any:
    call = create.pop("call", {"inputs": "2+2?", "outputs": "4"})
    evaluator = create_llm_as_judge(judge=client, **{"prompt": PROMPT, **create})
    return evaluator(**call)


# --- results --------------------------------------------------------------------


def test_boolean_result_has_the_openevals_shape():
    client = ScriptedClient([answer(True)])
    result = evaluate_sync(client)
    assert result == {"key": "score", "score": True, "comment": REASON, "metadata": None}


def test_feedback_key_names_the_result():
    result = evaluate_sync(ScriptedClient([answer(False)]), feedback_key="correctness")
    assert result["key"] == "correctness"
    assert result["score"] is False


def test_continuous_score_is_a_float():
    result = evaluate_sync(ScriptedClient([answer(1)]), continuous=True)
    assert result["score"] == 1.0 and type(result["score"]) is float
    assert evaluate_sync(ScriptedClient([answer(0.75)]), continuous=True)["score"] == 0.75


def test_choices_score_is_the_matching_choice():
    result = evaluate_sync(ScriptedClient([answer(1)]), choices=[0.0, 0.5, 1.0])
    assert result["score"] == 1.0 and type(result["score"]) is float
    assert evaluate_sync(ScriptedClient([answer(0.5)]), choices=[0.0, 0.5, 1.0])["score"] == 0.5


def test_without_reasoning_the_comment_is_none_and_the_schema_has_no_reasoning():
    client = ScriptedClient([answer(True, reasoning=None)])
    result = evaluate_sync(client, use_reasoning=False)
    assert result == {"key": "score", "score": True, "comment": None, "metadata": None}
    schema = client.requests[0]["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["score"]


def test_metadata_comes_from_the_response_field():
    response = make_chat_completion(answer(True), model="m", extra={"localjudge": {"client": "primary"}})
    assert evaluate_sync(ScriptedClient([response]))["metadata"] == {"client": "primary"}


# --- the request --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "variant"),
    [
        ({}, {}),
        ({"continuous": True}, {"continuous": True}),
        ({"choices": [0.0, 0.5, 1.0]}, {"choices": [0.0, 0.5, 1.0]}),
        ({"use_reasoning": False}, {"use_reasoning": False}),
        ({"continuous": True, "use_reasoning": False}, {"continuous": True, "use_reasoning": False}),
        ({"choices": [0, 1], "use_reasoning": False}, {"choices": [0, 1], "use_reasoning": False}),
    ],
)
def test_the_exact_request_for_each_default_schema(options, variant):
    score = True if not options.get("continuous") and "choices" not in options else 1
    client = ScriptedClient([answer(score, None if options.get("use_reasoning") is False else REASON)])
    evaluate_sync(client, model="judge-model", **options)
    expected_schema, _ = default_output_schema(**variant)
    assert client.requests == [
        {
            "messages": [{"role": "user", "content": "Is the answer correct?\nQuestion: 2+2?\nAnswer: 4"}],
            "model": "judge-model",
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "score", "strict": True, "schema": expected_schema},
            },
        }
    ]
    assert client.requests[0]["response_format"]["json_schema"]["schema"]["additionalProperties"] is False


def test_without_model_the_request_has_no_model():
    client = ScriptedClient([answer(True)])
    evaluate_sync(client)
    assert "model" not in client.requests[0]
    assert set(client.requests[0]) == {"messages", "response_format"}


def test_string_template_with_all_values_and_extra_kwargs():
    client = ScriptedClient([answer(True)])
    evaluator = create_llm_as_judge(
        prompt="Q: {inputs}\nA: {outputs}\nRef: {reference_outputs}\nRubric: {rubric}", judge=client
    )
    evaluator(inputs={"question": "战国四大名将?"}, outputs=["白起", "王翦"], reference_outputs="白起", rubric="strict")
    content = client.requests[0]["messages"][0]["content"]
    question, answers = json.dumps({"question": "战国四大名将?"}), json.dumps(["白起", "王翦"])
    assert content == f"Q: {question}\nA: {answers}\nRef: 白起\nRubric: strict"  # json.dumps, as OpenEvals


@pytest.mark.parametrize("missing", ["reference_outputs", "rubric"])
def test_missing_template_variable_is_named_and_nothing_is_sent(missing):
    client = ScriptedClient([answer(True)])
    evaluator = create_llm_as_judge(prompt="{inputs} {outputs} {" + missing + "}", judge=client)
    with pytest.raises(MissingTemplateVariableError) as info:
        evaluator(inputs="q", outputs="a")
    assert info.value.variable == missing
    assert missing in str(info.value)
    assert client.requests == []


def test_system_is_the_first_message():
    client = ScriptedClient([answer(True)])
    evaluate_sync(client, system="You are a strict grader.")
    assert client.requests[0]["messages"] == [
        {"role": "system", "content": "You are a strict grader."},
        {"role": "user", "content": "Is the answer correct?\nQuestion: 2+2?\nAnswer: 4"},
    ]


def test_system_with_a_callable_prompt_is_a_usage_error():
    with pytest.raises(UsageError, match="system"):
        create_llm_as_judge(prompt=lambda **_: [{"role": "user", "content": "x"}], system="s", judge=ScriptedClient([]))


def test_callable_prompt_receives_the_values_and_its_messages_are_sent():
    client = ScriptedClient([answer(True)])
    calls = []

    def prompt(*, inputs, outputs, reference_outputs, **kwargs):
        calls.append((inputs, outputs, reference_outputs, kwargs))
        return [{"role": "system", "content": "grade"}, {"role": "user", "content": f"{inputs} -> {outputs}"}]

    result = create_llm_as_judge(prompt=prompt, judge=client)(inputs="q", outputs="a", extra=1)
    assert calls == [("q", "a", None, {"extra": 1})]
    assert client.requests[0]["messages"] == [
        {"role": "system", "content": "grade"},
        {"role": "user", "content": "q -> a"},
    ]
    assert result["score"] is True


def test_few_shot_examples_are_appended_to_the_user_message():
    examples = [
        {"inputs": "1+1?", "outputs": "2", "score": True, "reasoning": "Correct."},
        {"inputs": "1+2?", "outputs": "4", "score": False},
    ]
    client = ScriptedClient([answer(True), answer(True)])
    evaluator = create_llm_as_judge(prompt=PROMPT, judge=client, system="sys", few_shot_examples=examples)
    evaluator(inputs="2+2?", outputs="4")
    evaluator(inputs="3+3?", outputs="6")
    messages = client.requests[0]["messages"]
    assert messages[0] == {"role": "system", "content": "sys"}
    assert messages[1]["content"] == (
        "Is the answer correct?\nQuestion: 2+2?\nAnswer: 4\n\n" + format_few_shot_examples(examples)
    )
    assert client.requests[1]["messages"][1]["content"].count("<example>") == 2  # the examples once, not again
    assert len(examples) == 2 and "reasoning" not in examples[1]


def test_attachments_become_content_blocks():
    client = ScriptedClient([answer(True)])
    image = {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}
    create_llm_as_judge(prompt="Look:\n{attachments}\nIs it a {outputs}?", judge=client)(
        outputs="cat", attachments=[image]
    )
    assert client.requests[0]["messages"][0]["content"] == [
        {"type": "text", "text": "Look:\n"},
        image,
        {"type": "text", "text": "\nIs it a cat?"},
    ]


# --- custom output schemas ------------------------------------------------------------

DICT_SCHEMA = {
    "title": "verdict",
    "type": "object",
    "properties": {"correct": {"type": "boolean"}, "points": {"type": "integer", "minimum": 0}},
    "required": ["correct", "points"],
}


class PydanticVerdict(pydantic.BaseModel):
    correct: bool
    points: int = pydantic.Field(ge=0)


class TDVerdict(typing_extensions.TypedDict):
    correct: bool
    points: int


class PlainTDVerdict(typing.TypedDict):
    correct: bool
    points: int


@pytest.mark.parametrize("output_schema", [DICT_SCHEMA, PydanticVerdict, TDVerdict, PlainTDVerdict])
def test_custom_output_schema_returns_the_answer_in_its_shape(output_schema):
    """A dict, or for a Pydantic model an instance of it, as OpenEvals gives."""
    client = ScriptedClient(['{"correct": true, "points": 3}'])
    result = evaluate_sync(client, output_schema=output_schema, model="m")
    if output_schema is PydanticVerdict:
        assert type(result) is PydanticVerdict and result.model_dump() == {"correct": True, "points": 3}
    else:
        assert result == {"correct": True, "points": 3} and type(result) is dict
    response_format = client.requests[0]["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["strict"] is True
    assert response_format["json_schema"]["name"] in ("verdict", "PydanticVerdict", "TDVerdict", "PlainTDVerdict")
    schema = response_format["json_schema"]["schema"]
    assert set(schema["properties"]) == {"correct", "points"}
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize("output_schema", [DICT_SCHEMA, PydanticVerdict, TDVerdict, PlainTDVerdict])
@pytest.mark.parametrize(
    "raw",
    ['{"correct": "yes", "points": 3}', '{"correct": true}', '{"correct": true, "points": 3, "x": 1}'],
)
def test_custom_output_schema_violations_are_parse_errors(output_schema, raw):
    with pytest.raises(OutputParseError) as info:
        evaluate_sync(ScriptedClient([raw]), output_schema=output_schema)
    assert info.value.raw_output == raw


def test_custom_schema_constraints_are_enforced():
    with pytest.raises(OutputParseError) as info:
        evaluate_sync(ScriptedClient(['{"correct": true, "points": -1}']), output_schema=PydanticVerdict)
    assert info.value.raw_output == '{"correct": true, "points": -1}'


def test_output_schema_ignores_the_default_score_options():
    client = ScriptedClient(['{"correct": false, "points": 0}'])
    result = evaluate_sync(client, output_schema=DICT_SCHEMA, continuous=True, choices=[0.0, 1.0])
    assert result == {"correct": False, "points": 0}
    assert "score" not in client.requests[0]["response_format"]["json_schema"]["schema"]["properties"]


@pytest.mark.parametrize("bad", [42, "json", PydanticVerdict(correct=True, points=1), int, {"type": "array"}], ids=str)
def test_bad_output_schema_is_a_usage_error_at_creation(bad):
    with pytest.raises(UsageError, match="output_schema"):
        create_llm_as_judge(prompt=PROMPT, judge=ScriptedClient([]), output_schema=bad)


# --- response objects ---------------------------------------------------------------------


class _Completions:
    def __init__(self, respond):
        self.respond = respond
        self.requests = []

    def create(self, **request):
        self.requests.append(request)
        return self.respond(request)


class PlainClient:
    """An object of the openai SDK's shape that is not one of ours."""

    def __init__(self, respond):
        self.chat = SimpleNamespace(completions=_Completions(respond))


def _attribute_only(content, finish_reason="stop"):
    message = SimpleNamespace(role="assistant", content=content)
    return SimpleNamespace(choices=[SimpleNamespace(index=0, message=message, finish_reason=finish_reason)])


def _dict_only(content, finish_reason="stop"):
    return {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}]
    }


@pytest.mark.parametrize("shape", [_attribute_only, _dict_only], ids=["attributes", "dict"])
def test_responses_are_read_by_attribute_or_by_key(shape):
    client = PlainClient(lambda request: shape(answer(True)))
    result = evaluate_sync(client, model="gpt-x")
    assert result == {"key": "score", "score": True, "comment": REASON, "metadata": None}
    assert client.chat.completions.requests[0]["model"] == "gpt-x"


@pytest.mark.parametrize("shape", [_attribute_only, _dict_only], ids=["attributes", "dict"])
def test_finish_reason_length_is_read_in_both_shapes(shape):
    client = PlainClient(lambda request: shape(answer(True), finish_reason="length"))
    with pytest.raises(TruncatedOutputError):
        evaluate_sync(client)


@pytest.mark.parametrize(
    "response", [{"choices": []}, {}, SimpleNamespace(), None], ids=["empty", "dict", "obj", "none"]
)
def test_a_response_without_choices_is_an_error(response):
    with pytest.raises(JudgeRuntimeError, match="choices"):
        evaluate_sync(PlainClient(lambda request: response))


# --- error paths ------------------------------------------------------------------------------


def test_truncated_output_is_an_error_with_the_raw_text():
    raw = '{"reasoning": "The answer lists four generals and'
    with pytest.raises(TruncatedOutputError) as info:
        evaluate_sync(ScriptedClient([raw], finish_reason="length"))
    assert info.value.raw_output == raw
    assert raw in str(info.value)


def test_complete_json_with_finish_reason_length_is_still_an_error():
    with pytest.raises(TruncatedOutputError) as info:
        evaluate_sync(ScriptedClient([answer(True)], finish_reason="length"))
    assert info.value.raw_output == answer(True)


@pytest.mark.parametrize(
    ("options", "raw"),
    [
        ({}, "The answer is correct."),
        ({}, '{"reasoning": "ok", "score": True}'),
        ({}, answer("true")),
        ({}, answer(1)),
        ({}, answer(None)),
        ({"continuous": True}, answer(1.5)),
        ({"continuous": True}, answer(-0.1)),
        ({"continuous": True}, answer("0.5")),
        ({"continuous": True}, answer(True)),
        ({"choices": [0.0, 0.5, 1.0]}, answer(0.75)),
        ({"choices": [0.0, 0.5, 1.0]}, answer(True)),
        ({}, '{"score": true}'),
        ({}, json.dumps({"reasoning": "r", "score": True, "confidence": 1})),
        ({}, ""),
        ({}, "   "),
    ],
    ids=[
        "prose",
        "invalid-json",
        "bool-as-string",
        "bool-as-number",
        "null-score",
        "above-one",
        "below-zero",
        "number-as-string",
        "continuous-bool",
        "not-a-choice",
        "choice-bool",
        "missing-reasoning",
        "extra-key",
        "empty",
        "blank",
    ],
)
def test_bad_answers_are_parse_errors_never_scores(options, raw):
    with pytest.raises(OutputParseError) as info:
        evaluate_sync(ScriptedClient([raw]), **options)
    assert info.value.raw_output == raw
    assert info.value.schema == default_output_schema(**options)[0]


def test_none_content_is_an_empty_output_error():
    with pytest.raises(OutputParseError, match="empty"):
        evaluate_sync(PlainClient(lambda request: _dict_only(None)))


@pytest.mark.parametrize(
    "judge",
    [
        object(),
        SimpleNamespace(chat=None),
        SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace())),
        "gpt-4",
    ],
    ids=["object", "no-completions", "no-create", "string"],
)
@pytest.mark.parametrize("factory", [create_llm_as_judge, create_async_llm_as_judge])
def test_judge_without_chat_completions_create_is_a_usage_error(judge, factory):
    with pytest.raises(UsageError, match=r"chat\.completions\.create"):
        factory(prompt=PROMPT, judge=judge)


class EchoAsyncClient(AsyncChatClient):
    name = "echo-async"

    def __init__(self, contents):
        super().__init__()
        self.contents = list(contents)
        self.requests = []
        self.awaited_in = []

    async def _acomplete(self, request):
        self.requests.append(request)
        self.awaited_in.append(threading.get_ident())
        await asyncio.sleep(0)
        return make_chat_completion(self.contents.pop(0), model="echo")


def test_async_client_given_to_the_sync_evaluator_is_a_usage_error(recwarn):
    evaluator = create_llm_as_judge(prompt=PROMPT, judge=EchoAsyncClient([answer(True)]))
    with pytest.raises(UsageError, match="create_async_llm_as_judge"):
        evaluator(inputs="q", outputs="a")
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


@pytest.mark.parametrize("choices", [[], ["a"], [True], [0.5, 0.5], "0.5"], ids=str)
@pytest.mark.parametrize("factory", [create_llm_as_judge, create_async_llm_as_judge])
def test_bad_choices_are_a_usage_error_at_creation(choices, factory):
    with pytest.raises(UsageError, match="choices"):
        factory(prompt=PROMPT, judge=ScriptedClient([]), choices=choices)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"prompt": None}, "prompt"),
        ({"feedback_key": ""}, "feedback_key"),
        ({"feedback_key": 3}, "feedback_key"),
        ({"few_shot_examples": {"inputs": "x"}}, "few_shot_examples"),
    ],
)
def test_bad_arguments_are_usage_errors(options, match):
    with pytest.raises(UsageError, match=match):
        create_llm_as_judge(**{"prompt": PROMPT, "judge": ScriptedClient([]), **options})


def test_client_errors_propagate_unchanged():
    failure = ModelError("the model crashed", backend="scripted")
    with pytest.raises(ModelError) as info:
        evaluate_sync(ScriptedClient([failure]))
    assert info.value is failure


def test_the_factories_take_keyword_arguments_only():
    with pytest.raises(TypeError):
        create_llm_as_judge(PROMPT)  # type: ignore[misc]
    evaluator = create_llm_as_judge(prompt=PROMPT, judge=ScriptedClient([answer(True)]))
    with pytest.raises(TypeError):
        evaluator("q", "a")  # type: ignore[misc]


# --- judge=None: the model spec resolver --------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "environment", "spec", "options"),
    [
        (None, None, "default", {"parallel": LIBRARY_PARALLEL}),
        (None, "tiny", "tiny", {"parallel": LIBRARY_PARALLEL}),
        ("my-card", "tiny", "my-card", {"parallel": LIBRARY_PARALLEL}),
        ("openai:gpt-4o-mini", "tiny", "openai:gpt-4o-mini", {}),  # a server batches as it will
    ],
)
def test_without_a_judge_the_model_spec_is_resolved(monkeypatch, model, environment, spec, options):
    """A local model named to the library decodes gathered calls side by side, as `batch -j` rows are."""
    if environment is None:
        monkeypatch.delenv("LOCALJUDGE_MODEL")
    else:
        monkeypatch.setenv("LOCALJUDGE_MODEL", environment)
    resolved = []
    client = ScriptedClient([answer(True)])

    def fake_resolve(name, **kwargs):
        resolved.append((name, kwargs))
        return client

    monkeypatch.setattr(localjudge._clients.resolve, "resolve_model", fake_resolve)
    result = create_llm_as_judge(prompt=PROMPT, model=model)(inputs="q", outputs="a")
    assert resolved == [(spec, options)]
    assert result["score"] is True
    assert "model" not in client.requests[0], "a spec names what to load, not a model to ask for"


# --- sync / async parity -----------------------------------------------------------------------

PARITY_CASES = [
    {},
    {"continuous": True},
    {"choices": [0.0, 0.5, 1.0]},
    {"use_reasoning": False},
    {"system": "sys", "few_shot_examples": [{"inputs": "i", "outputs": "o", "score": True, "reasoning": "r"}]},
    {"output_schema": PydanticVerdict, "model": "m"},
]
PARITY_ANSWERS = [
    answer(True),
    answer(0.25),
    answer(0.5),
    answer(False, None),
    answer(True),
    '{"correct": true, "points": 2}',
]


@pytest.mark.parametrize(("options", "raw"), list(zip(PARITY_CASES, PARITY_ANSWERS, strict=True)))
async def test_sync_and_async_send_the_same_requests_and_return_the_same_results(options, raw):
    sync_client, async_client = ScriptedClient([raw]), ScriptedClient([raw])
    call = {"inputs": {"q": "二加二"}, "outputs": "4", "reference_outputs": "4"}
    sync_result = create_llm_as_judge(prompt=PROMPT, judge=sync_client, **options)(**call)
    async_result = await create_async_llm_as_judge(prompt=PROMPT, judge=async_client, **options)(**call)
    assert sync_result == async_result
    assert sync_client.requests == async_client.requests
    assert len(sync_client.requests) == 1


async def test_async_evaluator_awaits_an_async_client_on_the_loop():
    client = EchoAsyncClient([answer(True)])
    result = await create_async_llm_as_judge(prompt=PROMPT, judge=client, model="m")(inputs="q", outputs="a")
    assert result["score"] is True
    assert client.awaited_in == [threading.get_ident()]
    assert client.requests[0]["model"] == "m"


async def test_async_evaluator_runs_a_sync_client_in_a_worker_thread():
    threads = []

    def respond(request):
        threads.append(threading.get_ident())
        return answer(True)

    result = await create_async_llm_as_judge(prompt=PROMPT, judge=ScriptedClient([respond]))(inputs="q", outputs="a")
    assert result["score"] is True
    assert threads and threads[0] != threading.get_ident()


async def test_async_evaluations_with_a_sync_client_run_concurrently():
    barrier = threading.Barrier(2, timeout=5)

    def respond(request):
        barrier.wait()  # both calls must be in flight at once, or this times out
        return answer(True)

    evaluator = create_async_llm_as_judge(prompt=PROMPT, judge=ScriptedClient([respond, respond]))
    results = await asyncio.gather(evaluator(inputs="q1", outputs="a"), evaluator(inputs="q2", outputs="a"))
    assert [r["score"] for r in results] == [True, True]


async def test_async_evaluator_raises_the_same_errors():
    evaluator = create_async_llm_as_judge(prompt=PROMPT, judge=ScriptedClient(["not json"]))
    with pytest.raises(OutputParseError) as info:
        await evaluator(inputs="q", outputs="a")
    assert info.value.raw_output == "not json"
    evaluator = create_async_llm_as_judge(prompt="{inputs} {context}", judge=ScriptedClient([]))
    with pytest.raises(MissingTemplateVariableError):
        await evaluator(inputs="q")


async def test_async_evaluator_reads_plain_dict_responses_from_a_sync_client():
    client = PlainClient(lambda request: _dict_only(answer(0.5)))
    result = await create_async_llm_as_judge(prompt=PROMPT, judge=client, continuous=True)(inputs="q", outputs="a")
    assert result["score"] == 0.5


async def test_the_threaded_async_twin_of_a_sync_client_works_as_a_judge():
    sync_client = ScriptedClient([answer(False)])
    result = await create_async_llm_as_judge(prompt=PROMPT, judge=sync_client.aio)(inputs="q", outputs="a")
    assert result["score"] is False
    assert len(sync_client.requests) == 1


def test_sync_chatclient_subclass_is_a_judge():
    class Fixed(ChatClient):
        name = "fixed"

        def _complete(self, request):
            return make_chat_completion(answer(True), model="fixed")

    assert evaluate_sync(Fixed())["score"] is True


def test_a_few_shot_example_that_cannot_be_shown_fails_when_the_evaluator_is_built():
    client = ScriptedClient([])
    with pytest.raises(UsageError, match="missing outputs"):
        create_llm_as_judge(prompt=PROMPT, judge=client, few_shot_examples=[{"inputs": "q", "score": True}])
    assert client.requests == []


@pytest.mark.parametrize(
    ("options", "example"),
    [
        ({}, {"inputs": "q", "outputs": "a", "score": 0.0}),  # OpenEvals' own test gives a boolean judge 0.0 and 1.0
        ({"choices": [0.0, 1.0]}, {"inputs": "q", "outputs": "a", "score": 0.5}),
        ({"continuous": True}, {"inputs": "q", "outputs": "a", "score": 1.5}),
    ],
)
def test_an_example_verdict_the_judge_could_never_give_is_shown_with_a_warning(options, example):
    client = ScriptedClient([answer(0.0 if options else True)])
    with pytest.warns(UserWarning, match="could never give"):
        evaluator = create_llm_as_judge(prompt=PROMPT, judge=client, few_shot_examples=[example], **options)
    evaluator(inputs="2+2?", outputs="4")
    shown = "".join(message["content"] for message in client.requests[0]["messages"])
    assert str(example["score"]) in shown


def test_a_local_readout_and_a_fallback_chain_share_the_metadata():
    from localjudge import FallbackClient
    from localjudge._clients.base import make_chat_completion
    from localjudge.errors import ModelLoadError
    from localjudge.testing import ScriptedClient

    answer = make_chat_completion('{"reasoning": "r", "score": true}', model="local")
    answer["readout"] = {"score": {"probabilities": {"true": 0.8, "false": 0.2}, "probability_unexplored": 0.0}}
    broken = ScriptedClient([ModelLoadError("no file")])
    broken.name = "first"
    chain = FallbackClient(broken, ScriptedClient([answer]))
    result = create_llm_as_judge(prompt="{outputs}", judge=chain)(outputs="x")
    assert result["score"] is True
    metadata = result["metadata"]
    assert metadata["probabilities"] == {"true": 0.8, "false": 0.2}
    assert metadata["client"] == "scripted" and metadata["failures"][0]["client"] == "first"
    assert type(metadata["probabilities"]) is dict  # plain data, as results are printed and compared


def test_a_readout_of_another_field_does_not_become_the_score_metadata():
    from localjudge._clients.base import make_chat_completion
    from localjudge.testing import ScriptedClient

    answer = make_chat_completion('{"reasoning": "r", "score": true}', model="local")
    answer["readout"] = {"grade": {"probabilities": {"1": 1.0}}}
    assert create_llm_as_judge(prompt="{outputs}", judge=ScriptedClient([answer]))(outputs="x")["metadata"] is None


class ReadoutClient(ChatClient):
    """Says true, with the given readout of the score (None: no readout, as a server answers)."""

    def __init__(self, probabilities):
        super().__init__()
        self.probabilities = probabilities

    def _complete(self, request):
        extra = {"readout": {"score": {"probabilities": self.probabilities}}} if self.probabilities else None
        return make_chat_completion('{"reasoning": "Looks right.", "score": true}', model="m", extra=extra)


def test_a_calibrated_judge_scores_by_the_corrected_probabilities():
    biased_towards_true = Correction(("true", "false"), (0.9, 0.1))
    evaluator = create_llm_as_judge(
        prompt="{outputs}", judge=ReadoutClient({"true": 0.8, "false": 0.2}), calibration=biased_towards_true
    )
    result = evaluator(outputs="5")
    assert result["score"] is False  # 0.8 against a prior of 0.9 is a lean towards false
    assert result["comment"] == "Looks right."  # the judge's words are kept as it wrote them
    metadata = result["metadata"]
    assert metadata["probabilities"]["false"] == pytest.approx((0.2 / 0.1) / (0.2 / 0.1 + 0.8 / 0.9))
    assert metadata["calibrated"] is True
    assert metadata["uncalibrated"] == {"score": True, "probabilities": {"true": 0.8, "false": 0.2}}


def test_calibration_is_refused_where_it_cannot_apply():
    two_values = Correction(("true", "false"))
    with pytest.raises(UsageError, match=r"fixed set of values .* is a number \(continuous=True\)") as number:
        create_llm_as_judge(prompt="{outputs}", judge=ReadoutClient(None), continuous=True, calibration=two_values)
    assert number.value.render({"continuous": "--continuous"}).endswith("is a number (--continuous)")
    with pytest.raises(UsageError, match="fitted for the values true, false, but this judge answers 0, 1"):
        create_llm_as_judge(prompt="{outputs}", judge=ReadoutClient(None), choices=[0, 1], calibration=two_values)
    with pytest.raises(UsageError, match="shaped by its own output schema"):
        create_llm_as_judge(
            prompt="{outputs}",
            judge=ReadoutClient(None),
            output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
            calibration=two_values,
        )
    evaluator = create_llm_as_judge(prompt="{outputs}", judge=ReadoutClient(None), calibration=two_values)
    with pytest.raises(JudgeRuntimeError, match="needs its model's probabilities"):
        evaluator(outputs="5")
