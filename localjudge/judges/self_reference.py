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

from ..clients.base import read_choice
from ..errors import OutputParseError, TruncatedOutputError, UsageError
from ..prompts.messages import render_value
from ..wording import Message
from .plan import Step

__all__ = [
    "DEFAULT_SELF_REFERENCE_TOKENS",
    "SELF_REFERENCE_SYSTEM",
    "SelfReference",
    "with_self_reference",
]

#: the longest answer the judge may write as its reference; a longer one is an error, never a cut reference
DEFAULT_SELF_REFERENCE_TOKENS = 256
SELF_REFERENCE_SYSTEM = "Answer the question correctly, as briefly as you can."


@dataclass(frozen=True)
class SelfReference:
    """How the judge is asked for its own answer: a system message and a bound on its length."""

    max_tokens: int = DEFAULT_SELF_REFERENCE_TOKENS
    system: str = SELF_REFERENCE_SYSTEM

    def request(self, inputs: Any, model: Optional[str]) -> dict[str, Any]:
        """The chat request for the judge's own answer to ``inputs``: free text, greedy, bounded."""
        if inputs is None:
            raise UsageError(
                Message(
                    "{self_reference:self_reference=True} has the judge answer the question itself, "
                    "and this call gives no inputs (the question) to answer"
                )
            )
        request: dict[str, Any] = {
            "messages": [
                {"role": "system", "content": self.system},
                {"role": "user", "content": render_value(inputs)},
            ],
            "temperature": 0,
            "max_tokens": self.max_tokens,
        }
        if model is not None:
            request["model"] = model
        return request

    def read(self, response: Any, *, backend: str) -> str:
        """The judge's answer as the reference; cut or empty, an error with what it wrote."""
        content, finish_reason = read_choice(response)
        text = (content or "").strip()
        if finish_reason == "length":
            raise TruncatedOutputError(
                f"The judge's own answer, written to judge against, was cut at its bound (at most {self.max_tokens} "
                "tokens, fewer where the context was full); a cut answer is no reference. Give reference_outputs, "
                "or ask a question with a shorter answer.",
                raw_output=content or "",
                backend=backend,
            )
        if not text:
            raise OutputParseError(
                "The judge wrote an empty answer to judge against", raw_output=content or "", backend=backend
            )
        return text

    def step(self, inputs: Any, reference_outputs: Any, *, model: Optional[str], backend: str) -> Step:
        """The reference a judge shows: the one given, else (one request) the judge's own; and what it wrote, if any."""
        if reference_outputs is not None:
            return reference_outputs, None
        (response,) = yield [self.request(inputs, model)]
        written = self.read(response, backend=backend)
        return written, written


def with_self_reference(result: Any, written: Optional[str]) -> Any:
    """The result with the judge's own answer in its metadata, where it has metadata (our score dict)."""
    if written is None or not isinstance(result, dict) or "metadata" not in result:
        return result
    return {**result, "metadata": {**(result["metadata"] or {}), "self_reference": written}}
