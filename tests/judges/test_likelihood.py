"""A pair judged by likelihood: each output scored as a reply, after the instruction and after nothing."""

from __future__ import annotations

import asyncio
import math

import pytest
from support.likelihood_readings import PAIR, scored

from localjudge._clients.formats import read_reply_logprobs
from localjudge._judges.likelihood import calibrated_winner, check_readings, likelihood_gain, pick_by_gain
from localjudge._judges.pairwise import create_async_pairwise_judge, create_pairwise_judge
from localjudge._trust.correction import Correction, gain_readout
from localjudge.errors import JudgeRuntimeError, OptionError, OutputParseError, RemoteConnectError, UsageError
from localjudge.testing import ScriptedClient


def test_the_gain_is_nats_per_token_and_the_larger_one_wins():
    assert likelihood_gain([-1.0, -1.0], [-2.0, -3.0]) == 1.5
    assert pick_by_gain(0.2, 0.1) == "A" and pick_by_gain(-1.0, 0.0) == "B" and pick_by_gain(0.3, 0.3) == "tie"


def by(client):
    return {"localjudge": {"client": client, "failures": []}}


@pytest.mark.parametrize(
    "readings",
    [
        [(by("a"), [-1.0]), (by("a"), [-1.0]), (by("b"), [-1.0]), (by("a"), [-1.0])],  # another member read one
        [({}, [-1.0, -2.0]), ({}, [-1.0]), ({}, [-1.0]), ({}, [-1.0])],  # another tokenizer read one
    ],
    ids=["members", "tokens"],
)
def test_readings_of_one_pair_from_different_models_are_an_error(readings):
    with pytest.raises(JudgeRuntimeError, match="different models"):
        check_readings(readings, "fallback")
    check_readings([(by("a"), [-1.0])] * 4, "fallback")  # one member read all four


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_each_output_is_read_after_the_instruction_and_after_nothing(mode):
    client = ScriptedClient([scored], repeat=True)
    options = {"judge": client, "way": "likelihood", "system": "Be brief."}
    if mode == "sync":
        result = create_pairwise_judge(**options)(**PAIR)
    else:
        result = asyncio.run(create_async_pairwise_judge(**options)(**PAIR))
    assert result["score"] == 0.0 and result["metadata"]["winner"] == "B"
    assert result["metadata"]["likelihood_gain"] == {"A": pytest.approx(0.5 / 3), "B": pytest.approx(2.0)}
    assert result["metadata"]["reply_tokens"] == {"A": 3, "B": 2}
    assert len(client.requests) == 4
    for request in client.requests:
        system, user, reply = request["messages"]
        assert system == {"role": "system", "content": "Be brief."} and user["role"] == "user"
        assert reply["role"] == "assistant" and "response_format" not in request


def test_a_chain_names_the_member_that_read_all_four():
    from localjudge._clients.fallback import FallbackClient

    down = ScriptedClient([RemoteConnectError("down")], repeat=True)
    down.name = "down"
    reader = ScriptedClient([scored], repeat=True)
    reader.name = "reader"
    result = create_pairwise_judge(judge=FallbackClient(down, reader), way="likelihood")(**PAIR)
    assert result["metadata"]["winner"] == "B" and result["metadata"]["client"] == "reader"
    assert "client" not in create_pairwise_judge(judge=reader, way="likelihood")(**PAIR)["metadata"]


def test_swapping_the_outputs_swaps_the_verdict():
    client = ScriptedClient([scored], repeat=True)
    judge = create_pairwise_judge(judge=client, way="likelihood")
    swapped = {**PAIR, "outputs_a": PAIR["outputs_b"], "outputs_b": PAIR["outputs_a"]}
    assert judge(**PAIR)["metadata"]["winner"] == "B" and judge(**swapped)["metadata"]["winner"] == "A"


