"""An import swap from OpenEvals sends the same messages: compared with the real openevals package."""

from __future__ import annotations

import copy
import json
import warnings

import pydantic
import pytest

openevals_llm = pytest.importorskip("openevals.llm")

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402

from localjudge import create_llm_as_judge  # noqa: E402
from localjudge.testing import ScriptedClient  # noqa: E402

PROMPT = """You are grading an answer.
<question>
{inputs}
</question>
<answer>
{outputs}
</answer>
<reference>
{reference_outputs}
</reference>
Focus on {focus}."""

EXAMPLES = [
    {"inputs": "What is 1+1?", "outputs": "2", "reasoning": "It is right.", "score": True},
    {"inputs": {"question": "Capital of France?"}, "outputs": ["Lyon"], "score": False},
    {"inputs": "说出战国四大名将的姓名", "outputs": "白起、李牧、王翦、廉颇", "reasoning": "四个都对", "score": True},
]

CASES = {
    "plain": ({"prompt": PROMPT}, {}),
    "system": ({"prompt": PROMPT, "system": "Be strict."}, {}),
    "few-shot": ({"prompt": PROMPT, "few_shot_examples": EXAMPLES}, {}),
    "system and few-shot": ({"prompt": PROMPT, "system": "Be strict.", "few_shot_examples": EXAMPLES[:1]}, {}),
    "structured values": (
        {"prompt": PROMPT},
        {"inputs": {"question": "战国四大名将?", "n": 4}, "outputs": ["白起", "王翦"]},
    ),
    "LangChain messages": (
        {"prompt": PROMPT},
        {
            "inputs": {"messages": [HumanMessage(content="What is 2+2?", id="h1")]},
            "outputs": [AIMessage(content="4", id="a1"), ToolMessage(content="ok", tool_call_id="t1")],
        },
    ),
    "continuous without reasoning": ({"prompt": PROMPT, "continuous": True, "use_reasoning": False}, {}),
    "choices": ({"prompt": PROMPT, "choices": [0.0, 0.5, 1.0]}, {}),
    "messages from a callable": (
        {"prompt": lambda **v: [{"role": "user", "content": f"Grade {v['outputs']}"}], "few_shot_examples": EXAMPLES},
        {},
    ),
}
CALL = {"inputs": "What is 2+2?", "outputs": "4", "reference_outputs": "4", "focus": "correctness"}


def _answer(options: dict) -> str:
    score = 0.5 if options.get("choices") or options.get("continuous") else True
    return json.dumps(
        {"reasoning": "Fine.", "score": score} if options.get("use_reasoning", True) else {"score": score}
    )


@pytest.mark.parametrize("case", list(CASES))
def test_the_same_arguments_send_the_same_messages_as_openevals(case):
    options, values = CASES[case]
    theirs, ours = ScriptedClient([_answer(options)]), ScriptedClient([_answer(options)])
    # each gets its own copy: OpenEvals converts the messages inside a caller's dict in place
    openevals_llm.create_llm_as_judge(**options, judge=theirs, model="openai:judge")(
        **copy.deepcopy({**CALL, **values})
    )
    create_llm_as_judge(**options, judge=ours, model="judge")(**copy.deepcopy({**CALL, **values}))
    [sent], [expected] = ours.requests, theirs.requests
    assert sent["messages"] == expected["messages"]  # byte for byte
    schema, theirs_schema = (r["response_format"]["json_schema"]["schema"] for r in (sent, expected))
    assert schema == theirs_schema  # continuous too: its range is in its words, which our decoder reads


class Grade(pydantic.BaseModel):
    correct: bool
    points: int


TYPED_CASES = {
    "default boolean": ({"prompt": PROMPT}, '{"reasoning": "Fine.", "score": true}'),
    "continuous": ({"prompt": PROMPT, "continuous": True}, '{"reasoning": "Fine.", "score": 0.5}'),
    "a dict output schema": (
        {"prompt": PROMPT, "output_schema": Grade.model_json_schema()},
        '{"correct": true, "points": 3}',
    ),
    "few-shot scores of 0.0 and 1.0 on a boolean judge": (
        {
            "prompt": PROMPT,
            "few_shot_examples": [
                {"inputs": "a", "outputs": "b", "score": 1.0},
                {"inputs": "c", "outputs": "d", "score": 0.0},
            ],
        },
        '{"reasoning": "Fine.", "score": true}',
    ),
}
# A Pydantic output_schema: OpenEvals refuses it with an OpenAI-shaped judge, and gives an instance of it
# through a LangChain model; ours gives the instance with any judge (tests/judges/test_single.py).


def _shape(value):
    """A result's types, all the way down: what code written against OpenEvals reads."""
    if isinstance(value, dict):
        return {key: _shape(inner) for key, inner in value.items()}
    if isinstance(value, pydantic.BaseModel):
        return (type(value), _shape(value.model_dump()))
    return type(value)


@pytest.mark.parametrize("case", list(TYPED_CASES))
def test_the_same_arguments_give_results_of_the_same_types_as_openevals(case):
    options, answer = TYPED_CASES[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ours warns about verdicts its judge could never give; theirs says nothing
        theirs = openevals_llm.create_llm_as_judge(**options, judge=ScriptedClient([answer]), model="openai:judge")
        ours = create_llm_as_judge(**options, judge=ScriptedClient([answer]), model="judge")
    expected, found = theirs(**CALL), ours(**CALL)
    assert _shape(found) == _shape(expected)
    assert (found.model_dump() if isinstance(found, pydantic.BaseModel) else found) == (
        expected.model_dump() if isinstance(expected, pydantic.BaseModel) else expected
    )


@pytest.mark.parametrize(
    ("call", "options"),
    [
        ({"inputs": "q", "outputs": "a"}, {"prompt": PROMPT}),  # no {reference_outputs}, no {focus}
        ({"outputs": "a", "reference_outputs": "r", "focus": "x"}, {"prompt": PROMPT}),  # no {inputs}
    ],
)
def test_a_missing_variable_raises_the_exception_class_openevals_raises(call, options):
    theirs = openevals_llm.create_llm_as_judge(**options, judge=ScriptedClient(["{}"]), model="openai:judge")
    ours = create_llm_as_judge(**options, judge=ScriptedClient(["{}"]), model="judge")
    with pytest.raises(Exception) as expected:
        theirs(**call)
    with pytest.raises(Exception) as found:
        ours(**call)
    assert isinstance(found.value, type(expected.value))
