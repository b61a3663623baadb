"""Which of two outputs the judge model itself would rather have written, with no question asked of it.

A small judge asked to compare two answers is swayed by their order and
polish; as a language model it still knows which reply belongs to the
instruction. Each output is read twice as the assistant's reply, once after
the instruction and once after an empty request, and scored by how much the
instruction raises its likelihood, per token (pointwise mutual information
between the instruction and the reply). An answer to a neighbouring
question, or one that ignores a stated constraint, gains little from the
instruction however well written it is. The output that gains more wins.
Nothing is generated, so there is no verdict text to parse and no position
to prefer; it needs a client that scores replies (a local model, through
the ``score_reply`` request field).

A gain is no probability. The difference of the two, through a logistic
(:func:`~localjudge._trust.correction.gain_readout`), is the raw figure a calibration fits on labelled
pairs (``localjudge calibrate --pairwise --likelihood``); calibrated, the
result carries ``probabilities`` like any pair's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._clients.fallback import answering_client
from .._clients.formats import read_reply_logprobs
from .._prompts.messages import render_value
from .._prompts.prompting import SCORES
from ..errors import JudgeRuntimeError, UsageError
from ..types import JudgeRequest
from .core import JudgeCore
from .plan import Step

if TYPE_CHECKING:
    from .._trust.correction import Correction

__all__ = [
    "SHOWN",
    "LikelihoodPair",
    "calibrated_winner",
    "check_readings",
    "likelihood_gain",
    "pick_by_gain",
]

#: the only values a pair judged by likelihood shows the model
SHOWN = ("inputs", "outputs_a", "outputs_b")


def likelihood_gain(with_instruction: list[float], without: list[float]) -> float:
    """How much likelier, in nats per token, the instruction makes the reply (both readings score its tokens)."""
    return (sum(with_instruction) - sum(without)) / len(with_instruction)


def check_readings(readings: list[tuple[Any, list[float]]], backend: str) -> None:
    """Four readings of one pair must come from one model: the same tokens read twice for each reply.

    A fallback chain or pool could answer each reading from another member;
    gains mixed across models would mean nothing, so that is an error.
    """
    members = {answering_client(response) for response, _ in readings}
    counts = [len(figures) for _, figures in readings]
    if len(members) > 1 or counts[0] != counts[1] or counts[2] != counts[3]:
        raise JudgeRuntimeError(
            "The readings of one pair came from different models (answered by "
            f"{sorted(map(str, members))}, token counts {counts}): a likelihood judge needs one model "
            "to read all four",
            backend=backend,
        )


def pick_by_gain(gain_a: float, gain_b: float) -> str:
    """The output the instruction explains better; equal gains are a tie."""
    return "A" if gain_a > gain_b else "B" if gain_b > gain_a else "tie"


def calibrated_winner(gains: Mapping[str, float], correction: Correction) -> tuple[str, dict[str, float]]:
    """The side the calibrated readout favours (equal: the gains decide), and that readout."""
    from .._trust.correction import correct, gain_readout

    probabilities = {json.loads(side): p for side, p in correct(gain_readout(gains), correction).items()}
    if probabilities["A"] == probabilities["B"]:
        return pick_by_gain(gains["A"], gains["B"]), probabilities
    return max(probabilities, key=probabilities.__getitem__), probabilities


@dataclass
class LikelihoodPair:
    """A pairwise judge's plan that scores both outputs as replies instead of asking for a verdict.

    ``core`` supplies the client (with its result cache), the model name,
    the system message and the calibration; its prompt is not used.
    """

    core: JudgeCore

    def _request(self, request_text: str, reply: str) -> JudgeRequest:
        messages: list[dict[str, Any]] = (
            [] if self.core.system is None else [{"role": "system", "content": self.core.system}]
        )
        messages += [{"role": "user", "content": request_text}, {"role": "assistant", "content": reply}]
        request: JudgeRequest = {"messages": messages, "score_reply": True}
        if self.core.model is not None:
            request["model"] = self.core.model
        return request

    def plan(
        self, inputs: object, outputs_a: object, outputs_b: object, reference_outputs: object, kwargs: Mapping[str, Any]
    ) -> Step:
        """Four readings side by side: each output after the instruction and after an empty request.

        Other values (a row's label, its source) are not shown: the model reads the instruction and the reply alone.
        """
        if reference_outputs is not None:
            raise UsageError("A pair judged by likelihood shows no reference, and this one was given reference_outputs")
        instruction = "" if inputs is None else render_value(inputs)
        if not instruction.strip():
            raise UsageError(
                "A pair judged by likelihood scores each output as a reply to the instruction: give the instruction as inputs"
            )
        replies = {}
        for side, output in (("A", outputs_a), ("B", outputs_b)):
            if output is None:
                raise UsageError(f"outputs_{side.lower()} is missing: a pair needs both outputs")
            replies[side] = render_value(output)
            if not replies[side].strip():
                raise UsageError(f"outputs_{side.lower()} is empty: an empty reply has no likelihood to compare")
        responses = yield [self._request(text, replies[side]) for side in replies for text in (instruction, "")]
        backend = self.core.backend
        figures = [read_reply_logprobs(response, backend=backend) for response in responses]
        check_readings(list(zip(responses, figures, strict=True)), backend)
        gains = {"A": likelihood_gain(figures[0], figures[1]), "B": likelihood_gain(figures[2], figures[3])}
        winner = pick_by_gain(gains["A"], gains["B"])
        metadata: dict[str, Any] = {
            "winner": winner,
            "likelihood_gain": gains,
            "reply_tokens": {"A": len(figures[0]), "B": len(figures[2])},
        }
        if (member := answering_client(responses[0])) is not None:  # one member read all four (check_readings)
            metadata["client"] = member
        if self.core.calibration is not None:
            metadata["uncalibrated"] = {"winner": winner}
            winner, probabilities = calibrated_winner(gains, self.core.calibration)
            metadata.update(winner=winner, probabilities=probabilities, calibrated=True)
        return {"key": self.core.feedback_key, "score": SCORES[winner], "comment": None, "metadata": metadata}
