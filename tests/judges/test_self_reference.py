"""A reference the judge writes itself: one request for its own answer, then the verdict against it."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from localjudge import _cli as cli
from localjudge import create_async_llm_as_judge, create_llm_as_judge
from localjudge._clients.base import ChatResponse
from localjudge._judges.pairwise import create_async_pairwise_judge, create_pairwise_judge
from localjudge._judges.self_reference import SELF_REFERENCE_SYSTEM
from localjudge._judges.ways import Way
from localjudge.errors import OutputParseError, TruncatedOutputError, UsageError
from localjudge.evaluators import SAME_ANSWER_PROMPT, make_evaluator
from localjudge.testing import ScriptedClient


def cut(request):
    """An answer stopped by its token bound."""
    return ChatResponse(
        {
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "56, because seven"},
                    "finish_reason": "length",
                }
            ]
        }
    )


def shown_reference(request) -> str:
    return request["messages"][-1]["content"].split("<expected_answer>\n")[1].split("\n</expected_answer>")[0]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_judge_answers_the_question_first_and_judges_against_its_own_answer(mode):
    client = ScriptedClient(["  56\n", '{"score": false}'])
    options = {"prompt": SAME_ANSWER_PROMPT, "judge": client, "use_reasoning": False, "self_reference": True}
    if mode == "sync":
        result = create_llm_as_judge(**options)(inputs="What is 7 times 8?", outputs="54")
    else:
        result = asyncio.run(create_async_llm_as_judge(**options)(inputs="What is 7 times 8?", outputs="54"))
    own, verdict = client.requests
    assert own["messages"] == [
        {"role": "system", "content": SELF_REFERENCE_SYSTEM},
        {"role": "user", "content": "What is 7 times 8?"},
    ]
    assert own["temperature"] == 0 and own["max_tokens"] == 256 and "response_format" not in own
    assert shown_reference(verdict) == "56" and "response_format" in verdict
    assert result["score"] is False and result["metadata"] == {"self_reference": "56"}


def test_a_reference_given_with_the_call_is_used_and_nothing_is_written():
    client = ScriptedClient(['{"score": true}'])
    evaluator = make_evaluator("same_answer", judge=client, use_reasoning=False, self_reference=True)
    result = evaluator(inputs="What is 7 times 8?", outputs="56", reference_outputs="fifty-six")
    (verdict,) = client.requests
    assert shown_reference(verdict) == "fifty-six"
    assert result["score"] is True and result["metadata"] is None


def test_an_own_answer_cut_at_its_bound_is_an_error_with_what_it_wrote_and_no_verdict_is_asked():
    client = ScriptedClient([cut])
    evaluator = create_llm_as_judge(prompt=SAME_ANSWER_PROMPT, judge=client, self_reference=True)
    with pytest.raises(TruncatedOutputError, match="cut at its bound \\(at most 256 tokens") as caught:
        evaluator(inputs="What is 7 times 8?", outputs="56")
    assert caught.value.raw_output == "56, because seven" and len(client.requests) == 1


def test_an_empty_own_answer_is_an_error():
    evaluator = create_llm_as_judge(prompt=SAME_ANSWER_PROMPT, judge=ScriptedClient([" \n"]), self_reference=True)
    with pytest.raises(OutputParseError, match="empty answer"):
        evaluator(inputs="What is 7 times 8?", outputs="56")


def test_a_prompt_with_no_place_for_the_reference_is_refused_when_the_judge_is_made():
    with pytest.raises(UsageError, match=r"self_reference=True.*no \{reference_outputs\}"):
        create_llm_as_judge(prompt="Is {outputs} right?", judge=ScriptedClient([]), self_reference=True)


def test_a_custom_schema_has_no_metadata_to_keep_the_own_answer_in_so_it_is_refused():
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    with pytest.raises(UsageError, match="a custom output_schema gives a result without one"):
        create_llm_as_judge(
            prompt=SAME_ANSWER_PROMPT, judge=ScriptedClient([]), output_schema=schema, self_reference=True
        )


def test_without_inputs_there_is_no_question_to_answer():
    evaluator = create_llm_as_judge(prompt=SAME_ANSWER_PROMPT, judge=ScriptedClient([]), self_reference=True)
    with pytest.raises(UsageError, match="no inputs"):
        evaluator(outputs="56")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_pair_is_judged_in_both_orders_against_the_judges_own_answer(mode):
    def verdict(request):
        shown = "<reference_answer>\n408\n</reference_answer>" in request["messages"][-1]["content"]
        return '{"winner": "A"}' if shown else "the judge's own answer was not shown"

    client = ScriptedClient(["408", verdict, verdict])
    options = {"judge": client, "use_reasoning": False, "way": Way(self_reference=True)}
    pair = {"inputs": "What is 17 x 24?", "outputs_a": "408", "outputs_b": "418"}
    if mode == "sync":
        result = create_pairwise_judge(**options)(**pair)
    else:
        result = asyncio.run(create_async_pairwise_judge(**options)(**pair))
    assert len(client.requests) == 3 and client.requests[0]["messages"][-1]["content"] == "What is 17 x 24?"
    assert result["metadata"]["self_reference"] == "408"
    assert result["metadata"]["verdicts"] == ["A", "B"]  # each order chose the answer it showed first


@pytest.mark.parametrize("method", ["both-orders", "pointwise"])
def test_a_pair_judge_does_not_call_its_own_answer_a_good_one(method):
    """A reference the judge wrote itself may be wrong; a given one is shown as good."""
    pair = {"inputs": "What is 17 x 24?", "outputs_a": "408", "outputs_b": "418"}
    verdict = '{"score": true}' if method == "pointwise" else '{"winner": "A"}'
    own = ScriptedClient(["418", verdict, verdict])
    create_pairwise_judge(judge=own, use_reasoning=False, way=Way(pairs=method, self_reference=True))(**pair)
    given = ScriptedClient([verdict, verdict])
    create_pairwise_judge(judge=given, use_reasoning=False, reference=True, way=Way(pairs=method))(
        **pair, reference_outputs="408"
    )
    own_prompt, given_prompt = (client.requests[-1]["messages"][-1]["content"] for client in (own, given))
    assert (
        "may itself be wrong" in own_prompt
        and "known to be good" not in own_prompt
        and "A good response" not in own_prompt
    )
    assert "may itself be wrong" not in given_prompt


def test_compare_with_the_flag_does_not_call_the_judges_own_answer_good(monkeypatch):
    from localjudge._cli.commands import judging as command_judge

    client = ScriptedClient(["418", '{"winner": "A"}', '{"winner": "B"}'])
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: client)
    pair = ["--inputs", "What is 17 x 24?", "--output-a", "408", "--output-b", "418"]
    shown = CliRunner().invoke(cli.main, ["compare", *pair, "--self-reference", "--no-reasoning"])
    assert shown.exit_code == 0, shown.output
    prompt = client.requests[-1]["messages"][-1]["content"]
    assert "<reference_answer>\n418\n</reference_answer>" in prompt
    assert "may itself be wrong" in prompt and "known to be good" not in prompt


def test_batch_with_the_flag_writes_references_only_for_rows_without_one(monkeypatch, tmp_path):
    from localjudge._cli.commands import judging as command_judge

    def answer(request):
        if "response_format" not in request:  # the judge's own answer
            return "Paris"
        return '{"score": true}' if "Paris" in request["messages"][-1]["content"] else "no reference shown"

    client = ScriptedClient([answer], repeat=True)
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: client)
    rows = [
        {"id": "own", "inputs": "What is the capital of France?", "outputs": "Paris"},
        {"id": "given", "inputs": "What is the capital of France?", "outputs": "Paris", "reference_outputs": "Paris"},
    ]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    result = CliRunner().invoke(cli.main, ["batch", str(data), "--self-reference", "--no-reasoning", "--no-cache"])
    assert result.exit_code == 0, result.output
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "rows.results.jsonl").read_text().splitlines())}
    way = {"way": "self-reference+uncalibrated"}
    assert records["own"]["result"]["metadata"] == {"self_reference": "Paris", **way, "requests": 2}
    assert records["given"]["result"]["score"] is True  # judged against the reference given: nothing written
    assert records["given"]["result"]["metadata"] == {**way, "requests": 1}
    assert sum("response_format" not in request for request in client.requests) == 1
    assert "<expected_answer>" in client.requests[1]["messages"][-1]["content"]  # the same-answer prompt


def test_rows_without_inputs_leave_the_judge_no_question_to_answer(tmp_path):
    result = CliRunner().invoke(cli.main, ["score", "--outputs", "Paris", "--self-reference", "-m", "tiny"])
    assert result.exit_code == 2 and "--self-reference has the judge answer each row's question" in result.output
