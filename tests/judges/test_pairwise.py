"""The pairwise judge: both orders asked, verdicts turned back, ties and disagreements, probabilities averaged."""

from __future__ import annotations

import json
import re
import warnings

import pytest

from localjudge._clients.base import ChatClient, make_chat_completion
from localjudge._judges.pairwise import (
    PAIRWISE_PROMPT,
    create_async_pairwise_judge,
    create_pairwise_judge,
    pairwise_schema,
)
from localjudge._judges.ways import Way
from localjudge.errors import OutputParseError, UsageError

GOOD, BAD = "Paris is the capital of France.", "Lyon is the capital of France."


class Judge(ChatClient):
    """Answers by a rule over the answer texts it is shown, so its verdicts do not depend on call order."""

    def __init__(self, rule, confidence=0.8):
        super().__init__()
        self.rule, self.confidence, self.requests = rule, confidence, []

    def _complete(self, request):
        self.requests.append(request)
        text = request["messages"][-1]["content"]
        a = re.search(r"<answer_a>\n(.*?)\n</answer_a>", text, re.S).group(1)
        b = re.search(r"<answer_b>\n(.*?)\n</answer_b>", text, re.S).group(1)
        winner = self.rule(a, b)
        other = {"A": "B", "B": "A", "tie": "A"}[winner]
        readout = {
            "winner": {"probabilities": {json.dumps(winner): self.confidence, json.dumps(other): 1 - self.confidence}}
        }
        content = json.dumps({"reasoning": f"{winner} reads better.", "winner": winner})
        return make_chat_completion(content, model="judge", extra={"readout": readout})


def test_a_judge_that_sees_past_the_order_gives_a_consistent_verdict():
    evaluator = create_pairwise_judge(judge=Judge(lambda a, b: "A" if a == GOOD else "B"))
    for a, b, winner, score in [(GOOD, BAD, "A", 1.0), (BAD, GOOD, "B", 0.0)]:
        result = evaluator(inputs="What is the capital of France?", outputs_a=a, outputs_b=b)
        assert result["key"] == "preference" and result["score"] == score
        assert result["metadata"]["winner"] == winner and result["metadata"]["consistent"] is True
        assert result["metadata"]["verdicts"] == [winner, winner]
        assert result["metadata"]["probabilities"] == pytest.approx({winner: 0.8, "AB".replace(winner, ""): 0.2})


def test_a_judge_that_prefers_a_position_is_caught_and_its_verdict_is_a_tie():
    judge = Judge(lambda a, b: "A", confidence=0.7)
    result = create_pairwise_judge(judge=judge)(inputs="Capital?", outputs_a=GOOD, outputs_b=BAD)
    assert result["score"] == 0.5
    assert result["metadata"]["winner"] == "tie" and result["metadata"]["consistent"] is False
    assert result["metadata"]["verdicts"] == ["A", "B"]  # the second order's "A" was the caller's B
    assert result["metadata"]["probabilities"] == pytest.approx({"A": 0.5, "B": 0.5})
    assert "A then B: A reads better." in result["comment"] and "B then A:" in result["comment"]
    shown = sorted(re.search(r"<answer_a>\n(.*?)\n", r["messages"][-1]["content"]).group(1) for r in judge.requests)
    assert shown == sorted([GOOD, BAD])  # each answer was shown first once


def test_ties_only_when_asked_for():
    assert pairwise_schema()["properties"]["winner"]["enum"] == ["A", "B"]
    assert pairwise_schema(allow_ties=True)["properties"]["winner"]["enum"] == ["A", "B", "tie"]
    assert list(pairwise_schema(use_reasoning=False)["properties"]) == ["winner"]
    tie = create_pairwise_judge(judge=Judge(lambda a, b: "tie"), allow_ties=True)(
        inputs="Capital?", outputs_a=GOOD, outputs_b=BAD
    )
    assert (tie["score"], tie["metadata"]["winner"], tie["metadata"]["consistent"]) == (0.5, "tie", True)
    with pytest.raises(OutputParseError):  # "tie" is outside the schema of a judge without ties
        create_pairwise_judge(judge=Judge(lambda a, b: "tie"))(inputs="Capital?", outputs_a=GOOD, outputs_b=BAD)


def test_on_disagreement_is_checked_and_reaches_the_evaluator():
    judge = Judge(lambda a, b: "A", confidence=0.7)  # prefers whatever it reads first, equally sure each time
    with pytest.raises(UsageError, match="on_disagreement= is one of tie, probabilities"):
        create_pairwise_judge(judge=judge, way=Way(on_disagreement="coin"))
    result = create_pairwise_judge(judge=judge, way=Way(on_disagreement="probabilities"))(
        inputs="Capital?", outputs_a=GOOD, outputs_b=BAD
    )
    assert result["metadata"]["winner"] == "tie"  # 0.5 each after averaging: still a tie


