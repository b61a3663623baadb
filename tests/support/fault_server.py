"""A scripted HTTP/1.1 server on 127.0.0.1 for fault injection.

Each request the server receives is answered by the next action of its
script (the last action repeats). Actions write real bytes to a real socket:
a reset is a TCP RST, a drip is one byte at a time, so the client's own
network code is what gets tested. The server counts open connections so a
test can tell whether the client left any behind.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Action = Callable[["Exchange"], bool]  # returns whether the connection stays open


@dataclass
class Exchange:
    """One request as received, and the socket to answer on."""

    conn: socket.socket
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    stopping: threading.Event

    def json(self) -> Any:
        return json.loads(self.body)

    def send(self, data: bytes) -> None:
        self.conn.sendall(data)

    def peer_closed(self) -> bool:
        """Whether the client has hung up (an EOF is waiting)."""
        try:
            return self.conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except (BlockingIOError, InterruptedError, TimeoutError):
            return False
        except OSError:
            return True


def _head(status: int, reason: str, headers: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def respond(status: int = 200, body: Any = b"", headers: dict[str, str] | None = None, reason: str = "X") -> Action:
    """A complete answer; a dict or list body is sent as JSON."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
    elif isinstance(body, str):
        body = body.encode()

    def action(ex: Exchange) -> bool:
        ex.send(_head(status, reason, {"Content-Length": str(len(body)), **(headers or {})}) + body)
        return True

    return action


def completion_body(content: str, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def completion(content: str = '{"score": true}', finish_reason: str = "stop") -> Action:
    return respond(200, completion_body(content, finish_reason), {"Content-Type": "application/json"}, "OK")


def reset() -> Action:
    """Close with a TCP RST before any answer (SO_LINGER 0)."""

    def action(ex: Exchange) -> bool:
        ex.conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        return False

    return action


def hang(limit: float = 30.0) -> Action:
    """Read the request, then say nothing until the server stops (or ``limit`` passes)."""

    def action(ex: Exchange) -> bool:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and not ex.stopping.wait(0.05):
            if ex.peer_closed():
                break
        return False

    return action


def drip(body: bytes | str, interval: float, status: int = 200) -> Action:
    """Headers at once, then the body one byte per ``interval`` seconds."""
    data = body.encode() if isinstance(body, str) else body

    def action(ex: Exchange) -> bool:
        ex.send(_head(status, "OK", {"Content-Length": str(len(data)), "Content-Type": "application/json"}))
        for i in range(len(data)):
            if ex.stopping.wait(interval):
                return False
            try:
                ex.send(data[i : i + 1])
            except OSError:  # the client gave up and closed
                return False
        return True

    return action


def truncated(body: bytes | str, missing: int = 40) -> Action:
    """Promise ``missing`` more bytes than are sent, then close."""
    data = body.encode() if isinstance(body, str) else body

    def action(ex: Exchange) -> bool:
        ex.send(_head(200, "OK", {"Content-Length": str(len(data) + missing), "Content-Type": "application/json"}))
        ex.send(data)
        return False

    return action


def echo_headers(status: int = 401) -> Action:
    """An error whose body repeats the request headers, as careless servers do with keys."""

    def action(ex: Exchange) -> bool:
        body = json.dumps({"error": {"message": f"bad credentials: {ex.headers}"}}).encode()
        ex.send(_head(status, "Unauthorized", {"Content-Length": str(len(body))}) + body)
        return True

    return action


@dataclass
class FaultServer:
    script: list[Action]
    requests: list[Exchange] = field(default_factory=list)
    connections_total: int = 0

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self.stopping = threading.Event()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._spawn(self._accept_loop)

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._open)

    def wait_open_at_most(self, count: int, within: float = 3.0) -> int:
        """Open connections once they settle to ``count`` or fewer (or after ``within`` seconds)."""
        deadline = time.monotonic() + within
        while self.open_connections > count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.open_connections

    def close(self) -> None:
        self.stopping.set()
        self._listener.close()
        with self._lock:
            conns = list(self._open)
        for conn in conns:
            _close(conn)
        for thread in self._threads:
            thread.join(timeout=5)

    def _spawn(self, target: Callable[..., None], *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self._open.add(conn)
                self.connections_total += 1
            self._spawn(self._serve, conn)

    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(0.1)
        buffer = b""
        try:
            while not self.stopping.is_set():
                exchange, buffer = self._read_request(conn, buffer)
                if exchange is None:
                    return
                with self._lock:
                    self.requests.append(exchange)
                    index = len(self.requests) - 1
                action = self.script[min(index, len(self.script) - 1)]
                if not action(exchange):
                    return
        except OSError:
            return
        finally:
            with self._lock:
                self._open.discard(conn)
            _close(conn)

    def _read_request(self, conn: socket.socket, buffer: bytes) -> tuple[Exchange | None, bytes]:
        while b"\r\n\r\n" not in buffer:
            chunk = self._recv(conn)
            if not chunk:
                return None, buffer
            buffer += chunk
        head, buffer = buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(buffer) < length:
            chunk = self._recv(conn)
            if not chunk:
                return None, buffer
            buffer += chunk
        body, buffer = buffer[:length], buffer[length:]
        return Exchange(conn, method, path, headers, body, self.stopping), buffer

    def _recv(self, conn: socket.socket) -> bytes:
        while not self.stopping.is_set():
            try:
                return conn.recv(65536)
            except TimeoutError:
                continue
        return b""


def _close(conn: socket.socket) -> None:
    try:
        conn.close()
    except OSError:
        pass


class Blackhole:
    """A listener whose backlog is full, so a new connection is never completed: a real connect timeout on loopback."""

    def __init__(self) -> None:
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(0)
        self.port = self._listener.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._fillers: list[socket.socket] = []
        for _ in range(8):  # fill the queue until a connect stalls
            filler = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            filler.settimeout(0.3)
            self._fillers.append(filler)
            try:
                filler.connect(("127.0.0.1", self.port))
            except OSError:
                break
        else:
            raise RuntimeError("could not fill the listen backlog")

    def close(self) -> None:
        for sock in [*self._fillers, self._listener]:
            _close(sock)
