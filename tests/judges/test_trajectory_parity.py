"""An import swap from OpenEvals' trajectory judge: the same prompt, result and exceptions as the real package."""

from __future__ import annotations

import copy
import inspect
import json
import re
import warnings

import pytest

openevals_trajectory = pytest.importorskip("openevals.trajectory.llm")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402

from localjudge import (  # noqa: E402
    create_async_trajectory_llm_as_judge,
    create_trajectory_llm_as_judge,
)
from localjudge._judges import trajectory as our_trajectory  # noqa: E402
from localjudge.testing import ScriptedClient  # noqa: E402

THEIR_PROMPT = openevals_trajectory.TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE  # the same template for both


def _call(name: str, arguments: str, call_id: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


FLIGHT = [
    {"role": "system", "content": "You book travel."},
    {"role": "user", "content": "Book me the cheapest flight from Oslo to Rome on 3 May."},
    {
        "role": "assistant",
        "content": "I'll search first.",
        "tool_calls": [_call("search_flights", '{"from":"OSL","to":"FCO","date":"2025-05-03"}', "c1")],
    },
    {"role": "tool", "content": '[{"id": "SK123", "price": 89.5}, {"id": "FR9", "price": 61}]', "tool_call_id": "c1"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [_call("book", '{"flight": "FR9", "seat": null}', "c2"), _call("notify", "{}", "c3")],
    },
    {"role": "tool", "content": "booked", "tool_call_id": "c2"},
    {
        "role": "tool",
        "content": [{"type": "text", "text": "sent"}, {"type": "text", "text": "to you"}],
        "tool_call_id": "c3",
    },
    {"role": "assistant", "content": "Booked FR9 for 61 €. Confirmation sent."},
]
REFERENCE = [
    {"role": "user", "content": "Book me the cheapest flight from Oslo to Rome on 3 May."},
    {
        "role": "ai",
        "content": "",
        "tool_calls": [{"name": "search_flights", "args": {"from": "OSL", "to": "FCO"}, "id": "r"}],
    },
    {"role": "tool", "content": "FR9 61", "tool_call_id": "r"},
    {"role": "ai", "content": "", "tool_calls": [{"name": "book", "args": {"flight": "FR9"}, "id": "s"}]},
    {"role": "tool", "content": "booked", "tool_call_id": "s"},
    {"role": "assistant", "content": "Booked FR9."},
]
LANGCHAIN = [
    HumanMessage("天气怎么样？北京", id="h1"),
    AIMessage("", tool_calls=[{"name": "天气", "args": {"城市": "北京", "days": [1, 2]}, "id": "t1"}], id="a1"),
    ToolMessage("晴，25°C", tool_call_id="t1"),
    AIMessage("北京今天晴，25°C。"),
]

TRAJECTORIES = {
    "OpenAI messages with tool calls": {"outputs": FLIGHT},
    "with a reference trajectory": {"outputs": FLIGHT, "reference_outputs": REFERENCE},
    "a dict holding messages, and one message as the reference": {
        "outputs": {"messages": FLIGHT, "final": "done"},
        "reference_outputs": {"role": "assistant", "content": "Booked FR9."},
    },
    "LangChain messages": {"outputs": LANGCHAIN, "reference_outputs": {"messages": LANGCHAIN}},
    "with inputs": {"outputs": FLIGHT, "reference_outputs": REFERENCE, "inputs": {"request": "cheapest flight"}},
}
OPTIONS = {
    "defaults": {},
    "system and few-shot": {
        "system": "Be strict.",
        "few_shot_examples": [{"inputs": "q", "outputs": "[a tool call]", "reasoning": "Fine.", "score": True}],
    },
    "continuous without reasoning": {"continuous": True, "use_reasoning": False},
    "choices": {"choices": [0.0, 0.5, 1.0]},
    "a feedback key": {"feedback_key": "travel"},
}


def _answer(options: dict) -> str:
    score = 0.5 if options.get("choices") or options.get("continuous") else True
    return json.dumps(
        {"score": score} if options.get("use_reasoning") is False else {"reasoning": "Ok.", "score": score}
    )


def _both(options: dict, call: dict, prompt=THEIR_PROMPT):
    """OpenEvals' evaluator and ours, each with its own scripted judge, called with their own copy of ``call``."""
    theirs, ours = ScriptedClient([_answer(options)]), ScriptedClient([_answer(options)])
    given = {} if prompt is None else {"prompt": prompt}
    expected = openevals_trajectory.create_trajectory_llm_as_judge(**given, **options, judge=theirs, model="judge")(
        **copy.deepcopy(call)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ours says when a prompt shows an empty reference; theirs says nothing
        found = create_trajectory_llm_as_judge(**given, **options, judge=ours, model="judge")(**copy.deepcopy(call))
    return (theirs.requests, expected), (ours.requests, found)


@pytest.mark.parametrize("options", list(OPTIONS))
@pytest.mark.parametrize("trajectory", list(TRAJECTORIES))
def test_the_same_trajectory_and_template_send_the_same_request(trajectory, options):
    (theirs, expected), (ours, found) = _both(OPTIONS[options], TRAJECTORIES[trajectory])
    assert len(ours) == len(theirs) == 1
    assert ours[0]["messages"] == theirs[0]["messages"]  # byte for byte: the rendered trajectory too
    assert ours[0]["response_format"] == theirs[0]["response_format"]
    assert found == expected  # key, score, comment, metadata: the same values
    assert {k: type(v) for k, v in found.items()} == {k: type(v) for k, v in expected.items()}


def _tagged(text: str, tag: str) -> str:
    [inside] = re.findall(rf"<{tag}>\n(.*?)\n</{tag}>", text, flags=re.S)
    return inside


@pytest.mark.parametrize("trajectory", ["with a reference trajectory", "LangChain messages"])
def test_our_own_prompt_shows_the_trajectories_as_openevals_renders_them(trajectory):
    (theirs, _), (ours, _) = _both({}, TRAJECTORIES[trajectory], prompt=None)
    their_text, our_text = theirs[0]["messages"][0]["content"], ours[0]["messages"][0]["content"]
    assert our_text != their_text  # our words
    assert _tagged(our_text, "trajectory") == _tagged(their_text, "trajectory")
    assert _tagged(our_text, "reference_trajectory") == _tagged(their_text, "reference_trajectory")


async def test_the_async_twins_send_the_same_request_and_give_the_same_result():
    call = TRAJECTORIES["with a reference trajectory"]
    theirs, ours = ScriptedClient([_answer({})]), ScriptedClient([_answer({})])
    expected = await openevals_trajectory.create_async_trajectory_llm_as_judge(
        prompt=THEIR_PROMPT, judge=theirs.aio, model="judge"
    )(**copy.deepcopy(call))
    found = await create_async_trajectory_llm_as_judge(prompt=THEIR_PROMPT, judge=ours.aio, model="judge")(
        **copy.deepcopy(call)
    )
    assert ours.requests[0]["messages"] == theirs.requests[0]["messages"]
    assert found == expected


def _builtin_class(error: BaseException) -> type:
    """The first built-in class an exception is: what code written against OpenEvals catches."""
    return next(cls for cls in type(error).__mro__ if cls.__module__ == "builtins")


BAD = {
    "a message without a role": [{"content": "hi"}],
    "a role no one has": [{"role": "robot", "content": "hi"}],
    "a tool call that is a string": [{"role": "assistant", "content": "", "tool_calls": ["search"]}],
    "tool calls that are a dict": [{"role": "assistant", "content": "", "tool_calls": {"name": "search"}}],
    "a function that is a string": [{"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": "f"}]}],
    "a tool call with no name or args": [{"role": "assistant", "content": "", "tool_calls": [{"id": "c"}]}],
    "arguments that are not JSON": [{"role": "assistant", "tool_calls": [_call("f", "{oops", "c")]}],
    "arguments that are a list": [{"role": "assistant", "tool_calls": [_call("f", "[1, 2]", "c")]}],
    "content that is a dict": [{"role": "user", "content": {"text": "hi"}}],
    "a message that is a number": [3],
    "a message that is a string": ["hello"],
    "a transcript as a string": "user: hi",
    "a dict without messages": {"steps": []},
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_malformed_trajectory_raises_the_class_openevals_raises(case):
    theirs = openevals_trajectory.create_trajectory_llm_as_judge(judge=ScriptedClient([]), model="judge")
    ours = create_trajectory_llm_as_judge(judge=ScriptedClient([]), model="judge")
    with pytest.raises(Exception) as expected:
        theirs(outputs=copy.deepcopy(BAD[case]))
    with pytest.raises(Exception) as found:
        ours(outputs=copy.deepcopy(BAD[case]))
    assert isinstance(found.value, _builtin_class(expected.value)), (expected.value, found.value)


def test_no_outputs_is_the_type_error_openevals_raises():
    theirs = openevals_trajectory.create_trajectory_llm_as_judge(judge=ScriptedClient([]), model="judge")
    with pytest.raises(TypeError):
        theirs()
    with pytest.raises(TypeError, match="outputs is required"):
        create_trajectory_llm_as_judge(judge=ScriptedClient([]), model="judge")()


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (create_trajectory_llm_as_judge, openevals_trajectory.create_trajectory_llm_as_judge),
        (create_async_trajectory_llm_as_judge, openevals_trajectory.create_async_trajectory_llm_as_judge),
    ],
)
def test_the_factories_take_openevals_parameters_in_its_order_with_its_defaults(ours, theirs):
    their_parameters = inspect.signature(theirs).parameters
    our_parameters = inspect.signature(ours).parameters
    assert list(our_parameters)[: len(their_parameters)] == list(their_parameters)
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in our_parameters.values())
    defaults = {name: (our_parameters[name].default, p.default) for name, p in their_parameters.items()}
    assert defaults.pop("prompt") == (None, THEIR_PROMPT)  # ours: our prompt, with a reference when one is given
    assert all(mine == theirs for mine, theirs in defaults.values()), defaults


def test_the_module_mirrors_openevals_trajectory_llm():
    for name in openevals_trajectory.__all__:
        assert hasattr(our_trajectory, name), name
    assert our_trajectory.TRAJECTORY_ACCURACY_PROMPT != openevals_trajectory.TRAJECTORY_ACCURACY_PROMPT  # our words
