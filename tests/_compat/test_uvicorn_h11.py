"""uvicorn's h11 protocol and signal handler, as ``serve`` uses them, on a real uvicorn; without them, a loud error."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

uvicorn = pytest.importorskip("uvicorn")

from localjudge._compat.uvicorn_h11 import header_deadline_protocol, server_calling_on_signal  # noqa: E402
from localjudge.errors import IncompatibleDependencyError  # noqa: E402

HEADER_SECONDS = 0.4
APP_SECONDS = 1.0  # longer than the header deadline: a request whose headers arrived is not cut by it


async def slow_app(scope, receive, send):
    await asyncio.sleep(APP_SECONDS)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture
def port():
    """A real uvicorn on 127.0.0.1 serving ``slow_app`` with the header deadline protocol: its port."""
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(16)
    config = uvicorn.Config(slow_app, http=header_deadline_protocol(HEADER_SECONDS), lifespan="off", log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield listening.getsockname()[1]
    server.should_exit = True
    thread.join(10)
    listening.close()


def closed_within(connection: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``connection`` within ``seconds`` (reading past whatever it answered)."""
    connection.settimeout(seconds)
    try:
        while connection.recv(4096):
            pass
    except TimeoutError:
        return False
    return True


REQUEST = b"GET / HTTP/1.1\r\nHost: judge\r\n\r\n"


def read_answer(connection: socket.socket, seconds: float) -> bytes:
    """The whole answer to one request (its headers and the body ``ok``), however the server's writes were cut."""
    connection.settimeout(seconds)
    answer = b""
    while not answer.endswith(b"\r\n\r\nok"):
        chunk = connection.recv(4096)
        if not chunk:
            break
        answer += chunk
    return answer


@pytest.mark.server
def test_a_request_whose_headers_arrived_runs_past_the_deadline_and_an_idle_connection_is_closed(port):
    """The protocol sees the request cycle change when headers arrive (disarm), and complete (arm again)."""
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(REQUEST)
        answer = read_answer(connection, APP_SECONDS + 5)
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok")
        started = time.monotonic()
        assert closed_within(connection, 3)  # kept alive, then idle past the deadline (uvicorn's own: 5 s)
        assert time.monotonic() - started < HEADER_SECONDS + 1


@pytest.mark.server
def test_a_connection_whose_headers_are_late_is_closed_and_others_are_served(port):
    with socket.create_connection(("127.0.0.1", port)) as slow, socket.create_connection(("127.0.0.1", port)) as fine:
        slow.sendall(b"GET / HTTP/1.1\r\nHost: ju")  # and no more
        fine.sendall(REQUEST)
        started = time.monotonic()
        assert closed_within(slow, 5)
        assert time.monotonic() - started < APP_SECONDS + 1
        assert read_answer(fine, 5).startswith(b"HTTP/1.1 200")


SIGNAL_SCRIPT = textwrap.dedent(
    """
    import signal, socket, sys, uvicorn
    from localjudge._compat.uvicorn_h11 import server_calling_on_signal

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(16)
    print(listening.getsockname()[1], flush=True)

    def on_signal(count):
        print(f"signal {count}", flush=True)
        return count > 1  # the first one is ours alone: uvicorn keeps serving

    config = uvicorn.Config(app, lifespan="off", log_level="error")
    server_calling_on_signal(config, on_signal).run(sockets=[listening])
    """
)


def get(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(b"GET / HTTP/1.1\r\nHost: judge\r\nConnection: close\r\n\r\n")
        return connection.recv(4096)


@pytest.mark.server
def test_each_signal_reaches_the_callback_and_uvicorn_stops_only_when_it_says_so():
    process = subprocess.Popen([sys.executable, "-c", SIGNAL_SCRIPT], stdout=subprocess.PIPE, text=True)
    try:
        port = int(process.stdout.readline())
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # served: uvicorn has installed its signal handlers
            try:
                if get(port).startswith(b"HTTP/1.1 200"):
                    break
            except OSError:
                time.sleep(0.05)
        process.terminate()
        assert process.stdout.readline() == "signal 1\n"
        assert get(port).startswith(b"HTTP/1.1 200")  # uvicorn never saw it
        process.terminate()
        assert process.stdout.readline() == "signal 2\n"
        process.wait(20)  # uvicorn stopped
    finally:
        process.kill()
        process.wait()


def test_a_protocol_without_the_methods_relied_on_is_a_loud_error(monkeypatch):
    from uvicorn.protocols.http.h11_impl import H11Protocol

    monkeypatch.delattr(H11Protocol, "on_response_complete")
    with pytest.raises(
        IncompatibleDependencyError, match=r"uvicorn \S+ is installed, but it has no H11Protocol\.on_response_complete"
    ):
        header_deadline_protocol(1.0)


def test_a_protocol_that_keeps_no_request_cycle_is_a_loud_error(monkeypatch):
    from uvicorn.protocols.http.h11_impl import H11Protocol

    def init_without_cycle(self, config, server_state, app_state=None, _loop=None):
        self.loop = _loop

    monkeypatch.setattr(H11Protocol, "__init__", init_without_cycle)
    with pytest.raises(IncompatibleDependencyError, match=r"H11Protocol\.cycle .*tested with uvicorn"):
        header_deadline_protocol(1.0)


def test_a_server_without_handle_exit_is_a_loud_error(monkeypatch):
    monkeypatch.delattr(uvicorn.Server, "handle_exit")
    with pytest.raises(IncompatibleDependencyError, match=r"Server\.handle_exit\(sig, frame\)"):
        server_calling_on_signal(uvicorn.Config(slow_app), lambda count: True)
