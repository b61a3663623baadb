"""Helpers for tests that start real server processes (imported by name: conftest modules shadow each other)."""

from __future__ import annotations

import socket
import sys


def die_with_parent() -> None:
    """Ask Linux to stop the server if the test run dies without running its finalizers."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def interruptible() -> None:
    """Give the child Python's own Ctrl-C: a shell that runs the tests in the background ignores SIGINT,
    and a child would inherit that (Python then never raises KeyboardInterrupt)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
