"""Shortening what a caller or a model gave before it goes into a message."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["clip"]


def clip(value: Any, limit: int = 500) -> str:
    """``value`` (its repr unless a string) cut at ``limit`` characters, saying how much was left out.

    An integer too long to print (Python refuses past 4,300 digits) is
    described by its size instead.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1000:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"
