"""Checks the judge writes first: one request for yes/no questions from the request alone, then the verdict."""

from __future__ import annotations

import asyncio
import json

import pytest
from click.testing import CliRunner

from localjudge import _cli as cli
from localjudge import create_llm_as_judge
from localjudge._clients.base import ChatClient, ChatResponse, make_chat_completion
from localjudge._judges.checklist import CHECKLIST_PROMPT, checks_section
from localjudge._judges.pairwise import create_async_pairwise_judge, create_pairwise_judge
from localjudge._judges.ways import Way
from localjudge.errors import OptionError, OutputParseError, TruncatedOutputError, UsageError
from localjudge.testing import ScriptedClient

CHECKS = "Is it one word?\nIs it a city?\nIs it the capital of France?"
PAIR = {"inputs": "Name the capital of France in one word.", "outputs_a": "Paris", "outputs_b": "It is Paris."}


def reply(text: str) -> ChatResponse:
    return make_chat_completion(text, model="scripted")


def shown_checks(request) -> str | None:
    content = request["messages"][-1]["content"]
    if "<checks>" not in content:
        return None
    return content.split("<checks>\n")[1].split("\n</checks>")[0].split("\n", 1)[1]


def is_checklist_request(request) -> bool:
    return (
        "response_format" not in request and "Write three short yes/no questions" in request["messages"][-1]["content"]
    )


def answers(verdict: str):
    """A judge that writes CHECKS when asked for them and gives ``verdict`` only where it was shown checks."""

    def answer(request):
        if is_checklist_request(request):
            return f"  {CHECKS}\n"
        return verdict if shown_checks(request) is not None else "no checks were shown"

    return ScriptedClient([answer], repeat=True)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_pair_is_judged_in_both_orders_after_the_judge_writes_its_checks(mode):
    client = answers('{"winner": "A"}')
    options = {"judge": client, "use_reasoning": False, "way": Way(checklist=True)}
    if mode == "sync":
        result = create_pairwise_judge(**options)(**PAIR)
    else:
        result = asyncio.run(create_async_pairwise_judge(**options)(**PAIR))
    written, *verdicts = client.requests
    assert written["messages"] == [{"role": "user", "content": CHECKLIST_PROMPT.replace("{inputs}", PAIR["inputs"])}]
    assert written["temperature"] == 0 and written["max_tokens"] == 160
    assert len(verdicts) == 2 and all("response_format" in request for request in verdicts)
    prompt = verdicts[0]["messages"][-1]["content"]
    assert prompt.index("</request>") < prompt.index("<checks>") < prompt.index("<answer_a>")
    assert result["metadata"]["checklist"] == CHECKS
    assert result["metadata"]["verdicts"] == ["A", "B"]  # each order chose the answer it showed first


def test_checks_and_the_judges_own_answer_are_asked_for_in_one_step():
    pair = create_pairwise_judge(
        judge=ScriptedClient([]), use_reasoning=False, way=Way(checklist=True, self_reference=True)
    )
    plan = pair.pair.plan(PAIR["inputs"], "Paris", "It is Paris.", None, {})
    first = next(plan)
    assert len(first) == 2 and not any("response_format" in request for request in first)
    second = plan.send([reply("Paris"), reply(CHECKS)])
    prompt = second[0]["messages"][-1]["content"]
    assert "<reference_answer>\nParis\n</reference_answer>" in prompt and f"\n{CHECKS}\n</checks>" in prompt
    with pytest.raises(StopIteration) as done:
        plan.send([reply('{"winner": "A"}'), reply('{"winner": "B"}')])
    assert {"self_reference": "Paris", "checklist": CHECKS}.items() <= done.value.value["metadata"].items()


def test_checks_given_with_the_call_are_shown_and_nothing_is_written():
    client = answers('{"winner": "B"}')
    result = create_pairwise_judge(judge=client, use_reasoning=False, way=Way(checklist=True))(
        **PAIR, checks="Is it brief?"
    )
    assert [shown_checks(request) for request in client.requests] == ["Is it brief?", "Is it brief?"]
    assert result["metadata"]["winner"] == "tie" and "checklist" not in result["metadata"]


def test_checks_cut_at_their_bound_are_an_error_with_what_was_written_and_no_verdict_is_asked():
    cut = ChatResponse(
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": "Is it"}, "finish_reason": "length"}]}
    )
    client = ScriptedClient([cut])
    with pytest.raises(TruncatedOutputError, match="cut at their bound \\(at most 160 tokens") as caught:
        create_pairwise_judge(judge=client, way=Way(checklist=True))(**PAIR)
    assert caught.value.raw_output == "Is it" and len(client.requests) == 1


def test_empty_checks_are_an_error():
    with pytest.raises(OutputParseError, match="no checks"):
        create_pairwise_judge(judge=ScriptedClient([" \n"]), way=Way(checklist=True))(**PAIR)


def test_without_inputs_there_is_no_request_to_write_checks_for():
    with pytest.raises(UsageError, match="no inputs"):
        create_pairwise_judge(judge=ScriptedClient([]), way=Way(checklist=True))(outputs_a="Paris", outputs_b="Rome")


