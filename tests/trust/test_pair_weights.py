"""The pair weights: a logistic without intercept over the checklist's log-odds and the gains' difference."""

from __future__ import annotations

import math
import random

import pytest

from localjudge._trust.pair_weights import PairSignals, PairWeights, fit_pair_weights, read_pair_weights
from localjudge.errors import UsageError


def test_a_pair_and_its_mirror_get_mirrored_probabilities():
    weights = PairWeights(0.7, 1.3)
    signals = PairSignals(0.8, 2.0, 0.5)
    assert weights.probability_a(signals) == pytest.approx(1 - weights.probability_a(signals.mirrored()))
    assert weights.probability_a(PairSignals(0.5, 1.0, 1.0)) == 0.5  # no figure for either side: even odds


def test_a_certain_checklist_is_read_as_nearly_certain_and_never_overflows():
    weights = PairWeights(50.0, 50.0)
    assert weights.probability_a(PairSignals(1.0, 100.0, -100.0)) == pytest.approx(1.0)
    assert weights.probability_a(PairSignals(0.0, -100.0, 100.0)) == pytest.approx(0.0)


def test_the_fit_finds_the_figure_that_decides_and_leaves_the_noise():
    rng = random.Random(0)
    samples = []
    for _ in range(300):
        gain = rng.gauss(0, 1)
        checks = rng.random()  # noise: it says nothing of the winner
        a_won = rng.random() < 1 / (1 + math.exp(-3 * gain))
        samples.append((PairSignals(checks, gain, 0.0), a_won))
    weights = fit_pair_weights(samples, about={"data": "synthetic"})
    assert 2.0 < weights.gain < 4.0 and abs(weights.checks) < 0.3
    assert weights.about == {"data": "synthetic", "pairs": 300}


def test_weights_round_trip_through_their_file_and_a_bad_file_names_itself(tmp_path):
    path = tmp_path / "weights.json"
    PairWeights(0.5, 2.0, {"fitted_on": "dev"}).write(path)
    assert read_pair_weights(path) == PairWeights(0.5, 2.0)
    assert read_pair_weights(path).about == {"fitted_on": "dev"}
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(UsageError, match=r"weights\.json holds no pair weights"):
        read_pair_weights(path)
    with pytest.raises(UsageError, match="no labelled pairs"):
        fit_pair_weights([])
