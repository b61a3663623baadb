"""The trajectory judge: our prompt adapts to what a call gives; the core, schema and errors are the judge's own."""

from __future__ import annotations

import json

import pytest
from support.trajectories import CALCULATOR

from localjudge import create_async_trajectory_llm_as_judge, create_trajectory_llm_as_judge
from localjudge._prompts.schema import default_output_schema
from localjudge._prompts.trajectory import trajectory_text
from localjudge.errors import InvalidTrajectoryError
from localjudge.testing import ScriptedClient
from localjudge.trajectory import TRAJECTORY_ACCURACY_PROMPT, TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE

TRAJECTORY = CALCULATOR
WANDERING = [
    {"role": "user", "content": "What is 17 * 23?"},
    {"role": "assistant", "content": "", "tool_calls": [{"name": "web_search", "args": {"q": "17"}, "id": "w"}]},
    {"role": "tool", "content": "17 is a prime number", "tool_call_id": "w"},
    {"role": "assistant", "content": "About 400."},
]
VERDICT = '{"reasoning": "Direct.", "score": true}'


def _judge(**options):
    client = ScriptedClient([VERDICT], repeat=True)
    return create_trajectory_llm_as_judge(judge=client, **options), client


def _prompt(client: ScriptedClient, number: int = -1) -> str:
    return client.requests[number]["messages"][-1]["content"]


def test_a_trajectory_is_judged_into_an_evaluator_result():
    evaluator, client = _judge()
    result = evaluator(outputs=TRAJECTORY)
    assert result == {"key": "trajectory_accuracy", "score": True, "comment": "Direct.", "metadata": None}
    assert trajectory_text(TRAJECTORY) in _prompt(client)


def test_our_prompt_shows_the_reference_trajectory_only_when_one_is_given():
    evaluator, client = _judge()
    evaluator(outputs=WANDERING, reference_outputs=TRAJECTORY)
    evaluator(outputs=WANDERING)
    with_reference, without = _prompt(client, 0), _prompt(client, 1)
    assert f"<reference_trajectory>\n{trajectory_text(TRAJECTORY)}\n</reference_trajectory>" in with_reference
    assert f"<trajectory>\n{trajectory_text(WANDERING)}\n</trajectory>" in with_reference
    assert "reference" not in without.lower()
    assert with_reference == TRAJECTORY_ACCURACY_PROMPT_WITH_REFERENCE.format(
        outputs=trajectory_text(WANDERING), reference_outputs=trajectory_text(TRAJECTORY)
    )
    assert without == TRAJECTORY_ACCURACY_PROMPT.format(outputs=trajectory_text(WANDERING))


def test_our_prompt_shows_the_request_when_inputs_are_given():
    evaluator, client = _judge()
    evaluator(outputs=TRAJECTORY, inputs="Multiply 17 by 23")
    assert "<request>\nMultiply 17 by 23\n</request>" in _prompt(client)
    assert "Find the goal from the request." in _prompt(client)


def test_a_reference_trajectory_is_checked_like_the_trajectory():
    evaluator, client = _judge()
    with pytest.raises(InvalidTrajectoryError, match=r"reference_outputs\[1\]\.tool_calls\[0\] is a string"):
        evaluator(outputs=TRAJECTORY, reference_outputs=[TRAJECTORY[0], {"role": "assistant", "tool_calls": ["x"]}])
    assert client.requests == []  # refused before the judge is asked


def test_a_prompt_of_ones_own_gets_the_rendered_trajectories_and_other_variables():
    evaluator, client = _judge(prompt="Goal: {goal}\nSteps:\n{outputs}\nGood steps:\n{reference_outputs}")
    evaluator(outputs=WANDERING, reference_outputs={"messages": TRAJECTORY}, goal="multiply")
    assert _prompt(client) == (
        f"Goal: multiply\nSteps:\n{trajectory_text(WANDERING)}\nGood steps:\n{trajectory_text(TRAJECTORY)}"
    )


