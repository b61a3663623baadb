"""Ready-made evaluators: each states its scale, marks the evaluated text as data, and builds."""

from __future__ import annotations

import json

import pytest

from localjudge._cli.commands.check import find_set
from localjudge._judges.evaluators import (
    EVALUATORS,
    MEASURED,
    correctness,
    groundedness,
    make_evaluator,
    pairwise_preference,
)
from localjudge._judges.single import Evaluator
from localjudge._judges.ways import WAYS
from localjudge._prompts.prompting import DATA_NOT_INSTRUCTIONS
from localjudge.errors import MissingTemplateVariableError, UsageError
from localjudge.testing import ScriptedClient

REQUIRED = {
    "correctness", "conciseness", "hallucination", "answer_relevance", "groundedness",
    "retrieval_relevance", "helpfulness", "harmfulness", "pairwise_preference",
}  # fmt: skip


#: what each evaluator must be shown to judge what it says it judges
WHAT_EACH_READS = {
    "correctness": {"inputs", "outputs", "reference_outputs"},
    "conciseness": {"inputs", "outputs"},
    "hallucination": {"context", "inputs", "outputs"},
    "answer_relevance": {"inputs", "outputs"},
    "groundedness": {"context", "outputs"},
    "retrieval_relevance": {"inputs", "context"},
    "helpfulness": {"inputs", "outputs"},
    "harmfulness": {"inputs", "outputs"},
    "pairwise_preference": {"inputs", "outputs_a", "outputs_b"},
    "same_answer": {"inputs", "outputs", "reference_outputs"},
}


def test_every_evaluator_the_product_promises_is_there():
    assert REQUIRED <= set(EVALUATORS)


@pytest.mark.parametrize("name", sorted(EVALUATORS))
def test_each_prompt_reads_what_it_judges(name):
    assert set(EVALUATORS[name].variables) == WHAT_EACH_READS[name]


@pytest.mark.parametrize("name", sorted(set(EVALUATORS) - {"pairwise_preference"}))
def test_each_prompt_states_its_scale_uses_its_variables_and_guards(name):
    evaluator = EVALUATORS[name]
    assert "Scale: " + ("a number from 0 to 1." if evaluator.continuous else "true or false.") in evaluator.prompt
    assert DATA_NOT_INSTRUCTIONS in evaluator.prompt
    assert evaluator.description and "\n" not in evaluator.description


def test_a_constructor_builds_a_judge_with_its_prompt_key_and_scale():
    judge = ScriptedClient([json.dumps({"reasoning": "It matches.", "score": True})])
    evaluator = correctness(judge=judge, use_reasoning=True)  # a way of one's own: the evaluator's prompt as written
    result = evaluator(inputs="2+2?", outputs="4", reference_outputs="4")
    assert (result["key"], result["score"]) == ("correctness", True)
    assert "<reference_answer>\n4\n</reference_answer>" in judge.requests[0]["messages"][-1]["content"]
    scored = groundedness(judge=ScriptedClient([json.dumps({"reasoning": "Half.", "score": 0.5})]))
    assert scored(context="Paris is in France.", outputs="Paris is in France and has 3 million people.")["score"] == 0.5
    with pytest.raises(MissingTemplateVariableError, match="reference_outputs"):
        correctness(judge=judge, use_reasoning=False)(inputs="2+2?", outputs="4")  # a way of one's own


def test_is_it_right_without_a_reference_is_judged_against_the_judges_own_answer():
    judge = ScriptedClient(["4", '{"score": false}'])
    result = correctness(judge=judge)(inputs="2+2?", outputs="5")
    own, verdict = judge.requests
    assert own["messages"][-1]["content"] == "2+2?" and "response_format" not in own
    assert "<expected_answer>\n4\n</expected_answer>" in verdict["messages"][-1]["content"]
    assert result == {
        "key": "correctness",
        "score": False,
        "comment": "A different result from the judge's own answer: 4",
        "metadata": {"self_reference": "4", "way": "self-reference+uncalibrated", "requests": 2},
    }  # a scripted judge has no calibration: said in the way's name


def test_is_it_right_against_a_reference_asks_whether_it_is_the_same_result():
    judge = ScriptedClient(['{"score": true}'])
    result = correctness(judge=judge)(inputs="2+2?", outputs="four", reference_outputs="4")
    (verdict,) = judge.requests
    assert "<expected_answer>\n4\n</expected_answer>" in verdict["messages"][-1]["content"]
    assert "reasoning" not in json.dumps(verdict["response_format"])  # verdict only
    assert result["score"] is True and result["metadata"]["way"] == "same-answer+uncalibrated"


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_an_evaluator_with_a_check_set_judges_as_it_measured_best(name):
    judge = ScriptedClient(['{"score": true}'])
    result = make_evaluator(name, judge=judge)(inputs="2+2?", outputs="4", context="2+2 is 4.")
    (verdict,) = judge.requests
    assert "reasoning" not in json.dumps(verdict["response_format"])  # verdict only, as its dev rows chose
    assert result["metadata"]["way"] == "plain"  # a scripted judge has no fit: its verdict as it comes
    assert find_set(MEASURED[name]).evaluator == name  # the set that measured it asks with its prompt
    judge = ScriptedClient([json.dumps({"reasoning": "Short.", "score": True})])
    make_evaluator(name, judge=judge, use_reasoning=True)(inputs="2+2?", outputs="4", context="2+2 is 4.")
    assert "reasoning" in json.dumps(judge.requests[0]["response_format"])  # a way of one's own: as asked


