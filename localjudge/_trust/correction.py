"""Corrections of a judge's probabilities, kept only when held-out rows show they help.

Two corrections, on probabilities over a verdict's allowed values (true and
false, the choices, A and B):

- contextual calibration ("calibrate before use"): the judge is shown a
  content-free input; whatever it prefers then is its prior bias, divided
  out of every later verdict's probabilities;
- temperature scaling, fitted on labelled rows: log-probabilities divided by
  one number T, which softens an overconfident judge (T > 1) or sharpens an
  underconfident one (T < 1);
- a bias fitted on labelled rows with its temperature (vector scaling with
  one shared scale): a judge that leans to ``true`` on plausible-looking
  answers shows no such lean on an empty one, so the content-free prior
  cannot see it, but the labels can. It moves the decision boundary.

:func:`cross_validate` fits on some folds and measures on the held-out one,
so the decision to keep a correction never looks at the rows it is judged on.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import OptionError, UsageError

__all__ = [
    "CANDIDATES",
    "Correction",
    "Fit",
    "Validation",
    "apply_correction",
    "calibration_error",
    "check_enough_rows",
    "choose_correction",
    "correct",
    "cross_validate",
    "fit_bias",
    "fit_temperature",
    "gain_readout",
    "value_key",
    "verdict_classes",
]

_FLOOR = 1e-9  # probabilities are clipped here before logs: a readout may give a value 0
PRIOR_FLOOR = 1e-6  # the least a content-free probability is taken to be


@dataclass(frozen=True)
class Correction:
    """``prior``: the content-free probabilities to divide out (None: none); ``temperature``: T (1: none)."""

    classes: tuple[str, ...]
    prior: tuple[float, ...] | None = None
    temperature: float = 1.0


def apply_correction(probabilities: np.ndarray, correction: Correction) -> np.ndarray:
    """Rows of probabilities over ``correction.classes``, corrected and summing to 1."""
    logs = np.log(np.clip(np.asarray(probabilities, dtype=float), _FLOOR, 1.0))
    if correction.prior is not None:
        logs = logs - np.log(np.clip(np.asarray(correction.prior, dtype=float), _FLOOR, 1.0))
    logs = logs / correction.temperature
    logs -= logs.max(axis=-1, keepdims=True)
    corrected = np.exp(logs)
    return corrected / corrected.sum(axis=-1, keepdims=True)


def _log_loss(probabilities: np.ndarray, labels: np.ndarray) -> float:
    picked = probabilities[np.arange(len(labels)), labels]
    return float(-np.mean(np.log(np.clip(picked, _FLOOR, 1.0))))


def fit_temperature(
    probabilities: np.ndarray, labels: Sequence[int] | np.ndarray, *, prior: Sequence[float] | None = None
) -> float:
    """The T that gives the labelled rows the highest likelihood (after dividing out ``prior``, if given).

    A search over log T, coarse then fine: one parameter needs no optimiser.
    """
    label_ids = np.asarray(labels, dtype=int)
    probabilities = np.asarray(probabilities, dtype=float)
    if len(label_ids) == 0:
        raise UsageError("fitting a temperature needs labelled rows")
    classes = tuple(str(i) for i in range(probabilities.shape[1]))
    prior_tuple = tuple(prior) if prior is not None else None

    def loss(log_t: float) -> float:
        correction = Correction(classes, prior_tuple, float(np.exp(log_t)))
        return _log_loss(apply_correction(probabilities, correction), label_ids)

    grid = np.linspace(np.log(0.05), np.log(20.0), 121)
    best = min(grid, key=loss)
    step = grid[1] - grid[0]
    fine = np.linspace(best - step, best + step, 41)
    return float(np.exp(min(fine, key=loss)))


def fit_bias(probabilities: np.ndarray, labels: Sequence[int] | np.ndarray) -> tuple[tuple[float, ...], float]:
    """The bias (as a prior to divide out) and T that give the labelled rows the highest likelihood, together.

    Corrected log-probabilities are ``(log p - log prior) / T``. As for
    :func:`fit_temperature`, T is searched over log T, coarse then fine; for
    each T the bias is fitted by Newton's method on the log-loss, which is
    convex in it (the first class's bias stays 0: only differences matter).
    """
    label_ids = np.asarray(labels, dtype=int)
    logs = np.log(np.clip(np.asarray(probabilities, dtype=float), _FLOOR, 1.0))
    if len(label_ids) == 0:
        raise UsageError("fitting a bias needs labelled rows")
    onehot = np.eye(logs.shape[1])[label_ids]

    def fitted(log_t: float) -> tuple[float, np.ndarray]:
        scaled = logs / np.exp(log_t)
        bias = np.zeros(logs.shape[1])
        for _ in range(12):
            scores = scaled - bias
            scores -= scores.max(axis=1, keepdims=True)
            predicted = np.exp(scores)
            predicted /= predicted.sum(axis=1, keepdims=True)
            gradient = (onehot - predicted).mean(axis=0)[1:]  # of the mean log-loss, in the bias
            hessian = (
                np.einsum("ni,ij->nij", predicted, np.eye(len(bias))) - np.einsum("ni,nj->nij", predicted, predicted)
            ).mean(axis=0)[1:, 1:]
            step = np.linalg.solve(hessian + 1e-6 * np.eye(len(gradient)), gradient)
            bias[1:] -= np.clip(step, -5.0, 5.0)  # a bounded step: a class the rows never show has no finite optimum
        scores = scaled - bias
        scores -= scores.max(axis=1, keepdims=True)
        log_loss = float(-np.mean((scores - np.log(np.exp(scores).sum(axis=1, keepdims=True)))[onehot == 1]))
        return log_loss, bias

    grid = np.linspace(np.log(0.05), np.log(20.0), 61)
    best = min(grid, key=lambda log_t: fitted(log_t)[0])
    step = grid[1] - grid[0]
    log_t = min(np.linspace(best - step, best + step, 21), key=lambda value: fitted(value)[0])
    bias = fitted(log_t)[1]
    temperature = float(np.exp(log_t))
    prior = np.exp((bias - bias.max()) * temperature)  # (log p - log prior) / T = log p / T - bias
    return tuple((prior / prior.sum()).tolist()), temperature


def check_enough_rows(rows: int, folds: int, where: str = "") -> None:
    """Refuse fewer labelled rows than ``folds`` folds need (two each); ``where``: the data they came from."""
    if rows < folds * 2:
        raise OptionError(
            "cross-validation over {count} folds needs at least {least} labelled rows, got {rows}{where} "
            "(label more rows, or lower {folds})",
            count=folds,
            least=folds * 2,
            rows=rows,
            where=f" in {where}" if where else "",
        )


def calibration_error(
    probabilities: np.ndarray, labels: Sequence[int] | np.ndarray, bins: int = 10
) -> tuple[float, float]:
    """(expected calibration error of the top choice, accuracy of the top choice)."""
    probabilities = np.asarray(probabilities, dtype=float)
    label_ids = np.asarray(labels, dtype=int)
    top = probabilities.argmax(axis=1)
    confidence = probabilities.max(axis=1)
    right = top == label_ids
    edges = np.minimum((confidence * bins).astype(int), bins - 1)
    error = 0.0
    for b in range(bins):
        inside = edges == b
        if inside.any():
            error += inside.sum() * abs(confidence[inside].mean() - right[inside].mean())
    return float(error / len(label_ids)), float(right.mean())


@dataclass(frozen=True)
class Validation:
    """Held-out figures before and after the correction, over the folds, and whether to keep it."""

    before_ece: float
    after_ece: float
    before_accuracy: float
    after_accuracy: float
    folds: int

    @property
    def keep(self) -> bool:
        """Keep it only if held-out calibration and accuracy both did not get worse."""
        return self.after_ece <= self.before_ece and self.after_accuracy >= self.before_accuracy


def cross_validate(
    probabilities: np.ndarray,
    labels: Sequence[int],
    *,
    prior: Sequence[float] | None = None,
    fit: bool = True,
    fit_prior: bool = False,
    folds: int = 5,
    seed: int = 0,
    groups: Sequence[int] | None = None,
) -> Validation:
    """Held-out ECE and accuracy without and with the correction (``prior``, and a fitted T when ``fit``).

    ``fit_prior`` fits the prior too, with T, on the labels (:func:`fit_bias`) instead of taking ``prior``.

    The rows are shuffled once (``seed``) and split into ``folds``; each fold
    is measured with a temperature fitted on the others. Readouts that share
    a ``groups`` number (a pair's two orders) are held out together, so
    neither is fitted on while the other is measured.
    """
    probabilities = np.asarray(probabilities, dtype=float)
    label_ids = np.asarray(labels, dtype=int)
    group_ids = np.asarray(groups if groups is not None else range(len(label_ids)), dtype=int)
    members = np.unique(group_ids)
    check_enough_rows(len(members), folds)
    classes = tuple(str(i) for i in range(probabilities.shape[1]))
    shuffled = np.random.default_rng(seed).permutation(members)
    prior_tuple = tuple(prior) if prior is not None else None
    sizes, before, after = [], [], []  # per fold: readouts, (ECE, accuracy) without and with the correction
    for held_groups in np.array_split(shuffled, folds):
        inside = np.isin(group_ids, held_groups)
        held, train = np.flatnonzero(inside), np.flatnonzero(~inside)
        fold_prior: tuple[float, ...] | None
        if fit_prior:
            fold_prior, temperature = fit_bias(probabilities[train], label_ids[train])
        else:
            fold_prior = prior_tuple
            temperature = fit_temperature(probabilities[train], label_ids[train], prior=prior) if fit else 1.0
        corrected = apply_correction(probabilities[held], Correction(classes, fold_prior, temperature))
        sizes.append(len(held))
        before.append(calibration_error(probabilities[held], label_ids[held]))
        after.append(calibration_error(corrected, label_ids[held]))
    (before_ece, before_accuracy), (after_ece, after_accuracy) = (
        np.average(np.array(figures), axis=0, weights=sizes) for figures in (before, after)
    )
    return Validation(float(before_ece), float(after_ece), float(before_accuracy), float(after_accuracy), folds)


def value_key(text: str) -> str:
    """A value's JSON text in one spelling, so that 1, 1.0 and 1e0 name the same choice (and true stays true)."""
    value = json.loads(text)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(float(value))
    return json.dumps(value, ensure_ascii=False)


def correct(probabilities: Mapping[str, float], correction: Correction) -> dict[str, float]:
    """A verdict's probabilities (value text -> probability) corrected, by the correction's classes.

    Values match whatever their spelling (:func:`value_key`); one the readout left out counts as 0.
    """
    given = {value_key(text): float(p) for text, p in probabilities.items()}
    row = np.array([[given.get(value_key(name), 0.0) for name in correction.classes]])
    return dict(zip(correction.classes, apply_correction(row, correction)[0].tolist(), strict=True))


def gain_readout(gains: Mapping[str, float]) -> dict[str, float]:
    """A pair's likelihood gains as a readout over ``"A"`` and ``"B"`` (JSON text, as a verdict's values are).

    sigmoid(gain_A - gain_B): no probability until a calibration rescales it.
    """
    difference = gains["A"] - gains["B"]
    odds = math.exp(-abs(difference))  # the smaller side's odds: never overflows
    larger, smaller = 1 / (1 + odds), odds / (1 + odds)
    return {'"A"': larger, '"B"': smaller} if difference >= 0 else {'"A"': smaller, '"B"': larger}


def verdict_classes(json_schema: Mapping[str, Any], field: str) -> tuple[str, ...] | None:
    """The values a verdict field allows, as the readout spells them (JSON text); None when not a fixed set."""
    spec = (json_schema.get("properties") or {}).get(field)
    if not isinstance(spec, Mapping):
        return None
    if "enum" in spec:
        return tuple(json.dumps(value, ensure_ascii=False) for value in spec["enum"])
    if spec.get("type") == "boolean":
        return ("true", "false")
    return None


#: the corrections :func:`choose_correction` weighs: (divide out a prior, fit a temperature); the prior is the
#: content-free readout, except for the fitted bias, whose prior is fitted on the labels (FITTED_PRIOR)
CANDIDATES = {
    "contextual": (True, False),
    "temperature": (False, True),
    "contextual + temperature": (True, True),
    "bias + temperature": (True, True),
}
FITTED_PRIOR = frozenset({"bias + temperature"})


@dataclass(frozen=True)
class Fit:
    """What fitting found: each candidate's held-out figures, the one chosen (None: none helped) and its correction."""

    classes: tuple[str, ...]
    rows: int
    prior: tuple[float, ...] | None
    validations: dict[str, Validation]
    chosen: str | None
    correction: Correction | None


def choose_correction(
    probabilities: np.ndarray,
    labels: Sequence[int],
    classes: Sequence[str],
    *,
    prior: Sequence[float] | None = None,
    folds: int = 5,
    seed: int = 0,
    groups: Sequence[int] | None = None,
    only: Sequence[str] | None = None,
) -> Fit:
    """Cross-validate every candidate, keep the one with the lowest held-out ECE among those that did not hurt.

    The kept correction is then refitted on all rows. Without ``prior`` (no
    content-free readout) only the corrections fitted on the labels are weighed;
    with ``only``, only the candidates named there.
    """
    unknown = set(only or ()) - set(CANDIDATES)
    if unknown:
        raise UsageError(f"no such correction: {', '.join(sorted(unknown))}; the corrections: {', '.join(CANDIDATES)}")
    classes = tuple(classes)
    prior_tuple = None
    if prior is not None:  # a value the content-free readout never gave is floored, not divided by zero
        floored = np.clip(np.asarray(prior, dtype=float), PRIOR_FLOOR, None)
        prior_tuple = tuple((floored / floored.sum()).tolist())
    validations = {
        name: cross_validate(
            probabilities,
            labels,
            prior=prior_tuple if uses_prior else None,
            fit=fits,
            fit_prior=name in FITTED_PRIOR,
            folds=folds,
            seed=seed,
            groups=groups,
        )
        for name, (uses_prior, fits) in CANDIDATES.items()
        if (prior_tuple is not None or not uses_prior or name in FITTED_PRIOR) and (only is None or name in only)
    }
    kept = [name for name, validation in validations.items() if validation.keep]
    chosen = min(kept, key=lambda name: (validations[name].after_ece, -validations[name].after_accuracy), default=None)
    correction = None
    if chosen in FITTED_PRIOR:
        correction = Correction(classes, *fit_bias(probabilities, labels))
    elif chosen is not None:
        uses_prior, fits = CANDIDATES[chosen]
        given = prior_tuple if uses_prior else None
        temperature = fit_temperature(probabilities, labels, prior=given) if fits else 1.0
        correction = Correction(classes, given, temperature)
    return Fit(classes, len(labels), prior_tuple, validations, chosen, correction)
