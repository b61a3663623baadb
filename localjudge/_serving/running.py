"""Serving an app with uvicorn: the header deadline, and a stop that answers every request in flight."""

from __future__ import annotations

import sys
import threading
from typing import Any

from .._compat.uvicorn_h11 import header_deadline_protocol, server_calling_on_signal
from .limits import InFlight, Limits

__all__ = ["run"]


def run(app: Any, listening: Any, *, limits: Limits = Limits(), graceful_timeout: float = 30.0) -> None:
    """Serve ``app`` (from :func:`~localjudge._serving.app.create_app`) on the socket ``listening`` until SIGINT or SIGTERM.

    On the signal the server stops accepting; requests in flight get
    ``graceful_timeout`` seconds to finish, then each one left is cancelled
    at its next decode step and answered with a 503, a little before uvicorn
    would drop them with bare 500s. A second signal cancels them at once
    (503s still); only a third lets uvicorn drop whatever is left.
    """
    import uvicorn

    in_flight: InFlight = app.state.in_flight

    def wind_down(count: int) -> None:  # on a thread of its own: a signal handler must not print or wait
        print(f"stopping: {count} request(s) in flight get up to {graceful_timeout:g} s to finish", file=sys.stderr)
        sys.stderr.flush()
        threading.Event().wait(graceful_timeout)
        in_flight.cancel_all("the server is stopping")

    def on_signal(count: int) -> bool:
        """Whether uvicorn handles this signal too: not the second, when we stop now, still answering each request."""
        if count == 1:
            threading.Thread(target=wind_down, args=(in_flight.stop(),), daemon=True).start()
        elif count == 2:  # uvicorn's forced exit would 500 them
            threading.Thread(target=in_flight.cancel_all, args=("the server is stopping now",)).start()
            return False
        return True

    config = uvicorn.Config(
        app,
        http=header_deadline_protocol(limits.header_seconds),
        log_level="warning",
        # uvicorn's own deadline comes after ours, so that every request left is ours to answer (a 503)
        timeout_graceful_shutdown=int(graceful_timeout) + 10,
        limit_concurrency=512,  # connections, well under the usual 1,024 descriptors; requests: max_in_flight
    )
    server_calling_on_signal(config, on_signal).run(sockets=[listening])
