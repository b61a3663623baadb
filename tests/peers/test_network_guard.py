"""The guard the peers' tests run under: loopback connects, anything else is refused before a packet leaves."""

from __future__ import annotations

import asyncio
import socket

import pytest
from support.network_guard import loopback_only

ELSEWHERE = ("192.0.2.1", 443)  # TEST-NET-1: never routed

pytestmark = pytest.mark.server


def test_loopback_connects_and_anything_else_is_refused_and_counted():
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        with loopback_only() as refused:
            with socket.create_connection(listening.getsockname(), timeout=2):
                pass
            with pytest.raises(ConnectionRefusedError, match="only loopback"):
                socket.create_connection(ELSEWHERE, timeout=2)

            async def reach() -> None:
                await asyncio.open_connection(*ELSEWHERE)

            with pytest.raises(ConnectionRefusedError):
                asyncio.run(reach())
    assert refused == [ELSEWHERE, ELSEWHERE]
    assert socket.socket.connect.__qualname__ == "socket.connect"  # put back