def test_a_prompt_with_no_place_for_the_checks_is_refused_when_the_judge_is_made():
    with pytest.raises(UsageError, match=r"checklist=True.*no \{checks\}"):
        create_pairwise_judge(
            prompt="{inputs}: {outputs_a} or {outputs_b}?", judge=ScriptedClient([]), way=Way(checklist=True)
        )


def test_a_custom_schema_has_no_metadata_to_keep_the_checks_in_so_it_is_refused():
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    prompt = "{inputs}\n" + checks_section() + "\n{outputs}"
    with pytest.raises(UsageError, match="a custom output_schema gives a result without one"):
        create_llm_as_judge(prompt=prompt, judge=ScriptedClient([]), output_schema=schema, checklist=True)


def test_a_judge_of_one_output_shows_the_checks_in_a_prompt_of_its_own():
    client = answers('{"score": true}')
    prompt = "Does the answer do what was asked?\n<request>\n{inputs}\n</request>\n\n" + checks_section()
    prompt += "\n\n<answer>\n{outputs}\n</answer>"
    evaluator = create_llm_as_judge(prompt=prompt, judge=client, use_reasoning=False, checklist=True)
    result = evaluator(inputs=PAIR["inputs"], outputs="Paris")
    assert result["score"] is True and result["metadata"] == {"checklist": CHECKS}


def test_each_output_of_a_pointwise_pair_is_judged_after_the_same_checks():
    client = answers('{"score": true}')
    result = create_pairwise_judge(judge=client, use_reasoning=False, way=Way(pairs="pointwise", checklist=True))(
        **PAIR
    )
    written, *verdicts = client.requests
    assert is_checklist_request(written) and len(verdicts) == 2
    prompt = verdicts[0]["messages"][-1]["content"]
    assert "must pass to do what the instruction asks" in prompt
    assert prompt.index("</instruction>") < prompt.index("<checks>") < prompt.index("<response>")
    assert result["metadata"]["checklist"] == CHECKS


def test_a_pair_read_by_likelihood_asks_nothing_so_it_takes_no_checklist():
    with pytest.raises(OptionError, match=r"likelihood.*checklist.*asks the judge nothing"):
        Way(pairs="likelihood", checklist=True)


def test_compare_with_the_flag_shows_the_checks_and_prints_them_in_the_result(monkeypatch):
    from localjudge._cli.commands import judging as command_judge

    client = answers('{"winner": "A"}')
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: client)
    pair = ["--inputs", PAIR["inputs"], "--output-a", "Paris", "--output-b", "It is Paris."]
    shown = CliRunner().invoke(cli.main, ["compare", *pair, "--checklist", "--no-reasoning"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["metadata"]["checklist"] == CHECKS
    assert len(client.requests) == 3


def test_batch_with_the_flag_writes_checks_only_for_rows_without_their_own(monkeypatch, tmp_path):
    from localjudge._cli.commands import judging as command_judge

    client = answers('{"winner": "A"}')
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: client)
    rows = [
        {"id": "written", **PAIR},
        {"id": "given", **PAIR, "checks": "Is it one word?"},
    ]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    command = ["batch", str(data), "--pairwise", "--checklist", "--no-reasoning", "--no-cache"]
    result = CliRunner().invoke(cli.main, command)
    assert result.exit_code == 0, result.output
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "pairs.results.jsonl").read_text().splitlines())}
    assert records["written"]["result"]["metadata"]["checklist"] == CHECKS
    assert "checklist" not in records["given"]["result"]["metadata"]
    assert sum(shown_checks(request) == "Is it one word?" for request in client.requests) == 2
    assert sum(map(is_checklist_request, client.requests)) == 1


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["batch", "rows.jsonl"], "--checklist is for pairs"),
        (["compare", "--output-a", "a", "--output-b", "b"], "--checklist has the judge write checks for each row's"),
    ],
)
def test_the_command_line_refuses_the_flag_where_it_has_no_place(command, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rows.jsonl").write_text('{"inputs": "q", "outputs": "a"}\n', encoding="utf-8")
    result = CliRunner().invoke(cli.main, [*command, "--checklist", "-m", "tiny"])
    assert result.exit_code == 2 and message in result.output


class LeaningPairJudge(ChatClient):
    """Writes CHECKS when asked (never for a content-free request); always prefers answer A, surer when it is right."""

    def _complete(self, request):
        content = request["messages"][-1]["content"]
        if "response_format" not in request:
            assert "<request>\nN/A\n" not in content and "<request>\n[MASK]\n" not in content, "asked about no request"
            assert "<request>\n\n</request>" not in content, "asked about an empty request"
            return make_chat_completion(CHECKS, model="leaning")
        assert shown_checks(request) is not None, "no checks were shown"
        first = content.split("<answer_a>\n")[1].split("\n</answer_a>")[0]
        p_a = 0.8 if first == "right" else 0.6
        readout = {"winner": {"probabilities": {'"A"': p_a, '"B"': 1 - p_a}}}
        return make_chat_completion('{"winner": "A"}', model="leaning", extra={"readout": readout})

    def cache_identity(self):
        return {"engine": "leaning", "model": "leaning-1"}


def test_calibrate_fits_a_judge_that_writes_checks_as_its_own_and_compare_applies_it(tmp_path, monkeypatch):
    from localjudge._cli.commands import judging as command_judge

    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "home"))
    client = LeaningPairJudge()
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: client)
    rows = [
        {"id": str(i), "inputs": f"request {i}", "outputs_a": a, "outputs_b": b, "label": "A" if a == "right" else "B"}
        for i, (a, b) in enumerate([("right", "wrong"), ("wrong", "right")] * 6)
    ]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    command = ["calibrate", str(data), "--pairwise", "--checklist", "--no-reasoning", "--folds", "3", "--no-cache"]
    fitted = CliRunner().invoke(cli.main, command)
    assert fitted.exit_code == 0, fitted.output
    assert "24 readouts from 12 labelled rows" in fitted.stdout

    pair = ["--inputs", "request 0", "--output-a", "wrong", "--output-b", "right", "--no-reasoning"]
    compared = CliRunner().invoke(cli.main, ["compare", *pair, "--checklist", "--calibrated"])
    assert compared.exit_code == 0, compared.output
    result = json.loads(compared.stdout)
    assert result["metadata"]["calibrated"] is True and result["metadata"]["checklist"] == CHECKS
    without = CliRunner().invoke(cli.main, ["compare", *pair, "--calibrated"])
    assert without.exit_code == 2 and "no calibration was fitted for this judge" in without.stderr


