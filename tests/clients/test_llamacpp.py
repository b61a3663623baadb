"""LlamaCppClient on the real default model: what the contract suite (test_local_engines) does not cover."""

from __future__ import annotations

import json
import math

import jsonschema
import pytest

from localjudge._decoding.grammars import DEFAULT_VARIANTS
from localjudge._prompts.schema import default_output_schema
from localjudge.errors import ModelError

pytestmark = pytest.mark.model

VARIANTS = list(DEFAULT_VARIANTS.values())

CASES = [
    ("What is 2+2?", "4"),
    ("What is the capital of France?", "Berlin"),
    ("Name a primary colour.", "Blue"),
    ("Translate 'gato' from Spanish.", "cat"),
    ("Is the earth flat?", "Yes, obviously."),
    ("How many legs does a spider have?", "Eight."),
    ("Write a haiku about rain.", "Rain taps the window / quiet streets shine silver-grey / puddles hold the sky"),
    ("What is 12 * 12?", "124"),
    ("Who wrote Hamlet?", "William Shakespeare wrote Hamlet around 1600."),
    ("Summarise: The meeting moved to Tuesday.", "The meeting is now on Tuesday."),
]

SYSTEM = "You are an expert grader. Judge whether the answer is correct. Reply with JSON only."


def judge_messages(question: str, answer: str) -> list[dict]:
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"<question>{question}</question>\n<answer>{answer}</answer>"},
    ]


def schema_format(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "score", "strict": True, "schema": schema}}


@pytest.fixture(scope="module")
def client(tiny_gguf):
    from localjudge._clients.llamacpp import LlamaCppClient

    c = LlamaCppClient(tiny_gguf, n_ctx=1024, reasoning_budget=20)
    yield c
    c.close()


def test_response_is_openai_shaped_and_carries_decode_stats(client):
    schema, _ = default_output_schema()
    resp = client.chat.completions.create(
        messages=judge_messages("What is 2+2?", "4"), model="judge", response_format=schema_format(schema)
    )
    content = resp.choices[0].message.content
    assert content == resp["choices"][0]["message"]["content"]
    assert resp.choices[0].message.role == "assistant" and resp.model == "judge"
    jsonschema.validate(json.loads(content), schema)
    stats = resp.decode_stats
    assert stats["forced_tokens"] > 0 and stats["prefill_seconds"] > 0
    assert resp.usage.completion_tokens >= stats["sampled_tokens"] > 0
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens


def test_plain_json_object_is_any_object(client):
    resp = client.chat.completions.create(
        messages=[{"role": "user", "content": 'Reply with a JSON object with a key "answer".'}],
        response_format={"type": "json_object"},
        max_tokens=60,
    )
    assert resp.choices[0].finish_reason == "stop", resp.choices[0].message.content
    assert isinstance(json.loads(resp.choices[0].message.content), dict)


def test_free_text_without_response_format(client):
    resp = client.chat.completions.create(messages=[{"role": "user", "content": "Say hello."}], max_tokens=12)
    text = resp.choices[0].message.content
    assert isinstance(text, str) and text.strip()
    assert "<start_of_turn>" not in text and "<end_of_turn>" not in text
    assert resp.usage.completion_tokens <= 12


def test_evaluations_over_all_variants_are_all_valid(client):
    invalid = []
    for i in range(math.lcm(len(CASES), len(VARIANTS))):  # each variant judges 5 of the cases
        question, answer = CASES[i % len(CASES)]
        schema, _ = default_output_schema(**VARIANTS[i % len(VARIANTS)])
        resp = client.chat.completions.create(
            messages=judge_messages(question, answer), response_format=schema_format(schema), max_tokens=64
        )
        content = resp.choices[0].message.content
        try:
            assert resp.choices[0].finish_reason == "stop"
            jsonschema.validate(json.loads(content), schema)
        except (AssertionError, ValueError, jsonschema.ValidationError) as exc:
            invalid.append((i, content, repr(exc)[:200]))
    assert invalid == []


def test_sampling_with_a_seed_repeats(client):
    request = dict(
        messages=[{"role": "user", "content": "Write one word."}], temperature=1.0, top_p=0.9, seed=7, max_tokens=6
    )
    assert (
        client.chat.completions.create(**request).choices[0].message.content
        == client.chat.completions.create(**request).choices[0].message.content
    )


def test_reasoning_budget_closes_the_string_and_a_closed_client_refuses_work(tiny_gguf):
    from localjudge._clients.llamacpp import LlamaCppClient

    tight = LlamaCppClient(tiny_gguf, n_ctx=1024, reasoning_budget=5)
    try:
        schema, _ = default_output_schema()
        resp = tight.chat.completions.create(
            messages=judge_messages("Write a long essay on rain.", "Rain is wet. " * 20),
            response_format=schema_format(schema),
            max_tokens=60,
        )
        assert resp.choices[0].finish_reason == "stop"
        assert resp.decode_stats["sampled_tokens"] <= 5 + 3  # the reasoning budget plus the score's few tokens
        assert resp.decode_stats["closed_by"] == "budget"
        assert isinstance(json.loads(resp.choices[0].message.content)["score"], bool)
    finally:
        tight.close()
    with pytest.raises(ModelError, match="closed"):
        tight.chat.completions.create(messages=judge_messages("q", "a"), max_tokens=4)


