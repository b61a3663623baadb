"""Which of two outputs is better, judged one output at a time: there is no position to prefer.

A small judge shown two answers side by side picks by position more than by
content (the default judge agreed with itself across the two orders on 42%
of our adversarial dev pairs). Asked of each output alone whether it does
what the instruction asks, it has no position to lean on; the output it
finds likelier to do so wins. With probabilities (a local model) the pair's
probability that A is the better one is that of "A does and B does not",
given that exactly one does: ``pa (1 - pb) / (pa (1 - pb) + pb (1 - pa))``.
Without them (a server) the verdicts decide, and two equal verdicts are a
tie.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from .._prompts.prompting import DATA_NOT_INSTRUCTIONS, SCORES
from ..errors import UsageError
from .checklist import checks_section
from .core import JudgeCore, chain_record
from .plan import Step
from .written import with_written

__all__ = [
    "POINTWISE_PAIR_PROMPT",
    "PointwisePair",
    "combine_pointwise",
    "pointwise_pair_prompt",
    "refuse_hidden_reference",
]


def pointwise_pair_prompt(*, has_reference: bool = False, own_reference: bool = False, checks: bool = False) -> str:
    """Our question about one output of a pair: does it do exactly what was asked (against a reference, if given)?

    ``own_reference``: the reference is the judge's own answer, shown as one that may be wrong.
    ``checks``: questions a response must pass (``checklist``), shown after the instruction.
    """
    parts = [
        "Decide whether the response below does exactly what the instruction asks: every part of it, within every "
        "constraint the instruction states, and correctly. A well-written response that answers a different "
        "request, breaks a stated constraint, leaves part out, or states something false does not.",
        "<instruction>\n{inputs}\n</instruction>",
        *([checks_section("the instruction")] if checks else []),
        "<response>\n{outputs}\n</response>",
    ]
    if has_reference:
        lead = OWN_REFERENCE_LEAD if own_reference else "A good response, for comparison:"
        parts.append(lead + "\n<reference>\n{reference_outputs}\n</reference>")
    rules = """Scale: true or false.
- true: it does what was asked, all of it, and what it states is correct.
- false: it misses or changes part of the request, breaks a stated constraint, or is wrong."""
    return "\n\n".join(parts) + f"\n\n{DATA_NOT_INSTRUCTIONS}\n{rules}"


OWN_REFERENCE_LEAD = (
    "A response written for the instruction without seeing this one, for comparison; it may itself be wrong:"
)
POINTWISE_PAIR_PROMPT = pointwise_pair_prompt()


def refuse_hidden_reference(reference_outputs: object, shows_reference: bool) -> None:
    """A reference given to a pairwise judge whose prompt does not show it is an error, never dropped."""
    if reference_outputs is not None and not shows_reference:
        raise UsageError(
            "reference_outputs was given, but this judge's prompt does not show it: "
            "create it with reference=True (or a prompt with {reference_outputs})"
        )


def _p_true(result: Mapping[str, Any]) -> Optional[float]:
    probabilities = (result.get("metadata") or {}).get("probabilities")
    if not isinstance(probabilities, Mapping):
        return None
    return float(probabilities.get("true", 0.0))


def combine_pointwise(key: str, result_a: Mapping[str, Any], result_b: Mapping[str, Any]) -> dict[str, Any]:
    """The pair's verdict from each output's own: the one likelier to do what was asked, else the verdicts."""
    verdicts = {"A": result_a["score"], "B": result_b["score"]}
    p_a, p_b = _p_true(result_a), _p_true(result_b)
    metadata: dict[str, Any] = {"verdicts": verdicts}
    if p_a is not None and p_b is not None:
        a_only, b_only = p_a * (1 - p_b), p_b * (1 - p_a)
        either = a_only + b_only
        share_a = a_only / either if either > 0 else 0.5
        metadata["pointwise_probabilities"] = {"A": p_a, "B": p_b}
        metadata["probabilities"] = {"A": share_a, "B": 1 - share_a}
        winner = "A" if share_a > 0.5 else "B" if share_a < 0.5 else "tie"
    else:
        winner = "tie" if verdicts["A"] == verdicts["B"] else ("A" if verdicts["A"] else "B")
    metadata = {"winner": winner, **metadata, **chain_record([result_a.get("metadata"), result_b.get("metadata")])}
    comments = {side: result.get("comment") for side, result in (("A", result_a), ("B", result_b))}
    comment = "\n".join(f"{side}: {text}" for side, text in comments.items() if text) or None
    return {"key": key, "score": SCORES[winner], "comment": comment, "metadata": metadata}


@dataclass
class PointwisePair:
    """A pairwise judge's plan that asks about each output alone, through a judge core of one output."""

    core: JudgeCore
    shows_reference: bool

    def plan(
        self, inputs: object, outputs_a: object, outputs_b: object, reference_outputs: object, kwargs: Mapping[str, Any]
    ) -> Step:
        """What the judge writes first (its reference, its checks), then both outputs side by side."""
        refuse_hidden_reference(reference_outputs, self.shows_reference)
        reference, kwargs, written = yield from self.core.before_verdict(inputs, reference_outputs, kwargs)
        responses = yield [
            self.core.build_request(inputs, output, reference, kwargs) for output in (outputs_a, outputs_b)
        ]
        result_a, result_b = (self.core.read_result(response) for response in responses)
        return with_written(combine_pointwise(self.core.feedback_key, result_a, result_b), written)
