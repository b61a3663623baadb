"""httpx: the network backend of a transport's connection pool.

httpcore's connection pools take a ``network_backend`` (the object that
opens TCP connections), but httpx's ``HTTPTransport`` and
``AsyncHTTPTransport`` do not pass one on (up to 0.29), so there is no
public way to decide the address a connection goes to. The guarded clients
(:mod:`localjudge._clients.guarded_network`) need exactly that: the address
checked is the address connected to.
"""

from __future__ import annotations

from typing import TypeVar

from .versions import require

__all__ = ["use_network_backend"]

Transport = TypeVar("Transport")


def use_network_backend(transport: Transport, backend: object) -> Transport:
    """``transport`` (an httpx ``HTTPTransport`` or ``AsyncHTTPTransport``), opening its connections through ``backend``.

    Relies on: httpx's transports keeping their httpcore pool as ``_pool``,
    and httpcore's pools opening every connection through their
    ``_network_backend``. Either missing is an error, never a transport
    that would connect unchecked.
    """
    pool = getattr(transport, "_pool", None)
    require(
        "httpx",
        pool is not None,
        missing=f"{type(transport).__name__}._pool (its httpcore connection pool)",
        needed_for="the guarded clients connect only to addresses they checked",
    )
    require(
        "httpcore",
        hasattr(pool, "_network_backend"),
        missing=f"{type(pool).__name__}._network_backend",
        needed_for="the guarded clients connect only to addresses they checked",
    )
    pool._network_backend = backend  # type: ignore[union-attr]
    return transport
