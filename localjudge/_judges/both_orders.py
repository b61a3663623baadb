"""Both orders side by side: each pair asked A before B and B before A, so the answer's position cannot decide.

A judge model tends to prefer the answer it reads first (or last). The
verdict stands only when both orders agree, and is a tie otherwise (or, asked
so, goes to the side the judge found likelier over both orders).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from .._prompts.prompting import SCORES, SWAP
from ..types import JudgeRequest
from .core import JudgeCore, chain_record, recalibrate, response_metadata
from .plan import Step
from .pointwise import refuse_hidden_reference
from .written import with_written

__all__ = ["BothOrders", "OrderVerdict", "combine_orders", "read_order"]


@dataclass(frozen=True)
class OrderVerdict:
    """One order's answer, turned back into the caller's A and B."""

    winner: str
    reasoning: Optional[str]
    probabilities: Optional[dict[str, float]]


def read_order(parsed: Mapping[str, Any], metadata: Optional[Mapping[str, Any]], swapped: bool) -> OrderVerdict:
    """An answer given with the outputs in the order (B, A) speaks of them swapped: swap its A and B back."""
    swap = SWAP if swapped else {name: name for name in SWAP}
    probabilities = None
    raw = (metadata or {}).get("probabilities")
    if isinstance(raw, Mapping):
        values = {json.loads(value): float(p) for value, p in raw.items()}
        probabilities = {swap[value]: p for value, p in values.items() if value in swap}
    return OrderVerdict(swap[parsed["winner"]], parsed.get("reasoning"), probabilities)


def combine_orders(key: str, first: OrderVerdict, second: OrderVerdict, on_disagreement: str = "tie") -> dict[str, Any]:
    """The pair's verdict: what both orders said, else a tie, with both orders' verdicts and reasoning kept.

    With ``on_disagreement="probabilities"`` a pair whose orders disagree goes
    to the side whose probability, averaged over both orders, is higher
    (``metadata.decided_by``); it stays a tie without probabilities (a remote
    judge) or when they are even.
    """
    consistent = first.winner == second.winner
    winner = first.winner if consistent else "tie"
    metadata: dict[str, Any] = {
        "winner": winner,
        "consistent": consistent,
        "verdicts": [first.winner, second.winner],
    }
    if first.probabilities is not None and second.probabilities is not None:
        sides = sorted(set(first.probabilities) | set(second.probabilities), key=list(SCORES).index)
        averaged = {
            side: (first.probabilities.get(side, 0.0) + second.probabilities.get(side, 0.0)) / 2 for side in sides
        }
        metadata["probabilities"] = averaged
        ranked = sorted(averaged.values(), reverse=True)
        if not consistent and on_disagreement == "probabilities" and (len(ranked) < 2 or ranked[0] > ranked[1]):
            winner = metadata["winner"] = max(averaged, key=averaged.__getitem__)
            metadata["decided_by"] = "probabilities"
    comment = None
    if first.reasoning is not None or second.reasoning is not None:
        comment = f"A then B: {first.reasoning}\nB then A: {second.reasoning}"
    return {"key": key, "score": SCORES[winner], "comment": comment, "metadata": metadata}


@dataclass
class BothOrders:
    """A pair asked in both orders side by side, after what the judge writes first (its answer, its checks)."""

    core: JudgeCore
    shows_reference: bool  # False: our prompt without the reference, which must not be dropped silently
    on_disagreement: str = "tie"

    def requests(
        self, inputs: object, outputs_a: object, outputs_b: object, reference_outputs: object, kwargs: Mapping[str, Any]
    ) -> list[JudgeRequest]:
        refuse_hidden_reference(reference_outputs, self.shows_reference)
        forward = {**kwargs, "outputs_a": outputs_a, "outputs_b": outputs_b}
        backward = {**kwargs, "outputs_a": outputs_b, "outputs_b": outputs_a}
        return [self.core.build_request(inputs, None, reference_outputs, values) for values in (forward, backward)]

    def plan(
        self, inputs: object, outputs_a: object, outputs_b: object, reference_outputs: object, kwargs: Mapping[str, Any]
    ) -> Step:
        """One pair judged: what the judge writes first (its reference, its checks), then both orders side by side."""
        reference, kwargs, written = yield from self.core.before_verdict(inputs, reference_outputs, kwargs)
        responses = yield self.requests(inputs, outputs_a, outputs_b, reference, kwargs)
        return with_written(self.read(responses), written)

    def read(self, responses: list[Any]) -> dict[str, Any]:
        answers = [(self.core.read_parsed(r), response_metadata(r, "winner")) for r in responses]
        seen = [_positions(metadata) for _, metadata in answers]
        chain = chain_record([metadata for _, metadata in answers])  # by order, as order_probabilities
        uncalibrated = None
        if self.core.calibration is not None:
            uncalibrated = [parsed["winner"] for parsed, _ in answers]  # as each order saw them
            answers = [
                recalibrate(parsed, metadata, "winner", self.core.calibration, backend=self.core.backend)
                for parsed, metadata in answers
            ]
        first, second = (
            read_order(parsed, metadata, swapped)
            for (parsed, metadata), swapped in zip(answers, (False, True), strict=True)
        )
        result = combine_orders(self.core.feedback_key, first, second, self.on_disagreement)
        result["metadata"].update(chain)
        if all(probabilities is not None for probabilities in seen):
            result["metadata"]["order_probabilities"] = seen
        if uncalibrated is not None:
            result["metadata"]["calibrated"] = True
            result["metadata"]["uncalibrated_verdicts"] = [uncalibrated[0], SWAP[uncalibrated[1]]]
        return result


def _positions(metadata: Optional[Mapping[str, Any]]) -> Optional[dict[str, float]]:
    """One order's own probabilities, by position: A is the answer it showed first (what calibration corrects)."""
    raw = (metadata or {}).get("probabilities")
    if not isinstance(raw, Mapping):
        return None
    return {json.loads(value): float(p) for value, p in raw.items()}
