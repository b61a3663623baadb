"""The weighed way: the checks side by side and the likelihood readings asked together, their figures weighed."""

from __future__ import annotations

import json
import warnings

import pytest
from support.likelihood_readings import PAIR, scored

from localjudge._clients.base import make_chat_completion
from localjudge._judges.pairwise import create_async_pairwise_judge, create_pairwise_judge
from localjudge._judges.plan import together
from localjudge._judges.ways import WAYS, Way
from localjudge._trust.pair_weights import PairSignals, read_pair_weights
from localjudge.errors import JudgeRuntimeError, OptionError
from localjudge.testing import ScriptedClient


def judged(p_first_shown: float, *, readout: bool = True):
    """A client that writes checks, scores replies (test_likelihood's figures), and prefers the first answer shown."""

    def answer(request):
        if request.get("score_reply"):
            return scored(request)
        if "response_format" not in request:
            return "Does the response name the capital?"
        extra = {"readout": {"winner": {"probabilities": {'"A"': p_first_shown, '"B"': 1 - p_first_shown}}}}
        return make_chat_completion('{"winner": "A"}', model="m", extra=extra if readout else None)

    return ScriptedClient([answer], repeat=True)


def test_together_sends_every_plans_requests_in_one_step_and_gives_each_its_answers():
    def plan(name, steps):
        seen = []
        for step in range(steps):
            seen += yield [f"{name}{step}"]
        return seen

    run = together(plan("a", 2), plan("b", 1))
    assert next(run) == ["a0", "b0"]
    assert run.send(["A0", "B0"]) == ["a1"]
    with pytest.raises(StopIteration) as done:
        run.send(["A1"])
    assert done.value.value == [["A0", "A1"], ["B0"]]


@pytest.mark.parametrize("factory", [create_pairwise_judge, create_async_pairwise_judge])
async def test_the_weighed_probability_is_the_weights_over_both_figures(factory):
    client = judged(0.7)
    evaluator = factory(judge=client, way=WAYS["weighed"], use_reasoning=False)
    result = evaluator(**PAIR)
    result = await result if factory is create_async_pairwise_judge else result
    metadata = result["metadata"]
    # A shown first wins 0.7, so does B shown first: the orders average to even odds for the checks
    assert metadata["checks_probabilities"] == pytest.approx({"A": 0.5, "B": 0.5})
    assert metadata["likelihood_gain"] == pytest.approx({"A": 0.5 / 3, "B": 2.0})
    expected = read_pair_weights().probability_a(PairSignals(0.5, 0.5 / 3, 2.0))
    assert metadata["probabilities"]["A"] == pytest.approx(expected)
    assert metadata["winner"] == "B" and result["score"] == 0.0  # the likelihood decides where the checks cannot
    assert metadata["way"] == "weighed" and metadata["requests"] == 7
    assert metadata["checklist"] == "Does the response name the capital?"
    assert metadata["verdicts"] == ["A", "B"] and metadata["consistent"] is False and "decided_by" not in metadata
    kinds = [
        ("reading" if r.get("score_reply") else "verdict" if "response_format" in r else "checks")
        for r in client.requests
    ]
    assert kinds[:5] == ["checks", "reading", "reading", "reading", "reading"]  # asked in one step
    assert kinds[5:] == ["verdict", "verdict"] and len(kinds) == 7


def test_a_judge_without_probabilities_cannot_be_weighed():
    evaluator = create_pairwise_judge(judge=judged(0.7, readout=False), way=WAYS["weighed"], use_reasoning=False)
    with pytest.raises(JudgeRuntimeError, match="needs the judge's probabilities"):
        evaluator(**PAIR)


@pytest.mark.parametrize(
    ("parts", "words"),
    [
        ({"self_reference": True}, "self_reference"),
        ({"calibrated": True}, "calibrated"),
        ({"checklist": False}, "no checklist"),
    ],
)
def test_the_weighed_way_takes_nothing_that_would_change_what_it_weighs(parts, words):
    with pytest.raises(OptionError, match=words):
        Way(**{"pairs": "weighed", "checklist": True, **parts})


def test_the_shipped_weights_say_what_they_were_fitted_on():
    weights = read_pair_weights()
    assert weights.about.get("fitted_on") and weights.about.get("pairs", 0) > 0
    assert json.dumps(weights.about)  # plain data


def test_weights_fitted_on_another_models_verdicts_are_used_with_a_warning(monkeypatch):
    client = judged(0.7)
    shipped = read_pair_weights()
    monkeypatch.setattr(client, "cache_identity", lambda: {"model": shipped.about["model_sha256"]}, raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        create_pairwise_judge(judge=client, way=WAYS["weighed"], use_reasoning=False)  # the model they were fitted on
    monkeypatch.setattr(client, "cache_identity", lambda: {"model": "0" * 64}, raising=False)
    with pytest.warns(UserWarning, match="fitted on qwen2.5-coder-1.5b-instruct's verdicts, not this judge's"):
        create_pairwise_judge(judge=client, way=WAYS["weighed"], use_reasoning=False)