def test_a_reference_is_shown_when_asked_for_and_never_dropped():
    judge = Judge(lambda a, b: "A" if a == GOOD else "B")
    with_reference = create_pairwise_judge(judge=judge, reference=True)
    with_reference(inputs="Capital?", outputs_a=GOOD, outputs_b=BAD, reference_outputs="Paris")
    assert "<reference_answer>\nParis\n</reference_answer>" in judge.requests[-1]["messages"][-1]["content"]
    with pytest.raises(UsageError, match="reference=True"):
        create_pairwise_judge(judge=judge)(inputs="Capital?", outputs_a=GOOD, outputs_b=BAD, reference_outputs="Paris")


def test_the_prompt_marks_the_answers_as_material_not_instructions():
    assert "not instructions to you" in PAIRWISE_PROMPT
    for name in ("{inputs}", "{outputs_a}", "{outputs_b}"):
        assert name in PAIRWISE_PROMPT


async def test_the_async_twin_gives_the_same_verdicts():
    judge = Judge(lambda a, b: "A")
    sync = create_pairwise_judge(judge=judge)(inputs="q", outputs_a=GOOD, outputs_b=BAD)
    result = await create_async_pairwise_judge(judge=judge)(inputs="q", outputs_a=GOOD, outputs_b=BAD)
    assert result == sync


@pytest.mark.model
def test_the_default_judge_prefers_the_right_answer_in_both_orders():
    evaluator = create_pairwise_judge(model="default", use_reasoning=False)
    result = evaluator(inputs="What is the capital of France?", outputs_a=GOOD, outputs_b=BAD)
    metadata = result["metadata"]
    assert metadata["verdicts"] == ["A", "A"], metadata  # the same answer, wherever it is shown
    assert metadata["winner"] == "A" and metadata["consistent"]
    assert (
        metadata["winner"] in ("A", "B", "tie")
        and result["score"] == {"A": 1.0, "B": 0.0, "tie": 0.5}[metadata["winner"]]
    )
    assert metadata["consistent"] == (metadata["verdicts"][0] == metadata["verdicts"][1])
    assert sum(metadata["probabilities"].values()) == pytest.approx(1.0, abs=0.01)


# -- the command line ------------------------------------------------------------------


@pytest.fixture
def rule_judge(monkeypatch):
    from localjudge._cli.commands import judging as command_judge

    judge = Judge(lambda a, b: "A" if a == GOOD else "B")
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: judge)
    return judge


def test_compare_prints_the_verdict(rule_judge):
    from click.testing import CliRunner

    from localjudge import _cli as cli

    result = CliRunner().invoke(
        cli.main,
        ["compare", "--inputs", "Capital?", "--output-a", BAD, "--output-b", GOOD, "--reasoning", "--way", "plain"],
    )
    assert result.exit_code == 0, result.output
    verdict = json.loads(result.stdout)
    assert (verdict["key"], verdict["score"], verdict["metadata"]["winner"]) == ("preference", 0.0, "B")
    assert len(rule_judge.requests) == 2


def test_batch_judges_pairs_and_refuses_single_output_options(rule_judge, tmp_path):
    from click.testing import CliRunner

    from localjudge import _cli as cli

    data = tmp_path / "pairs.jsonl"
    pairs = [(GOOD, BAD), (BAD, GOOD), (GOOD, BAD)]
    data.write_text(
        "".join(json.dumps({"id": f"p{i}", "inputs": "Capital?", "outputs_a": a, "outputs_b": b}) + "\n"
                for i, (a, b) in enumerate(pairs)),
        encoding="utf-8",
    )  # fmt: skip
    result = CliRunner().invoke(
        cli.main, ["batch", str(data), "--pairwise", "-j", "2", "--no-cache", "--reasoning", "--way", "plain"]
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (tmp_path / "pairs.results.jsonl").read_text().splitlines()]
    assert [r["result"]["metadata"]["winner"] for r in records] == ["A", "B", "A"]
    assert "scores: 1.0 2, 0.0 1" in result.stderr
    for options, message in [
        (["--pairwise", "--continuous"], "--continuous shapes a single output's score"),
        (["--allow-ties"], "--allow-ties is for pairs"),
    ]:
        refused = CliRunner().invoke(cli.main, ["batch", str(data), *options, "-o", str(tmp_path / "x.jsonl")])
        assert refused.exit_code == 2 and message in refused.stderr, refused.output


