"""A LangChain chat model judge is bounded like every client: the rule as a table, then real ChatOpenAI on loopback."""

from __future__ import annotations

import pytest
from support.fault_server import completion

from localjudge._clients.bound import DEFAULT_MAX_TOKENS, chat_model_bound
from localjudge.errors import TruncatedOutputError

PROMPT = "Is this answer right? {outputs}"


@pytest.mark.parametrize(
    ("settings", "model", "given", "update"),
    [
        ({"max_tokens": None}, "gpt-4o-mini", None, {"max_tokens": DEFAULT_MAX_TOKENS}),  # OpenAI, unset
        ({"max_tokens": None}, "qwen2.5-coder-1.5b-instruct", None, {"max_tokens": 512}),  # a card's bound
        ({"max_tokens": 1024, "temperature": 0}, "claude", None, {}),  # Anthropic's default: it stands
        ({"max_tokens": 40}, "m", None, {}),  # the user's own bound stands
        ({"max_tokens": 40}, "m", 7, {"max_tokens": 7}),  # the request's bound wins
        ({"num_predict": None}, "llama3", None, {"num_predict": DEFAULT_MAX_TOKENS}),  # Ollama
        ({"max_output_tokens": None}, "gemini", None, {"max_output_tokens": DEFAULT_MAX_TOKENS}),  # Google
        ({"responses": ["x"]}, "fake", None, {}),  # no field for a bound: nothing to set
        ({"responses": ["x"]}, "fake", 7, {}),
    ],
)
def test_the_bound_a_chat_model_gets(settings, model, given, update):
    assert chat_model_bound(settings, model, given) == update


def _chat_openai(server, **options):
    langchain_openai = pytest.importorskip("langchain_openai")
    return langchain_openai.ChatOpenAI(base_url=server.base_url, api_key="sk-local", max_retries=0, **options)


def _bound_sent(server) -> list:
    return [r.json().get("max_completion_tokens", r.json().get("max_tokens")) for r in server.requests]


@pytest.mark.parametrize(
    ("model", "bound"), [("gpt-4o-mini", DEFAULT_MAX_TOKENS), ("qwen2.5-coder-1.5b-instruct", 512)]
)
def test_a_chat_openai_judge_is_sent_a_bound_and_the_user_s_model_is_unchanged(model, bound, fault_server):
    from localjudge._judges.single import create_llm_as_judge

    server = fault_server(completion('{"score": true}'))
    chat_model = _chat_openai(server, model=model)
    assert create_llm_as_judge(prompt=PROMPT, judge=chat_model, use_reasoning=False)(outputs="4")["score"] is True
    assert _bound_sent(server) == [bound]
    assert chat_model.max_tokens is None


def test_a_chat_openai_judge_with_its_own_bound_sends_that(fault_server):
    from localjudge._judges.single import create_llm_as_judge

    server = fault_server(completion('{"score": false}'))
    judge = create_llm_as_judge(
        prompt=PROMPT, judge=_chat_openai(server, model="m", max_tokens=33), use_reasoning=False
    )
    assert judge(outputs="5")["score"] is False
    assert _bound_sent(server) == [33]


def test_an_answer_that_stopped_at_the_bound_is_a_truncation_and_the_fallback_answers(fault_server):
    from localjudge._clients.fallback import FallbackClient
    from localjudge._clients.langchain import LangChainClient
    from localjudge._judges.single import create_llm_as_judge

    cut = fault_server(completion('{"reasoning": "The answer is wrong because', finish_reason="length"))
    with pytest.raises(TruncatedOutputError) as caught:
        create_llm_as_judge(prompt=PROMPT, judge=_chat_openai(cut, model="m"))(outputs="5")
    assert caught.value.raw_output == '{"reasoning": "The answer is wrong because'
    assert caught.value.backend == "langchain"

    whole = fault_server(completion('{"score": true}'))
    chain = FallbackClient(
        LangChainClient(_chat_openai(cut, model="m")), LangChainClient(_chat_openai(whole, model="m"))
    )
    result = create_llm_as_judge(prompt=PROMPT, judge=chain, use_reasoning=False)(outputs="4")
    assert result["score"] is True
    assert result["metadata"]["failures"][0]["error"] == "TruncatedOutputError"


def test_a_plain_reply_that_stopped_at_the_bound_says_so(fault_server):
    from localjudge._clients.langchain import LangChainClient

    server = fault_server(completion("Once upon a", finish_reason="length"))
    reply = LangChainClient(_chat_openai(server, model="m")).chat.completions.create(
        messages=[{"role": "user", "content": "Tell me a story"}], model="m"
    )
    assert reply["choices"][0]["finish_reason"] == "length"
    assert _bound_sent(server) == [DEFAULT_MAX_TOKENS]
