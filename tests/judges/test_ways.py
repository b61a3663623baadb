"""Ways of judging as values: each checks itself, names itself, costs what it says; defaults by question."""

from __future__ import annotations

from dataclasses import replace

import pytest

from localjudge._cli.commands.settings import JudgeSettings, WayFlags
from localjudge._cli.commands.way_resolution import resolve_way
from localjudge._judges.ways import (
    DEFAULT_WAYS,
    WAYS,
    Question,
    Way,
    default_way,
    find_way,
    question_of,
    stamp,
    stamped,
)
from localjudge.errors import OptionError


def test_named_ways_are_named_by_their_label_and_others_by_their_parts():
    for name, way in WAYS.items():
        assert way.label == name
    assert Way(self_reference=True).label == "self-reference+uncalibrated"  # not the named way
    assert Way(pairs="pointwise", checklist=True).label == "pointwise+checklist"
    assert Way(on_disagreement="probabilities").label == "ties-to-probabilities"
    assert Way(calibrated=True).label == "calibrated"
    assert Way(checklist=True).label == "checklist+ties-to-tie"  # --checklist alone: a disagreement a tie


@pytest.mark.parametrize(
    ("parts", "words"),
    [
        ({"pairs": "pointwise", "on_disagreement": "probabilities"}, "on_disagreement"),
        ({"pairs": "likelihood", "checklist": True}, "likelihood"),
        ({"pairs": "pointwise", "calibrated": True}, "calibrated"),
        ({"pairs": "sideways"}, "one of these ways"),
        ({"on_disagreement": "coin"}, "on_disagreement"),
    ],
)
def test_a_way_that_cannot_work_is_refused_where_it_is_made(parts, words):
    with pytest.raises(OptionError, match=words):
        Way(**parts)


def test_each_question_has_a_default_and_an_answer_without_reference_is_judged_against_the_judges_own():
    assert set(DEFAULT_WAYS) == set(Question)
    assert default_way(Question.ANSWER) == Way(self_reference=True, calibrated=True)
    assert default_way(Question.OWN_PROMPT) == Way(calibrated=True)  # as written, corrected where a fit exists


def test_find_way_lists_the_ways_when_the_name_is_unknown():
    assert find_way("likelihood") is WAYS["likelihood"]
    with pytest.raises(OptionError, match="plain, self-reference"):
        find_way("best")


@pytest.mark.parametrize(
    ("shape", "question"),
    [
        ({"has_inputs": True, "has_reference": False}, Question.ANSWER),
        ({"has_inputs": False, "has_reference": False}, Question.OWN_PROMPT),
        ({"has_inputs": True, "has_reference": True}, Question.ANSWER_WITH_REFERENCE),
        ({"has_inputs": True, "has_reference": False, "own_question": True}, Question.OWN_PROMPT),
        ({"has_inputs": True, "has_reference": False, "evaluator": "correctness"}, Question.ANSWER),
        ({"has_inputs": True, "has_reference": False, "evaluator": "conciseness"}, Question.OWN_PROMPT),
        ({"has_inputs": True, "has_reference": False, "pairwise": True}, Question.PAIR),
        ({"has_inputs": True, "has_reference": False, "trajectory": True}, Question.TRAJECTORY),
    ],
)
def test_the_question_follows_what_the_rows_give_and_what_the_caller_wrote(shape, question):
    arguments = {"pairwise": False, "trajectory": False, "own_question": False, **shape}
    assert question_of(**arguments) is question


def resolved(settings: JudgeSettings, *, has_inputs: bool = True, has_reference: bool = False):
    return resolve_way(settings, has_inputs=has_inputs, has_reference=has_reference)


def test_no_way_named_and_no_way_flag_is_the_questions_default():
    settings, way, defaulted = resolved(JudgeSettings())
    assert defaulted and way == WAYS["self-reference"]
    assert settings.way == way  # the way resolved is kept, once
    settings, way, defaulted = resolved(JudgeSettings(), has_reference=True)
    assert defaulted and way == WAYS["same-answer"] == settings.way
    _, way, defaulted = resolved(JudgeSettings(), has_inputs=False, has_reference=True)
    assert defaulted and way == WAYS["plain"]  # "the same result?" needs the question
    _, way, _ = resolved(JudgeSettings(prompt="Is {outputs} polite?"))
    assert way == Way(calibrated=True)  # the caller's own question, asked as written, corrected where a fit exists


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (JudgeSettings(pairwise=True, model_spec="tiny"), "weighed"),
        (JudgeSettings(pairwise=True, model_spec="tiny,default"), "weighed"),  # a chain of local models
        # what cannot score a reply, or a judge that may answer a tie, gets the best way that only asks
        (JudgeSettings(pairwise=True, model_spec="openai:gpt-4o-mini"), "checklist"),
        (JudgeSettings(pairwise=True, model_spec="tiny,openai:gpt-4o-mini"), "checklist"),
        (JudgeSettings(pairwise=True, model_spec="tiny", allow_ties=True), "checklist"),
    ],
)
def test_a_pairs_default_is_weighed_where_the_judge_can_run_it(settings, expected):
    settings, way, defaulted = resolved(settings)
    assert defaulted and way == WAYS[expected] == settings.way
    assert default_way(Question.PAIR) == WAYS["weighed"]
    assert default_way(Question.PAIR, reads_replies=False) == WAYS["checklist"]


