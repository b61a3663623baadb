"""Fitting a calibration from a judge's results: which file is whose, samples by position, the content-free prior."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from localjudge._clients.base import ChatClient, make_chat_completion
from localjudge._judges.pairwise import create_pairwise_judge, pairwise_prompt
from localjudge._judges.single import create_llm_as_judge
from localjudge._judges.ways import Way
from localjudge._trust.correction import Correction
from localjudge._trust.fit import (
    calibration_key,
    content_free_prior,
    content_free_values,
    fit_calibration,
    label_index,
    labelled_samples,
)
from localjudge.errors import UsageError


class Fixed(ChatClient):
    """Always the same verdict, with a readout; says which model it is."""

    def __init__(self, name: str = "m", p_true: float = 0.8) -> None:
        super().__init__()
        self.name_, self.p_true = name, p_true

    def _complete(self, request):
        readout = {"score": {"probabilities": {"true": self.p_true, "false": 1 - self.p_true}}}
        return make_chat_completion('{"score": true}', model=self.name_, extra={"readout": readout})

    def cache_identity(self):
        return {"engine": "fixed", "model": self.name_}


def _judge(client, prompt="Is {outputs} right for {inputs}?"):
    return create_llm_as_judge(prompt=prompt, judge=client, use_reasoning=False)


def test_the_key_names_the_model_and_the_prompt():
    key = calibration_key(_judge(Fixed()))
    assert key == calibration_key(_judge(Fixed()))  # the same judge, built again, finds its calibration
    assert key != calibration_key(_judge(Fixed("other")))
    assert key != calibration_key(_judge(Fixed(), prompt="Judge {outputs} against {inputs}."))


def test_a_judge_that_writes_its_own_reference_has_a_key_of_its_own():
    prompt = "Does {outputs} say what {reference_outputs} says, for {inputs}?"
    given = calibration_key(_judge(Fixed(), prompt=prompt))
    own = calibration_key(create_llm_as_judge(prompt=prompt, judge=Fixed(), use_reasoning=False, self_reference=True))
    assert own != given  # the same prompt, but its reference comes from the judge, with other biases


def test_a_judge_that_writes_its_own_checks_has_a_key_of_its_own():
    given = calibration_key(
        create_pairwise_judge(judge=Fixed(), use_reasoning=False, prompt=pairwise_prompt(checks=True))
    )
    own = calibration_key(create_pairwise_judge(judge=Fixed(), use_reasoning=False, way=Way(checklist=True)))
    assert own != given  # the same prompt, but the checks come from the judge
    assert own == calibration_key(create_pairwise_judge(judge=Fixed(), use_reasoning=False, way=Way(checklist=True)))


def test_a_judge_that_cannot_say_which_model_it_is_has_no_key():
    class Anonymous(Fixed):
        cache_identity = None

    with pytest.raises(UsageError, match="cannot say which model"):
        calibration_key(_judge(Anonymous()))


def _record(row_id, probabilities=None, orders=None):
    metadata = {}
    if probabilities is not None:
        metadata["probabilities"] = probabilities
    if orders is not None:
        metadata["order_probabilities"] = orders
    return {"id": row_id, "result": {"key": "score", "score": True, "metadata": metadata}}


def test_labels_are_read_in_the_verdicts_terms():
    boolean = ("true", "false")
    assert [label_index(label, boolean, pairwise=False) for label in (True, "false", 1, "0", " TRUE ")] == [
        0,
        1,
        0,
        1,
        0,
    ]
    assert [label_index(label, boolean, pairwise=False) for label in (None, "", "  ", float("nan"))] == [None] * 4
    choices = ("0", "0.5", "1.0")  # a choice matches whatever its spelling
    assert [label_index(label, choices, pairwise=False) for label in (0, "0.5", 1, "1.0")] == [0, 1, 2, 2]
    pairs = ('"A"', '"B"')
    assert [label_index(label, pairs, pairwise=True) for label in ("A", "b", " a ")] == [0, 1, 0]
    with pytest.raises(UsageError, match=r"the label 'maybe' is none of this judge's values \(true, false\)"):
        label_index("maybe", boolean, pairwise=False)
    with pytest.raises(UsageError, match=r"\(A, B\)"):
        label_index(2, pairs, pairwise=True)


def test_samples_are_the_labelled_readouts():
    records = [
        _record("a", {"true": 0.9, "false": 0.1}),
        _record("b", {"true": 0.3}),  # a value the readout left out counts as 0
        _record("c"),  # no readout: counted
        {"id": "d", "error": {"type": "OutputParseError"}},
        _record("unlabelled", {"true": 0.5, "false": 0.5}),
    ]
    samples = labelled_samples(records, {"a": 0, "b": 1, "c": 0, "d": 1}, ("true", "false"), pairwise=False)
    assert samples.probabilities == [[0.9, 0.1], [0.3, 0.0]]
    assert samples.labels == [0, 1]
    assert samples.groups == [0, 1]
    assert samples.without_readout == 2


def test_a_pair_gives_two_samples_by_position():
    orders = [{"A": 0.9, "B": 0.1}, {"A": 0.7, "B": 0.3}]
    records = [_record("p", orders=orders), _record("q", orders=orders)]
    samples = labelled_samples(records, {"p": 1, "q": 0}, ('"A"', '"B"'), pairwise=True)
    # the caller's B was shown second in the first order, first in the second
    assert samples.probabilities == [[0.9, 0.1], [0.7, 0.3]] * 2
    assert samples.labels == [1, 0, 0, 1]
    assert samples.groups == [0, 0, 1, 1]  # a pair's two orders are held out together


def test_a_pair_read_by_likelihood_gives_its_gains_and_their_mirror():
    gains = {"A": 0.5, "B": 2.0}
    record = {"id": "p", "result": {"key": "preference", "score": 0.0, "metadata": {"likelihood_gain": gains}}}
    samples = labelled_samples([record], {"p": 1}, ('"A"', '"B"'), pairwise=True)
    p_a = 1 / (1 + math.exp(1.5))  # sigmoid(0.5 - 2.0)
    assert samples.probabilities == [pytest.approx([p_a, 1 - p_a]), pytest.approx([1 - p_a, p_a])]
    assert samples.labels == [1, 0] and samples.groups == [0, 0]  # mirrored, so no side can be learnt


def test_a_likelihood_judge_has_a_key_of_its_own():
    side_by_side = calibration_key(create_pairwise_judge(judge=Fixed(), use_reasoning=False))
    read = calibration_key(create_pairwise_judge(judge=Fixed(), way="likelihood"))
    assert read != side_by_side and read == calibration_key(create_pairwise_judge(judge=Fixed(), way="likelihood"))
    # a judge shown the instruction alone, and asked for a verdict, is not one that reads replies
    assert read != calibration_key(create_pairwise_judge(judge=Fixed(), prompt="{inputs}", use_reasoning=False))
    assert read != calibration_key(create_pairwise_judge(judge=Fixed(), way="likelihood", system="Be exact."))


def test_content_free_values_fill_every_field_a_row_has():
    values = content_free_values(["inputs", "reference_outputs"], pairwise=False)
    assert values[0] == {"inputs": "N/A", "outputs": "N/A", "reference_outputs": "N/A"}
    assert [v["outputs"] for v in values] == ["N/A", "[MASK]", ""]
    assert set(content_free_values(["inputs"], pairwise=True)[0]) == {"inputs", "outputs_a", "outputs_b"}


def test_the_prior_is_the_mean_content_free_readout():
    seen = []

    def evaluator(**values):
        seen.append(values)
        p = {"N/A": 0.9, "[MASK]": 0.8, "": 0.7}[values["outputs"]]
        return {"metadata": {"probabilities": {"true": p, "false": 1 - p}}}

    assert content_free_prior(evaluator, ["inputs"], ("true", "false"), pairwise=False) == pytest.approx([0.8, 0.2])
    assert len(seen) == 3
    with pytest.raises(UsageError, match="no probabilities"):
        content_free_prior(lambda **v: {"metadata": None}, [], ("true", "false"), pairwise=False)


def test_one_label_only_cannot_be_fitted():
    samples = labelled_samples(
        [_record(str(i), {"true": 0.6, "false": 0.4}) for i in range(20)],
        {str(i): 0 for i in range(20)},
        ("true", "false"),
        pairwise=False,
    )
    with pytest.raises(UsageError, match="one label only"):
        fit_calibration(samples, ("true", "false"), None, folds=5)
    nothing = labelled_samples([_record("1"), _record("2")], {"1": 0, "2": 1}, ("true", "false"), pairwise=False)
    with pytest.raises(UsageError, match=r"none of the labelled rows gave a readout \(2 failed"):
        fit_calibration(nothing, ("true", "false"), None, folds=5)


class PositionBiased(ChatClient):
    """A pair judge that knows the better answer (the one containing "good") but adds a fixed pull to position A."""

    def __init__(self, pull: float = 2.0) -> None:
        super().__init__()
        self.pull = pull

    def _complete(self, request):
        text = request["messages"][-1]["content"]
        first_is_good = text.index("good") < text.index("bad")
        logit = (1.0 if first_is_good else -1.0) + self.pull
        p_first = 1 / (1 + math.exp(-logit))
        readout = {"winner": {"probabilities": {'"A"': p_first, '"B"': 1 - p_first}}}
        winner = "A" if p_first >= 0.5 else "B"
        return make_chat_completion(json.dumps({"winner": winner}), model="m", extra={"readout": readout})


def test_dividing_out_a_position_prior_makes_a_biased_pair_judge_consistent():
    plain = create_pairwise_judge(judge=PositionBiased(), use_reasoning=False)
    result = plain(inputs="q", outputs_a="a good answer", outputs_b="a bad answer")
    assert result["metadata"]["winner"] == "tie"  # it picked the first answer both times
    assert [order["A"] for order in result["metadata"]["order_probabilities"]] == pytest.approx(
        [1 / (1 + math.exp(-3)), 1 / (1 + math.exp(-1))]
    )
    pull = 1 / (1 + math.exp(-2.0))  # what the judge says about two empty answers
    correction = Correction(('"A"', '"B"'), (pull, 1 - pull))
    calibrated = create_pairwise_judge(judge=PositionBiased(), use_reasoning=False, calibration=correction)
    for a, b, winner in [("a good answer", "a bad answer", "A"), ("a bad answer", "a good answer", "B")]:
        result = calibrated(inputs="q", outputs_a=a, outputs_b=b)
        assert result["metadata"]["winner"] == winner and result["metadata"]["consistent"] is True
        assert result["metadata"]["calibrated"] is True
        assert result["metadata"]["uncalibrated_verdicts"] == ["A", "B"]
        assert result["metadata"]["probabilities"][winner] == pytest.approx(1 / (1 + math.exp(-1)))


def test_fitting_on_a_biased_pair_judge_keeps_the_contextual_correction():
    rng = np.random.default_rng(3)
    judge = create_pairwise_judge(judge=PositionBiased(pull=1.5), use_reasoning=False)
    records, labels = [], {}
    for i in range(40):
        good_first = bool(rng.integers(2))
        a, b = ("good one", "bad one") if good_first else ("bad one", "good one")
        records.append({"id": str(i), "result": judge(inputs="q", outputs_a=a, outputs_b=b)})
        labels[str(i)] = 0 if good_first else 1
    classes = ('"A"', '"B"')
    samples = labelled_samples(records, labels, classes, pairwise=True)
    pull = 1 / (1 + math.exp(-1.5))
    fit = fit_calibration(samples, classes, [pull, 1 - pull], folds=5)
    assert fit.validations["contextual"].before_accuracy == pytest.approx(0.5)  # always the first position
    assert fit.validations["contextual"].after_accuracy == pytest.approx(1.0)
    assert fit.chosen in ("contextual", "contextual + temperature") and fit.correction.prior is not None


def test_a_shipped_fit_serves_when_the_user_has_none_and_the_user_s_own_wins(tmp_path, monkeypatch):
    from localjudge._trust import fit
    from localjudge._trust.calibration_file import calibration_path
    from localjudge.errors import OptionError

    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(fit, "SHIPPED", tmp_path / "shipped")
    judge = _judge(Fixed())
    key = calibration_key(judge)
    with pytest.raises(OptionError, match="no calibration was fitted for this judge"):
        fit.stored_correction(judge)

    ours = {"format": 1, "classes": ["true", "false"], "chosen": "bias + temperature", "prior": [0.8, 0.2]}
    ours.update(temperature=0.75, rows=160, validations={}, about={"data": "the dev split of a check set"})
    (tmp_path / "shipped").mkdir()
    (tmp_path / "shipped" / f"{key}.json").write_text(json.dumps(ours))
    correction, note = fit.stored_correction(judge)
    assert correction.prior == pytest.approx((0.8, 0.2)) and correction.temperature == 0.75
    assert "shipped with localjudge, fitted on the dev split of a check set" in note

    theirs = {**ours, "chosen": "temperature", "prior": None, "temperature": 1.5, "about": {}}
    calibration_path(key).parent.mkdir(parents=True)
    calibration_path(key).write_text(json.dumps(theirs))
    correction, note = fit.stored_correction(judge)
    assert correction.prior is None and correction.temperature == 1.5 and str(calibration_path(key)) in note


def test_calibration_stored_applies_the_fit_kept_for_the_judge_being_built(tmp_path, monkeypatch):
    from localjudge._trust import fit
    from localjudge.errors import OptionError

    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(fit, "SHIPPED", tmp_path / "shipped")
    with pytest.raises(OptionError, match="calibration='stored': no calibration was fitted for this judge"):
        create_llm_as_judge(prompt="Is {outputs} right?", judge=Fixed(), calibration="stored")
    with pytest.raises(UsageError, match=r"calibration must be a Correction .* or 'stored', got 'shipped'"):
        create_llm_as_judge(prompt="Is {outputs} right?", judge=Fixed(), calibration="shipped")
    leaning = {"format": 1, "classes": ["true", "false"], "chosen": "bias + temperature", "prior": [0.9, 0.1]}
    leaning.update(temperature=1.0, rows=10, validations={}, about={})
    (tmp_path / "shipped").mkdir()
    key = calibration_key(_judge(Fixed(p_true=0.8)))
    (tmp_path / "shipped" / f"{key}.json").write_text(json.dumps(leaning))
    evaluator = create_llm_as_judge(
        prompt="Is {outputs} right for {inputs}?", judge=Fixed(p_true=0.8), use_reasoning=False, calibration="stored"
    )
    result = evaluator(inputs="q", outputs="a")
    assert result["score"] is False and result["metadata"]["uncalibrated"]["score"] is True  # 0.8 is below its lean


@pytest.mark.parametrize(
    "options",
    [
        "way_flags=WayFlags(self_reference=False)",
        "way_flags=WayFlags(self_reference=True)",
        "pairwise=True, way_flags=WayFlags(likelihood=True)",
        "pairwise=True, way_flags=WayFlags(checklist=True)",
    ],
    ids=["plain", "own-reference", "likelihood", "checklist"],
)
@pytest.mark.model  # the default judge's file names it in the calibration key
def test_the_shipped_fits_are_found_by_the_default_judge_s_verdict_only_prompts(options):
    """A change to the default judge's prompt, schema or identity orphans the shipped fit: refit with make calibrations.

    In a process of its own, as the command line builds its judge (this session's judge is the tiny model).
    """
    code = (
        "from localjudge._cli.commands.judging import judge_from_settings, evaluator_from_settings;"
        "from localjudge._cli.commands.settings import JudgeSettings, WayFlags;"
        "from localjudge._trust.fit import calibration_key, shipped_calibration;"
        f"s = JudgeSettings(model_spec='default', {options});"
        "e = evaluator_from_settings(s, has_inputs=True,"
        " has_reference=False, build=lambda s: judge_from_settings(s, load=False));"
        "print(shipped_calibration(calibration_key(e)))"
    )
    environment = {k: v for k, v in os.environ.items() if k != "LOCALJUDGE_MODEL"}
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, check=True)
    assert found.stdout.strip().endswith(".json"), (found.stdout, found.stderr[-2000:])
