"""Connections to anything but loopback refused, and counted: the peers' clients judge offline.

Standard library only: the DeepEval runner imports it in its own virtual environment.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["loopback_only"]


def _is_loopback(address: Any) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX: a path on this machine
        return True
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:  # a name: only a resolver would make it an address
        return False


@contextmanager
def loopback_only() -> Iterator[list[Any]]:
    """Refuse every connection but to loopback while the block runs; yields the addresses refused."""
    refused: list[Any] = []
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guarded(original: Any) -> Any:
        def attempt(sock: socket.socket, address: Any) -> Any:
            if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
                refused.append(address)
                raise ConnectionRefusedError(f"only loopback is allowed here, not {address!r}")
            return original(sock, address)

        return attempt

    socket.socket.connect, socket.socket.connect_ex = guarded(connect), guarded(connect_ex)  # type: ignore[method-assign]
    try:
        yield refused
    finally:
        socket.socket.connect, socket.socket.connect_ex = connect, connect_ex  # type: ignore[method-assign]
