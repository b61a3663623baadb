"""JSON from outside the process, parsed with bounds on how deep it nests and how long a number is.

Data rows, remote replies, cache entries, calibration and few-shot files,
the server's bodies and model outputs all come from somewhere we do not
control. Python's parser gives up with a ``RecursionError`` near 1,000
levels, and a value just under that passes the parser but breaks whatever
walks it next (a copy, a schema check, a prompt). So depth is checked here,
once, at the edge: past :data:`MAX_DEPTH` the text is refused with a
:class:`JSONLimitError`, as is an integer of more digits than Python turns
into a number (4,300), which ``json`` reports as a bare ``ValueError``.
:class:`JSONLimitError` is a ``json.JSONDecodeError``, so every caller that
already turns bad JSON into its own error (a row's, a client's, a 400) does
the same for these, with no second ``except``.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["MAX_DEPTH", "JSONLimitError", "depth", "loads", "raw_decode"]

#: levels of nested arrays and objects; no judge input, answer or file of ours needs a tenth of it
MAX_DEPTH = 64

_DECODER = json.JSONDecoder()


class JSONLimitError(json.JSONDecodeError):
    """JSON past the bounds we accept: nested too deep, a number too long, or NaN where it is refused."""


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH, allow_nan: bool = True) -> Any:
    """``json.loads``, refusing values nested more than ``max_depth`` levels (and NaN or Infinity, unless allowed)."""
    with _parsing(text, max_depth):
        value = json.loads(text, parse_constant=None if allow_nan else _refuse_constant)
    return _checked(value, text, max_depth)


def raw_decode(text: str, start: int = 0, *, max_depth: int = MAX_DEPTH) -> tuple[Any, int]:
    """``JSONDecoder.raw_decode`` (the first value from ``start``, and where it ends), with the same bound."""
    with _parsing(text, max_depth):
        value, end = _DECODER.raw_decode(text, start)
    return _checked(value, text, max_depth), end


@contextlib.contextmanager
def _parsing(text: str | bytes, max_depth: int) -> Iterator[None]:
    """What the parser gives up with, as a :class:`JSONLimitError`: too deep to recurse, a number too long."""
    try:
        yield
    except RecursionError:
        raise _too_deep(text, max_depth) from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise
        limit = sys.get_int_max_str_digits()
        why = f"an integer of more than {limit:,} digits" if "integer string conversion" in str(exc) else str(exc)
        raise _refused(text, f"a value JSON cannot hold here: {why}") from None


def depth(value: Any) -> int:
    """How many levels of arrays and objects ``value`` nests (a scalar: 0), without recursing."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def _checked(value: Any, text: str | bytes, max_depth: int) -> Any:
    if isinstance(value, (dict, list)) and depth(value) > max_depth:
        raise _too_deep(text, max_depth)
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _too_deep(text: str | bytes, max_depth: int) -> JSONLimitError:
    return _refused(text, f"nested more than {max_depth} levels deep")


def _refused(text: str | bytes, why: str) -> JSONLimitError:
    return JSONLimitError(why, text if isinstance(text, str) else "", 0)
