"""A relay on 127.0.0.1 in front of ``localjudge serve`` that keeps each exchange.

A peer's client is pointed at the relay instead of the server; the relay
passes every request on unchanged and keeps what the peer asked and what the
server answered, so a test can tell that the peer's judging went through
``serve`` and what it used of the answer (logprobs, a schema).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

__all__ = ["Exchange", "Relay"]

FORWARDED_HEADERS = ("authorization", "content-type", "accept")


@dataclass(frozen=True)
class Exchange:
    method: str
    path: str
    request: Any  # the JSON body the peer sent (None for a GET)
    status: int
    response: Any  # the JSON body the server answered

    @property
    def is_chat(self) -> bool:
        return self.method == "POST" and self.path.endswith("/chat/completions")


class Relay:
    """``Relay(upstream)``: listens on a free loopback port; ``base_url`` is its ``/v1``; ``exchanges`` what passed."""

    def __init__(self, upstream: str, *, timeout: float = 300.0) -> None:
        self.upstream = upstream.rstrip("/")
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=timeout)
        relay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the peers' clients expect

            def do_GET(self) -> None:
                relay._pass(self, None)

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                relay._pass(self, self.rfile.read(length))

            def log_message(self, format: str, *args: Any) -> None:  # quiet: requests carry the key
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def chats(self) -> list[Exchange]:
        with self._lock:
            return [exchange for exchange in self.exchanges if exchange.is_chat]

    def _pass(self, handler: BaseHTTPRequestHandler, body: bytes | None) -> None:
        headers = {name: handler.headers[name] for name in FORWARDED_HEADERS if handler.headers.get(name)}
        try:
            answer = self._client.request(handler.command, self.upstream + handler.path, headers=headers, content=body)
            status, content = answer.status_code, answer.content
        except httpx.HTTPError as exc:
            status, content = 502, json.dumps({"error": {"message": f"relay: {type(exc).__name__}"}}).encode()
        with self._lock:
            self.exchanges.append(
                Exchange(handler.command, handler.path, _json(body) if body else None, status, _json(content))
            )
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(content)))
        handler.end_headers()
        handler.wfile.write(content)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data.decode(errors="replace")
