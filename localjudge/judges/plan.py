"""A judgement as a plan: a generator that yields the requests to send together and is sent their responses.

One plan serves both drivers, so sync and async judging share every
decision: :func:`run_plan` sends a step's requests side by side in threads
(a local model decodes them together), :func:`arun_plan` awaits them
together. The plans themselves live with the judges that make them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..clients.base import acall_create, call_create

__all__ = ["Step", "arun_plan", "run_plan", "together"]

#: what a step of a judge's plan yields (the requests to send together) and is sent back (their responses)
Step = Generator[list[dict[str, Any]], list[Any], Any]


def together(*plans: Step) -> Step:
    """Several plans run side by side: each step sends every unfinished plan's next requests at once.

    Returns their results, in the order given. A plan that raises stops them all.
    """
    results: list[Any] = [None] * len(plans)
    pending: dict[int, list[dict[str, Any]]] = {}
    for place, plan in enumerate(plans):
        try:
            pending[place] = next(plan)
        except StopIteration as done:
            results[place] = done.value
    while pending:
        responses = yield [request for requests in pending.values() for request in requests]
        following: dict[int, list[dict[str, Any]]] = {}
        start = 0
        for place, requests in pending.items():
            answered, start = responses[start : start + len(requests)], start + len(requests)
            try:
                following[place] = plans[place].send(answered)
            except StopIteration as done:
                results[place] = done.value
        pending = following
    return results


def run_plan(client: Any, plan: Step) -> Any:
    """A plan's result, each step's requests sent side by side (a local model decodes them together)."""
    requests = next(plan)  # every plan asks for its verdict at least
    while True:
        if len(requests) <= 1:
            responses = [call_create(client, request) for request in requests]
        else:
            with ThreadPoolExecutor(max_workers=len(requests)) as pool:
                responses = list(pool.map(lambda request: call_create(client, request), requests))
        try:
            requests = plan.send(responses)
        except StopIteration as done:
            return done.value


async def arun_plan(client: Any, plan: Step) -> Any:
    """A plan's result, each step's requests awaited together."""
    requests = next(plan)
    while True:
        responses = list(await asyncio.gather(*(acall_create(client, request) for request in requests)))
        try:
            requests = plan.send(responses)
        except StopIteration as done:
            return done.value
