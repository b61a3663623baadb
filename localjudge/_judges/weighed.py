"""A pair judged two ways at once, and their figures weighed: the judge's checks side by side, and likelihood.

Side by side after the judge's own checks, the default judge is right on
most natural pairs and falls for pairs built to fool it; read by likelihood
it sees through those and is weaker on natural ones (docs/measurements.md,
"Pairs: the weighed way"). Both are asked in one step each plan shares (the
checks and the four readings, then both orders), and their figures go
through :class:`~localjudge._trust.pair_weights.PairWeights` into one P(A).
The result keeps what each said: ``checks_probabilities`` (both orders
averaged), ``likelihood_gain``, the orders' verdicts and the checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .._prompts.prompting import SCORES
from ..errors import JudgeRuntimeError
from .likelihood import LikelihoodPair
from .plan import Step, together

if TYPE_CHECKING:
    from .._trust.pair_weights import PairWeights
    from .core import JudgeCore

__all__ = ["PairPlan", "WeighedPair"]


class PairPlan(Protocol):
    """A way of judging a pair, as a plan over its core's client: what every pair method builds."""

    @property
    def core(self) -> JudgeCore: ...

    def plan(
        self, inputs: object, outputs_a: object, outputs_b: object, reference_outputs: object, kwargs: Mapping[str, Any]
    ) -> Step: ...


@dataclass
class WeighedPair:
    """The checks side by side (``side``) and the likelihood readings (``reading``), weighed by ``weights``."""

    side: PairPlan
    reading: LikelihoodPair
    weights: PairWeights

    @property
    def core(self) -> JudgeCore:
        return self.side.core

    def plan(
        self, inputs: object, outputs_a: object, outputs_b: object, reference_outputs: object, kwargs: Mapping[str, Any]
    ) -> Step:
        """Both ways side by side; a reference, if given, is shown to the checks' judge (likelihood reads none)."""
        from .._trust.pair_weights import PairSignals

        side, read = yield from together(
            self.side.plan(inputs, outputs_a, outputs_b, reference_outputs, kwargs),
            self.reading.plan(inputs, outputs_a, outputs_b, None, {}),
        )
        checked = (side["metadata"] or {}).get("probabilities")
        if not isinstance(checked, Mapping) or "A" not in checked:
            raise JudgeRuntimeError(
                "a weighed pair needs the judge's probabilities of its verdicts, and this answer came without them "
                "(only local models read them out)",
                backend=self.core.backend,
            )
        gains = read["metadata"]["likelihood_gain"]
        p_a = self.weights.probability_a(PairSignals(float(checked["A"]), float(gains["A"]), float(gains["B"])))
        winner = "A" if p_a > 0.5 else "B" if p_a < 0.5 else "tie"
        kept = {k: v for k, v in side["metadata"].items() if k not in ("winner", "probabilities", "decided_by")}
        metadata = {
            "winner": winner,
            "probabilities": {"A": p_a, "B": 1 - p_a},
            "checks_probabilities": dict(checked),
            "likelihood_gain": gains,
            "reply_tokens": read["metadata"]["reply_tokens"],
            **kept,
        }
        return {
            "key": self.core.feedback_key,
            "score": SCORES[winner],
            "comment": side["comment"],
            "metadata": metadata,
        }
