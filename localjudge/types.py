"""Types of the public API, matching OpenEvals' so annotated user code keeps type-checking."""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Optional, Protocol, TypeGuard, TypeVar, Union, cast, runtime_checkable

# No ``from __future__ import annotations`` here: TypedDicts read NotRequired from evaluated
# annotations (as strings every key would count as required at runtime). typing_extensions'
# TypedDict, because before Python 3.12 pydantic refuses typing's.
from typing_extensions import NotRequired, TypedDict, get_protocol_members

__all__ = [
    "AnyModelClient",
    "AsyncChatCompletionsClient",
    "AsyncModelClient",
    "ChatCompletion",
    "ChatCompletionMessage",
    "ChatCompletionsClient",
    "ChatModel",
    "EvaluatorResult",
    "FewShotExample",
    "JudgeClient",
    "JudgeRequest",
    "ModelClient",
    "OutputSchemaSpec",
    "Prompt",
    "PromptCallable",
    "RunnablePrompt",
    "SimpleAsyncEvaluator",
    "SimpleEvaluator",
    "SupportsCacheIdentity",
    "SupportsCheckSchema",
    "SupportsCounters",
    "SupportsCreateMany",
    "SupportsRuntimeInfo",
    "SupportsSmokeDecode",
    "offers",
]


class ChatCompletionMessage(TypedDict):
    id: NotRequired[Optional[str]]
    content: Union[str, list[dict]]
    role: str
    tool_calls: NotRequired[Optional[list[dict]]]


class FewShotExample(TypedDict):
    inputs: Any
    outputs: Any
    score: Union[float, bool]
    reasoning: NotRequired[Optional[str]]


class EvaluatorResult(TypedDict):
    key: str
    score: Union[float, bool]
    comment: Optional[str]
    metadata: NotRequired[Optional[dict]]


class ChatCompletion(TypedDict):
    choices: list[dict]


class JudgeRequest(TypedDict):
    """One request a judge's plan sends its client: OpenAI's chat request, with the keys localjudge sets.

    ``score_reply``: the last message is a reply to score for its likelihood,
    not a question to answer (a local model's extension of the request).
    """

    messages: list[dict[str, Any]]  # OpenAI's chat messages, as the prompt built them
    model: NotRequired[str]
    response_format: NotRequired[dict[str, Any]]
    temperature: NotRequired[float]
    max_tokens: NotRequired[int]
    stop: NotRequired[list[str]]
    score_reply: NotRequired[bool]


@runtime_checkable
class ChatCompletionsClient(Protocol):
    def create(self, **kwargs: Any) -> ChatCompletion: ...


@runtime_checkable
class AsyncChatCompletionsClient(Protocol):
    def create(self, **kwargs: Any) -> Awaitable[ChatCompletion]: ...


class _Chat(Protocol):
    @property
    def completions(self) -> ChatCompletionsClient: ...


class _AsyncChat(Protocol):
    @property
    def completions(self) -> AsyncChatCompletionsClient: ...


@runtime_checkable
class ModelClient(Protocol):
    """Anything with ``.chat.completions.create(...)``, as the openai SDK's client has."""

    @property
    def chat(self) -> _Chat: ...


@runtime_checkable
class AsyncModelClient(Protocol):
    @property
    def chat(self) -> _AsyncChat: ...


# What a client (or an evaluator) may offer beyond ``chat.completions.create``. Probe with
# ``offers(obj, SupportsX)``, not ``isinstance``: a wrapping client forwards these by
# ``__getattr__``, which ``isinstance`` on Python 3.12+ no longer sees.


@runtime_checkable
class SupportsCheckSchema(Protocol):
    """Refuses, when an evaluator is built, a schema keyword the client cannot enforce (raises UsageError)."""

    def check_schema(self, schema: Mapping[str, Any]) -> None: ...


@runtime_checkable
class SupportsCacheIdentity(Protocol):
    """Says who answers (engine, model, decoding settings), for the result cache; None when it cannot say."""

    def cache_identity(self) -> Optional[dict[str, Any]]: ...


@runtime_checkable
class SupportsCreateMany(Protocol):
    """Decodes several requests side by side (a local client); each response as ``create`` gives it alone."""

    def create_many(self, requests: Sequence[Mapping[str, Any]], *, return_exceptions: bool = False) -> list[Any]: ...


@runtime_checkable
class SupportsSmokeDecode(Protocol):
    """Picks one token from one short prompt, proving the model runs here (``localjudge doctor``)."""

    def smoke_decode(self) -> dict[str, Any]: ...


@runtime_checkable
class SupportsRuntimeInfo(Protocol):
    """Reports the engine, model file and settings a local client runs with (``localjudge doctor``)."""

    def runtime_info(self) -> dict[str, Any]: ...


@runtime_checkable
class SupportsCounters(Protocol):
    """An evaluator that counts its own work (cache hits, model calls, tokens), for a batch's summary."""

    def counters(self) -> Mapping[str, int]: ...


_Capability = TypeVar("_Capability")


def offers(obj: object, capability: Callable[..., _Capability]) -> TypeGuard[_Capability]:
    """Whether ``obj`` has every method of ``capability`` (a ``Supports*`` protocol), found as ``getattr`` finds them.

    ``isinstance`` reads attributes statically from Python 3.12 on, so it would
    miss what a wrapping client forwards; this sees what a call would reach.
    (``capability`` is typed as a callable because mypy refuses a protocol where
    ``type[...]`` is expected.)
    """
    return all(callable(getattr(obj, name, None)) for name in get_protocol_members(cast(type, capability)))


class SimpleEvaluator(Protocol):
    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> Union[EvaluatorResult, list[EvaluatorResult], dict]: ...


class SimpleAsyncEvaluator(Protocol):
    def __call__(
        self,
        *,
        inputs: Any = None,
        outputs: Any = None,
        reference_outputs: Any = None,
        **kwargs: Any,
    ) -> Awaitable[Union[EvaluatorResult, list[EvaluatorResult], dict]]: ...


PromptCallable = Callable[..., list[ChatCompletionMessage]]


@runtime_checkable
class RunnablePrompt(Protocol):
    """A LangChain prompt (``ChatPromptTemplate``, ``StructuredPrompt``): a runnable, invoked with the values.

    Its ``input_variables`` and ``optional_variables``, when it has them, say which values it takes.
    """

    @property
    def input_schema(self) -> object: ...

    def invoke(self, input: dict[str, str], /) -> object: ...


#: what a judge can be asked with: a template string, a callable returning messages (checked when called),
#: or a LangChain prompt
Prompt = Union[str, Callable[..., object], RunnablePrompt]


@runtime_checkable
class ChatModel(Protocol):
    """A LangChain chat model (``BaseChatModel``), which a judge accepts as its client."""

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any: ...


#: what ``judge=`` takes: an OpenAI-shaped client, sync or async (ours among them), or a LangChain chat model
JudgeClient = Union[ModelClient, AsyncModelClient, ChatModel]

#: a verdict's shape as a caller gives it: a JSON schema, a Pydantic model class or a TypedDict class
OutputSchemaSpec = Union[Mapping[str, Any], type]

#: an OpenAI-shaped client, sync or async: what the judges call once ``judge=`` is resolved
AnyModelClient = Union[ModelClient, AsyncModelClient]
