"""What the judge writes before its verdict (its own reference, its checks): asked together, read alike.

Each writer is asked one free-text chat request, greedy and bounded in
tokens; every writer a judgement needs is asked in the same step, so a local
model decodes them side by side. What they wrote goes into the verdict's
prompt and, under each writer's name, into the result's metadata: a verdict
that rests on text the judge wrote is shown with that text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional, Protocol

from .._clients.completion import read_completion
from .._clients.fallback import answering_client
from ..errors import OutputParseError, TruncatedOutputError
from ..types import JudgeRequest
from .plan import Step

__all__ = ["Writer", "Written", "read_written", "with_written", "write_first", "written_request"]


class Writer(Protocol):
    """Something the judge is asked to write before its verdict."""

    def request(self, inputs: object, model: Optional[str]) -> JudgeRequest: ...

    def read(self, response: object, *, backend: str) -> str: ...


@dataclass(frozen=True)
class Written:
    """What the judge wrote, by writer, and the member of a fallback chain that wrote each (where a chain did)."""

    texts: dict[str, str] = field(default_factory=dict)
    by: dict[str, str] = field(default_factory=dict)


def write_first(writers: Mapping[str, Writer], inputs: object, *, model: Optional[str], backend: str) -> Step:
    """Every writer's text, and the chain's member that wrote it, by name, from one step of requests.

    Nothing is asked when there are no writers.
    """
    if not writers:
        return Written()
    responses = yield [writer.request(inputs, model) for writer in writers.values()]
    texts, by = {}, {}
    for (name, writer), response in zip(writers.items(), responses, strict=True):
        texts[name] = writer.read(response, backend=backend)
        if (member := answering_client(response)) is not None:
            by[name] = member
    return Written(texts, by)


def written_request(messages: list[dict[str, Any]], *, max_tokens: int, model: Optional[str]) -> JudgeRequest:
    """A writer's chat request: free text (no response_format), greedy, bounded in tokens."""
    request: JudgeRequest = {"messages": messages, "temperature": 0, "max_tokens": max_tokens}
    if model is not None:
        request["model"] = model
    return request


def read_written(response: object, *, backend: str, cut: str, empty: str) -> str:
    """A writer's text, stripped; cut at its bound or empty, an error (``cut``, ``empty``) with what it wrote."""
    completion = read_completion(response, backend=backend)
    content = completion.text
    text = (content or "").strip()
    if completion.finish_reason == "length":
        raise TruncatedOutputError(cut, raw_output=content or "", backend=backend)
    if not text:
        raise OutputParseError(empty, raw_output=content or "", backend=backend)
    return text


def with_written(result: object, written: Written) -> Any:
    """The result with what the judge wrote in its metadata, where it has metadata (our score dict).

    A chain's member that wrote a text is named in ``written_by``: the verdict may come from another.
    """
    if not written.texts or not isinstance(result, dict) or "metadata" not in result:
        return result
    metadata = {**(result["metadata"] or {}), **written.texts}
    if written.by:
        metadata["written_by"] = written.by
    return {**result, "metadata": metadata}
