"""Calibration on synthetic judges whose bias is known: the corrections find it, and are kept only when they help."""

from __future__ import annotations

import numpy as np
import pytest

from localjudge._trust.correction import (
    CANDIDATES,
    Correction,
    apply_correction,
    calibration_error,
    choose_correction,
    correct,
    cross_validate,
    fit_bias,
    fit_temperature,
    verdict_classes,
)
from localjudge.errors import UsageError


def _judge(rows: int, *, temperature: float = 1.0, prior_odds: float = 1.0, seed: int = 7):
    """True probabilities of "true", labels drawn from them, and what a judge with a known distortion reports."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.02, 0.98, rows)
    labels = (rng.uniform(size=rows) < truth).astype(int)  # class 1 is "true"
    logit = np.log(truth / (1 - truth)) * temperature + np.log(prior_odds)
    reported = 1 / (1 + np.exp(-logit))
    return np.column_stack([1 - reported, reported]), labels, np.column_stack([1 - truth, truth])


def test_an_overconfident_judge_gets_its_temperature_back():
    probabilities, labels, _ = _judge(4000, temperature=3.0)  # logits three times too large
    assert fit_temperature(probabilities, labels) == pytest.approx(3.0, rel=0.15)
    validation = cross_validate(probabilities, labels)
    assert validation.after_ece < validation.before_ece / 2 and validation.keep


def test_a_judge_biased_towards_true_is_corrected_by_its_content_free_answer():
    probabilities, labels, truth = _judge(2000, prior_odds=4.0)  # every verdict's odds of true times 4
    content_free = np.array([0.2, 0.8])  # what it says about nothing: odds 4 for true
    corrected = apply_correction(probabilities, Correction(("false", "true"), tuple(content_free)))
    assert np.allclose(corrected, truth, atol=1e-6)
    validation = cross_validate(probabilities, labels, prior=content_free, fit=False)
    assert validation.after_ece < validation.before_ece and validation.after_accuracy > validation.before_accuracy


def test_a_calibrated_judge_is_left_alone():
    probabilities, labels, _ = _judge(4000)
    assert fit_temperature(probabilities, labels) == pytest.approx(1.0, abs=0.15)
    validation = cross_validate(probabilities, labels)
    assert abs(validation.after_ece - validation.before_ece) < 0.02  # nothing much to gain: the figures say so


def test_a_correction_that_hurts_is_not_kept():
    probabilities, labels, _ = _judge(2000)
    wrong_prior = np.array([0.9, 0.1])  # divides out a bias the judge does not have
    validation = cross_validate(probabilities, labels, prior=wrong_prior, fit=False)
    assert validation.after_accuracy < validation.before_accuracy and not validation.keep


def test_calibration_error_by_hand():
    probabilities = np.array([[0.1, 0.9], [0.8, 0.2], [0.4, 0.6], [0.3, 0.7], [0.05, 0.95]])
    labels = [1, 1, 1, 0, 1]  # top choices 1, 0, 1, 1, 1: right, wrong, right, wrong, right
    ece, accuracy = calibration_error(probabilities, labels)
    assert accuracy == pytest.approx(3 / 5)
    assert ece == pytest.approx((2 * 0.075 + 0.8 + 0.4 + 0.7) / 5)  # as in test_agreement, from the other side


def test_three_classes_and_bad_calls():
    probabilities = np.array([[0.7, 0.2, 0.1]])
    assert apply_correction(probabilities, Correction(("A", "B", "tie"), temperature=1.0)) == pytest.approx(
        probabilities
    )
    softened = apply_correction(probabilities, Correction(("A", "B", "tie"), temperature=1e6))
    assert softened == pytest.approx(np.full((1, 3), 1 / 3), abs=1e-4)
    with pytest.raises(UsageError, match="at least 10"):
        cross_validate(np.array([[0.5, 0.5]] * 6), [0, 1] * 3)
    with pytest.raises(UsageError, match="labelled rows"):
        fit_temperature(np.empty((0, 2)), [])


def test_choosing_keeps_the_correction_that_fits_the_distortion():
    probabilities, labels, _ = _judge(3000, prior_odds=4.0)
    fit = choose_correction(probabilities, labels, ("false", "true"), prior=(0.2, 0.8))
    assert set(fit.validations) == set(CANDIDATES)
    assert fit.chosen in ("contextual", "contextual + temperature")
    assert fit.correction.prior == (0.2, 0.8) and fit.correction.classes == ("false", "true")
    overconfident, labels, _ = _judge(3000, temperature=3.0)
    fit = choose_correction(overconfident, labels, ("false", "true"))  # no content-free readout: fitted ones only
    assert list(fit.validations) == ["temperature", "bias + temperature"]
    assert fit.chosen in fit.validations and fit.correction.temperature == pytest.approx(3.0, rel=0.15)
    only = choose_correction(overconfident, labels, ("false", "true"), only=("temperature",))
    assert list(only.validations) == ["temperature"] and only.chosen == "temperature"
    with pytest.raises(UsageError, match="no such correction: warmth"):
        choose_correction(overconfident, labels, ("false", "true"), only=("warmth",))


def test_a_bias_the_content_free_readout_cannot_see_is_fitted_on_the_labels():
    probabilities, labels, _ = _judge(3000, temperature=2.0, prior_odds=6.0)  # leans to true, and overconfident
    prior, temperature = fit_bias(probabilities, labels)
    assert prior[1] / prior[0] == pytest.approx(6.0, rel=0.25)  # (logit - log 6) / 2 undoes it
    assert temperature == pytest.approx(2.0, rel=0.15)
    fit = choose_correction(probabilities, labels, ("false", "true"), prior=(0.5, 0.5))  # an unbiased empty input
    bias = fit.validations["bias + temperature"]
    assert bias.keep and bias.after_accuracy > bias.before_accuracy + 0.03
    assert fit.validations["contextual"].after_accuracy == pytest.approx(bias.before_accuracy)
    assert fit.chosen == "bias + temperature"
    with pytest.raises(UsageError, match="labelled rows"):
        fit_bias(np.empty((0, 2)), [])


@pytest.mark.parametrize("confidence", [0.999, 1 - 1e-6])
def test_a_fitted_bias_fits_confident_readouts_at_least_as_well_as_a_temperature_alone(confidence):
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 80)
    verdicts = np.where(rng.uniform(size=80) < 0.8, labels, 1 - labels)  # sure of every verdict, right 80% of the time
    probabilities = np.where(verdicts[:, None] == np.arange(2), confidence, 1 - confidence)
    classes = ("0", "1")

    def loss(correction):
        picked = apply_correction(probabilities, correction)[np.arange(80), labels]
        return float(-np.mean(np.log(picked)))

    temperature = fit_temperature(probabilities, labels)
    assert (
        loss(Correction(classes, *fit_bias(probabilities, labels)))
        <= loss(Correction(classes, None, temperature)) + 1e-3
    )


def test_choosing_keeps_nothing_when_every_candidate_hurts():
    probabilities, labels, _ = _judge(1000)  # calibrated already, and no bias
    misleading = (0.05, 0.95)  # a content-free readout that has nothing to do with its verdicts
    fit = choose_correction(probabilities, labels, ("false", "true"), prior=misleading)
    assert not any(validation.keep for validation in fit.validations.values())
    assert fit.validations["contextual"].after_ece > 5 * fit.validations["contextual"].before_ece
    assert fit.chosen is None and fit.correction is None


def test_correcting_one_verdict_by_value_text():
    corrected = correct({"true": 0.8, "false": 0.2}, Correction(("true", "false"), (0.8, 0.2)))
    assert corrected == pytest.approx({"true": 0.5, "false": 0.5})
    assert correct({"true": 1.0}, Correction(("true", "false"))) == pytest.approx({"true": 1.0, "false": 0.0}, abs=1e-6)


def test_the_values_a_verdict_allows():
    boolean = {"properties": {"score": {"type": "boolean"}}}
    choices = {"properties": {"score": {"type": "number", "enum": [0, 0.5, 1]}}}
    assert verdict_classes(boolean, "score") == ("true", "false")
    assert verdict_classes(choices, "score") == ("0", "0.5", "1")
    assert verdict_classes({"properties": {"winner": {"enum": ["A", "B"]}}}, "winner") == ('"A"', '"B"')
    assert verdict_classes({"properties": {"score": {"type": "number"}}}, "score") is None
    assert verdict_classes({"properties": {}}, "score") is None
