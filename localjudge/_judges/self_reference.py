"""A reference the judge writes itself: asked first to answer the question, it then compares.

Without a reference, a judge must know the answer to tell a right one from a
wrong one, and a small judge asked "is this correct?" leans to yes: it
rarely works the question out. Asked instead to answer the question itself
(a plain chat call, greedy), and then whether the answer under judgement
says the same as its own, it compares two short texts, which it does well.
It can only be as right as its own answer, so the result's metadata carries
that answer (``self_reference``) for anyone who wants to see what the
verdict rests on. This is LLMBar's "self-generated reference" strategy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from .._prompts.messages import render_value
from .._wording import Message
from ..errors import UsageError
from ..types import JudgeRequest
from .written import read_written, written_request

__all__ = [
    "DEFAULT_SELF_REFERENCE_TOKENS",
    "SELF_REFERENCE_SYSTEM",
    "SelfReference",
    "own_answer_comment",
]

#: the longest answer the judge may write as its reference; a longer one is an error, never a cut reference
DEFAULT_SELF_REFERENCE_TOKENS = 256
SELF_REFERENCE_SYSTEM = "Answer the question correctly, as briefly as you can."


@dataclass(frozen=True)
class SelfReference:
    """How the judge is asked for its own answer: a system message and a bound on its length."""

    max_tokens: int = DEFAULT_SELF_REFERENCE_TOKENS
    system: str = SELF_REFERENCE_SYSTEM

    def request(self, inputs: object, model: Optional[str]) -> JudgeRequest:
        """The chat request for the judge's own answer to ``inputs``: free text, greedy, bounded."""
        if inputs is None:
            raise UsageError(
                Message(
                    "{self_reference:self_reference=True} has the judge answer the question itself, "
                    "and this call gives no inputs (the question) to answer"
                )
            )
        messages = [{"role": "system", "content": self.system}, {"role": "user", "content": render_value(inputs)}]
        return written_request(messages, max_tokens=self.max_tokens, model=model)

    def read(self, response: object, *, backend: str) -> str:
        """The judge's answer as the reference; cut or empty, an error with what it wrote."""
        return read_written(
            response,
            backend=backend,
            cut=f"The judge's own answer, written to judge against, was cut at its bound (at most {self.max_tokens} "
            "tokens, fewer where the context was full); a cut answer is no reference. Give reference_outputs, "
            "ask a question with a shorter answer, or judge without an own answer (the plain way).",
            empty="The judge wrote an empty answer to judge against",
        )


def own_answer_comment(result: object, own_answer: str) -> Any:
    """A true/false verdict given without reasoning, explained by what it rests on: the judge's own answer.

    Made from the verdict itself, so it can never state the opposite one.
    Any other result (one with reasoning, a score, a custom answer) is returned as it is.
    """
    if not isinstance(result, dict) or result.get("comment") is not None or not isinstance(result.get("score"), bool):
        return result
    agrees = "The same result as" if result["score"] else "A different result from"
    return {**result, "comment": f"{agrees} the judge's own answer: {own_answer}"}
