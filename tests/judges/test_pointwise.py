"""A pair judged one output at a time: each output's own verdict, the likelier one wins, no position to prefer."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from click.testing import CliRunner

from localjudge import _cli as cli
from localjudge._clients.base import ChatClient, make_chat_completion
from localjudge._judges.pairwise import create_async_pairwise_judge, create_pairwise_judge
from localjudge._judges.pointwise import combine_pointwise
from localjudge.errors import UsageError

GOOD, BAD = "Paris is the capital of France.", "Lyon is the capital of France."


class OneAtATime(ChatClient):
    """Judges the one response it is shown: P(true) by a table of texts; with ``readout=False``, a server's answer."""

    def __init__(self, p_true, readout=True):
        super().__init__()
        self.p_true, self.readout, self.requests = p_true, readout, []

    def _complete(self, request):
        self.requests.append(request)
        shown = re.search(r"<response>\n(.*?)\n</response>", request["messages"][-1]["content"], re.S).group(1)
        p = self.p_true[shown]
        extra = {"readout": {"score": {"probabilities": {"true": p, "false": 1 - p}}}} if self.readout else None
        return make_chat_completion(json.dumps({"score": p > 0.5}), model="one", extra=extra)


def result(score, p_true=None, comment=None):
    metadata = None if p_true is None else {"probabilities": {"true": p_true, "false": 1 - p_true}}
    return {"key": "k", "score": score, "comment": comment, "metadata": metadata}


@pytest.mark.parametrize(
    ("a", "b", "winner", "share_a"),
    [
        (result(True, 0.8), result(True, 0.6), "A", 0.8 * 0.4 / (0.8 * 0.4 + 0.6 * 0.2)),  # both pass: the likelier
        (result(False, 0.3), result(True, 0.9), "B", 0.3 * 0.1 / (0.3 * 0.1 + 0.9 * 0.7)),
        (result(True, 0.7), result(True, 0.7), "tie", 0.5),
        (result(True, 1.0), result(True, 1.0), "tie", 0.5),  # neither can be the only one that passes
        (result(True), result(False), "A", None),  # a server's verdicts
        (result(False), result(False), "tie", None),
    ],
)
def test_the_pair_goes_to_the_output_likelier_to_do_what_was_asked(a, b, winner, share_a):
    combined = combine_pointwise("preference", a, b)
    metadata = combined["metadata"]
    assert metadata["winner"] == winner and combined["score"] == {"A": 1.0, "B": 0.0, "tie": 0.5}[winner]
    assert metadata["verdicts"] == {"A": a["score"], "B": b["score"]}
    if share_a is None:
        assert "probabilities" not in metadata
    else:
        assert metadata["probabilities"]["A"] == pytest.approx(share_a)
        assert metadata["probabilities"]["A"] + metadata["probabilities"]["B"] == pytest.approx(1.0)
    assert "consistent" not in metadata  # no orders, so no position consistency to report


def test_each_output_is_asked_about_alone_and_both_comments_are_kept():
    combined = combine_pointwise("k", result(True, 0.9, "It answers."), result(False, 0.2, "Wrong city."))
    assert combined["comment"] == "A: It answers.\nB: Wrong city."


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_pointwise_pair_judge_asks_of_each_output_once(mode):
    client = OneAtATime({GOOD: 0.9, BAD: 0.6})
    options = {"judge": client, "use_reasoning": False, "way": "pointwise"}
    pair = {"inputs": "What is the capital of France?", "outputs_a": BAD, "outputs_b": GOOD}
    if mode == "sync":
        found = create_pairwise_judge(**options)(**pair)
    else:
        found = asyncio.run(create_async_pairwise_judge(**options)(**pair))
    assert len(client.requests) == 2
    assert all("<instruction>\nWhat is the capital of France?\n</instruction>" in r["messages"][-1]["content"]
               for r in client.requests)  # fmt: skip
    assert found["key"] == "preference" and found["metadata"]["winner"] == "B" and found["score"] == 0.0
    assert found["metadata"]["pointwise_probabilities"] == {"A": 0.6, "B": 0.9}


