"""The contract every local engine meets, one suite parametrised over the engines.

Engines: llama.cpp and transformers on the real default model (transformers
through the GGUF converted once), a tiny random-weights transformers model,
and outlines over llama.cpp (the default model) and over transformers (the
tiny model). The contract: an answer is schema-valid JSON, or it stopped at
``max_tokens`` and the judge's parser turns it into ``TruncatedOutputError``
with the raw text; keywords the decoder cannot enforce are refused; a prompt
that cannot fit is refused before decoding; greedy decoding repeats itself;
concurrent callers, and several requests handed over at once, each get what
they would have got alone.
"""

from __future__ import annotations

import asyncio
import json

import jsonschema
import pytest
import regex

from localjudge._decoding import schema_to_regex
from localjudge._decoding.grammars import DEFAULT_VARIANTS
from localjudge._prompts.parsing import parse_json_output
from localjudge._prompts.schema import decoding_order, default_output_schema
from localjudge.errors import ContextOverflowError, TruncatedOutputError, UnsupportedSchemaError, UsageError

ENGINES = [
    pytest.param("llama.cpp", marks=pytest.mark.model),
    pytest.param("transformers", marks=[pytest.mark.model, pytest.mark.torch]),
    pytest.param("tiny-transformers", marks=pytest.mark.torch),
    pytest.param("outlines-llama.cpp", marks=pytest.mark.model),
    pytest.param("outlines-tiny-transformers", marks=pytest.mark.torch),
]
MESSAGES = [
    {"role": "system", "content": "You are a strict grader. Reply with JSON only."},
    {"role": "user", "content": "<question>What is 2+2?</question>\n<answer>4</answer>"},
]

CUSTOM_SCHEMAS = {
    "nested": {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["pass", "fail", "unsure"]},
            "grade": {"type": "integer", "minimum": 1, "maximum": 5},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["clear", "wrong"]}, "maxItems": 2},
            "detail": {
                "type": "object",
                "properties": {"ok": {"type": "boolean"}, "weight": {"enum": [0.25, 0.5, 1]}},
                "required": ["ok", "weight"],
                "additionalProperties": False,
            },
        },
        "required": ["verdict", "grade", "tags", "detail"],
        "additionalProperties": False,
    },
    "optional": {
        "type": "object",
        "properties": {"note": {"type": "string", "maxLength": 12}, "flag": {"type": ["boolean", "null"]}},
        "required": ["flag"],
    },
}


@pytest.fixture(scope="module", params=ENGINES)
def engine(request, engines):
    return engines(request.param)


