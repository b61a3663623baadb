"""LangChain prompts (ChatPromptTemplate, StructuredPrompt) and chat models as judges."""

from __future__ import annotations

import json
import threading
import warnings
from typing import Any

import pytest

pytest.importorskip("langchain_core")

import pydantic
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.prompts import ChatPromptTemplate, PromptTemplate
from langchain_core.runnables import RunnableLambda

from localjudge import OutputParseError, UsageError, create_async_llm_as_judge, create_llm_as_judge
from localjudge._clients.langchain import LangChainClient
from localjudge._prompts.langchain import runnable_to_messages
from localjudge._prompts.prompting import format_few_shot_examples
from localjudge._prompts.schema import default_output_schema
from localjudge.errors import MissingTemplateVariableError
from localjudge.testing import ScriptedClient

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langchain_core.prompts.structured import StructuredPrompt

ANSWER = '{"reasoning": "Right. Thus, the score should be: true.", "score": true}'
CHAT_PROMPT = ChatPromptTemplate.from_messages(
    [("system", "You grade answers."), ("human", "Question: {inputs}\nAnswer: {outputs}")]
)


def test_chat_prompt_template_becomes_openai_messages():
    client = ScriptedClient([ANSWER])
    result = create_llm_as_judge(prompt=CHAT_PROMPT, judge=client)(inputs={"q": "二加二"}, outputs="4")
    assert client.requests[0]["messages"] == [
        {"role": "system", "content": "You grade answers."},
        {"role": "user", "content": f"Question: {json.dumps({'q': '二加二'})}\nAnswer: 4"},
    ]
    assert client.requests[0]["response_format"]["json_schema"]["schema"] == default_output_schema()[0]
    assert result["score"] is True


def test_prompt_template_with_reference_outputs_and_kwargs():
    prompt = ChatPromptTemplate.from_messages([("human", "{outputs} vs {reference_outputs} ({rubric})")])
    client = ScriptedClient([ANSWER])
    create_llm_as_judge(prompt=prompt, judge=client)(outputs="a", reference_outputs="b", rubric="exact", unused=1)
    assert client.requests[0]["messages"] == [{"role": "user", "content": "a vs b (exact)"}]


def test_plain_prompt_template_becomes_one_user_message():
    client = ScriptedClient([ANSWER])
    create_llm_as_judge(prompt=PromptTemplate.from_template("Grade {outputs}"), judge=client)(outputs="x")
    assert client.requests[0]["messages"] == [{"role": "user", "content": "Grade x"}]


def test_missing_variable_in_a_langchain_prompt_is_named():
    client = ScriptedClient([ANSWER])
    with pytest.raises(MissingTemplateVariableError) as info:
        create_llm_as_judge(prompt=CHAT_PROMPT, judge=client)(inputs="q")
    assert info.value.variable == "outputs"
    assert client.requests == []


def test_system_with_a_langchain_prompt_is_a_usage_error():
    with pytest.raises(UsageError, match="system"):
        create_llm_as_judge(prompt=CHAT_PROMPT, system="extra", judge=ScriptedClient([]))


def test_few_shot_goes_to_the_human_message_of_the_template():
    examples = [{"inputs": "1+1", "outputs": "2", "score": True, "reasoning": "ok"}]
    client = ScriptedClient([ANSWER])
    create_llm_as_judge(prompt=CHAT_PROMPT, judge=client, few_shot_examples=examples)(inputs="q", outputs="a")
    messages = client.requests[0]["messages"]
    assert messages[0] == {"role": "system", "content": "You grade answers."}
    assert messages[1]["content"] == "Question: q\nAnswer: a\n\n" + format_few_shot_examples(examples)


GRADE_SCHEMA = {
    "title": "grade",
    "type": "object",
    "properties": {"correct": {"type": "boolean"}, "explanation": {"type": "string"}},
    "required": ["correct", "explanation"],
}


