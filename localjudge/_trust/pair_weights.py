"""Two figures for one pair, weighed into one probability: the weights, their fit, and the file that ships them.

A pair judged side by side after the judge's own checks gives P(A), both
orders averaged; read by likelihood it gives each answer's gain from the
instruction. Each is right where the other fails (docs/measurements.md, "Pairs:
the weighed way"), so neither alone is a default for pairs. A logistic over the
two, ``w_checks * logit(P(A)) + w_gain * (gain_A - gain_B)``, has no
intercept: a pair and its mirror (A and B swapped) get mirrored
probabilities, so no position is preferred. Its two weights are fitted on
labelled pairs (dev rows only) by :func:`fit_pair_weights`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

__all__ = ["SHIPPED_PAIR_WEIGHTS", "PairSignals", "PairWeights", "fit_pair_weights", "read_pair_weights"]

#: the weights that ship for the default judge, fitted by ``make pair-weights`` on the check sets' dev pairs
SHIPPED_PAIR_WEIGHTS = Path(__file__).with_name("shipped") / "pair-weights.json"
_CLIP = 1e-4  # a probability this close to 0 or 1 is read as this far from it: one verdict cannot outvote all


@dataclass(frozen=True)
class PairSignals:
    """What the two ways said of a pair: the checklist's P(A), both orders averaged, and each side's gain."""

    checks_p_a: float
    gain_a: float
    gain_b: float

    def features(self) -> tuple[float, float]:
        p = min(max(self.checks_p_a, _CLIP), 1 - _CLIP)
        return math.log(p / (1 - p)), self.gain_a - self.gain_b

    def mirrored(self) -> PairSignals:
        return PairSignals(1 - self.checks_p_a, self.gain_b, self.gain_a)


@dataclass(frozen=True)
class PairWeights:
    """The weights of the two figures; ``about`` says what they were fitted on."""

    checks: float
    gain: float
    about: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def probability_a(self, signals: PairSignals) -> float:
        """P(A is the better answer)."""
        log_odds, gain = signals.features()
        z = self.checks * log_odds + self.gain * gain
        return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))

    def fitted_for(self, model: str | None) -> bool:
        """Whether these weights were fitted on the verdicts of the model whose identity (sha256) is ``model``."""
        fitted = self.about.get("model_sha256")
        return fitted is None or fitted == model

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2, sort_keys=True) + "\n", encoding="utf-8")


def read_pair_weights(path: Path = SHIPPED_PAIR_WEIGHTS) -> PairWeights:
    """Weights from a file :meth:`PairWeights.write` wrote; an unreadable one is an error that names it."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        return PairWeights(float(document["checks"]), float(document["gain"]), dict(document.get("about") or {}))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"{path} holds no pair weights ({exc}); write them with make pair-weights") from exc


def fit_pair_weights(
    samples: Sequence[tuple[PairSignals, bool]], *, ridge: float = 1.0, about: Mapping[str, Any] | None = None
) -> PairWeights:
    """The weights that best predict which side won (``True``: A), each pair counted with its mirror.

    Logistic regression without intercept, by Newton's method, with a small
    ridge so that pairs one figure separates perfectly do not send its weight
    to infinity.
    """
    import numpy as np

    if not samples:
        raise UsageError("no labelled pairs to fit the pair weights on")
    rows, targets = [], []
    for signals, a_won in samples:
        for seen, won in ((signals, a_won), (signals.mirrored(), not a_won)):
            rows.append(seen.features())
            targets.append(1.0 if won else 0.0)
    x, y = np.asarray(rows, dtype=float), np.asarray(targets)
    w = np.zeros(2)
    for _ in range(100):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + ridge * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + ridge * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return PairWeights(float(w[0]), float(w[1]), dict(about or {}, pairs=len(samples)))
