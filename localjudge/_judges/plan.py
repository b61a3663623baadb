"""A judgement as a plan: a generator that yields the requests to send together and is sent their responses.

One plan serves both drivers, so sync and async judging share every
decision: :func:`run_plan` sends a step's requests side by side in threads
(a local model decodes them together), :func:`arun_plan` awaits them
together. The plans themselves live with the judges that make them.

Both drivers also keep what was sent and answered where a caller asked for
it (:func:`keeping_exchanges`): each request's messages and the model's raw
answer, for a record of the row that shows exactly what the judge saw.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Generator, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import Any, Optional, Union

from .._clients.base import acall_create, call_create
from .._clients.completion import read_completion
from ..errors import JudgeRuntimeError
from ..types import AsyncModelClient, JudgeRequest, ModelClient

__all__ = ["Step", "arun_plan", "keeping_exchanges", "note_exchanges", "run_plan", "together"]

#: what a step of a judge's plan yields (the requests to send together) and is sent back (their responses)
Step = Generator[list[JudgeRequest], list[object], Any]

#: where the drivers note each request and answer, in the context of a call that asked (None: nowhere)
_EXCHANGES: ContextVar[Optional[list[dict[str, Any]]]] = ContextVar("localjudge_exchanges", default=None)


@contextlib.contextmanager
def keeping_exchanges() -> Iterator[list[dict[str, Any]]]:
    """A list that gets, for every request judged in this context, its messages and the model's raw answer.

    Per context, so rows judged side by side in threads each keep their own.
    """
    kept: list[dict[str, Any]] = []
    token = _EXCHANGES.set(kept)
    try:
        yield kept
    finally:
        _EXCHANGES.reset(token)


def note_exchanges(requests: Sequence[JudgeRequest], responses: Sequence[object]) -> None:
    """Requests sent and their answers, kept where this context asked (:func:`keeping_exchanges`)."""
    kept = _EXCHANGES.get()
    if kept is not None:
        kept += [
            {"messages": r.get("messages"), "output": _raw_answer(a)} for r, a in zip(requests, responses, strict=True)
        ]


def _raw_answer(response: object) -> object:
    """The text a response carries (a reply scored for its likelihood has none: None)."""
    try:
        return read_completion(response).text
    except JudgeRuntimeError:
        return None


def together(*plans: Step) -> Step:
    """Several plans run side by side: each step sends every unfinished plan's next requests at once.

    Returns their results, in the order given. A plan that raises stops them all.
    """
    results: list[Any] = [None] * len(plans)
    pending: dict[int, list[JudgeRequest]] = {}
    for place, plan in enumerate(plans):
        try:
            pending[place] = next(plan)
        except StopIteration as done:
            results[place] = done.value
    while pending:
        responses = yield [request for requests in pending.values() for request in requests]
        following: dict[int, list[JudgeRequest]] = {}
        start = 0
        for place, requests in pending.items():
            answered, start = responses[start : start + len(requests)], start + len(requests)
            try:
                following[place] = plans[place].send(answered)
            except StopIteration as done:
                results[place] = done.value
        pending = following
    return results


def run_plan(client: Union[ModelClient, AsyncModelClient], plan: Step) -> Any:
    """A plan's result, each step's requests sent side by side (a local model decodes them together)."""
    try:
        requests = next(plan)
    except StopIteration as done:  # decided without asking (no code to judge, an answer with nothing to judge)
        return done.value
    while True:
        if len(requests) <= 1:
            responses = [call_create(client, request) for request in requests]
        else:
            with ThreadPoolExecutor(max_workers=len(requests)) as pool:
                responses = list(pool.map(lambda request: call_create(client, request), requests))
        note_exchanges(requests, responses)
        try:
            requests = plan.send(responses)
        except StopIteration as done:
            return done.value


async def arun_plan(client: Union[ModelClient, AsyncModelClient], plan: Step) -> Any:
    """A plan's result, each step's requests awaited together."""
    try:
        requests = next(plan)
    except StopIteration as done:
        return done.value
    while True:
        responses = list(await asyncio.gather(*(acall_create(client, request) for request in requests)))
        note_exchanges(requests, responses)
        try:
            requests = plan.send(responses)
        except StopIteration as done:
            return done.value
