"""Shortening what a caller or a model gave before it goes into a message."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["clip", "lone_surrogate", "surrogate_message"]

#: the code points of UTF-16's surrogate halves: in a str, a byte that was not UTF-8 (surrogateescape) or half a pair
_SURROGATES = re.compile("[\ud800-\udfff]")


def clip(value: Any, limit: int = 500) -> str:
    """``value`` (its repr unless a string) cut at ``limit`` characters, saying how much was left out.

    An integer too long to print (Python refuses past 4,300 digits) is
    described by its size instead.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1000:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def lone_surrogate(value: Any, name: str, depth: int = 0) -> tuple[str, int, str] | None:
    """The first lone surrogate in ``value`` (a string, or inside lists and mappings): (where, index, character).

    ``where`` names it from ``name`` down (``outputs[1].content``). No UTF-8
    text holds one: it is a byte that was not UTF-8 (decoded with
    ``surrogateescape``) or half of a pair, and encoding it would fail deep
    inside a model's tokenizer.
    """
    if isinstance(value, str):
        found = _SURROGATES.search(value)
        return None if found is None else (name, found.start(), found.group())
    if depth > 64:
        return None
    if isinstance(value, Mapping):
        items: Any = ((f"{name}.{key}", inner) for key, inner in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{name}[{number}]", inner) for number, inner in enumerate(value))
    else:
        return None
    for where, inner in items:
        found_inside = lone_surrogate(inner, where, depth + 1)
        if found_inside is not None:
            return found_inside
    return None


def surrogate_message(found: tuple[str, int, str]) -> str:
    """What a lone surrogate found by :func:`lone_surrogate` means, for an error message (the byte, if one)."""
    where, index, character = found
    code = ord(character)
    what = (
        f"the byte 0x{code - 0xDC00:02X}, which is not UTF-8" if 0xDC80 <= code <= 0xDCFF else "half a surrogate pair"
    )
    return f"{where} is not UTF-8 text: character {index + 1} is {what} ({character!r}); give text in UTF-8"