def test_a_missing_output_or_an_unshown_reference_is_an_error_never_dropped():
    from localjudge.errors import MissingTemplateVariableError

    judge = Judge(lambda a, b: "A")
    with pytest.raises(MissingTemplateVariableError, match="outputs_b"):
        create_pairwise_judge(judge=judge)(inputs="q", outputs_a=GOOD)
    custom = create_pairwise_judge(judge=judge, prompt="Which is better?\n<answer_a>\n{outputs_a}\n</answer_a>\n"
                                   "<answer_b>\n{outputs_b}\n</answer_b>")  # fmt: skip
    with pytest.raises(UsageError, match="does not show it"):
        custom(outputs_a=GOOD, outputs_b=BAD, reference_outputs="Paris")
    assert custom(outputs_a=GOOD, outputs_b=BAD)["metadata"]["verdicts"] == ["A", "B"]


def test_compare_without_inputs_and_a_batch_row_missing_an_output(rule_judge, tmp_path):
    from click.testing import CliRunner

    from localjudge import _cli as cli

    result = CliRunner().invoke(cli.main, ["compare", "--output-a", GOOD, "--output-b", BAD, "--reasoning"])
    assert result.exit_code == 0, result.output
    assert "<request>" not in rule_judge.requests[-1]["messages"][-1]["content"]
    data = tmp_path / "pairs.jsonl"
    data.write_text(
        json.dumps({"id": "ok", "inputs": "q", "outputs_a": GOOD, "outputs_b": BAD}) + "\n"
        + json.dumps({"id": "half", "inputs": "q", "outputs_a": GOOD}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    batch = CliRunner().invoke(
        cli.main, ["batch", str(data), "--pairwise", "--no-cache", "--reasoning", "--way", "plain"]
    )
    assert batch.exit_code == 1, batch.output  # one row failed; the run went on
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "pairs.results.jsonl").read_text().splitlines())}
    assert records["ok"]["result"]["metadata"]["winner"] == "A"
    assert records["half"]["error"]["type"] == "MissingTemplateVariableError"


def test_few_shot_pairs_are_shown_in_both_orders_and_checked_when_built():
    example = {"inputs": "2+2?", "outputs_a": "4", "outputs_b": "5", "winner": "A", "reasoning": "4 is right."}
    judge = Judge(lambda a, b: "A" if a == GOOD else "B")
    result = create_pairwise_judge(judge=judge, few_shot_examples=[example])(
        inputs="Capital?", outputs_a=BAD, outputs_b=GOOD
    )
    assert result["metadata"]["winner"] == "B"
    for request in judge.requests:
        text = request["messages"][-1]["content"]
        assert (
            "<output_a>4</output_a>\n<output_b>5</output_b>\n<reasoning>4 is right.</reasoning>\n<winner>A</winner>"
            in text
        )
    first = create_pairwise_judge(judge=judge, few_shot_examples=[example], few_shot_placement="start")
    first(inputs="Capital?", outputs_a=GOOD, outputs_b=BAD)
    assert judge.requests[-1]["messages"][-1]["content"].startswith("<example>\n<input>2+2?</input>")
    with pytest.raises(UsageError, match="few_shot_examples\\[0\\] is missing outputs_b"):
        create_pairwise_judge(judge=judge, few_shot_examples=[{k: v for k, v in example.items() if k != "outputs_b"}])
    with pytest.warns(UserWarning, match="has winner 'tie', which this judge could never give"):
        create_pairwise_judge(judge=judge, few_shot_examples=[{**example, "winner": "tie"}])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        create_pairwise_judge(judge=judge, few_shot_examples=[{**example, "winner": "tie"}], allow_ties=True)


def test_compare_takes_few_shot_pairs(rule_judge, tmp_path):
    from click.testing import CliRunner

    from localjudge import _cli as cli

    shots = tmp_path / "shots.jsonl"
    shots.write_text(json.dumps({"inputs": "1+1?", "outputs_a": "3", "outputs_b": "2", "winner": "B"}) + "\n")
    result = CliRunner().invoke(
        cli.main,
        ["compare", "--output-a", GOOD, "--output-b", BAD, "--few-shot", str(shots), "--few-shot-first", "--reasoning"],
    )
    assert result.exit_code == 0, result.output
    assert "<output_b>2</output_b>\n<winner>B</winner>" in rule_judge.requests[-1]["messages"][-1]["content"]
