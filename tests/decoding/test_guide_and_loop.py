"""The guide (masks, forced text) and the decode loop, over a toy vocabulary and a scripted backend."""

from __future__ import annotations

import json

import numpy as np
import pytest

from localjudge._decoding import Sampler, TokenVocabulary, decode, guide_for, schema_to_regex

pytest.importorskip("outlines_core")

PAD, EOS, CONTROL = 0, 1, 2
WORDS = [
    b'{"',
    b"reasoning",
    b'":"',
    b'","',
    b"score",
    b'":',
    b"true",
    b"false",
    b"good",
    b" answer",
    b"}",
    b'"}',
    b"0.",
    b"5",
]
PIECES: list[bytes | None] = [None, None, None] + [bytes([b]) for b in range(256)] + WORDS
VOCAB = TokenVocabulary(PIECES, eos_id=EOS, stop_ids=[EOS], key="toy-vocab")
ID = {p: i for i, p in enumerate(PIECES) if p is not None and len(p) > 1}
BYTE = {chr(b): 3 + b for b in range(256)}

BOOLEAN_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"reasoning": {"type": "string"}, "score": {"type": "boolean"}},
    "required": ["reasoning", "score"],
}


def greedy_tokenize(data: bytes) -> list[int]:
    out, i = [], 0
    while i < len(data):
        best = max((t for t, p in enumerate(PIECES) if p and data.startswith(p, i)), key=lambda t: len(PIECES[t]))
        out.append(best)
        i += len(PIECES[best])
    return out


class ScriptedBackend:
    """Logits favour tokens in order of ``preference``; records what was evaluated."""

    def __init__(self, preference: list[int]) -> None:
        self.preference = preference
        self.batches: list[list[bytes]] = []

    def logits(self) -> np.ndarray:
        values = np.zeros(len(PIECES), dtype=np.float32)
        for rank, token in enumerate(self.preference):
            values[token] = 100.0 - rank
        return values

    def start(self, prompt, seq=0):
        return self.logits()

    def extend(self, tokens, seq=0):
        self.batches.append([PIECES[t] for t in tokens])
        return self.logits()

    tokenize_fragment = tokenize_output = staticmethod(greedy_tokenize)


def run(schema, preference, **kwargs):
    backend = ScriptedBackend(preference)
    guide = guide_for(VOCAB, schema_to_regex(schema)) if schema is not None else None
    options = dict(max_tokens=60, sampler=Sampler(), string_budget=4)
    options.update(kwargs)
    return decode(backend, VOCAB, [0], guide=guide, **options), backend


def test_forced_prefix_is_one_batch_of_the_models_own_tokens():
    guide = guide_for(VOCAB, schema_to_regex(BOOLEAN_SCHEMA))
    forced = guide.forced(guide.initial_state, greedy_tokenize)
    assert VOCAB.decode(forced.tokens) == b'{"reasoning":"'
    assert list(forced.tokens) == [ID[b'{"'], ID[b"reasoning"], ID[b'":"']]


def test_forced_text_falls_back_to_byte_tokens_when_the_tokenization_is_rejected():
    guide = guide_for(
        VOCAB, schema_to_regex({"type": "object", "properties": {"ab": {"type": "null"}}, "required": ["ab"]})
    )
    forced = guide.forced(guide.initial_state, lambda data: [ID[b"good"]])  # wrong text for these bytes
    assert VOCAB.decode(forced.tokens) == b'{"ab":null}'
    assert all(len(PIECES[t]) == 1 for t in forced.tokens)


def test_budget_closes_the_string_then_the_verdict_follows():
    result, backend = run(BOOLEAN_SCHEMA, [BYTE["x"], ID[b"true"]])
    assert result.text == '{"reasoning":"xxxx","score":true}'
    assert result.finish_reason == "stop"
    assert result.closed_by == "budget"
    assert result.sampled_tokens == 5  # four x, then true
    # the close quote and the key reach the model together, as its own tokens
    assert [b'","', b"score", b'":'] in backend.batches
    # the trailing "}" is forced and never evaluated
    assert all(b"}" not in batch for batch in backend.batches)


def test_a_verbatim_loop_closes_the_string_early():
    result, _ = run(BOOLEAN_SCHEMA, [BYTE["x"], ID[b"true"]], string_budget=None)
    assert result.text == '{"reasoning":"' + "x" * 12 + '","score":true}'
    assert result.closed_by == "loop"
    result, _ = run(BOOLEAN_SCHEMA, [BYTE["x"], ID[b"true"]], string_budget=None, close_loops=False, max_tokens=30)
    assert result.finish_reason == "length"


