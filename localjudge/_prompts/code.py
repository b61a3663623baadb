"""Code out of an application's answer, before a judge sees it: the answer's text, its fenced blocks, a request.

OpenEvals' code judge reads an answer as text (a string, a message, or the
last of an agent's messages) and then takes the code out of it: as it is,
from its Markdown code blocks, or by asking a model. These are the pure
parts of that: the text, the blocks, and the request and reading of a model
asked for the code under a JSON schema (so its answer always parses).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional

from ..errors import UsageError
from .messages import is_langchain_message, langchain_to_openai, message_text

__all__ = [
    "EXTRACTION_SCHEMA",
    "EXTRACTION_SYSTEM",
    "SHELL_LANGUAGES",
    "extraction_messages",
    "final_output_text",
    "markdown_code",
]

#: code blocks in these languages are commands or data, not the program: left out, as OpenEvals leaves them out
SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "zsh", "fish", "console", "terminal", "json"})

_OPENING = re.compile(r"```(\w*)")
_CLOSING = "```"

EXTRACTION_SYSTEM = (
    "You copy program code out of a text, for a program checker that runs it exactly as you copy it.\n"
    "Copy every line of code, character for character, as one program: fix nothing, add nothing, even where it "
    "looks wrong. Leave out prose, installation steps and shell commands. If the text holds no code, answer with "
    "an empty code string."
)

#: what the model answers: the code, or "" for none (a local judge decodes under it, so it always parses)
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "code": {
            "type": "string",
            "description": "The code in the text, copied exactly; an empty string when the text holds no code.",
        }
    },
    "required": ["code"],
    "additionalProperties": False,
}


def extraction_messages(text: str) -> list[dict[str, str]]:
    """The chat messages that ask for the code in ``text`` (put in as it is: its braces stay text)."""
    return [
        {"role": "system", "content": EXTRACTION_SYSTEM},
        {"role": "user", "content": "Copy the code out of this text.\n\n<text>\n" + text + "\n</text>"},
    ]


def final_output_text(outputs: object) -> Any:
    """The text of an application's final answer, read as OpenEvals' code judge reads it.

    A string as it is; a message dict (with ``role`` and ``content``) its
    content; a dict with ``messages`` the content of the last one. Anything
    else is refused (a ``ValueError``, as OpenEvals raises), saying what to give.
    """
    if isinstance(outputs, str):
        return outputs
    if isinstance(outputs, Mapping):
        if "content" in outputs:
            return _content(outputs)
        messages = outputs.get("messages")
        if isinstance(messages, list):
            if not messages:
                raise UsageError("outputs has an empty list of messages: there is no final answer to judge")
            last = messages[-1]
            return _content(langchain_to_openai(last) if is_langchain_message(last) else last)
        raise UsageError(
            f"outputs is a dict with neither 'content' nor a list of 'messages' (its keys: {sorted(map(str, outputs))}); "
            "give the answer as a string, a message dict, or {'messages': [...]}"
        )
    raise UsageError(
        f"outputs must be the answer as a string, a message dict or {{'messages': [...]}}, got {type(outputs).__name__}"
    )


def _content(message: object) -> Any:
    """A message's content: a string as it is, text blocks joined; a message needs a role and content."""
    if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
        raise UsageError(f"a message must be a dict with 'role' and 'content', got {message!r}")
    content = message["content"]
    return message_text(message) if isinstance(content, list) else content


def markdown_code(text: str) -> Optional[str]:
    """The code of ``text``'s fenced Markdown blocks, joined by newlines; None when it has none.

    A block opens with a line of three backticks and an optional language
    word, and closes at the next line of exactly three backticks. Blocks in a
    shell or data language (:data:`SHELL_LANGUAGES`) are left out. Each
    block's code keeps the newline that ends its last line.
    """
    lines = text.split("\n")
    blocks: list[str] = []
    start = 0
    while start < len(lines) - 1:  # an opening line needs a line after it
        opening = _OPENING.fullmatch(lines[start])
        close = _closing_line(lines, start + 1) if opening else None
        if opening is None or close is None:
            start += 1
            continue
        if opening.group(1) not in SHELL_LANGUAGES:
            blocks.append("".join(line + "\n" for line in lines[start + 1 : close]))
        start = close + 1
    return "\n".join(blocks) if blocks else None


def _closing_line(lines: list[str], start: int) -> Optional[int]:
    return next((number for number in range(start, len(lines)) if lines[number] == _CLOSING), None)
