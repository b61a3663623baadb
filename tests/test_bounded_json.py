"""JSON from outside: bounded in depth, in the length of a number, and (where asked) free of NaN."""

from __future__ import annotations

import json
import math

import pytest

from localjudge import _bounded_json as bounded_json
from localjudge._bounded_json import MAX_DEPTH, JSONLimitError


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_values_within_the_bounds_parse_as_json_would():
    text = '{"a": [1, 2.5, {"b": null}], "c": "\\u00e9"}'
    assert bounded_json.loads(text) == json.loads(text)
    assert bounded_json.loads(deep(MAX_DEPTH)) == json.loads(deep(MAX_DEPTH))
    assert bounded_json.raw_decode('prose {"x": [1]} more', 6) == ({"x": [1]}, 16)


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 990, 100_000])
def test_deeper_than_the_bound_is_refused_whether_or_not_the_parser_copes(levels):
    with pytest.raises(JSONLimitError, match=f"nested more than {MAX_DEPTH} levels"):
        bounded_json.loads(deep(levels))
    with pytest.raises(JSONLimitError):
        bounded_json.raw_decode("x " + deep(levels), 2)


def test_an_integer_python_will_not_convert_is_a_limit_error_not_a_bare_value_error():
    with pytest.raises(JSONLimitError, match="an integer of more than 4,300 digits"):
        bounded_json.loads('{"seed": ' + "9" * 5000 + "}")


def test_nan_and_infinity_are_refused_only_where_asked():
    assert math.isnan(bounded_json.loads("[NaN]")[0])  # a float here, as json gives it
    for constant in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(JSONLimitError, match=f"{constant} is not a JSON number"):
            bounded_json.loads(f"[{constant}]", allow_nan=False)


def test_a_limit_error_is_a_decode_error_so_every_caller_already_handles_it():
    assert issubclass(JSONLimitError, json.JSONDecodeError)
    assert bounded_json.depth({"a": [[1], {"b": []}]}) == 4 and bounded_json.depth(3) == 0
