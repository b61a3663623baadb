"""FallbackClient: order, the fallback rule, the label on the answer, the error when all fail."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest
from support.fault_server import completion
from support.remote_helpers import FAST, REQUEST

from localjudge._clients.base import AsyncChatClient, make_chat_completion
from localjudge._clients.failure_policy import another_client
from localjudge._clients.fallback import FALLBACK_FIELD, AsyncFallbackClient, FallbackClient
from localjudge._clients.remote import OpenAICompatibleClient
from localjudge._judges.ways import Way
from localjudge.errors import (
    AllClientsFailedError,
    ContextOverflowError,
    JudgeTimeoutError,
    ModelLoadError,
    ModelNotFoundError,
    OutputParseError,
    RemoteConnectError,
    UsageError,
)
from localjudge.testing import ScriptedClient

ANSWER = '{"score": true}'


def _failing(exc: BaseException, name: str) -> ScriptedClient:
    client = ScriptedClient([exc], repeat=True)
    client.name = name
    return client


def _answering(name: str, content: str = ANSWER) -> ScriptedClient:
    client = ScriptedClient([content], repeat=True)
    client.name = name
    return client


def test_first_answer_wins_and_later_clients_are_not_called():
    first, second = _answering("first"), _answering("second")
    response = FallbackClient(first, second).chat.completions.create(**REQUEST)
    assert response[FALLBACK_FIELD] == {"client": "first", "failures": []}
    assert len(first.requests) == 1 and second.requests == []


@pytest.mark.parametrize(
    "error",
    [
        ModelNotFoundError("Model file not found: /nowhere.gguf", path="/nowhere.gguf"),
        ModelLoadError("/short.gguf is truncated (12 bytes): download it again", path="/short.gguf"),
        RemoteConnectError("could not connect"),
        JudgeTimeoutError("no data for 1 s"),
        OutputParseError("not JSON", raw_output="oops"),
        httpx.ConnectError("refused"),
        ConnectionResetError("reset"),
    ],
)
def test_fallback_worthy_errors_move_on_and_are_recorded(error):
    broken, backup = _failing(error, "broken"), _answering("backup")
    response = FallbackClient(broken, backup).chat.completions.create(**REQUEST)
    meta = response.localjudge
    assert meta.client == "backup"
    assert meta.failures == [{"client": "broken", "error": type(error).__name__, "message": str(error)}]
    assert backup.requests == [REQUEST]


@pytest.mark.parametrize(
    "error",
    [UsageError("bad call"), ContextOverflowError("prompt too long"), KeyError("a bug"), AllClientsFailedError([])],
)
def test_other_errors_propagate_at_once(error):
    backup = _answering("backup")
    with pytest.raises(type(error)):
        FallbackClient(_failing(error, "broken"), backup).chat.completions.create(**REQUEST)
    assert backup.requests == []


def test_all_failing_lists_every_failure_in_order():
    errors = [ModelLoadError("no file"), RemoteConnectError("refused"), OutputParseError("bad", raw_output="x")]
    clients = [_failing(e, f"c{i}") for i, e in enumerate(errors)]
    with pytest.raises(AllClientsFailedError) as info:
        FallbackClient(*clients).chat.completions.create(**REQUEST)
    assert info.value.errors == [("c0", errors[0]), ("c1", errors[1]), ("c2", errors[2])]
    text = str(info.value)
    assert "All 3 judge clients failed" in text
    assert text.index("c0: ModelLoadError") < text.index("c1: RemoteConnectError") < text.index("c2: OutputParseError")


def test_fallback_on_classes_and_predicates_override_the_rule():
    only_timeouts = FallbackClient(
        _failing(RemoteConnectError("x"), "a"), _answering("b"), fallback_on=JudgeTimeoutError
    )
    with pytest.raises(RemoteConnectError):
        only_timeouts.chat.completions.create(**REQUEST)
    everything = FallbackClient(_failing(KeyError("k"), "a"), _answering("b"), fallback_on=lambda exc: True)
    assert everything.chat.completions.create(**REQUEST).localjudge.client == "b"
    as_tuple = FallbackClient(_failing(KeyError("k"), "a"), _answering("b"), fallback_on=(KeyError, ValueError))
    assert as_tuple.chat.completions.create(**REQUEST).localjudge.client == "b"


@pytest.mark.parametrize("bad", [(), ("not a class",), 42, int])  # int: a class, but no exception
def test_bad_fallback_on_is_a_usage_error(bad):
    with pytest.raises(UsageError):
        FallbackClient(_answering("a"), fallback_on=bad)


def test_chain_needs_clients_of_the_right_shape():
    with pytest.raises(UsageError):
        FallbackClient()
    with pytest.raises(UsageError):
        FallbackClient(object())
    with pytest.raises(UsageError):
        FallbackClient(_answering("a"), _answering("b"), names=["same", "same"])


def test_names_are_made_unique():
    chain = FallbackClient(_answering("local"), _answering("local"), _answering("local"))
    assert repr(chain) == "FallbackClient(local, local#2, local#3)"
    assert (
        FallbackClient(_answering("x"), names=["primary"]).chat.completions.create(**REQUEST).localjudge.client
        == "primary"
    )


def test_foreign_errors_follow_the_default_rule():
    openai = pytest.importorskip("openai")
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    assert another_client(openai.APIConnectionError(request=request))
    assert another_client(openai.APITimeoutError(request=request))
    status = openai.InternalServerError("boom", response=httpx.Response(500, request=request), body=None)
    assert another_client(status)
    assert not another_client(ValueError("a bug"))
    assert not another_client(TypeError("a bug"))


class _SdkLikeResponse:
    """Stands in for the openai SDK's pydantic ChatResponse."""

    def __init__(self, content: str) -> None:
        self._data = make_chat_completion(content, model="sdk").model_dump()

    def model_dump(self):
        return self._data


