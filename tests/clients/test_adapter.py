"""adapt_response_format: a foreign client learns the schema form a server accepts, and its answers are bounded."""

from __future__ import annotations

import functools

import pytest
from support.fault_server import completion, respond
from support.remote_helpers import LLAMA_REJECTION, O_SERIES_REFUSAL, REQUEST, SCORE_SCHEMA

from localjudge._clients.adapter import AsyncFormatAdapter, FormatAdapter, adapt_response_format, is_async_create
from localjudge._clients.base import make_chat_completion
from localjudge._clients.bound import BOUND_FIELD, DEFAULT_MAX_COMPLETION_TOKENS, DEFAULT_MAX_TOKENS
from localjudge._clients.fallback import FallbackClient
from localjudge._clients.formats import FORMATS, LLAMA_FORM
from localjudge.errors import TruncatedOutputError
from localjudge.testing import ScriptedClient


class _StatusError(Exception):
    """Shaped like the openai SDK's APIStatusError."""

    def __init__(self, status_code: int, body) -> None:
        super().__init__(f"Error code: {status_code}")
        self.status_code = status_code
        self.body = body


class _LlamaLikeServerClient:
    """A foreign sync client in front of a server that takes only json_object+schema."""

    base_url = "http://127.0.0.1:9/v1/"

    def __init__(self, error: Exception | None = None) -> None:
        self.sent: list[dict] = []
        self.error = error
        outer = self

        class completions:
            @staticmethod
            def create(**request):
                outer.sent.append(request)
                if outer.error is not None:
                    raise outer.error
                if request["response_format"]["type"] == "json_schema":
                    raise _StatusError(500, LLAMA_REJECTION)
                return make_chat_completion('{"score": true}', model="m")

        class chat:
            pass

        chat.completions = completions
        self.chat = chat


def test_rejected_form_is_resent_and_remembered():
    foreign = _LlamaLikeServerClient()
    judge = adapt_response_format(foreign)
    assert isinstance(judge, FormatAdapter)
    assert judge.chat.completions.create(**REQUEST).choices[0].message.content == '{"score": true}'
    assert [r["response_format"]["type"] for r in foreign.sent] == ["json_schema", "json_object"]
    assert foreign.sent[1]["response_format"]["schema"] == SCORE_SCHEMA
    assert FORMATS.get("http://127.0.0.1:9/v1") == LLAMA_FORM
    adapt_response_format(_LlamaLikeServerClient()).chat.completions.create(**REQUEST)
    assert len(foreign.sent) == 2  # the memo is per endpoint, shared by new wrappers


@pytest.mark.parametrize("error", [_StatusError(500, "boom"), _StatusError(401, LLAMA_REJECTION), KeyError("x")])
def test_other_errors_propagate_unchanged(error):
    foreign = _LlamaLikeServerClient(error)
    with pytest.raises(type(error)) as info:
        adapt_response_format(foreign).chat.completions.create(**REQUEST)
    assert info.value is error
    assert len(foreign.sent) == 1


def test_our_clients_pass_through_and_attributes_forward():
    ours = ScriptedClient(["{}"])
    assert adapt_response_format(ours) is ours
    wrapped = adapt_response_format(_LlamaLikeServerClient())
    assert wrapped.base_url == "http://127.0.0.1:9/v1/"
    assert adapt_response_format(wrapped) is wrapped