def schema_format(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": schema}}


def create(engine, schema: dict | None = None, **request):
    fmt = {"response_format": schema_format(schema)} if schema is not None else {}
    return engine.client.chat.completions.create(**{"messages": MESSAGES, **fmt, **request})


def check_answer(engine, response, schema: dict) -> dict | None:
    """The contract on one answer: valid, or cut at max_tokens and reported as such with its raw text.

    A cut answer is still a prefix of what the grammar admits: an engine that
    wrote garbage and called it "length" fails here.
    """
    content = response.choices[0].message.content
    finish = response.choices[0].finish_reason
    if finish == "stop":
        value = json.loads(content)
        jsonschema.validate(value, schema)
        return value
    assert finish == "length", finish
    assert regex.fullmatch(schema_to_regex(dict(decoding_order(schema))), content, partial=True), content
    with pytest.raises(TruncatedOutputError) as info:
        parse_json_output(content, schema, finish_reason=finish)
    assert info.value.raw_output == content
    return None


@pytest.mark.parametrize("variant", list(DEFAULT_VARIANTS.values()), ids=list(DEFAULT_VARIANTS))
def test_each_default_schema_gives_valid_json(engine, variant):
    schema, _ = default_output_schema(**variant)
    response = create(engine, schema)
    value = check_answer(engine, response, schema)
    if engine.ours:  # our decoder closes the reasoning at its budget: always a verdict
        assert value is not None, response.choices[0].message.content
    if value is not None and "choices" in variant:
        assert value["score"] in variant["choices"]


#: tokens that hold the longest answer either custom schema admits (every string and array is bounded),
#: and still fit the tiny model's 256-token context after the prompt (88 tokens)
CUSTOM_MAX_TOKENS = 160


@pytest.mark.parametrize("name", list(CUSTOM_SCHEMAS))
def test_custom_schemas_give_valid_json(engine, name):
    """Every value these schemas admit is short, so an answer cut at max_tokens is a failure, not a pass."""
    schema = CUSTOM_SCHEMAS[name]
    response = create(engine, schema, max_tokens=CUSTOM_MAX_TOKENS)
    assert response.choices[0].finish_reason == "stop", response.choices[0].message.content
    assert check_answer(engine, response, schema) is not None


def test_no_reasoning_verdicts_always_finish(engine):
    for variant in ({"use_reasoning": False}, {"use_reasoning": False, "choices": [0.0, 0.5, 1.0]}):
        schema, _ = default_output_schema(**variant)
        response = create(engine, schema, max_tokens=16)
        assert response.choices[0].finish_reason == "stop"
        jsonschema.validate(json.loads(response.choices[0].message.content), schema)


def test_keywords_that_cannot_be_enforced_are_refused(engine):
    bad = {"type": "object", "properties": {"s": {"type": "string", "pattern": "a+"}}}
    with pytest.raises(UnsupportedSchemaError, match="pattern"):
        engine.client.check_schema(bad)
    with pytest.raises(UnsupportedSchemaError, match="pattern"):
        create(engine, bad)


@pytest.mark.parametrize(
    ("fields", "message"),
    [({"n": 2}, "n=1"), ({"stream": True}, "stream"), ({"tools": []}, "tools")],
)
def test_request_fields_a_local_engine_cannot_honour_are_refused(engine, fields, message):
    with pytest.raises(UsageError, match=message):
        create(engine, **fields)


def test_a_prompt_that_cannot_fit_is_refused_before_decoding(engine):
    words = "word " * (engine.n_ctx + 50)
    with pytest.raises(ContextOverflowError, match=f"context of {engine.n_ctx}"):
        engine.client.chat.completions.create(messages=[{"role": "user", "content": words}], max_tokens=8)


def test_small_max_tokens_is_a_length_stop_never_a_verdict(engine):
    schema, _ = default_output_schema()
    response = create(engine, schema, max_tokens=3)
    assert response.choices[0].finish_reason == "length"
    assert check_answer(engine, response, schema) is None


def test_greedy_decoding_repeats_itself(engine):
    schema, _ = default_output_schema(choices=[0.0, 0.5, 1.0])
    first = create(engine, schema, max_tokens=48).choices[0].message.content
    engine.client.chat.completions.create(messages=[{"role": "user", "content": "Say hi."}], max_tokens=4)
    again = create(engine, schema, max_tokens=48, temperature=0).choices[0].message.content
    assert first == again


def test_concurrent_callers_each_get_their_own_answer(engine):
    schema, _ = default_output_schema(use_reasoning=False, continuous=True)
    questions = [f"<question>Is {i}+{i}={2 * i}?</question><answer>yes</answer>" for i in range(4)]

    def ask(question: str) -> dict:
        return {"messages": [{"role": "user", "content": question}], "response_format": schema_format(schema)}

    async def together():
        aio = getattr(engine.client, "aio", None)
        return await asyncio.gather(*(aio.chat.completions.create(**ask(q), max_tokens=16) for q in questions))

    answers = asyncio.run(together())
    for question, answer in zip(questions, answers, strict=True):
        alone = engine.client.chat.completions.create(**ask(question), max_tokens=16)
        assert answer.choices[0].message.content == alone.choices[0].message.content
        jsonschema.validate(json.loads(answer.choices[0].message.content), schema)


def test_several_requests_at_once_get_what_each_gets_alone(engine):
    if not engine.ours:
        pytest.skip("create_many is our local client's")
    variants = list(DEFAULT_VARIANTS.values())[:3]
    requests = [
        {"messages": MESSAGES, "response_format": schema_format(default_output_schema(**v)[0]), "max_tokens": 48}
        for v in variants
    ]
    requests.append({"messages": MESSAGES, "response_format": {"type": "json_schema"}})  # no schema: refused
    found = engine.client.create_many(requests, return_exceptions=True)
    assert isinstance(found[-1], UsageError)
    for request, response in zip(requests[:-1], found[:-1], strict=True):
        alone = engine.client.chat.completions.create(**request)
        assert response.choices[0].message.content == alone.choices[0].message.content
        assert response.get("readout") == alone.get("readout")
    with pytest.raises(UsageError):
        engine.client.create_many(requests)


def test_logprobs_come_back_under_the_grammar_or_are_refused(engine):
    schema, _ = default_output_schema(use_reasoning=False)
    if not engine.ours:
        with pytest.raises(UsageError, match="logprobs"):
            create(engine, schema, logprobs=True)
        return
    response = create(engine, schema, logprobs=True, top_logprobs=2)
    entries = response.choices[0].logprobs["content"]
    assert len(entries) == response.usage.completion_tokens
    assert "".join(entry["token"] for entry in entries) == response.choices[0].message.content
    for entry in entries:
        assert entry["logprob"] <= 0.0 and entry["top_logprobs"]
        assert entry["top_logprobs"][0]["logprob"] >= entry["logprob"] - 1e-9  # the best comes first
    assert entries[0]["logprob"] == 0.0  # "{" is forced by the grammar


@pytest.mark.parametrize("variant", [{"use_reasoning": False}, {"choices": [0.0, 0.5, 1.0]}, {"continuous": True}])
def test_the_readout_weighs_every_allowed_value(engine, variant):
    schema, _ = default_output_schema(**variant)
    response = create(engine, schema, max_tokens=64)
    if not engine.ours:  # outlines hands back text only: no logits to read, and no readout claimed
        assert "readout" not in response
        return
    readout = response.readout["score"]
    probabilities = readout["probabilities"]
    assert abs(sum(probabilities.values()) - 1.0) < 1e-9
    assert 0.0 <= readout["probability_unexplored"] <= 0.01  # the default tolerance
    decoded = json.loads(response.choices[0].message.content)["score"]
    for text in probabilities:
        jsonschema.validate(json.loads(text), schema["properties"]["score"])
    if "continuous" not in variant:  # a few values: the decoded one was weighed too
        assert json.dumps(decoded) in {json.dumps(json.loads(text)) for text in probabilities}
    if "expected_score" in readout:
        expected = sum(json.loads(text) * p for text, p in probabilities.items())  # numbers at the digits read
        assert abs(readout["expected_score"] - expected) <= 0.01 + readout["probability_unexplored"]


def test_the_schema_meaning_reaches_the_prompt_unless_turned_off(engine):
    from localjudge._prompts.format_instructions import describe_schema

    schema = {
        "type": "object",
        "properties": {"score": {"type": "boolean", "description": "true if the sum is right"}},
        "required": ["score"],
        "additionalProperties": False,
    }
    original = engine.client.format_instructions
    try:
        engine.client.format_instructions = True
        told = create(engine, schema, max_tokens=4).usage.prompt_tokens
        engine.client.format_instructions = False
        plain = create(engine, schema, max_tokens=4).usage.prompt_tokens
    finally:
        engine.client.format_instructions = original
    assert told - plain >= len(describe_schema(schema).split()) // 2  # the lines, in tokens, and only them
    assert create(engine, None, max_tokens=4).usage.prompt_tokens == plain  # free text: nothing to explain


# --- scoring a reply (score_reply) -------------------------------------------------------------------

ASKED = [{"role": "user", "content": "What is the capital of France?"}]


def score_reply(engine, reply: str, messages=ASKED, **request):
    return engine.client.chat.completions.create(
        messages=[*messages, {"role": "assistant", "content": reply}], score_reply=True, **request
    )


def test_a_scored_reply_comes_back_as_each_tokens_log_probability(engine):
    if not engine.ours:  # outlines has no logits to read: the field is refused by name, never ignored
        with pytest.raises(UsageError, match="score_reply"):
            score_reply(engine, "Paris.")
        return
    response = score_reply(engine, "Paris is the capital.")
    entries = response.choices[0].logprobs["content"]
    assert response.choices[0].message.content == "" and response.choices[0].finish_reason == "stop"
    assert all(entry["logprob"] <= 0.0 for entry in entries)
    assert "".join(entry["token"] for entry in entries).startswith("Paris is the capital.")
    assert len(score_reply(engine, "Paris is the capital. It is.").choices[0].logprobs["content"]) > len(entries)
    again = score_reply(engine, "Paris is the capital.").choices[0].logprobs["content"]
    assert [e["logprob"] for e in again] == [e["logprob"] for e in entries]
    elsewhere = score_reply(engine, "Paris is the capital.", [{"role": "user", "content": "Name a colour."}])
    assert [e["logprob"] for e in elsewhere.choices[0].logprobs["content"]] != [e["logprob"] for e in entries]


def test_a_reply_that_spells_a_special_token_is_scored_as_text(engine):
    if not engine.ours:
        pytest.skip("outlines refuses score_reply")
    marker = engine.client.runtime.token_text(engine.client.runtime.vocab.eos_id)
    entries = score_reply(engine, f"Paris.{marker}").choices[0].logprobs["content"]
    assert [e["token"] for e in entries].count(marker) == 1  # only the end the client adds, not the reply's text


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "user", "content": "What is 2+2?"}],  # no reply to score
        [{"role": "assistant", "content": "4"}],  # a reply with nothing before it
        [*ASKED, {"role": "assistant", "content": ""}],  # an empty reply
    ],
)
def test_a_request_to_score_a_reply_must_end_with_one(engine, messages):
    if not engine.ours:
        pytest.skip("outlines refuses score_reply")
    with pytest.raises(UsageError, match="ends with the reply to score"):
        engine.client.chat.completions.create(messages=messages, score_reply=True)


