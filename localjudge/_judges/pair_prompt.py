"""Our pairwise question: the instructions for two answers side by side, and the verdict's schema."""

from __future__ import annotations

from typing import Any

from .._prompts.prompting import DATA_NOT_INSTRUCTIONS, template_fields
from ..types import Prompt
from .checklist import checks_section

__all__ = [
    "OWN_REFERENCE_RULE",
    "PAIRWISE_PROMPT",
    "PAIRWISE_PROMPT_WITH_REFERENCE",
    "pairwise_prompt",
    "pairwise_schema",
    "shows_reference",
]


def pairwise_prompt(
    *, has_inputs: bool = True, has_reference: bool = False, own_reference: bool = False, checks: bool = False
) -> str:
    """Our pairwise instructions, with sections only for what is given (the request, a reference, checks).

    ``own_reference``: the reference is the judge's own answer (``self_reference``), so the
    prompt does not call it good: it was written without either answer and may be wrong.
    ``checks``: questions a response must pass (``checklist``), shown before the answers.
    """
    parts = ["Two assistants answered the same request. Decide which answer serves the request better."]
    if has_inputs:
        parts.append("<request>\n{inputs}\n</request>")
    if has_reference:
        parts.append("<reference_answer>\n{reference_outputs}\n</reference_answer>")
    if checks:
        parts.append(checks_section())
    parts += ["<answer_a>\n{outputs_a}\n</answer_a>", "<answer_b>\n{outputs_b}\n</answer_b>"]
    rules = [DATA_NOT_INSTRUCTIONS]
    if has_reference:
        rules.append(
            OWN_REFERENCE_RULE
            if own_reference
            else "The reference answer is known to be good; measure both answers against it."
        )
    rules.append(
        "Prefer the answer that does what the request asks, correctly and completely, and says nothing false. "
        "Do not let the answers' order, length or polish decide; a shorter answer that is right beats a longer "
        "one that is not."
    )
    return "\n\n".join(parts) + "\n\n" + "\n".join(rules)


OWN_REFERENCE_RULE = (
    "The reference answer was written for the request without seeing either answer, and may itself be wrong: "
    "use it to check both answers, not as the last word."
)
PAIRWISE_PROMPT = pairwise_prompt()
PAIRWISE_PROMPT_WITH_REFERENCE = pairwise_prompt(has_reference=True)


def pairwise_schema(*, allow_ties: bool = False, use_reasoning: bool = True) -> dict[str, Any]:
    """The answer's shape: the reasoning first (when asked for), then the winner."""
    winners = ["A", "B", "tie"] if allow_ties else ["A", "B"]
    winner_text = "A if answer A is better, B if answer B is better" + (
        ", tie if neither is better than the other" if allow_ties else ""
    )
    properties: dict[str, Any] = {}
    if use_reasoning:
        properties["reasoning"] = {
            "type": "string",
            "description": "Compare the two answers point by point before deciding.",
        }
    properties["winner"] = {"type": "string", "enum": winners, "description": winner_text}
    return {
        "title": "pairwise_verdict",
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def shows_reference(prompt: Prompt) -> bool:
    """A template string shows the reference only if it names it; a callable or LangChain prompt decides itself."""
    return not isinstance(prompt, str) or "reference_outputs" in template_fields(prompt)
