"""The readout against brute force: every path the grammar allows, on a toy vocabulary with pseudo-random logits.

The toy model's logits depend on everything it has read, so each path has
its own probabilities; brute force walks every complete answer from the
value's start to the end of the grammar, multiplies the renormalised step
probabilities, parses the answer and sums by value. The readout must find
the same numbers, by its own walk (tokens spanning the value's end, single
allowed steps, batched branches).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from support.toy_runtime import EOS, PIECES, ToyRuntime

from localjudge._decoding import guide_for, schema_to_regex
from localjudge._decoding.readout import read_values, readout_fields, value_probabilities


def brute_force(runtime: ToyRuntime, guide, state: int, history: list[int], prefix: bytes) -> dict[Any, float]:
    """P(value) summed over every complete answer the grammar allows from ``state`` on."""
    found: dict[Any, float] = {}

    def walk(state: int, history: list[int], text: bytes, logprob: float) -> None:
        info = guide.info(state)
        probs = value_probabilities(ToyRuntime.logits_after(history), info.ids, 0.0)
        for token, p in zip(info.ids.tolist(), probs.tolist(), strict=True):
            if token == EOS:
                value = json.loads(b'{"score":' + text)["score"]
                found[value] = found.get(value, 0.0) + math.exp(logprob + math.log(p))
                continue
            walk(guide.advance(state, token), [*history, token], text + PIECES[token].encode(), logprob + math.log(p))

    walk(state, history, prefix, 0.0)
    return found


SCHEMAS = {
    "boolean": {"type": "boolean"},
    "choices": {"enum": [0, 0.5, 1]},
    "integers": {"type": "integer", "minimum": 1, "maximum": 5},
    "strings": {"enum": ["pass", "fail", "unsure"]},
}


@pytest.mark.parametrize("name", list(SCHEMAS))
@pytest.mark.parametrize("seed", range(3))
def test_the_readout_matches_brute_force(name, seed):
    runtime = ToyRuntime()
    schema = {"type": "object", "properties": {"score": SCHEMAS[name]}, "required": ["score"]}
    guide = guide_for(runtime.vocab, schema_to_regex(schema))
    prompt = [PIECES.index(c) for c in f"judge {seed}"]
    opening = guide.forced(guide.initial_state, runtime.tokenize_fragment)
    logits = runtime.start([*prompt, *opening.tokens])
    prefix = runtime.vocab.decode(opening.tokens).split(b'"score":', 1)[1]

    readout = read_values(runtime, guide, opening.end_state, logits, prefix=prefix, tolerance=1e-12)
    expected = brute_force(runtime, guide, opening.end_state, list(runtime.histories[0]), prefix)

    got = {json.loads(text): p for text, p in readout.probabilities.items()}
    assert set(got) == set(expected)
    for value, p in expected.items():
        assert got[value] == pytest.approx(p, abs=1e-9)
    assert readout.unexplored < 1e-9
    assert runtime.histories[0] == [*prompt, *opening.tokens]  # the runtime is left where it was
    if name != "strings":
        numbers = {v: p for v, p in expected.items() if not isinstance(v, bool)}
        if numbers:
            assert readout.expected == pytest.approx(sum(v * p for v, p in numbers.items()), abs=1e-9)


def test_a_loose_tolerance_reads_fewer_paths_and_says_what_it_left():
    runtime = ToyRuntime()
    schema = {
        "type": "object",
        "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 15}},
        "required": ["score"],
    }
    guide = guide_for(runtime.vocab, schema_to_regex(schema))  # "1" may go on to 10..15: it must be read
    opening = guide.forced(guide.initial_state, runtime.tokenize_fragment)
    exact = read_values(runtime, guide, opening.end_state, runtime.start(opening.tokens), tolerance=1e-12)
    loose = read_values(runtime, guide, opening.end_state, runtime.start(opening.tokens), tolerance=0.999)
    assert exact.evaluations > 0 and loose.evaluations == 0
    assert 0 < loose.unexplored <= 0.999
    assert sum(loose.probabilities.values()) == pytest.approx(1.0)


def test_a_value_the_grammar_already_decided_costs_no_evaluation():
    runtime = ToyRuntime()
    schema = {"type": "object", "properties": {"score": {"type": "boolean"}}, "required": ["score"]}
    guide = guide_for(runtime.vocab, schema_to_regex(schema))  # "f" can only become "false"
    opening = guide.forced(guide.initial_state, runtime.tokenize_fragment)
    readout = read_values(runtime, guide, opening.end_state, runtime.start(opening.tokens), tolerance=1e-12)
    assert readout.evaluations == 0 and runtime.branch_calls == 0
    assert set(readout.probabilities) == {"true", "false"} and readout.unexplored == 0


def test_readout_fields_are_the_weighable_top_level_properties():
    schema = {
        "type": "object",
        "properties": {
            "reasoning": {"type": "string"},
            "score": {"type": "boolean"},
            "grade": {"type": "integer"},
            "label": {"enum": ["a", "b"]},
            "nested": {"type": "object"},
        },
    }
    assert readout_fields(schema) == {"score": b'"score":', "grade": b'"grade":', "label": b'"label":'}
    assert readout_fields(None) == {}


def test_probabilities_are_renormalised_over_the_allowed_tokens_at_the_temperature():
    logits = np.array([0.0, 1.0, 2.0, 100.0], dtype=np.float32)
    probs = value_probabilities(logits, np.array([0, 1, 2]), 0.0)  # token 3 is not allowed: it takes nothing
    assert probs.sum() == pytest.approx(1.0) and probs[2] > probs[1] > probs[0]
    cooler = value_probabilities(logits, np.array([0, 1, 2]), 0.5)
    assert cooler[2] > probs[2]
