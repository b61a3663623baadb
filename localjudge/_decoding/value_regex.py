"""Regexes of single JSON values: strings, numbers and literals, and "any JSON".

:mod:`.schema_regex` walks a schema and joins these; each pattern here is
compact JSON as ``json.dumps(..., separators=(",", ":"))`` writes it, in the
regex subset that Python's ``re`` and outlines-core share. A bound these
patterns cannot hold is refused with :func:`refusal`, naming the keyword.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, TypeGuard, overload

from .._prompts.schema import stated_bounds
from ..errors import UnsupportedSchemaError
from .schema_limits import SchemaLimits

__all__ = [
    "BOOLEAN",
    "GENERIC_DEPTH",
    "MAX_FRACTION_DIGITS",
    "MAX_INT_DIGITS",
    "NULL",
    "STRING",
    "STRING_CHAR",
    "alternatives",
    "any_json_object",
    "any_json_value",
    "count",
    "json_type",
    "literal",
    "number_regex",
    "refusal",
    "string_regex",
]

MAX_FRACTION_DIGITS = 6
MAX_INT_DIGITS = 15
MAX_ENUMERATED_INTEGERS = 1000
MAX_BOUNDED_NUMBER_SPAN = 100
# "Any JSON" (plain json_object, a schema of {} or true) is written as a flat
# object of scalars: each level of nesting multiplies the regex's states, and
# the token index costs ~25 ms per state over a 262k vocabulary (measured: flat
# 2 s, one level 7 s, two levels 36 s). A flat object is still valid output.
GENERIC_DEPTH = 0

# One character of a JSON string: anything but quote, backslash and control
# characters, or a simple escape. \uXXXX escapes are left out: they can spell
# lone surrogates, which decode to strings that cannot be printed.
STRING_CHAR = r'([^"\\\x00-\x1f\x7f]|\\["\\/bfnrt])'
STRING = f'"{STRING_CHAR}*"'
INTEGER = rf"-?(0|[1-9][0-9]{{0,{MAX_INT_DIGITS - 1}}})"
FRACTION = rf"(\.[0-9]{{1,{MAX_FRACTION_DIGITS}}})?"
NUMBER = INTEGER + FRACTION
BOOLEAN = "(true|false)"
NULL = "null"

_REGEX_META = set(r"\.+*?()|[]{}^$")


def refusal(message: str, path: str, keyword: str) -> UnsupportedSchemaError:
    """The error for a keyword that local constrained decoding cannot enforce."""
    return UnsupportedSchemaError(
        f"Schema keyword {keyword!r} cannot be enforced by local constrained decoding: {message}",
        path=path,
        keyword=keyword,
    )


def _escape(text: str) -> str:
    out = []
    for ch in text:
        if ch in _REGEX_META:
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return "".join(out)


def literal(value: object) -> str:
    """The regex for one JSON value written exactly as ``json.dumps`` prints it."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("not finite")
    return _escape(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def alternatives(parts: list[str]) -> str:
    unique = list(dict.fromkeys(parts))
    return unique[0] if len(unique) == 1 else "(" + "|".join(unique) + ")"


def _is_number(value: object) -> TypeGuard[float]:
    """An int or a float, not a bool (which Python counts as an int)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def string_regex(schema: Mapping[str, Any], path: str, limits: SchemaLimits) -> str:
    """A string, of the schema's lengths."""
    low = count(schema, "minLength", path, 0)
    high = count(schema, "maxLength", path, None)
    for keyword, bound in (("minLength", low), ("maxLength", high)):
        limits.check("length_bound", bound or 0, path=path, keyword=keyword, why="characters")
    if high is None and low == 0:
        return STRING
    if high is not None and high < low:
        raise UnsupportedSchemaError("maxLength < minLength admits nothing", path=path, keyword="maxLength")
    return f'"{STRING_CHAR}{{{low},{"" if high is None else high}}}"'


def number_regex(schema: Mapping[str, Any], path: str, *, integer: bool) -> str:
    """A number or an integer within the bounds the schema states (see :func:`stated_bounds`)."""
    stated_low, stated_high = stated_bounds(schema)
    low, high = _bound(stated_low, "minimum", path), _bound(stated_high, "maximum", path)
    if low is not None and high is not None and high < low:
        raise UnsupportedSchemaError("maximum < minimum admits nothing", path=path, keyword="maximum")
    if integer:
        return _bounded_integer(low, high, path)
    if low is None and high is None:
        return NUMBER
    return _bounded_number(low, high, path)


def _bound(value: object, key: str, path: str) -> float | None:
    """A stated bound: a number or None; anything else is refused, naming ``key``."""
    if value is not None and not _is_number(value):
        raise UnsupportedSchemaError(f"{key} must be a number", path=path, keyword=key)
    return value


def _bounded_integer(low: float | None, high: float | None, path: str) -> str:
    lo = None if low is None else math.ceil(low)
    hi = None if high is None else math.floor(high)
    if lo is None and hi is None:
        return INTEGER
    if lo is not None and hi is not None:
        if hi - lo + 1 > MAX_ENUMERATED_INTEGERS:
            raise refusal(f"integer ranges wider than {MAX_ENUMERATED_INTEGERS} values", path, "maximum")
        return alternatives([str(v) for v in range(lo, hi + 1)])
    if hi is None and lo in (0, 1):
        tail = f"[0-9]{{0,{MAX_INT_DIGITS - 1}}}"
        return f"(0|[1-9]{tail})" if lo == 0 else f"[1-9]{tail}"
    keyword = "minimum" if hi is None else "maximum"
    raise refusal("a one-sided integer bound is supported only as minimum 0 or 1", path, keyword)


def _bounded_number(low: float | None, high: float | None, path: str) -> str:
    if low is not None and high is None and low == 0:
        return f"(0|[1-9][0-9]{{0,{MAX_INT_DIGITS - 1}}}){FRACTION}"
    if low is None or high is None:
        keyword = "maximum" if low is not None else "minimum"
        raise refusal("a one-sided number bound is supported only as minimum 0", path, keyword)
    if low != int(low) or high != int(high) or low < 0:
        raise refusal("number bounds must be whole numbers >= 0 (like 0..1 or 1..5)", path, "minimum")
    lo, hi = int(low), int(high)
    if hi - lo > MAX_BOUNDED_NUMBER_SPAN:
        raise refusal(f"number ranges wider than {MAX_BOUNDED_NUMBER_SPAN}", path, "maximum")
    frac = FRACTION
    exact_top = f"{hi}(\\.0{{1,{MAX_FRACTION_DIGITS}}})?"
    if lo == hi:
        return exact_top
    below = str(lo) if hi - lo == 1 else alternatives([str(v) for v in range(lo, hi)])
    return f"({below}{frac}|{exact_top})"


def any_json_value(depth: int = GENERIC_DEPTH) -> str:
    """Any JSON value, nested ``depth`` levels at most."""
    # Plain digit runs here: the bounded number adds a dozen states per nesting
    # level, and the index cost grows with the number of states.
    parts = [STRING, r"-?(0|[1-9][0-9]*)(\.[0-9]+)?", BOOLEAN, NULL]
    if depth > 0:
        parts += [any_json_object(depth - 1), _any_json_array(depth - 1)]
    return "(" + "|".join(parts) + ")"


def any_json_object(depth: int = GENERIC_DEPTH) -> str:
    """Any JSON object, nested ``depth`` levels at most."""
    member = f"{STRING}:{any_json_value(depth)}"
    return rf"\{{({member}(,{member})*)?\}}"


def _any_json_array(depth: int) -> str:
    value = any_json_value(depth)
    return rf"\[({value}(,{value})*)?\]"


@overload
def count(schema: Mapping[str, Any], key: str, path: str, default: int) -> int: ...
@overload
def count(schema: Mapping[str, Any], key: str, path: str, default: None) -> int | None: ...
def count(schema: Mapping[str, Any], key: str, path: str, default: int | None) -> int | None:
    """A count keyword's value (``minItems``, ``maxLength``, ...); absent, ``default`` (None: unbounded)."""
    value = schema.get(key, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UnsupportedSchemaError(f"{key} must be a non-negative integer", path=path, keyword=key)
    return value


def json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__