def _decorated(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


def test_async_create_is_found_behind_decorators():
    async def create(**request):
        return None

    class CallableCreate:
        async def __call__(self, **request):
            return None

    assert is_async_create(create)
    assert is_async_create(_decorated(create))
    assert is_async_create(CallableCreate())
    assert not is_async_create(lambda **request: None)


async def test_async_foreign_client_is_wrapped_and_negotiates():
    sent = []

    class completions:
        @staticmethod
        @_decorated
        async def create(**request):
            sent.append(request)
            if request["response_format"]["type"] == "json_schema":
                raise _StatusError(500, LLAMA_REJECTION)
            return make_chat_completion('{"score": false}', model="m")

    class AsyncForeign:
        base_url = "http://127.0.0.1:10/v1"

        class chat:
            pass

    AsyncForeign.chat.completions = completions
    judge = adapt_response_format(AsyncForeign())
    assert isinstance(judge, AsyncFormatAdapter)
    response = await judge.chat.completions.create(**REQUEST)
    assert response.choices[0].message.content == '{"score": false}'
    assert [r["response_format"]["type"] for r in sent] == ["json_schema", "json_object"]


# -- the answer bound, with the real openai SDK against a scripted loopback server ----------

PROMPT = "Is this answer right? {outputs}"


def _openai():
    return pytest.importorskip("openai")


def _sdk(server, *, asynchronous=False):
    openai = _openai()
    make = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return make(base_url=server.base_url, api_key="sk-local", max_retries=0)


def _bounds(server) -> list[tuple]:
    return [(r.json().get("max_tokens"), r.json().get("max_completion_tokens")) for r in server.requests]


@pytest.mark.parametrize(
    ("model", "bound"), [("gpt-4o-mini", DEFAULT_MAX_TOKENS), ("qwen2.5-coder-1.5b-instruct", 512)]
)
def test_an_evaluator_sends_a_foreign_client_a_bound(model, bound, fault_server):
    from localjudge._judges.single import create_llm_as_judge

    server = fault_server(completion('{"score": true}'))
    with _sdk(server) as sdk:
        evaluator = create_llm_as_judge(prompt=PROMPT, judge=sdk, model=model, use_reasoning=False)
        assert evaluator(outputs="4")["score"] is True
    assert _bounds(server) == [(bound, None)]  # the default, or the model card's recommended max_tokens


def test_a_foreign_client_refused_max_tokens_sends_max_completion_tokens_and_remembers(fault_server):
    from localjudge._judges.single import create_llm_as_judge

    server = fault_server(respond(400, O_SERIES_REFUSAL), completion(), completion())
    with _sdk(server) as sdk:
        evaluator = create_llm_as_judge(prompt=PROMPT, judge=sdk, model="o4-mini", use_reasoning=False)
        assert evaluator(outputs="4")["score"] is True
        assert evaluator(outputs="5")["score"] is True
    assert _bounds(server) == [
        (DEFAULT_MAX_TOKENS, None),
        (None, DEFAULT_MAX_COMPLETION_TOKENS),
        (None, DEFAULT_MAX_COMPLETION_TOKENS),  # remembered: no second refusal
    ]


async def test_an_async_foreign_client_negotiates_the_bound_in_the_same_way(fault_server):
    from localjudge._judges.single import create_async_llm_as_judge

    server = fault_server(respond(400, O_SERIES_REFUSAL), completion())
    async with _sdk(server, asynchronous=True) as sdk:
        evaluator = create_async_llm_as_judge(prompt=PROMPT, judge=sdk, model="o4-mini", use_reasoning=False)
        assert (await evaluator(outputs="4"))["score"] is True
    assert _bounds(server) == [(DEFAULT_MAX_TOKENS, None), (None, DEFAULT_MAX_COMPLETION_TOKENS)]


@pytest.mark.parametrize("given", [{"max_tokens": 20}, {"max_completion_tokens": 30}, {"max_tokens": 100_000}])
def test_a_bound_the_caller_gave_reaches_a_foreign_client_unchanged(given, fault_server):
    server = fault_server(completion())
    request = {**{k: v for k, v in REQUEST.items() if k != "max_tokens"}, **given}
    with _sdk(server) as sdk:
        FallbackClient(sdk).chat.completions.create(**request)
    sent = server.requests[0].json()
    assert {k: v for k, v in sent.items() if k.startswith("max_")} == given


def test_a_caller_s_refused_max_tokens_is_the_caller_s_error(fault_server):
    openai = _openai()
    server = fault_server(respond(400, O_SERIES_REFUSAL), completion())
    with _sdk(server) as sdk, pytest.raises(openai.BadRequestError):
        adapt_response_format(sdk).chat.completions.create(**REQUEST)  # REQUEST sets max_tokens=20
    assert _bounds(server) == [(20, None)]
    assert BOUND_FIELD.get(f"{server.base_url}#judge") == "max_tokens"


def test_an_answer_cut_at_the_bound_is_a_truncation_error_and_fallback_takes_over(fault_server):
    from localjudge._judges.single import create_llm_as_judge

    cut = '{"score": tr'
    rambler = fault_server(completion(cut, finish_reason="length"))
    steady = fault_server(completion('{"score": false}'))
    with _sdk(rambler) as first, _sdk(steady) as second:
        alone = create_llm_as_judge(prompt=PROMPT, judge=first, model="m", use_reasoning=False)
        with pytest.raises(TruncatedOutputError) as caught:
            alone(outputs="4")
        assert caught.value.raw_output == cut
        chain = FallbackClient(first, second, names=["rambler", "steady"])
        result = create_llm_as_judge(prompt=PROMPT, judge=chain, model="m", use_reasoning=False)(outputs="4")
    assert result["score"] is False
    assert result["metadata"]["client"] == "steady"
    assert [(f["client"], f["error"]) for f in result["metadata"]["failures"]] == [("rambler", "TruncatedOutputError")]
    assert _bounds(rambler) == [(DEFAULT_MAX_TOKENS, None)] * 2  # the cut answer came at the bound we sent