@pytest.mark.parametrize(
    ("request_fields", "words"),
    [
        ({"score_reply": "yes"}, "score_reply must be true or false"),
        ({"score_reply": True, "response_format": {"type": "json_object"}}, "generates nothing: drop response_format"),
        ({"score_reply": True, "stop": ["."]}, "generates nothing: drop stop"),
    ],
)
def test_what_scoring_a_reply_cannot_honour_is_refused(engine, request_fields, words):
    if not engine.ours:
        pytest.skip("outlines refuses score_reply")
    with pytest.raises(UsageError, match=words):
        engine.client.chat.completions.create(
            messages=[*ASKED, {"role": "assistant", "content": "Paris."}], **request_fields
        )


def test_score_reply_false_is_an_ordinary_request(engine):
    if not engine.ours:
        pytest.skip("outlines refuses score_reply")
    response = engine.client.chat.completions.create(messages=MESSAGES, score_reply=False, max_tokens=4)
    assert response.choices[0].message.content and response.choices[0].get("logprobs") is None


def test_a_reply_past_the_context_is_refused_naming_both_lengths(engine):
    if not engine.ours:
        pytest.skip("outlines refuses score_reply")
    with pytest.raises(ContextOverflowError, match="the reply to score") as refused:
        score_reply(engine, "Paris. " * (engine.n_ctx // 2))
    assert "max_tokens" not in str(refused.value)
