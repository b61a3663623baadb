"""HTTP clients that check the address they connect to, not the name they were given.

A base URL's host may be a name whose DNS answer is a link-local or cloud
metadata address (169.254.169.254), written in any form (IPv4-mapped, NAT64,
``::a.b.c.d``). The name is resolved here, each address is checked with
:func:`~localjudge._clients.endpoint.refused_address`, and the connection is
made to the checked address itself, so a second DNS answer cannot differ
from the one that was checked. TLS still verifies the name.

httpx has no public way to choose the address a connection goes to
(``HTTPTransport`` takes no network backend), so the transport's connection
pool is given httpcore's backend interface, ours, through
:func:`localjudge._compat.httpx_pool.use_network_backend`, which fails closed
when the pool is not what it expects. With a proxy
configured (``HTTPS_PROXY`` and the like), the proxy makes the connections:
the client is then httpx's own, which honours those settings, and the check
is the proxy's to make.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

import httpcore
import httpx

from .._compat.httpx_pool import use_network_backend
from ..errors import UsageError
from .endpoint import refused_address

__all__ = ["AddressRefused", "guarded_async_client", "guarded_client"]


class AddressRefused(UsageError):
    """The host resolved only to addresses that are refused."""


def _allowed(host: str, infos: Iterable[tuple[Any, ...]]) -> list[str]:
    """The addresses to try, in the resolver's order; an error when every one is refused."""
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    allowed = [a for a in addresses if not refused_address(ipaddress.ip_address(a.split("%", 1)[0]))]
    if addresses and not allowed:
        raise AddressRefused(
            f"{host} resolves to {', '.join(addresses)}: a link-local or cloud metadata address, which is refused"
        )
    return allowed


class _CheckedBackend(httpcore.SyncBackend):
    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        failure: Exception | None = None
        for address in _allowed(host, infos):
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as exc:
                failure = exc
        raise failure or httpcore.ConnectError(f"{host} has no address to connect to")


class _CheckedAsyncBackend(httpcore.AnyIOBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        import anyio

        try:
            infos = await anyio.to_thread.run_sync(lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from exc
        failure: Exception | None = None
        for address in _allowed(host, infos):
            try:
                return await super().connect_tcp(address, port, timeout, local_address, socket_options)
            except httpcore.ConnectError as exc:
                failure = exc
        raise failure or httpcore.ConnectError(f"{host} has no address to connect to")


def _proxied() -> bool:
    """Whether the environment names a proxy (a transport of our own would make httpx ignore it)."""
    import urllib.request

    return any(scheme in urllib.request.getproxies() for scheme in ("http", "https", "all"))


def guarded_client(**options: Any) -> httpx.Client:
    """An ``httpx.Client(**options)`` whose connections go only to allowed addresses (or through the proxy)."""
    if _proxied():
        return httpx.Client(**options)
    return httpx.Client(transport=use_network_backend(httpx.HTTPTransport(), _CheckedBackend()), **options)


def guarded_async_client(**options: Any) -> httpx.AsyncClient:
    """The async twin of :func:`guarded_client`."""
    if _proxied():
        return httpx.AsyncClient(**options)
    return httpx.AsyncClient(
        transport=use_network_backend(httpx.AsyncHTTPTransport(), _CheckedAsyncBackend()), **options
    )