def test_a_reference_the_prompt_does_not_show_is_refused():
    judge = create_pairwise_judge(judge=OneAtATime({}), way="pointwise")
    with pytest.raises(UsageError, match="reference_outputs was given"):
        judge(inputs="q", outputs_a=GOOD, outputs_b=BAD, reference_outputs="Paris")
    shown = create_pairwise_judge(
        judge=OneAtATime({GOOD: 0.9, BAD: 0.1}), way="pointwise", reference=True, use_reasoning=False
    )
    assert shown(inputs="q", outputs_a=GOOD, outputs_b=BAD, reference_outputs="Paris")["metadata"]["winner"] == "A"


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        ({"allow_ties": True}, "allow_ties"),
        ({"few_shot_examples": [{"inputs": "q", "outputs_a": "a", "outputs_b": "b", "winner": "A"}]}, "few_shot"),
        ({"calibration": object()}, "calibration"),
        ({"prompt": "Which is better, {outputs_a} or {outputs_b}?"}, r"names \{outputs\} \(not \{outputs_a\}"),
        ({"prompt": "Does it follow {inputs}?"}, r"names \{outputs\}"),
    ],
)
def test_options_that_do_not_fit_one_output_at_a_time_are_refused(options, refused):
    with pytest.raises(UsageError, match=refused):
        create_pairwise_judge(judge=OneAtATime({}), way="pointwise", **options)


def test_compare_pointwise_on_the_command_line(monkeypatch):
    from localjudge._cli.commands import judging as command_judge

    client = OneAtATime({GOOD: 0.9, BAD: 0.3})
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: client)
    options = ["--inputs", "What is the capital of France?", "--output-a", BAD, "--output-b", GOOD]
    shown = CliRunner().invoke(cli.main, ["compare", *options, "--pointwise", "--no-reasoning"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["metadata"]["winner"] == "B" and len(client.requests) == 2
    calibrated = CliRunner().invoke(cli.main, ["compare", *options, "--pointwise", "--calibrated"])
    assert calibrated.exit_code == 2 and "--calibrated corrects a pair's positions" in calibrated.output
    ties = CliRunner().invoke(cli.main, ["compare", *options, "--pointwise", "--allow-ties"])
    assert ties.exit_code == 2 and "--pointwise does not go with --allow-ties" in ties.output


def test_check_judge_asks_pointwise_only_of_its_pair_sets():
    from localjudge._cli.commands.check import CHECK_SETS
    from localjudge._cli.commands.settings import JudgeSettings, WayFlags

    settings = JudgeSettings(way_flags=WayFlags(pointwise=True))
    asked = {name for name, check_set in CHECK_SETS.items() if check_set.settings(settings).way_flags.pointwise}
    assert asked == {name for name, check_set in CHECK_SETS.items() if check_set.pairwise}
    assert asked == {"llmbar-natural", "adversarial", "llmbar-adversarial"}


def test_pointwise_without_pairs_is_refused(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"inputs": "q", "outputs": "a"}) + "\n", encoding="utf-8")
    refused = CliRunner().invoke(cli.main, ["batch", str(data), "--pointwise", "-m", "tiny"])
    assert refused.exit_code == 2 and "--pointwise is for pairs" in refused.output


@pytest.mark.model
def test_the_default_judge_judging_each_answer_alone_prefers_the_right_one():
    evaluator = create_pairwise_judge(model="default", use_reasoning=False, way="pointwise")
    found = evaluator(inputs="What is the capital of France?", outputs_a=BAD, outputs_b=GOOD)
    metadata = found["metadata"]
    assert metadata["winner"] == "B", metadata
    assert metadata["pointwise_probabilities"]["B"] > metadata["pointwise_probabilities"]["A"]
    assert sum(metadata["probabilities"].values()) == pytest.approx(1.0)