def _structured(schema: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return StructuredPrompt([("human", "Grade: {outputs}")], schema_=schema)


def test_structured_prompt_supplies_the_output_schema():
    client = ScriptedClient(['{"correct": false, "explanation": "wrong"}'])
    result = create_llm_as_judge(prompt=_structured(GRADE_SCHEMA), judge=client)(outputs="5")
    assert result == {"correct": False, "explanation": "wrong"}
    response_format = client.requests[0]["response_format"]
    assert response_format["json_schema"]["name"] == "grade"
    assert response_format["json_schema"]["schema"] == {**GRADE_SCHEMA, "additionalProperties": False}
    assert client.requests[0]["messages"] == [{"role": "user", "content": "Grade: 5"}]


class Grade(pydantic.BaseModel):
    correct: bool
    points: int


def test_structured_prompt_with_a_pydantic_schema_validates():
    prompt = _structured(Grade)
    ok = create_llm_as_judge(prompt=prompt, judge=ScriptedClient(['{"correct": true, "points": 2}']))(outputs="x")
    assert ok == Grade(correct=True, points=2)  # an instance, as the prompt's structured output gives one
    bad = '{"correct": true, "points": "two"}'
    with pytest.raises(OutputParseError) as info:
        create_llm_as_judge(prompt=prompt, judge=ScriptedClient([bad]))(outputs="x")
    assert info.value.raw_output == bad


def test_an_explicit_output_schema_wins_over_the_structured_prompt():
    client = ScriptedClient(['{"correct": true, "points": 1}'])
    create_llm_as_judge(prompt=_structured(GRADE_SCHEMA), judge=client, output_schema=Grade)(outputs="x")
    assert client.requests[0]["response_format"]["json_schema"]["name"] == "Grade"


def test_runnable_to_messages_directly():
    assert runnable_to_messages(CHAT_PROMPT, {"inputs": "q", "outputs": ["a"], "reference_outputs": None}) == [
        {"role": "system", "content": "You grade answers."},
        {"role": "user", "content": 'Question: q\nAnswer: ["a"]'},
    ]


# --- LangChain chat models as judges -------------------------------------------------------------


class StructuredFake(FakeListChatModel):
    """A fake chat model whose structured output returns the given answers as dicts."""

    schemas: list[Any] = pydantic.Field(default_factory=list)
    threads: list[int] = pydantic.Field(default_factory=list)

    def with_structured_output(self, schema: Any, *, include_raw: bool = False, **kwargs: Any) -> Any:
        self.schemas.append(schema)

        def run(messages: Any) -> Any:
            self.threads.append(threading.get_ident())
            raw = self.invoke(messages)
            try:
                parsed, error = json.loads(raw.content), None
            except json.JSONDecodeError as exc:
                parsed, error = None, exc
            return {"raw": raw, "parsed": parsed, "parsing_error": error} if include_raw else parsed

        return RunnableLambda(run)


def _fake(*answers: str) -> StructuredFake:
    return StructuredFake(responses=list(answers))


def test_a_chat_model_judge_gets_the_schema_and_its_answer_is_scored():
    model = _fake('{"reasoning": "ok", "score": 0.75}')
    result = create_llm_as_judge(prompt="Grade {outputs}", judge=model, continuous=True)(outputs="x")
    assert result == {"key": "score", "score": 0.75, "comment": "ok", "metadata": None}
    schema, _ = default_output_schema(continuous=True)
    assert model.schemas == [{"title": "output", **schema}]


def test_a_chat_model_answer_off_the_schema_is_a_parse_error():
    with pytest.raises(OutputParseError):
        create_llm_as_judge(prompt="Grade {outputs}", judge=_fake('{"reasoning": "ok", "score": 3}'), continuous=True)(
            outputs="x"
        )


def test_a_chat_model_answer_that_does_not_parse_keeps_its_raw_text_and_falls_back():
    from localjudge._clients.fallback import FallbackClient

    with pytest.raises(OutputParseError) as caught:
        create_llm_as_judge(prompt="Grade {outputs}", judge=_fake("Score: great!"))(outputs="x")
    assert caught.value.raw_output == "Score: great!" and caught.value.backend == "langchain"
    chain = FallbackClient(LangChainClient(_fake("Score: great!")), LangChainClient(_fake('{"score": true}')))
    result = create_llm_as_judge(prompt="Grade {outputs}", judge=chain, use_reasoning=False)(outputs="x")
    assert result["score"] is True
    assert result["metadata"]["failures"][0]["error"] == "OutputParseError"


async def test_a_chat_model_judge_runs_in_a_worker_thread_for_the_async_evaluator():
    model = _fake('{"reasoning": "ok", "score": false}')
    result = await create_async_llm_as_judge(prompt="Grade {outputs}", judge=model)(outputs="x")
    assert result["score"] is False
    assert model.threads and model.threads[0] != threading.get_ident()


def test_langchain_client_without_a_schema_returns_the_plain_reply():
    client = LangChainClient(FakeListChatModel(responses=["just text"]))
    response = client.chat.completions.create(messages=[{"role": "user", "content": "hi"}], model="fake")
    assert response.choices[0].message.content == "just text"
    assert response["choices"][0]["finish_reason"] == "stop"
    assert response.model == "fake"


def test_the_raw_text_of_a_failed_structured_answer_is_what_the_model_wrote():
    from langchain_core.messages import AIMessage

    from localjudge._clients.langchain import _raw_text

    assert _raw_text(AIMessage(content=[{"type": "text", "text": "Score: "}, {"type": "text", "text": "high"}])) == (
        "Score: high"
    )
    broken_call = AIMessage(
        content="", invalid_tool_calls=[{"name": "output", "args": '{"score": tr', "id": "1", "error": "bad JSON"}]
    )
    assert _raw_text(broken_call) == '{"score": tr'
