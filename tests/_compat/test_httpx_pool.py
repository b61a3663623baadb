"""The network backend given to an httpx transport's pool opens its connections; without the pool, a loud error."""

from __future__ import annotations

import http.server
import socket
import threading

import httpcore
import httpx
import pytest

from localjudge._compat.httpx_pool import use_network_backend
from localjudge.errors import IncompatibleDependencyError


@pytest.fixture
def http_server():
    """A plain HTTP server on 127.0.0.1 answering every GET with 200 ``ok``: its port."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


class RecordingBackend(httpcore.SyncBackend):
    def __init__(self):
        self.connected = []

    def connect_tcp(self, host, port, *args, **kwargs):
        self.connected.append((host, port))
        return super().connect_tcp("127.0.0.1", port, *args, **kwargs)  # whatever the name: our choice of address


class RecordingAsyncBackend(httpcore.AnyIOBackend):
    def __init__(self):
        self.connected = []

    async def connect_tcp(self, host, port, *args, **kwargs):
        self.connected.append((host, port))
        return await super().connect_tcp("127.0.0.1", port, *args, **kwargs)


@pytest.mark.server
def test_the_backend_given_opens_the_connection_to_the_address_it_chooses(http_server):
    backend = RecordingBackend()
    with httpx.Client(transport=use_network_backend(httpx.HTTPTransport(), backend)) as client:
        response = client.get(f"http://judge.invalid:{http_server}/")  # a name no resolver answers
    assert (response.status_code, response.text) == (200, "ok")
    assert backend.connected == [("judge.invalid", http_server)]


@pytest.mark.server
async def test_the_async_transport_uses_the_backend_given_too(http_server):
    backend = RecordingAsyncBackend()
    async with httpx.AsyncClient(transport=use_network_backend(httpx.AsyncHTTPTransport(), backend)) as client:
        response = await client.get(f"http://judge.invalid:{http_server}/")
    assert (response.status_code, response.text) == (200, "ok")
    assert backend.connected == [("judge.invalid", http_server)]


@pytest.mark.server
def test_the_guarded_client_connects_through_its_checked_backend(http_server, monkeypatch):
    """The name is resolved by the guard (here to 127.0.0.1), not by httpcore's own backend."""
    from localjudge._clients.guarded_network import guarded_client

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    real, asked = socket.getaddrinfo, []

    def getaddrinfo(host, port, *args, **kwargs):
        asked.append(host)
        return real("127.0.0.1" if host == "judge.test" else host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with guarded_client() as client:
        assert client.get(f"http://judge.test:{http_server}/").text == "ok"
    assert "judge.test" in asked


def test_a_transport_without_its_pool_is_a_loud_error_naming_httpx(monkeypatch):
    transport = httpx.HTTPTransport()
    monkeypatch.delattr(transport, "_pool")
    with pytest.raises(
        IncompatibleDependencyError, match=r"httpx \S+ is installed, but it has no HTTPTransport\._pool"
    ):
        use_network_backend(transport, RecordingBackend())


def test_a_pool_without_its_network_backend_is_a_loud_error_naming_httpcore(monkeypatch):
    transport = httpx.HTTPTransport()
    monkeypatch.delattr(transport._pool, "_network_backend")
    with pytest.raises(IncompatibleDependencyError, match=r"httpcore \S+ is installed.*_network_backend.*tested with"):
        use_network_backend(transport, RecordingBackend())


def test_the_guarded_clients_fail_closed_without_the_pool(monkeypatch):
    from localjudge._clients.guarded_network import guarded_async_client, guarded_client

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    for transport in (httpx.HTTPTransport, httpx.AsyncHTTPTransport):  # transports that keep no pool
        monkeypatch.setattr(transport, "__init__", lambda self, **kwargs: None)
    with pytest.raises(IncompatibleDependencyError, match="httpx"):
        guarded_client()
    with pytest.raises(IncompatibleDependencyError, match="httpx"):
        guarded_async_client()
