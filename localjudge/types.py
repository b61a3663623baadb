"""Types of the public API, matching OpenEvals' so annotated user code keeps type-checking."""

from collections.abc import Awaitable, Callable
from typing import Any, Optional, Protocol, Union, runtime_checkable

# No ``from __future__ import annotations`` here: TypedDicts read NotRequired from evaluated
# annotations (as strings every key would count as required at runtime). typing_extensions'
# TypedDict, because before Python 3.12 pydantic refuses typing's.
from typing_extensions import NotRequired, TypedDict

__all__ = [
    "AsyncChatCompletionsClient",
    "AsyncModelClient",
    "ChatCompletion",
    "ChatCompletionMessage",
    "ChatCompletionsClient",
    "EvaluatorResult",
    "FewShotExample",
    "ModelClient",
    "SimpleAsyncEvaluator",
    "SimpleEvaluator",
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
