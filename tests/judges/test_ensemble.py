"""Ensembles: votes, means and spreads, ties settled by probability, failing members left out."""

from __future__ import annotations

import asyncio
import json

import pytest

from localjudge._judges.ensemble import combine_verdicts, create_async_ensemble_judge, create_ensemble_judge
from localjudge._judges.single import create_async_llm_as_judge, create_llm_as_judge
from localjudge.errors import AllClientsFailedError, UsageError
from localjudge.testing import ScriptedClient


def _result(score, comment=None, **metadata):
    return {"key": "score", "score": score, "comment": comment, "metadata": metadata or None}


def test_booleans_go_by_majority_with_the_share_behind_it():
    combined = combine_verdicts([_result(True, "yes"), _result(False, "no"), _result(True, "also yes")])
    assert combined["score"] is True and combined["comment"] == "yes"
    assert combined["metadata"]["votes"] == {"true": 2, "false": 1}
    assert combined["metadata"]["agreement"] == pytest.approx(2 / 3)
    assert [m["score"] for m in combined["metadata"]["members"]] == [True, False, True]


def test_each_members_requests_are_kept_where_the_caller_keeps_exchanges():
    from localjudge._judges.plan import keeping_exchanges

    members = [
        create_llm_as_judge(
            prompt="Is {outputs} right?", judge=ScriptedClient([f'{{"score": {verdict}}}']), use_reasoning=False
        )
        for verdict in ("true", "false", "true")
    ]
    with keeping_exchanges() as kept:
        create_ensemble_judge(*members)(outputs="4")  # its members are asked in threads of their own
    assert len(kept) == 3 and all("Is 4 right?" in exchange["messages"][-1]["content"] for exchange in kept)


def test_each_member_keeps_its_own_figures():
    gains = {"A": 1.5, "B": -0.2}
    read = {"key": "preference", "score": 1.0, "comment": None, "metadata": {"winner": "A", "likelihood_gain": gains}}
    asked = {"key": "preference", "score": 0.0, "comment": "B", "metadata": {"winner": "B", "consistent": True}}
    members = combine_verdicts([read, asked, read])["metadata"]["members"]
    assert members[0]["metadata"]["likelihood_gain"] == gains and members[1]["metadata"]["consistent"] is True


def test_a_tied_vote_goes_to_the_value_the_members_found_likelier():
    tied = [
        _result(False, probabilities={"true": 0.45, "false": 0.55}),
        _result(True, probabilities={"true": 0.9, "false": 0.1}),
    ]
    assert combine_verdicts(tied)["score"] is True  # mean P(true) 0.675 against P(false) 0.325
    assert combine_verdicts([_result(False), _result(True)])["score"] is False  # no probabilities: the first member's


def test_scores_are_averaged_with_their_spread_unless_they_are_choices():
    combined = combine_verdicts([_result(0.2), _result(0.4), _result(0.9)])
    assert combined["score"] == pytest.approx(0.5)
    spread = ((0.3**2 + 0.1**2 + 0.4**2) / 3) ** 0.5
    assert combined["metadata"]["spread"] == pytest.approx(spread)
    assert combined["metadata"]["agreement"] == pytest.approx(1 - 2 * spread)
    voted = combine_verdicts([_result(0.5), _result(1), _result(0.5)], vote_numbers=True)
    assert voted["score"] == 0.5 and voted["metadata"]["votes"] == {"0.5": 2, "1": 1}


def test_pairwise_results_vote_with_their_winner():
    def pair(winner):
        return {"key": "preference", "score": {"A": 1.0, "B": 0.0, "tie": 0.5}[winner], "comment": None,
                "metadata": {"winner": winner, "consistent": True}}  # fmt: skip

    combined = combine_verdicts([pair("B"), pair("A"), pair("B")])
    assert (combined["key"], combined["score"], combined["metadata"]["winner"]) == ("preference", 0.0, "B")
    with pytest.raises(UsageError, match="cannot be combined"):
        combine_verdicts([_result(True), _result(0.5)])


def _member(*answers):
    return create_llm_as_judge(prompt="Is {outputs} right?", judge=ScriptedClient(list(answers), repeat=True))


def _answer(score):
    return json.dumps({"reasoning": f"I say {json.dumps(score)}.", "score": score})


def test_an_ensemble_of_evaluators_leaves_out_a_failing_member_and_names_it():
    ensemble = create_ensemble_judge(_member(_answer(True)), _member("not json"), _member(_answer(True)))
    result = ensemble(outputs="4")
    assert result["score"] is True and result["metadata"]["votes"] == {"true": 2}
    assert result["metadata"]["failures"] == [
        {"member": "member 2", "error": "OutputParseError", "message": result["metadata"]["failures"][0]["message"]}
    ]
    with pytest.raises(AllClientsFailedError):
        create_ensemble_judge(_member("no"), _member("nope"))(outputs="4")