class _SdkLikeClient:
    class chat:
        class completions:
            @staticmethod
            def create(**request):
                return _SdkLikeResponse(ANSWER)


def test_sdk_shaped_answers_are_converted_and_labelled():
    response = FallbackClient(_failing(RemoteConnectError("x"), "a"), _SdkLikeClient()).chat.completions.create(
        **REQUEST
    )
    assert response.choices[0].message.content == ANSWER
    assert response.localjudge.client == "_SdkLikeClient"


def test_check_schema_asks_every_client():
    seen = []

    class Checking(ScriptedClient):
        def check_schema(self, schema):
            seen.append(schema)
            if "pattern" in json.dumps(schema):
                raise UsageError("pattern cannot be enforced")

    chain = FallbackClient(Checking([ANSWER]), _answering("b"))
    chain.check_schema({"type": "object"})
    with pytest.raises(UsageError):
        chain.check_schema({"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}})
    assert len(seen) == 2


# -- async --------------------------------------------------------------------------------


class _AsyncAnswering(AsyncChatClient):
    name = "async-backup"

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    async def _acomplete(self, request):
        self.calls += 1
        return make_chat_completion(ANSWER, model="a")


async def test_async_chain_mixes_sync_and_async_clients():
    backup = _AsyncAnswering()
    chain = AsyncFallbackClient(_failing(ModelLoadError("no file"), "local"), backup)
    response = await chain.chat.completions.create(**REQUEST)
    assert response.localjudge.client == "async-backup"
    assert response.localjudge.failures[0]["error"] == "ModelLoadError"
    assert backup.calls == 1


async def test_async_chain_raises_all_failures():
    chain = FallbackClient(_failing(RemoteConnectError("a"), "a"), _failing(JudgeTimeoutError("b"), "b")).aio
    with pytest.raises(AllClientsFailedError) as info:
        await chain.chat.completions.create(**REQUEST)
    assert [name for name, _ in info.value.errors] == ["a", "b"]


async def test_aio_twin_uses_the_native_async_remote_client(fault_server):
    server = fault_server(completion())
    remote = OpenAICompatibleClient(server.base_url, **FAST)
    chain = FallbackClient(_failing(ModelLoadError("no file"), "local"), remote).aio
    try:
        response = await chain.chat.completions.create(**REQUEST)
    finally:
        await remote.aio.aclose()
    assert response.localjudge.client == remote.name
    assert chain.clients[1] is remote.aio


# -- through the judge ------------------------------------------------------------------


def test_judge_result_metadata_says_which_client_answered():
    from localjudge._judges.single import create_llm_as_judge

    chain = FallbackClient(_failing(ModelLoadError("Model file not found"), "local"), _answering("remote"))
    result = create_llm_as_judge(prompt="Judge {outputs}", judge=chain, use_reasoning=False)(outputs="4")
    assert result["score"] is True
    assert result["metadata"]["client"] == "remote"
    assert result["metadata"]["failures"][0]["client"] == "local"


# -- real server, real local model ------------------------------------------------------

SERVER_REQUEST = {**REQUEST, "max_tokens": 24, "temperature": 0}


@pytest.mark.server
@pytest.mark.model
def test_missing_local_model_falls_back_to_the_server(llama_server, tmp_path):
    from localjudge._clients.resolve import deferred_client

    missing = deferred_client(str(tmp_path / "missing.gguf"))
    with OpenAICompatibleClient(llama_server.base_url, max_retries=1) as remote:
        response = FallbackClient(missing, remote).chat.completions.create(**SERVER_REQUEST)
    assert isinstance(json.loads(response.choices[0].message.content)["score"], bool)
    assert response.localjudge.client == remote.name
    assert response.localjudge.failures[0]["error"] == "ModelNotFoundError"
    assert "missing.gguf" in response.localjudge.failures[0]["message"]


@pytest.mark.server
@pytest.mark.model
def test_openai_sdk_client_takes_part_in_a_chain(llama_server, tmp_path):
    openai = pytest.importorskip("openai")
    from localjudge._clients.resolve import deferred_client

    with openai.OpenAI(base_url=llama_server.base_url, api_key="sk-local", max_retries=0) as sdk:
        chain = FallbackClient(deferred_client(str(tmp_path / "missing.gguf")), sdk)
        response = chain.chat.completions.create(**SERVER_REQUEST)
    assert response.localjudge.client == "OpenAI"
    assert isinstance(json.loads(response.choices[0].message.content)["score"], bool)


@pytest.mark.server
@pytest.mark.model
def test_server_killed_mid_run_falls_back_to_the_local_model(disposable_llama_server, tiny_gguf):
    from localjudge._clients.llamacpp import LlamaCppClient

    local = LlamaCppClient(tiny_gguf, n_ctx=2048)
    # A long prompt keeps the server busy for seconds, so the kill lands while it works on it.
    long_prompt = "Judge this answer. " + "The sky is blue and grass is green. " * 60
    busy_request = {**SERVER_REQUEST, "messages": [{"role": "user", "content": long_prompt}]}
    with OpenAICompatibleClient(disposable_llama_server.base_url, max_retries=1, backoff=0.05) as remote:
        chain = FallbackClient(remote, local)
        first = chain.chat.completions.create(**SERVER_REQUEST)
        assert first.localjudge.client == remote.name
        killer = threading.Timer(0.3, disposable_llama_server.kill)
        killer.start()
        try:
            second = chain.chat.completions.create(**busy_request)
        finally:
            killer.cancel()
    assert disposable_llama_server.process.poll() is not None
    assert second.localjudge.client == local.name
    failure = second.localjudge.failures[0]
    assert failure["client"] == remote.name
    assert failure["error"] in ("RemoteConnectError", "RemoteCallError")
    assert "attempt 1: the server broke off the response" in failure["message"]
    assert isinstance(json.loads(second.choices[0].message.content)["score"], bool)


@pytest.mark.model
def test_local_client_is_a_judge_for_openevals(tiny_gguf):
    openevals_llm = pytest.importorskip("openevals.llm")
    from localjudge._clients.llamacpp import LlamaCppClient

    local = LlamaCppClient(tiny_gguf, n_ctx=1024)
    evaluator = openevals_llm.create_llm_as_judge(
        prompt="Is this answer correct?\nQuestion: {inputs}\nAnswer: {outputs}",
        judge=local,
        model="gemma-3-270m",
        use_reasoning=False,
    )
    result = evaluator(inputs="What is 2 + 2?", outputs="4")
    assert result["key"] == "score"
    assert isinstance(result["score"], bool)


def test_cache_identity_is_each_client_in_order_under_chain():
    class Identified(ScriptedClient):
        def __init__(self, model):
            super().__init__([ANSWER])
            self.model = model

        def cache_identity(self):
            return {"model": self.model}

    chain = FallbackClient(Identified("a"), Identified("b"))
    assert chain.cache_identity() == {"chain": [{"model": "a"}, {"model": "b"}]}  # the key of answers cached before


@pytest.mark.parametrize(
    ("first", "error"),
    [
        (make_chat_completion('{"score": tr', model="a", finish_reason="length"), "TruncatedOutputError"),
        ("I think it is fine.", "OutputParseError"),
        ('{"score": "yes"}', "OutputParseError"),  # JSON, but not of the schema
    ],
)
def test_an_answer_that_is_cut_short_or_not_of_the_schema_moves_on(first, error):
    bad = ScriptedClient([first], repeat=True)
    bad.name = "a"
    response = FallbackClient(bad, _answering("b")).chat.completions.create(**REQUEST)
    assert response.choices[0].message.content == ANSWER
    [failure] = response[FALLBACK_FIELD]["failures"]
    assert (failure["client"], failure["error"]) == ("a", error)


def test_free_text_is_any_text_and_a_bad_answer_from_every_client_keeps_its_raw_text():
    request = {k: v for k, v in REQUEST.items() if k != "response_format"}
    response = FallbackClient(_answering("a", "not JSON at all"), _answering("b")).chat.completions.create(**request)
    assert response[FALLBACK_FIELD]["client"] == "a"
    with pytest.raises(AllClientsFailedError) as caught:
        FallbackClient(_answering("a", "nope"), _answering("b", "{}")).chat.completions.create(**REQUEST)
    assert [type(e).__name__ for _, e in caught.value.errors] == ["OutputParseError", "OutputParseError"]
    assert [e.raw_output for _, e in caught.value.errors] == ["nope", "{}"]


async def test_the_async_chain_checks_answers_too():
    response = await AsyncFallbackClient(_answering("a", "nope"), _answering("b")).chat.completions.create(**REQUEST)
    assert response[FALLBACK_FIELD]["client"] == "b"


#: each way of judging a pair: its options, its verdict, and what only B's request shows first
PAIR_WAYS = {
    "both-orders": ('{"winner": "A"}', "<answer_a>\nIt is Paris."),
    "pointwise": ('{"score": true}', "<response>\nIt is Paris."),
}


def _scripted(name: str, answer) -> ScriptedClient:
    client = ScriptedClient([answer], repeat=True)
    client.name = name
    return client


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("way", list(PAIR_WAYS))
@pytest.mark.parametrize("writer", ["checklist", "self_reference"])
def test_a_pair_names_the_member_that_wrote_first_and_each_that_judged(mode, way, writer):
    from localjudge._judges.pairwise import create_async_pairwise_judge, create_pairwise_judge

    verdict, b_first = PAIR_WAYS[way]

    def local_answer(request):  # it writes no free text and refuses B's request: the remote member does those
        if "response_format" not in request or b_first in request["messages"][-1]["content"]:
            raise RemoteConnectError("local is down for this request")
        return verdict

    local = _scripted("local", local_answer)
    remote = _scripted("remote", lambda request: verdict if "response_format" in request else "Paris.")
    pair = {"inputs": "Name a city in one word.", "outputs_a": "Paris", "outputs_b": "It is Paris."}
    options = {"way": Way(pairs=way, **{writer: True}), "use_reasoning": False}
    if mode == "sync":
        result = create_pairwise_judge(judge=FallbackClient(local, remote), **options)(**pair)
    else:
        evaluator = create_async_pairwise_judge(judge=FallbackClient(local, remote).aio, **options)
        result = asyncio.run(evaluator(**pair))
    assert result["metadata"][writer] == "Paris."
    assert result["metadata"]["written_by"] == {writer: "remote"}
    assert result["metadata"]["clients"] == ["local", "remote"]  # in the order asked: B's request fell back
    (failure,) = result["metadata"]["failures"]
    assert (failure["client"], failure["error"], failure["request"]) == ("local", "RemoteConnectError", 1)


def test_a_judge_of_one_output_names_the_member_that_wrote_its_own_answer():
    from localjudge._judges.single import create_llm_as_judge

    def local_answer(request):
        if "response_format" not in request:
            raise RemoteConnectError("local writes no free text")
        return '{"score": true}'

    chain = FallbackClient(_scripted("local", local_answer), _scripted("remote", lambda request: "Paris."))
    prompt = "Is {outputs} the same answer to {inputs} as {reference_outputs}?"
    evaluator = create_llm_as_judge(prompt=prompt, judge=chain, self_reference=True, use_reasoning=False)
    result = evaluator(inputs="Name a city.", outputs="Paris")
    assert result["metadata"]["self_reference"] == "Paris."
    assert result["metadata"]["written_by"] == {"self_reference": "remote"}
    assert result["metadata"]["client"] == "local"


def test_a_pair_judged_by_one_client_names_no_members():
    from localjudge._judges.pairwise import create_pairwise_judge

    client = ScriptedClient(['{"winner": "A"}', '{"winner": "B"}'], repeat=True)
    result = create_pairwise_judge(judge=client, use_reasoning=False)(inputs="q", outputs_a="a", outputs_b="b")
    assert not {"clients", "failures", "written_by"} & set(result["metadata"])
