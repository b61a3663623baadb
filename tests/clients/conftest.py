"""Fixtures for the client tests: scripted fault servers (the real llama-cpp-python server is in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.fault_server import Blackhole, FaultServer

from localjudge._clients.bound import BOUND_FIELD
from localjudge._clients.formats import FIXED_TEMPERATURE, FORMATS


@pytest.fixture(autouse=True)
def _fresh_format_memo() -> Iterator[None]:
    """Each test negotiates response_format (and the bound's field) from scratch."""
    for memo in (FORMATS, FIXED_TEMPERATURE, BOUND_FIELD):
        memo.forget()
    yield
    for memo in (FORMATS, FIXED_TEMPERATURE, BOUND_FIELD):
        memo.forget()


@pytest.fixture
def fault_server() -> Iterator[Callable[..., FaultServer]]:
    """``fault_server(action, ...)``: a scripted loopback server, closed after the test."""
    servers: list[FaultServer] = []

    def start(*script: Any) -> FaultServer:
        server = FaultServer(list(script))
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def blackhole() -> Iterator[Blackhole]:
    hole = Blackhole()
    yield hole
    hole.close()
