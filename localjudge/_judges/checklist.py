"""Checks the judge writes first: yes/no questions a response must pass to do what the request asks.

A small judge shown two answers tends to prefer the fuller, more polished
one, even where it ignores part of the request. Asked first, from the
request alone, for a few questions that test whether a response does
exactly what was asked, and shown them beside the answers, it weighs what
was asked. This is LLMBar's "metrics" strategy; on LLMBar's natural pairs
it gave the default judge 0.84 on the dev half and 0.70 held out, against
0.80 and 0.66 without (docs/measurements.md); on pairs built to fool judges it did not
help. The questions go into the prompt's ``{checks}`` and the result's
``metadata.checklist``; a row that carries its own ``checks`` is judged
with those, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from .._prompts.messages import render_value
from .._prompts.prompting import template_fields
from .._wording import Message
from ..errors import UsageError
from ..types import JudgeRequest, Prompt
from .written import read_written, written_request

__all__ = [
    "CHECKLIST_PROMPT",
    "CHECKS_FIELD",
    "DEFAULT_CHECKLIST_TOKENS",
    "Checklist",
    "checks_section",
    "given_checks",
    "refuse_hidden_checks",
]

#: the template field the checks are shown in, and the row value that brings a checklist of its own
CHECKS_FIELD = "checks"
#: the longest checklist the judge may write; a longer one is an error, never a cut list
DEFAULT_CHECKLIST_TOKENS = 160
CHECKLIST_PROMPT = (
    "Here is a request given to an assistant:\n\n<request>\n{inputs}\n</request>\n\n"
    "Write three short yes/no questions that check whether a response does exactly what this request asks "
    "(its task, every stated constraint, its form). One question per line, nothing else."
)


def checks_section(subject: str = "the request") -> str:
    """The prompt's section that shows the checks, for a prompt that calls the instruction ``subject``."""
    return f"<checks>\nQuestions a response must pass to do what {subject} asks:\n{{checks}}\n</checks>"


def given_checks(value: object) -> Optional[str]:
    """A call's own checks as the prompt shows them; None: the call gives none, so the judge writes them.

    Text is shown as it is (empty too: a content-free input shows empty
    checks), a list of questions one to a line; anything else is an error.
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(question, str) for question in value):
        return "\n".join(value)
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    raise UsageError(
        f"checks must be text (questions a response must pass, one per line) or a list of questions, got {shown}: "
        "give them so, or leave checks out so that the judge writes its own"
    )


def refuse_hidden_checks(kwargs: Mapping[str, Any], prompt: Prompt) -> None:
    """Checks given to a judge without a checklist whose prompt does not show them are an error, never dropped."""
    if CHECKS_FIELD in kwargs and isinstance(prompt, str) and CHECKS_FIELD not in template_fields(prompt):
        raise UsageError(  # plain words for both callers: a row's error is not rendered with flags
            "this call gives checks, and this judge's prompt does not show them: judge pairs with a checklist "
            "(checklist=True), or give a prompt with {checks}, or leave the checks out"
        )


@dataclass(frozen=True)
class Checklist:
    """How the judge is asked for its checks: the question and a bound on the answer's length."""

    max_tokens: int = DEFAULT_CHECKLIST_TOKENS
    prompt: str = CHECKLIST_PROMPT

    def request(self, inputs: object, model: Optional[str]) -> JudgeRequest:
        """The chat request for the checks of ``inputs``: free text, greedy, bounded."""
        if inputs is None:
            raise UsageError(
                Message(
                    "{checklist:checklist=True} has the judge write checks for the request, "
                    "and this call gives no inputs (the request) to write them for"
                )
            )
        content = self.prompt.replace("{inputs}", render_value(inputs))
        return written_request([{"role": "user", "content": content}], max_tokens=self.max_tokens, model=model)

    def read(self, response: object, *, backend: str) -> str:
        """The judge's checks; cut or empty, an error with what it wrote."""
        return read_written(
            response,
            backend=backend,
            cut=f"The judge's checks for the request were cut at their bound (at most {self.max_tokens} tokens, "
            "fewer where the context was full); a cut checklist is not shown. Give the call its own checks "
            "(a checks value or column, one question per line), or judge without a checklist.",
            empty="The judge wrote no checks for the request",
        )