def test_the_pairwise_one_is_a_pairwise_judge_and_names_are_checked():
    answer = json.dumps({"reasoning": "A is right.", "winner": "A"})
    evaluator = pairwise_preference(judge=ScriptedClient([answer], repeat=True), use_reasoning=True)
    result = evaluator(inputs="q", outputs_a="x", outputs_b="y")
    assert result["metadata"]["verdicts"] == ["A", "B"]  # "A" both times: position, not preference
    assert result["key"] == "pairwise_preference"
    with pytest.raises(UsageError, match="no evaluator named 'nope'"):
        make_evaluator("nope")
    with pytest.raises(UsageError, match="brings its own prompt"):
        make_evaluator("correctness", prompt="{outputs}")


def test_the_pairwise_one_asks_the_way_measured_best_that_its_judge_can_run(monkeypatch):
    """Weighed for a local model; a judge that cannot score replies gets its checks side by side."""
    server = ScriptedClient(["Does it answer?", '{"winner": "A"}', '{"winner": "B"}'])
    result = pairwise_preference(judge=server)(inputs="q", outputs_a="x", outputs_b="y")
    assert result["metadata"]["way"] == "checklist" and result["metadata"]["checklist"] == "Does it answer?"
    built = []
    monkeypatch.setattr("localjudge._judges.pairwise.create_pairwise_judge", lambda **options: built.append(options))
    pairwise_preference(model="tiny")
    pairwise_preference(model="openai:gpt-4o-mini")
    pairwise_preference(model="tiny", use_reasoning=True)  # a way option given: judged as it says
    assert [options.get("way") for options in built] == [WAYS["weighed"], WAYS["checklist"], None]


def test_the_list_command_prints_one_line_each():
    from click.testing import CliRunner

    from localjudge import _cli as cli

    result = CliRunner().invoke(cli.main, ["evaluators", "list"])
    assert result.exit_code == 0
    lines = result.stdout.strip().splitlines()
    assert len(lines) == len(EVALUATORS)
    assert all(line.split()[0] in EVALUATORS for line in lines)


def test_score_takes_a_ready_made_evaluator_and_refuses_mismatches(monkeypatch):
    from click.testing import CliRunner

    from localjudge import _cli as cli
    from localjudge._cli.commands import judging as command_judge

    judge = ScriptedClient([json.dumps({"reasoning": "Brief.", "score": True})], repeat=True)
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: judge)
    result = CliRunner().invoke(
        cli.main, ["score", "--evaluator", "conciseness", "--inputs", "2+2?", "--outputs", "4", "--reasoning"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["key"] == "conciseness"
    assert "Judge whether an answer is concise" in judge.requests[-1]["messages"][-1]["content"]
    for arguments, message in [
        (["score", "--evaluator", "pairwise_preference", "--outputs", "4"], "judges pairs"),
        (["score", "--evaluator", "conciseness", "--prompt", "{outputs}", "--outputs", "4"], "not both"),
        (["score", "--evaluator", "nope", "--outputs", "4"], "no evaluator named 'nope'"),
        (["compare", "--evaluator", "correctness", "--output-a", "x", "--output-b", "y"], "judges one output"),
        (["score", "--evaluator", "conciseness", "--continuous", "--outputs", "4"], "has its own scale"),
    ]:
        refused = CliRunner().invoke(cli.main, arguments)
        assert refused.exit_code == 2 and message in refused.stderr, refused.output


def test_every_evaluator_has_a_constructor_whose_options_an_editor_can_read():
    import typing

    import localjudge._judges.evaluators as module

    for name, ready in EVALUATORS.items():
        constructor = getattr(module, name)
        assert constructor.__name__ == name and constructor.__doc__
        (options,) = typing.get_type_hints(constructor, include_extras=True)["options"].__args__
        assert options is (module.PairJudgeOptions if ready.pairwise else module.JudgeOptions)
        assert ("way" in options.__annotations__) == ready.pairwise and "prompt" not in options.__annotations__
        assert isinstance(constructor(judge=ScriptedClient([])), Evaluator)


def test_the_constructors_take_exactly_what_their_factories_take_less_the_prompt():
    import inspect

    import localjudge._judges.evaluators as module
    from localjudge._judges.pairwise import create_pairwise_judge
    from localjudge._judges.single import create_llm_as_judge

    for options, factory in [
        (module.JudgeOptions, create_llm_as_judge),
        (module.PairJudgeOptions, create_pairwise_judge),
    ]:
        assert set(options.__annotations__) == set(inspect.signature(factory).parameters) - {"prompt"}


@pytest.mark.model
@pytest.mark.parametrize(
    ("name", "way"), [("conciseness", "calibrated"), ("hallucination", "calibrated"), ("answer_relevance", "plain")]
)
def test_the_default_judge_finds_the_fit_that_ships_for_each_measured_evaluator(name, way):
    """The fits `make calibrations` made on the sets' dev rows are found (none ships where none helped there)."""
    evaluator = make_evaluator(name, model="default")
    assert evaluator.way.label == way
    result = evaluator(inputs="What is 2+2?", outputs="4", context="2+2 is 4.")
    assert result["metadata"].get("calibrated", False) is (way == "calibrated") and isinstance(result["score"], bool)


def test_the_prompt_of_every_default_answer_puts_what_rows_share_before_the_row():
    """Its instructions, scale and guard come first, so a local judge reads them once per run (the prefix cache)."""
    from localjudge._judges.evaluators import SAME_ANSWER_PROMPT

    fixed = SAME_ANSWER_PROMPT[: SAME_ANSWER_PROMPT.index("{")]
    assert "Scale: true or false." in fixed and DATA_NOT_INSTRUCTIONS in fixed
    assert SAME_ANSWER_PROMPT.rstrip().endswith("</answer>")
