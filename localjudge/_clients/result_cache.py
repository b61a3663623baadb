"""Responses kept across runs: a model's answer to an exact request, in SQLite under the cache directory.

A dataset run re-scored with nothing changed should cost nothing. The key
is everything that decides an answer: who answers (a local model file's
sha256 and the decoder's settings and version, or a server's address and
model name), the rendered messages, the response schema and the sampling
parameters. Only complete answers are kept (``finish_reason == "stop"``).

SQLite in WAL mode lets two processes share the file. The file is not
trusted: each row carries the sha256 of its key and answer, so a row damaged
or edited since it was written (a verdict flipped in place) is a miss, as is
one that does not decode to a chat completion; either is replaced by the next
answer. A checksum stops accidents and edits, not someone who recomputes it.
In the cache directory, a file that is not a database is set aside under a
new name with a warning, never read and never deleted; a file the caller
named is left as it is (``set_aside`` says otherwise), and answers are then
neither kept nor reused. :class:`~localjudge._clients.cached.CachedClient`
also checks a stored answer against the schema its request asks for.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .. import _bounded_json as bounded_json
from .._paths import cache_dir

__all__ = ["MAX_RESPONSE_BYTES", "ResultCache", "is_result_cache", "request_key"]

FORMAT_VERSION = 2  # 2: rows carry a digest (table "answers")
MAX_RESPONSE_BYTES = 4 * 1024 * 1024  # a stored answer larger than this is not one of ours
#: request fields that do not change the answer
_NOT_DECIDING = frozenset({"stream", "user", "metadata", "store", "timeout", "extra_headers"})


def request_key(identity: Mapping[str, Any], request: Mapping[str, Any]) -> str:
    """The sha256 of who answers and what was asked, as canonical JSON."""
    asked = {name: value for name, value in request.items() if name not in _NOT_DECIDING}
    text = json.dumps(
        {"format": FORMAT_VERSION, "identity": identity, "request": asked},
        sort_keys=True,
        ensure_ascii=True,  # text with half a surrogate pair still has a key
        default=repr,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResultCache:
    """``get``/``put`` of responses by key; one connection per thread. ``hits`` and ``misses`` count lookups."""

    def __init__(self, path: Path | None = None, *, set_aside: bool | None = None) -> None:
        self.path = Path(path) if path is not None else cache_dir() / "results.sqlite3"
        #: whether a file there that is not a database is moved away for a new cache (default: only in the cache dir)
        self.set_aside = path is None if set_aside is None else set_aside
        self._local = threading.local()
        self._lock = threading.Lock()
        self.hits = self.misses = 0
        self._warned = False

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = self._open()
        return connection

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with self._lock:  # one thread at a time sets the file up (WAL, the table)
                return _connect(self.path)
        except sqlite3.DatabaseError as exc:
            if not _unreadable(exc):  # busy, locked, no permission: a problem to report, not a file to set aside
                raise
            if not self.set_aside:  # a file the caller named is theirs: left as it is, and no answers kept
                raise sqlite3.DatabaseError(f"{self.path} is not a result cache; it is left as it is") from exc
            with self._lock:
                if self.path.exists():
                    aside = self.path.with_name(f"{self.path.name}.unreadable-{int(time.time())}")
                    self.path.replace(aside)
                    warnings.warn(
                        f"The result cache {self.path} could not be read ({exc}); it was moved to {aside} "
                        "and a new one started",
                        stacklevel=3,
                    )
            return _connect(self.path)

    def get(self, key: str, accept: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any] | None:
        """The answer stored under ``key``, if intact (and, given ``accept``, one it accepts); a miss is None."""
        try:
            row = self._connection().execute("SELECT response, digest FROM answers WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:  # the cache saves work; it never stops a run
            self._warn(exc)
            row = None
        intact = row is not None and isinstance(row[0], str) and row[1] == _digest(key, row[0])
        response = _checked(row[0]) if intact else None
        if response is not None and accept is not None and not accept(response):
            response = None
        with self._lock:
            if response is None:
                self.misses += 1
            else:
                self.hits += 1
        return response

    def put(self, key: str, response: Mapping[str, Any]) -> None:
        text = json.dumps(response, ensure_ascii=True)
        if len(text) > MAX_RESPONSE_BYTES:
            return
        try:
            self._connection().execute(
                "INSERT OR REPLACE INTO answers (key, response, digest, stored) VALUES (?, ?, ?, ?)",
                (key, text, _digest(key, text), time.time()),
            )
        except sqlite3.Error as exc:
            self._warn(exc)

    def _warn(self, error: sqlite3.Error) -> None:
        with self._lock:
            if self._warned:
                return
            self._warned = True
        warnings.warn(f"The result cache {self.path} failed ({error}); answers are not kept or reused", stacklevel=3)

    def __len__(self) -> int:
        return int(self._connection().execute("SELECT COUNT(*) FROM answers").fetchone()[0])


#: the columns of the answers table, as :func:`_connect` makes it
_COLUMNS = ("key", "response", "digest", "stored")


def is_result_cache(path: Path) -> bool:
    """Whether ``path`` is a result cache: an SQLite file whose answers table is ours (read only, nothing changed)."""
    with Path(path).open("rb") as handle:
        if handle.read(16) != b"SQLite format 3\x00":
            return False
    connection = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    try:
        columns = tuple(row[1] for row in connection.execute("PRAGMA table_info(answers)"))
    except sqlite3.Error:
        return False
    finally:
        connection.close()
    return columns == _COLUMNS


def _digest(key: str, text: str) -> str:
    return hashlib.sha256(f"{key}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=True)
    try:
        # Switching to WAL needs the file to itself (a busy file fails at once, without waiting); once
        # switched it stays so, and later connections, from other processes too, find it done.
        if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            _retry_busy(lambda: connection.execute("PRAGMA journal_mode=WAL"))
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute(
            "CREATE TABLE IF NOT EXISTS answers "
            "(key TEXT PRIMARY KEY, response TEXT NOT NULL, digest TEXT NOT NULL, stored REAL NOT NULL)"
        )
    except sqlite3.DatabaseError:
        connection.close()
        raise
    return connection


def _retry_busy(operation: Callable[[], Any], attempts: int = 50) -> Any:
    for attempt in range(attempts):
        try:
            return operation()
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or attempt == attempts - 1:
                raise
            time.sleep(0.05)
    return None


def _unreadable(error: sqlite3.DatabaseError) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None and sys.version_info >= (3, 11):  # the codes (and sqlite_errorcode) came with 3.11
        return code in (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT)
    return "not a database" in str(error) or "malformed" in str(error)


def _checked(text: object) -> dict[str, Any] | None:
    """A stored response, if it is one: a JSON object with a choice whose message has text."""
    if not isinstance(text, str) or len(text) > MAX_RESPONSE_BYTES:
        return None
    try:
        response = bounded_json.loads(text)
        content = response["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    return response if isinstance(content, str) else None