def test_a_readout_of_gains_is_a_logistic_of_their_difference_and_never_overflows():
    assert gain_readout({"A": 1.0, "B": 1.0}) == {'"A"': 0.5, '"B"': 0.5}
    assert gain_readout({"A": 2.0, "B": 0.0})['"A"'] == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert gain_readout({"A": -900.0, "B": 900.0}) == {'"A"': pytest.approx(0.0), '"B"': 1.0}


def test_a_calibrated_readout_decides_and_equal_gains_stay_a_tie():
    scale = Correction(('"A"', '"B"'), None, 0.5)
    winner, probabilities = calibrated_winner({"A": 0.3, "B": 0.1}, scale)
    assert winner == "A" and probabilities["A"] == pytest.approx(1 / (1 + math.exp(-0.4)))
    assert calibrated_winner({"A": 0.2, "B": 0.2}, scale) == ("tie", {"A": 0.5, "B": 0.5})


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_calibration_turns_the_gains_into_probabilities_that_decide(mode):
    client = ScriptedClient([scored], repeat=True)
    options = {"judge": client, "way": "likelihood", "calibration": Correction(('"A"', '"B"'), None, 2.0)}
    if mode == "sync":
        result = create_pairwise_judge(**options)(**PAIR)
    else:
        result = asyncio.run(create_async_pairwise_judge(**options)(**PAIR))
    p_a = 1 / (1 + math.exp((2.0 - 0.5 / 3) / 2.0))  # the gains' difference, halved by the temperature
    assert result["metadata"]["probabilities"] == {"A": pytest.approx(p_a), "B": pytest.approx(1 - p_a)}
    assert result["metadata"]["calibrated"] is True and result["metadata"]["winner"] == "B"
    leaning = Correction(('"A"', '"B"'), (0.001, 0.999), 1.0)  # a fitted lean to B, divided out, turns the verdict
    turned = create_pairwise_judge(judge=client, way="likelihood", calibration=leaning)(**PAIR)
    assert turned["score"] == 1.0 and turned["metadata"]["winner"] == "A"
    assert turned["metadata"]["uncalibrated"] == {"winner": "B"}  # what the gains alone said
    assert turned["metadata"]["likelihood_gain"] == result["metadata"]["likelihood_gain"]  # the figures read stay
    assert "probabilities" not in create_pairwise_judge(judge=client, way="likelihood")(**PAIR)["metadata"]


def test_a_client_that_answers_instead_of_scoring_is_an_error_with_its_text():
    judge = create_pairwise_judge(judge=ScriptedClient(["B is better"], repeat=True), way="likelihood")
    with pytest.raises(OutputParseError, match="log-probability") as caught:
        judge(**PAIR)
    assert caught.value.raw_output == "B is better" and "local model" in caught.value.hint


@pytest.mark.parametrize(
    "figures",
    [[], [0.5], [True], [float("nan")], ["-1"], [None]],
    ids=["none", "positive", "a bool", "nan", "text", "null"],
)
def test_figures_that_are_no_log_probabilities_are_refused(figures):
    response = {"choices": [{"message": {"content": ""}, "logprobs": {"content": [{"logprob": f} for f in figures]}}]}
    with pytest.raises(OutputParseError):
        read_reply_logprobs(response)
    assert read_reply_logprobs({"choices": [{"logprobs": {"content": [{"logprob": -0.25}, {"logprob": 0}]}}]}) == [
        -0.25,
        0.0,
    ]


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("prompt", "{inputs} {outputs_a} {outputs_b}"),
        ("allow_ties", True),
        ("reference", True),
        ("few_shot_examples", [{"inputs": "q", "outputs_a": "a", "outputs_b": "b", "winner": "A"}]),
    ],
)
def test_options_that_shape_a_question_are_refused_by_name(option, value):
    with pytest.raises(OptionError, match=f"does not go with {option}"):
        create_pairwise_judge(judge=ScriptedClient([]), way="likelihood", **{option: value})


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ({**PAIR, "inputs": None}, "give the instruction as inputs"),
        ({**PAIR, "inputs": " \n"}, "give the instruction as inputs"),
        ({**PAIR, "outputs_b": None}, "outputs_b is missing"),
        ({**PAIR, "outputs_a": ""}, "outputs_a is empty"),
        ({**PAIR, "outputs_b": "  "}, "outputs_b is empty"),
        ({**PAIR, "reference_outputs": "Paris"}, "shows no reference"),
    ],
)
def test_a_call_without_what_it_scores_is_refused_before_any_request(call, message):
    client = ScriptedClient([])
    with pytest.raises(UsageError, match=message):
        create_pairwise_judge(judge=client, way="likelihood")(**call)
    assert client.requests == []


