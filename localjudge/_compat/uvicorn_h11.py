"""uvicorn: the h11 protocol's request cycle, and the server's signal handler.

``localjudge serve`` bounds what uvicorn's public settings do not: the time
a connection may take to send a request's line and headers, and what
requests still running at a stop are answered with. Both are subclasses of
uvicorn's own classes, built here, where what they rely on is checked.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .versions import require

__all__ = ["header_deadline_protocol", "server_calling_on_signal"]

_NEEDED_FOR_DEADLINE = "serve closes a connection whose request headers are late"


def _names(function: object) -> frozenset[str]:
    """The attribute and global names ``function``'s own code uses (what it reads or sets on ``self``)."""
    return frozenset(getattr(getattr(function, "__code__", None), "co_names", ()))


def check_h11_protocol() -> type[Any]:
    """uvicorn's ``H11Protocol``, checked to have every method and attribute :func:`header_deadline_protocol` uses."""
    from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle

    for method in ("connection_made", "handle_events", "on_response_complete", "connection_lost"):
        require(
            "uvicorn",
            callable(getattr(H11Protocol, method, None)),
            missing=f"H11Protocol.{method}()",
            needed_for=_NEEDED_FOR_DEADLINE,
        )
    for owner, method, attribute in (
        (H11Protocol, "__init__", "cycle"),
        (H11Protocol, "__init__", "loop"),
        (H11Protocol, "connection_made", "transport"),
        (RequestResponseCycle, "__init__", "response_complete"),
    ):
        require(
            "uvicorn",
            attribute in _names(getattr(owner, method, None)),
            missing=f"{owner.__name__}.{attribute} (set in {owner.__name__}.{method})",
            needed_for=_NEEDED_FOR_DEADLINE,
        )
    return H11Protocol


def header_deadline_protocol(header_seconds: float) -> type[Any]:
    """uvicorn's h11 protocol, closing a connection whose next request line and headers take over ``header_seconds``.

    Why: uvicorn bounds an idle kept-alive connection, not one that trickles
    its headers in, so slow clients could hold every connection. Relies on:
    ``H11Protocol`` calling ``connection_made``, ``handle_events``,
    ``on_response_complete`` and ``connection_lost`` as the connection goes,
    and keeping the request being served as ``self.cycle`` (a
    ``RequestResponseCycle`` with ``response_complete``), replaced by a new
    one when a request's headers have all arrived.
    """
    base = check_h11_protocol()

    class HeaderDeadline(base):  # type: ignore[valid-type,misc]
        deadline: Any = None
        awaited: Any = None  # the request cycle current when the deadline was set

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self.arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self.arm()

        def handle_events(self) -> None:
            super().handle_events()
            if self.deadline is not None and self.cycle is not self.awaited:  # a whole request has arrived
                self.disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self.disarm()
            super().connection_lost(exc)

        def arm(self) -> None:
            self.disarm()
            if self.cycle is not None and not self.cycle.response_complete:
                return  # a pipelined request already arrived whole and runs; its end arms the deadline again
            self.awaited = self.cycle
            self.deadline = self.loop.call_later(header_seconds, self.late)

        def disarm(self) -> None:
            if self.deadline is not None:
                self.deadline.cancel()
                self.deadline = None

        def late(self) -> None:
            self.deadline = None
            if self.cycle is self.awaited and not self.transport.is_closing():
                self.transport.close()

    return HeaderDeadline


def server_calling_on_signal(config: Any, on_signal: Callable[[int], bool]) -> Any:
    """A ``uvicorn.Server`` for ``config`` that calls ``on_signal(count)`` at each SIGINT or SIGTERM.

    uvicorn's own handling (stop accepting, then stop) follows only when
    ``on_signal`` returns true. Why: at its shutdown deadline uvicorn drops
    requests still running with bare 500s, and a second Ctrl-C forces it
    out; ``serve`` answers each of them first, in OpenAI's shape. Relies on:
    ``Server.handle_exit(sig, frame)`` being what uvicorn's signal handlers
    call.
    """
    import uvicorn

    handle_exit = getattr(uvicorn.Server, "handle_exit", None)
    require(
        "uvicorn",
        callable(handle_exit) and list(inspect.signature(handle_exit).parameters)[1:] == ["sig", "frame"],
        missing="Server.handle_exit(sig, frame)",
        needed_for="serve answers every request still in flight when it stops",
    )
    signals = 0

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            nonlocal signals
            signals += 1
            if on_signal(signals):
                super().handle_exit(sig, frame)

    return Server(config)