def test_checks_given_as_a_list_are_shown_one_to_a_line_and_anything_else_is_refused():
    client = answers('{"winner": "A"}')
    judge = create_pairwise_judge(judge=client, use_reasoning=False, way=Way(checklist=True))
    judge(**PAIR, checks=["Is it one word?", "Is it a city?"])
    assert shown_checks(client.requests[0]) == "Is it one word?\nIs it a city?"
    with pytest.raises(UsageError, match=r"checks must be text .* got 5"):
        judge(**PAIR, checks=5)


def test_checks_the_judge_would_not_be_shown_are_an_error_never_dropped():
    judge = create_pairwise_judge(judge=ScriptedClient([]), use_reasoning=False)
    with pytest.raises(UsageError, match=r"this call gives checks, and this judge's prompt does not show them"):
        judge(**PAIR, checks="Is it one word?")


def test_an_async_judge_of_one_output_writes_its_checks_first():
    from localjudge import create_async_llm_as_judge

    client = answers('{"score": false}')
    prompt = "<request>\n{inputs}\n</request>\n\n" + checks_section() + "\n\n<answer>\n{outputs}\n</answer>"
    evaluator = create_async_llm_as_judge(prompt=prompt, judge=client, use_reasoning=False, checklist=True)
    result = asyncio.run(evaluator(inputs=PAIR["inputs"], outputs="It is Paris."))
    assert result["score"] is False and result["metadata"] == {"checklist": CHECKS}
    assert is_checklist_request(client.requests[0]) and len(client.requests) == 2


def test_each_judge_of_an_ensemble_writes_its_own_checks(monkeypatch):
    from localjudge._cli.commands import judging as command_judge

    client = answers('{"winner": "A"}')
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: client)
    pair = ["--inputs", PAIR["inputs"], "--output-a", "Paris", "--output-b", "It is Paris."]
    models = ["-m", "default", "-m", "tiny", "--ensemble"]
    shown = CliRunner().invoke(cli.main, ["compare", *pair, *models, "--checklist", "--no-reasoning"])
    assert shown.exit_code == 0, shown.output
    members = json.loads(shown.stdout)["metadata"]["members"]
    assert [member["metadata"]["checklist"] for member in members] == [CHECKS, CHECKS]
    assert sum(map(is_checklist_request, client.requests)) == 2 and len(client.requests) == 6


def test_batch_refuses_a_rows_checks_that_the_judge_would_not_be_shown(monkeypatch, tmp_path):
    from localjudge._cli.commands import judging as command_judge

    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: answers('{"winner": "A"}'))
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"id": "1", **PAIR, "checks": "Is it one word?"}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli.main, ["batch", str(data), "--pairwise", "--no-reasoning", "--no-cache", "--way", "plain"]
    )
    assert result.exit_code == 1
    (record,) = map(json.loads, (tmp_path / "pairs.results.jsonl").read_text().splitlines())
    assert "checklist=True" in record["error"]["message"] and "result" not in record


def test_calibrate_refuses_rows_that_bring_their_own_checks(tmp_path, monkeypatch):
    from localjudge._cli.commands import judging as command_judge

    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: LeaningPairJudge())
    data = tmp_path / "pairs.jsonl"
    row = {"id": "1", **PAIR, "checks": "Is it one word?", "label": "A"}
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    fitted = CliRunner().invoke(cli.main, ["calibrate", str(data), "--pairwise", "--checklist", "--folds", "2"])
    assert fitted.exit_code == 2 and "these rows bring theirs" in fitted.output