def test_loop_detection_needs_three_cycles_of_twelve_tokens():
    from localjudge._decoding.loop import _loops

    cycle = list(range(5))
    assert not _loops(cycle * 2)
    assert _loops([9] + cycle * 3)
    assert not _loops(list(range(40)))
    assert not _loops([7] * 11)
    assert _loops([7] * 12)


def test_mask_keeps_out_tokens_the_grammar_forbids():
    # the model wants to end the string with '"}' (skipping the score) and to stop early
    result, _ = run(BOOLEAN_SCHEMA, [ID[b'"}'], EOS, CONTROL, BYTE["y"], ID[b"false"]])
    value = json.loads(result.text)
    assert value["score"] is False
    assert result.finish_reason == "stop"


def test_max_tokens_cuts_with_finish_reason_length():
    result, _ = run(BOOLEAN_SCHEMA, [BYTE["x"]], max_tokens=6, string_budget=None)
    assert result.finish_reason == "length"
    assert len(result.tokens) == 6
    assert result.text.startswith('{"reasoning":"xxx')


def test_number_bounds_and_enums_hold_under_a_model_that_wants_more():
    continuous = {
        "type": "object",
        "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}},
        "required": ["score"],
    }
    result, _ = run(continuous, [BYTE["9"], BYTE["1"], BYTE["5"], BYTE["."], BYTE["0"]])
    assert 0 <= json.loads(result.text)["score"] <= 1
    choices = {
        "type": "object",
        "properties": {"score": {"type": "number", "enum": [0.0, 0.5, 1.0]}},
        "required": ["score"],
    }
    result, _ = run(choices, [ID[b"0."], BYTE["7"], BYTE["5"], BYTE["1"]])
    assert json.loads(result.text)["score"] == 0.5


def test_final_state_with_continuations_stops_on_eos():
    # end-of-generation is preferred, but only allowed once the number is complete
    result, _ = run({"type": "integer", "minimum": 0}, [EOS, BYTE["7"]])
    assert result.text == "7"
    assert result.finish_reason == "stop"


def test_free_text_never_writes_control_tokens_and_stops_at_eos_or_stop_string():
    result, _ = run(None, [CONTROL, ID[b"good"]], max_tokens=3)
    assert result.text == "goodgoodgood"
    assert result.finish_reason == "length"
    result, _ = run(None, [EOS, ID[b"good"]])
    assert result.text == "" and result.finish_reason == "stop"
    result, _ = run(None, [ID[b"good"]], stop=["dgo"])
    assert result.text == "goo" and result.finish_reason == "stop"


def test_masks_are_cached_per_state():
    guide = guide_for(VOCAB, schema_to_regex(BOOLEAN_SCHEMA))
    state = guide.forced(guide.initial_state, greedy_tokenize).end_state
    info = guide.info(state)
    assert guide.info(state) is info
    assert info.text  # inside the reasoning string nearly everything is allowed
    assert not info.mask[CONTROL] and not info.mask[EOS]


def test_frequency_and_presence_penalties():
    logits = np.array([0.0, 3.0, 2.5], dtype=np.float32)
    plain = Sampler()
    assert plain.penalise(logits, {1: 2}) is logits
    penalised = Sampler(frequency_penalty=0.5, presence_penalty=0.1).penalise(logits, {1: 2})
    assert penalised[1] == pytest.approx(3.0 - 1.0 - 0.1)
    assert logits[1] == 3.0  # the backend's buffer is left alone
    assert Sampler().pick(penalised, None, None) == 2


def test_seeded_sampling_repeats_and_greedy_picks_the_best():
    logits = np.array([0.0, 2.0, 1.0, 1.5], dtype=np.float32)
    mask = np.array([True, False, True, True])
    assert Sampler().pick(logits, None, mask) == 3
    assert Sampler().pick(logits, np.array([0, 2]), None) == 2
    draws = [Sampler(temperature=1.0, seed=3).pick(logits, None, mask) for _ in range(3)]
    assert len(set(draws)) == 1 and mask[draws[0]]
    many = Sampler(temperature=5.0, seed=1)
    assert {many.pick(logits, None, mask) for _ in range(200)} <= {0, 2, 3}