@pytest.mark.model
def test_the_tiny_model_prefers_the_reply_to_the_question_asked_and_the_cache_keeps_its_figures(tmp_path):
    """Machinery on the real tiny model: an answer to another question gains less from the instruction."""
    from localjudge._clients.result_cache import ResultCache

    cache = ResultCache(tmp_path / "cache.sqlite3")
    judge = create_pairwise_judge(model="tiny", way="likelihood", cache=cache)
    pair = {
        "inputs": "What is the capital of France?",
        "outputs_a": "The capital of Italy is Rome.",
        "outputs_b": "Paris is the capital of France.",
    }
    first = judge(**pair)
    assert first["metadata"]["winner"] == "B"
    assert judge(**pair) == first and cache.hits == 4


def test_compare_by_likelihood_on_the_command_line(monkeypatch):
    import json

    from click.testing import CliRunner

    from localjudge import _cli as cli
    from localjudge._cli.commands import judging as command_judge

    client = ScriptedClient([scored], repeat=True)
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: client)
    options = ["--inputs", PAIR["inputs"], "--output-a", PAIR["outputs_a"], "--output-b", PAIR["outputs_b"]]
    shown = CliRunner().invoke(cli.main, ["compare", *options, "--likelihood"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["metadata"]["winner"] == "B" and len(client.requests) == 4
    for refused, message in (
        (["--pointwise"], "--likelihood does not go with --pointwise"),
        (["--self-reference"], "--likelihood does not go with --self-reference"),
        (["--prompt", "{inputs} {outputs_a} {outputs_b}"], "--likelihood asks the judge nothing"),
    ):
        result = CliRunner().invoke(cli.main, ["compare", *options, "--likelihood", *refused])
        assert result.exit_code == 2 and message in result.output, result.output


def test_check_judge_scores_by_likelihood_only_its_pair_sets():
    from localjudge._cli.commands.check import CHECK_SETS
    from localjudge._cli.commands.settings import JudgeSettings, WayFlags

    settings = JudgeSettings(way_flags=WayFlags(likelihood=True))
    asked = {name for name, check_set in CHECK_SETS.items() if check_set.settings(settings).way_flags.likelihood}
    assert asked == {name for name, check_set in CHECK_SETS.items() if check_set.pairwise}
    assert asked == {"llmbar-natural", "adversarial", "llmbar-adversarial"}


@pytest.mark.model
def test_the_default_judge_by_likelihood_prefers_the_answer_to_the_question_asked():
    found = create_pairwise_judge(model="default", way="likelihood")(
        inputs="What is the capital of France? Answer in one word.",
        outputs_a="The Eiffel Tower was finished in 1889 and is 330 metres tall.",
        outputs_b="Paris",
    )
    gains = found["metadata"]["likelihood_gain"]
    assert found["metadata"]["winner"] == "B" and gains["B"] > gains["A"], gains


def test_a_batch_row_without_inputs_or_with_a_reference_is_that_rows_error(tmp_path, monkeypatch):
    import json

    from click.testing import CliRunner

    from localjudge import _cli as cli
    from localjudge._cli.commands import judging as command_judge

    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: ScriptedClient([scored], repeat=True))
    rows = [PAIR, {**PAIR, "inputs": None}, {**PAIR, "reference_outputs": "Paris."}, PAIR]
    data, out = tmp_path / "pairs.jsonl", tmp_path / "out.jsonl"
    data.write_text("".join(json.dumps({k: v for k, v in r.items() if v is not None}) + "\n" for r in rows))
    ran = CliRunner().invoke(cli.main, ["batch", str(data), "--pairwise", "--likelihood", "-o", str(out), "--no-cache"])
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(written) == 4, ran.output
    errors = [r.get("error") for r in written]
    assert (
        errors[0] is None and errors[3] is None and all(r["result"]["metadata"]["winner"] == "B" for r in written[::3])
    )
    assert "give the instruction as inputs" in errors[1]["message"] and "shows no reference" in errors[2]["message"]


def _words_shared(request):
    """A client that scores replies by words: one the request also holds is likelier after it."""
    user, reply = (m["content"] for m in request["messages"][-2:])
    asked = set(user.lower().split())
    figures = [-0.5 if word.lower() in asked else -3.0 for word in reply.split()]
    tokens = [{"token": word, "logprob": f, "top_logprobs": []} for word, f in zip(reply.split(), figures, strict=True)]
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop",
                         "logprobs": {"content": tokens}}]}  # fmt: skip


