"""adapt_response_format: a foreign client learns the schema form a server accepts."""

from __future__ import annotations

import functools

import pytest
from remote_helpers import LLAMA_REJECTION, REQUEST, SCORE_SCHEMA

from localjudge.clients.adapter import AsyncFormatAdapter, FormatAdapter, adapt_response_format, is_async_create
from localjudge.clients.base import ScriptedClient, make_chat_completion
from localjudge.clients.formats import FORMATS, LLAMA_FORM


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
