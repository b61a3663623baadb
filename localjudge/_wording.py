"""Messages that name options by keyword, so that each caller shows them as it names them.

A library caller passes ``n_ctx=...`` and a command line ``--n-ctx``: a
message built here says ``n_ctx=`` when printed as it is, and the command
line renders it with its own flags, so nothing below it names one.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Any

__all__ = ["Message", "shown"]


class Message:
    """Text that names options by keyword, so that each caller can show them as it names them.

    In ``template`` a ``{placeholder}`` in ``values`` takes its value (as
    ``str.format`` would; a Message value is rendered with the same names).
    Any other names an option: :meth:`render` shows it as ``names`` says
    (``--n-ctx``), else by its keyword, ``n_ctx=``, or by the text after a
    colon: ``{n_ctx:n_ctx}`` shows ``n_ctx``, and
    ``{format_instructions:format_instructions=False}`` that text. Text with
    braces of its own (a path, JSON, a model's output) goes in ``values``.
    """

    def __init__(self, template: str, **values: Any) -> None:
        self.template, self.values = template, values
        fields = (name for _, name, _, _ in string.Formatter().parse(template) if name is not None)
        self.options = tuple(dict.fromkeys(name for name in fields if name not in values))

    def render(self, names: Mapping[str, str]) -> str:
        """The text with each option named as ``names`` says, else as a keyword."""
        formatter, parts = string.Formatter(), []
        for literal, name, spec, conversion in formatter.parse(self.template):
            parts.append(literal)
            if name is None:
                continue
            if name not in self.values:
                parts.append(names.get(name) or spec or f"{name}=")
                continue
            value = self.values[name]
            value = value.render(names) if isinstance(value, Message) else value
            parts.append(formatter.format_field(formatter.convert_field(value, conversion), spec or ""))
        return "".join(parts)

    def __str__(self) -> str:
        return self.render({})

    def __repr__(self) -> str:
        return f"Message({self.template!r}, **{self.values!r})"


def shown(text: str | Message, names: Mapping[str, str]) -> str:
    """``text`` as ``names`` name its options: a plain string as it is."""
    return text.render(names) if isinstance(text, Message) else text