def test_a_callable_prompt_receives_the_rendered_trajectory():
    seen = {}

    def prompt(**values):
        seen.update(values)
        return [{"role": "user", "content": "Judge:\n" + values["outputs"]}]

    evaluator, client = _judge(prompt=prompt)
    evaluator(outputs=TRAJECTORY)
    assert seen["outputs"] == trajectory_text(TRAJECTORY) and seen["reference_outputs"] == ""
    assert _prompt(client) == "Judge:\n" + trajectory_text(TRAJECTORY)


def test_a_template_that_drops_a_given_reference_or_shows_a_missing_one_warns():
    evaluator, _ = _judge(prompt="Steps:\n{outputs}")
    with pytest.warns(UserWarning, match="the judge does not see it"):
        evaluator(outputs=TRAJECTORY, reference_outputs=TRAJECTORY)
    evaluator, client = _judge(prompt="{outputs}\nReference:\n{reference_outputs}")
    with pytest.warns(UserWarning, match="it is shown empty"):
        evaluator(outputs=TRAJECTORY)
    assert _prompt(client).endswith("Reference:\n")


@pytest.mark.parametrize(
    ("options", "answer", "score"),
    [
        ({}, VERDICT, True),
        ({"continuous": True, "use_reasoning": False}, '{"score": 0.25}', 0.25),
        ({"choices": [0.0, 0.5, 1.0]}, '{"reasoning": "Half.", "score": 0.5}', 0.5),
    ],
)
def test_the_score_schema_is_the_default_judges_own(options, answer, score):
    client = ScriptedClient([answer])
    result = create_trajectory_llm_as_judge(judge=client, **options)(outputs=TRAJECTORY)
    schema, _ = default_output_schema(
        continuous=options.get("continuous", False),
        choices=options.get("choices"),
        use_reasoning=options.get("use_reasoning", True),
    )
    assert client.requests[0]["response_format"]["json_schema"]["schema"] == schema
    assert result["score"] == score and type(result["score"]) is type(score)


def test_a_custom_output_schema_gives_its_own_shape():
    schema = {
        "type": "object",
        "properties": {"steps_wasted": {"type": "integer"}},
        "required": ["steps_wasted"],
        "additionalProperties": False,
    }
    client = ScriptedClient(['{"steps_wasted": 1}'])
    assert create_trajectory_llm_as_judge(judge=client, output_schema=schema)(outputs=WANDERING) == {"steps_wasted": 1}


def test_an_answer_off_the_schema_is_the_judges_parse_error_with_its_raw_text():
    from localjudge.errors import OutputParseError

    evaluator = create_trajectory_llm_as_judge(judge=ScriptedClient(['{"score": "maybe"}']))
    with pytest.raises(OutputParseError) as raised:
        evaluator(outputs=TRAJECTORY)
    assert raised.value.raw_output == '{"score": "maybe"}'


async def test_the_async_twin_sends_the_same_request_and_gives_the_same_result():
    sync_evaluator, sync_client = _judge()
    async_client = ScriptedClient([VERDICT])
    async_evaluator = create_async_trajectory_llm_as_judge(judge=async_client.aio)
    call = {"outputs": WANDERING, "reference_outputs": TRAJECTORY, "inputs": "17 * 23"}
    assert await async_evaluator(**call) == sync_evaluator(**call)
    assert async_client.requests == sync_client.requests


def test_the_request_is_what_create_llm_as_judge_sends_for_the_same_prompt():
    from localjudge import create_llm_as_judge

    ours, theirs = ScriptedClient([VERDICT]), ScriptedClient([VERDICT])
    create_trajectory_llm_as_judge(judge=ours, prompt="{outputs}", system="Be fair.")(outputs=TRAJECTORY)
    create_llm_as_judge(judge=theirs, prompt="{outputs}", system="Be fair.")(outputs=trajectory_text(TRAJECTORY))
    assert json.dumps(ours.requests) == json.dumps(theirs.requests)


def test_a_stored_calibration_is_refused_since_our_prompt_changes_with_each_call():
    from localjudge.errors import UsageError

    with pytest.raises(UsageError, match="takes a Correction as calibration=, not a name"):
        create_trajectory_llm_as_judge(judge=ScriptedClient([]), calibration="stored")
