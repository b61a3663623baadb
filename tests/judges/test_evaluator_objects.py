"""The factories' evaluators: small objects holding their core, called and inspected as OpenEvals' functions are."""

from __future__ import annotations

import asyncio
import inspect
import json

import pytest

from localjudge._judges.core import JudgeCore
from localjudge._judges.ensemble import create_async_ensemble_judge, create_ensemble_judge
from localjudge._judges.pairwise import create_async_pairwise_judge, create_pairwise_judge
from localjudge._judges.single import AsyncEvaluator, Evaluator, create_async_llm_as_judge, create_llm_as_judge
from localjudge._judges.trajectory import create_async_trajectory_llm_as_judge, create_trajectory_llm_as_judge
from localjudge.testing import ScriptedClient

VERDICT = json.dumps({"reasoning": "fine", "score": True})
WINNER = json.dumps({"reasoning": "fine", "winner": "A"})
LOSER = json.dumps({"reasoning": "fine", "winner": "B"})  # the swapped order: the same answer wins


def judge(*answers):
    return ScriptedClient(answers, repeat=True)


SINGLE = {
    "llm": (create_llm_as_judge, create_async_llm_as_judge, lambda: {"prompt": "{outputs}", "judge": judge(VERDICT)}),
    "trajectory": (
        create_trajectory_llm_as_judge,
        create_async_trajectory_llm_as_judge,
        lambda: {"judge": judge(VERDICT)},
    ),
    "pairwise": (create_pairwise_judge, create_async_pairwise_judge, lambda: {"judge": judge(WINNER, LOSER)}),
}
CALLS = {
    "llm": {"inputs": "2+2?", "outputs": "4"},
    "trajectory": {"outputs": [{"role": "assistant", "content": "4"}]},
    "pairwise": {"inputs": "2+2?", "outputs_a": "4", "outputs_b": "5"},
}
KEYWORDS = {
    "llm": ["inputs", "outputs", "reference_outputs", "kwargs"],  # OpenEvals' SimpleEvaluator
    "trajectory": ["outputs", "reference_outputs", "inputs", "kwargs"],  # OpenEvals' trajectory evaluator's order
    "pairwise": ["inputs", "outputs_a", "outputs_b", "reference_outputs", "kwargs"],
}


@pytest.mark.parametrize("kind", list(SINGLE))
def test_an_evaluator_holds_its_core_as_a_plain_attribute(kind):
    sync_factory, async_factory, options = SINGLE[kind]
    for evaluator in (sync_factory(**options(), model="m"), async_factory(**options(), model="m")):
        assert isinstance(vars(evaluator)["core"], JudgeCore)  # set in __init__, not reached by __getattr__
        assert "__getattr__" not in vars(type(evaluator))
        assert isinstance(evaluator, Evaluator)


@pytest.mark.parametrize("kind", list(SINGLE))
def test_sync_and_async_evaluators_answer_alike_and_show_the_keywords(kind):
    sync_factory, async_factory, options = SINGLE[kind]
    sync_evaluator, async_evaluator = sync_factory(**options(), model="m"), async_factory(**options(), model="m")
    assert type(sync_evaluator.core) is type(async_evaluator.core)
    assert not inspect.iscoroutinefunction(sync_evaluator)
    assert inspect.iscoroutinefunction(async_evaluator) and asyncio.iscoroutinefunction(async_evaluator)
    assert isinstance(async_evaluator, AsyncEvaluator)
    for evaluator in (sync_evaluator, async_evaluator):
        parameters = inspect.signature(evaluator).parameters
        assert list(parameters) == KEYWORDS[kind]
        assert all(p.default is None for name, p in parameters.items() if name != "kwargs")
        assert evaluator.__name__ == "evaluator"  # as the function it replaces was named (LangSmith's run name)
    found = sync_evaluator(**CALLS[kind])
    assert asyncio.run(async_evaluator(**CALLS[kind])) == found
    assert found["score"] in (True, 1.0)


def test_ensembles_hold_their_members_and_answer_alike():
    members = [create_llm_as_judge(prompt="{outputs}", judge=judge(VERDICT), model="m") for _ in range(2)]
    ensemble = create_ensemble_judge(*members)
    assert vars(ensemble)["members"] == members and ensemble.names == ["member 1", "member 2"]
    async_members = [create_async_llm_as_judge(prompt="{outputs}", judge=judge(VERDICT), model="m") for _ in range(2)]
    async_ensemble = create_async_ensemble_judge(*async_members)
    assert inspect.iscoroutinefunction(async_ensemble) and not inspect.iscoroutinefunction(ensemble)
    assert asyncio.run(async_ensemble(outputs="4")) == ensemble(outputs="4")