def test_the_lock_lets_one_caller_decode_at_a_time(client, monkeypatch):
    import asyncio
    import threading

    inside = {"now": 0, "max": 0}
    guard = threading.Lock()
    original = client.runtime._evaluate

    def watched_evaluate(tokens, n_past, seq):
        assert client.runtime.lock.locked()
        with guard:
            inside["now"] += 1
            inside["max"] = max(inside["max"], inside["now"])
        try:
            return original(tokens, n_past, seq)
        finally:
            with guard:
                inside["now"] -= 1

    monkeypatch.setattr(client.runtime, "_evaluate", watched_evaluate)
    schema, _ = default_output_schema(use_reasoning=False)

    async def run_all():
        return await asyncio.gather(
            *[
                client.aio.chat.completions.create(
                    messages=judge_messages(*CASES[i]), response_format=schema_format(schema), max_tokens=16
                )
                for i in range(8)
            ]
        )

    assert len(asyncio.run(run_all())) == 8
    assert inside["max"] == 1


def test_stop_strings_cut_free_text(client):
    request = dict(messages=[{"role": "user", "content": "Count from 1 to 9."}], max_tokens=16)
    full = client.chat.completions.create(**request).choices[0].message.content
    assert len(full) > 4
    stop = full[3:5]
    resp = client.chat.completions.create(**request, stop=[stop, "never-said"])
    assert resp.choices[0].message.content == full[: full.index(stop)]
    assert resp.choices[0].finish_reason == "stop"


def test_runtime_info_and_smoke_decode(client):
    info = client.runtime_info()
    assert info["chat_template"] == "builtin:gemma"
    assert isinstance(info["amx"], bool) and isinstance(info["gpu_offload"], bool)
    smoke = client.smoke_decode()
    assert 0 <= smoke["token"] < info["n_vocab"]


def test_requests_in_flight_get_the_answers_they_get_alone(tiny_gguf, client, monkeypatch):
    """Decoded side by side (one-token steps shared in a batch), every answer, readout and logprob is the lone one."""
    import asyncio

    from localjudge._clients.llamacpp import LlamaCppClient

    requests = []
    for i, variant in enumerate(VARIANTS):
        schema, _ = default_output_schema(**variant)
        request = dict(messages=judge_messages(*CASES[i]), response_format=schema_format(schema), max_tokens=48)
        requests.append({**request, "logprobs": True, "top_logprobs": 2} if i % 2 else request)
    requests.append(dict(messages=[{"role": "user", "content": "Count from 1 to 9."}], max_tokens=12))
    alone = [client.chat.completions.create(**request) for request in requests]

    together = LlamaCppClient(tiny_gguf, n_ctx=1024, reasoning_budget=20, parallel=4)
    batch_sizes: list[int] = []  # sequences per llama_decode
    original = together.runtime._decode

    def watched(entries):
        batch_sizes.append(len({seq for seq, *_ in entries}))
        return original(entries)

    monkeypatch.setattr(together.runtime, "_decode", watched)
    try:

        def answers(responses):
            return [(r.choices[0].message.content, r.get("readout"), r.choices[0].get("logprobs")) for r in responses]

        assert answers(together.create_many(requests)) == answers(alone)
        assert max(batch_sizes) == 4  # steps were shared, by no more sequences than there are slots

        async def gathered():
            return await asyncio.gather(*(together.aio.chat.completions.create(**request) for request in requests))

        batch_sizes.clear()
        assert answers(asyncio.run(gathered())) == answers(alone)
        assert max(batch_sizes) > 1  # the async callers shared steps too
    finally:
        together.close()


def test_a_prompt_too_long_for_the_context_names_the_format_instructions_among_the_remedies(tiny_gguf):
    from localjudge._clients.llamacpp import LlamaCppClient
    from localjudge.errors import ContextOverflowError

    schema, _ = default_output_schema(continuous=False, choices=None, use_reasoning=True)
    request = {
        "messages": [{"role": "user", "content": "Is this right? " + "four " * 300}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "score", "schema": schema}},
    }
    for format_instructions, named in ((True, True), (False, False)):
        client = LlamaCppClient(tiny_gguf, n_ctx=256, format_instructions=format_instructions)
        try:
            with pytest.raises(ContextOverflowError) as refused:
                client.chat.completions.create(**request)
        finally:
            client.close()
        assert ("without them (format_instructions=False)" in str(refused.value)) is named
        shown = refused.value.render({"format_instructions": "--no-format-instructions", "n_ctx": "--n-ctx"})
        assert ("without them (--no-format-instructions)" in shown) is named
        assert "Shorten the prompt" in shown and "a larger --n-ctx" in shown