@pytest.mark.parametrize(
    ("settings", "shape"),
    [
        (JudgeSettings(way=WAYS["same-answer"]), {"has_reference": False}),
        (JudgeSettings(way=WAYS["same-answer"]), {"has_inputs": False, "has_reference": True}),
        (JudgeSettings(way=WAYS["same-answer"], pairwise=True), {"has_reference": True}),
    ],
)
def test_the_same_answer_way_named_needs_a_question_and_a_reference_for_one_answer(settings, shape):
    with pytest.raises(OptionError, match=r"same-answer way .* rows with inputs and reference_outputs"):
        resolved(settings, **shape)


def test_the_same_answer_way_named_does_not_go_with_a_question_of_ones_own():
    for settings in (JudgeSettings(prompt="Is {outputs} polite?"), JudgeSettings(evaluator="conciseness")):
        with pytest.raises(OptionError, match="asks a question of its own"):
            resolved(replace(settings, way=WAYS["same-answer"]), has_reference=True)
    _, way, _ = resolved(JudgeSettings(way=WAYS["same-answer"], evaluator="correctness"), has_reference=True)
    assert way == WAYS["same-answer"]


def test_the_same_answer_way_does_not_go_with_the_judges_own_answer_or_a_pairs_method():
    for fields in ({"self_reference": True}, {"checklist": True}, {"pairs": "likelihood"}):
        with pytest.raises(OptionError, match="same-answer way compares one answer"):
            Way(same_answer=True, **fields)
    assert Way(same_answer=True).label == "same-answer+uncalibrated"
    assert "same result as the reference" in WAYS["same-answer"].describe(pair=False)


def test_a_default_that_needs_the_question_judges_rows_without_one_as_it_can():
    settings, way, defaulted = resolved(JudgeSettings(), has_inputs=False)
    assert defaulted and not way.self_reference and settings.way == way


def test_way_flags_describe_the_way_exactly_as_they_always_have():
    _, way, defaulted = resolved(JudgeSettings(way_flags=WayFlags(self_reference=True)))
    assert not defaulted and way == Way(self_reference=True)  # uncalibrated unless --calibrated
    _, way, _ = resolved(
        JudgeSettings(pairwise=True, way_flags=WayFlags(checklist=True, on_disagreement="probabilities"))
    )
    assert way == WAYS["checklist"]
    _, way, _ = resolved(JudgeSettings(way_flags=WayFlags(calibrated=True)))
    assert way == Way(calibrated=True)


def test_a_named_way_takes_the_flags_given_beside_it():
    settings, way, defaulted = resolved(JudgeSettings(way=WAYS["plain"], way_flags=WayFlags(calibrated=True)))
    assert not defaulted and way == Way(calibrated=True) == settings.way
    _, way, _ = resolved(JudgeSettings(way=WAYS["plain"]))
    assert way == WAYS["plain"]


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        (JudgeSettings(way=WAYS["likelihood"]), "the likelihood way judges pairs"),
        (JudgeSettings(way_flags=WayFlags(checklist=True)), "checklist= is for pairs"),
        (JudgeSettings(way_flags=WayFlags(on_disagreement="tie")), "on_disagreement= is for pairs"),
        (
            JudgeSettings(pairwise=True, way_flags=WayFlags(pointwise=True, likelihood=True)),
            "likelihood= does not go with pointwise=",
        ),
        (JudgeSettings(pairwise=True, way=WAYS["likelihood"], way_flags=WayFlags(checklist=True)), "does not go with"),
    ],
)
def test_ways_that_do_not_fit_are_refused(settings, words):
    with pytest.raises(OptionError, match=words):
        resolved(settings)


def test_a_named_way_that_needs_the_question_is_refused_for_rows_without_one():
    with pytest.raises(OptionError, match="self_reference= has the judge answer"):
        resolved(JudgeSettings(way=WAYS["self-reference"]), has_inputs=False)


def test_a_stamp_names_the_way_and_the_requests_and_leaves_other_results_alone():
    result = {"key": "score", "score": True, "comment": None, "metadata": None}
    assert stamp(result, WAYS["plain"], 1)["metadata"] == {"way": "plain", "requests": 1}
    custom = {"answer": "yes"}
    assert stamp(custom, WAYS["plain"], 1) is custom


def test_a_stamped_plan_counts_every_request_it_sent():
    def plan():
        first = yield [{"n": 1}, {"n": 2}]
        second = yield [{"n": 3}]
        return {"score": True, "comment": None, "metadata": {"seen": first + second}}

    steps = stamped(plan(), WAYS["self-reference"])
    assert len(next(steps)) == 2
    assert steps.send(["a", "b"]) == [{"n": 3}]
    with pytest.raises(StopIteration) as done:
        steps.send(["c"])
    assert done.value.value["metadata"] == {"seen": ["a", "b", "c"], "way": "self-reference", "requests": 3}