def test_members_scoring_from_choices_are_voted_on():
    def chooser(score):
        return create_llm_as_judge(
            prompt="{outputs}", choices=[0, 0.5, 1], judge=ScriptedClient([_answer(score)], repeat=True)
        )

    assert create_ensemble_judge(chooser(0.5), chooser(1), chooser(0.5))(outputs="x")["score"] == 0.5
    averaged = create_ensemble_judge(
        create_llm_as_judge(prompt="{outputs}", continuous=True, judge=ScriptedClient([_answer(0.5)], repeat=True)),
        create_llm_as_judge(prompt="{outputs}", continuous=True, judge=ScriptedClient([_answer(1)], repeat=True)),
    )(outputs="x")
    assert averaged["score"] == pytest.approx(0.75) and "spread" in averaged["metadata"]


def test_an_ensemble_needs_members_and_raises_what_is_not_a_judge_failure():
    with pytest.raises(UsageError, match="two or more"):
        create_ensemble_judge(_member(_answer(True)))

    def broken(**kwargs):
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        create_ensemble_judge(_member(_answer(True)), broken)(outputs="4")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_named_members_label_their_verdicts_and_failures(mode):
    if mode == "sync":
        members = [_member(_answer(True)), _member("not json"), _member(_answer(False))]
        ensemble = create_ensemble_judge(*members, names=["big", "broken", "small"])
        result = ensemble(outputs="4")
    else:
        members = [
            create_async_llm_as_judge(prompt="{outputs}", judge=ScriptedClient([answer], repeat=True))
            for answer in (_answer(True), "not json", _answer(False))
        ]
        result = asyncio.run(create_async_ensemble_judge(*members, names=["big", "broken", "small"])(outputs="4"))
    assert [(member["name"], member["score"]) for member in result["metadata"]["members"]] == [
        ("big", True),
        ("small", False),
    ]
    assert [failure["member"] for failure in result["metadata"]["failures"]] == ["broken"]


@pytest.mark.parametrize(
    "names",
    [["one"], ["same", "same"], ["one", ""], ["one", "two", "three"], "ab", [["x"], ["y"]]],
    ids=["few", "twice", "empty", "many", "a text", "not texts"],
)
def test_names_must_be_one_distinct_name_per_member(names):
    with pytest.raises(UsageError, match="one distinct, non-empty name per member"):
        create_ensemble_judge(_member(_answer(True)), _member(_answer(True)), names=names)
    with pytest.raises(UsageError, match="one distinct, non-empty name per member"):
        combine_verdicts([_result(True), _result(True)], names=names)


def test_the_command_line_names_members_by_spec_and_a_repeated_spec_by_its_place():
    from localjudge._cli.commands.judging import member_names

    assert member_names(["default", "tiny", "default"]) == ["default", "tiny", "default (member 3)"]
    assert member_names(["x (member 3)", "x", "x"]) == ["member 1", "member 2", "member 3"]  # no clash left


async def test_the_async_twin_combines_the_same_way():
    def member(score):
        return create_async_llm_as_judge(prompt="{outputs}", judge=ScriptedClient([_answer(score)], repeat=True))

    result = await create_async_ensemble_judge(member(False), member(False), member(True))(outputs="4")
    assert result["score"] is False and result["metadata"]["agreement"] == pytest.approx(2 / 3)


def test_a_member_called_wrongly_is_the_callers_error_not_a_lost_vote():
    from localjudge.errors import MissingTemplateVariableError

    needs_reference = create_llm_as_judge(
        prompt="{outputs} vs {reference_outputs}", judge=ScriptedClient([_answer(True)], repeat=True)
    )
    with pytest.raises(MissingTemplateVariableError):
        create_ensemble_judge(_member(_answer(False)), needs_reference)(outputs="4")


def test_the_command_line_ensemble_of_models(monkeypatch, tmp_path):
    from click.testing import CliRunner

    from localjudge import _cli as cli
    from localjudge._cli.commands import judging as command_judge

    verdicts = {"a.gguf": True, "b.gguf": False, "c.gguf": True}
    monkeypatch.setattr(
        command_judge,
        "build_judge",
        lambda spec, *args, **kwargs: ScriptedClient([_answer(verdicts[spec])], repeat=True),
    )
    models = ["--model", "a.gguf", "--model", "b.gguf", "--model", "c.gguf"]
    result = CliRunner().invoke(cli.main, ["score", "--outputs", "4", *models, "--ensemble", "--reasoning"])
    assert result.exit_code == 0, result.output
    combined = json.loads(result.stdout)
    assert combined["score"] is True and combined["metadata"]["votes"] == {"true": 2, "false": 1}
    named = {member["name"]: member["score"] for member in combined["metadata"]["members"]}
    assert named == {"a.gguf": True, "b.gguf": False, "c.gguf": True}  # each verdict under its model's spec

    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"id": str(i), "outputs": "4"}) + "\n" for i in range(4)), encoding="utf-8")
    summary = tmp_path / "summary.json"
    batch = CliRunner().invoke(
        cli.main,
        ["batch", str(data), *models, "--ensemble", "--no-cache", "--reasoning", "--summary", str(summary), "-j", "2"],
    )
    assert batch.exit_code == 0, batch.output
    assert json.loads(summary.read_text())["model_calls"] == 12  # three members, four rows

    for arguments, message in [
        (["--model", "a.gguf", "--model", "b.gguf"], "add --ensemble"),
        (["--model", "a.gguf", "--ensemble"], "two or more --model"),
    ]:
        refused = CliRunner().invoke(cli.main, ["score", "--outputs", "4", *arguments])
        assert refused.exit_code == 2 and message in refused.output