class _NamedScorer(ScriptedClient):
    def cache_identity(self):
        return {"engine": "scripted", "model": "words"}


def test_calibrate_then_compare_by_likelihood_on_the_command_line(tmp_path, monkeypatch):
    """Without a model: the command line fits a temperature on labelled pairs, then --calibrated applies it."""
    import json

    from click.testing import CliRunner

    from localjudge import _cli as cli
    from localjudge._cli.commands import judging as command_judge

    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "home"))
    client = _NamedScorer([_words_shared], repeat=True)
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: client)
    rows = []
    for i in range(12):  # the shared words point the right way in 10 of 12 pairs
        right, wrong = f"colour {i} is red", f"number {i} apples"
        a_wins = (i % 2 == 0) != (i in (3, 8))
        row = {"id": str(i), "inputs": f"Say what colour {i} is", "label": "A" if i % 2 == 0 else "B"}
        row |= {"outputs_a": right, "outputs_b": wrong} if a_wins else {"outputs_a": wrong, "outputs_b": right}
        rows.append(row)
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    fitted = CliRunner().invoke(cli.main, ["calibrate", str(data), "--pairwise", "--likelihood", "--folds", "3"])
    assert fitted.exit_code == 0, fitted.output
    assert "24 readouts from 12 labelled rows" in fitted.stdout and "bias" not in fitted.stdout
    options = ["--inputs", "Say what colour the sky is", "--output-a", "sky is blue", "--output-b", "ten apples"]
    compared = CliRunner().invoke(cli.main, ["compare", *options, "--likelihood", "--calibrated"])
    assert compared.exit_code == 0, compared.output
    metadata = json.loads(compared.stdout)["metadata"]
    if "was not kept" in compared.stderr:
        assert "probabilities" not in metadata
    else:
        assert metadata["calibrated"] is True and metadata["winner"] == "A"
        assert metadata["probabilities"]["A"] > 0.5 and sum(metadata["probabilities"].values()) == pytest.approx(1)

    too_few = tmp_path / "few.jsonl"
    too_few.write_text("".join(json.dumps(row) + "\n" for row in rows[:3]), encoding="utf-8")
    client.requests.clear()
    refused = CliRunner().invoke(cli.main, ["calibrate", str(too_few), "--pairwise", "--likelihood", "--folds", "2"])
    assert refused.exit_code == 2 and "needs at least 4 labelled rows" in refused.output, refused.output
    assert client.requests == []  # refused before any row was judged


def test_values_a_reading_does_not_show_are_data_not_errors():
    """A labelled file's label, a row's source: the model reads the instruction and the replies alone."""
    client = ScriptedClient([scored], repeat=True)
    result = create_pairwise_judge(judge=client, way="likelihood")(**PAIR, label="B", source="survey")
    assert result["metadata"]["winner"] == "B"
    shown = "".join(m["content"] for request in client.requests for m in request["messages"])
    assert "survey" not in shown and len(client.requests) == 4
