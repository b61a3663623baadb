"""Small on-disk cache for what is slow to rebuild per process: token pieces and token indexes.

A cold ``localjudge score`` otherwise spends ~1.5 s reading 262k token pieces
through ctypes and ~3 s building the outlines-core index; from the cache both
load in tens of milliseconds. Entries are plain bytes (no pickle), written
atomically, keyed by a hash of everything they depend on. Each carries the
sha256 of its payload, so damage (a flipped byte, a cut file, a directory in
its place, a file far too large) means a rebuild, never a wrong entry; what
an entry decodes to is checked again by its reader (the pieces' count and
lengths, outlines-core's own index format). A checksum stops accidents, not
someone who can write the cache directory and recompute it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ._paths import cache_dir

__all__ = ["decode_pieces", "encode_pieces", "entry_path", "load", "load_pieces", "store", "store_pieces"]

# Bumped whenever what we store (or how we derive it) changes.
FORMAT_VERSION = "2"
MAX_ENTRY_BYTES = 512 * 1024 * 1024  # an index over a large vocabulary is tens of MB
_MAGIC = b"LJC2"
_HEADER = len(_MAGIC) + hashlib.sha256().digest_size


def entry_path(kind: str, parts: Sequence[str]) -> Path:
    digest = hashlib.sha256("\x00".join((FORMAT_VERSION, *parts)).encode("utf-8")).hexdigest()[:32]
    return cache_dir() / "decoding" / f"{kind}-{digest}.bin"


def load(kind: str, parts: Sequence[str]) -> bytes | None:
    """The payload stored under ``parts``, or None when absent or failing its checksum."""
    path = entry_path(kind, parts)
    try:
        if path.stat().st_size > MAX_ENTRY_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    payload = data[_HEADER:]
    if data[: len(_MAGIC)] != _MAGIC or hashlib.sha256(payload).digest() != data[len(_MAGIC) : _HEADER]:
        return None
    return payload


def store(kind: str, parts: Sequence[str], payload: bytes) -> None:
    """Write atomically; a cache we cannot write (read-only, a directory in the way) is skipped."""
    path = entry_path(kind, parts)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(_MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def encode_pieces(pieces: Sequence[bytes | None]) -> bytes:
    """Token pieces as int32 lengths (-1 for none) followed by the concatenated bytes."""
    lengths = np.array([-1 if p is None else len(p) for p in pieces], dtype="<i4")
    header = np.array([len(pieces)], dtype="<i4").tobytes()
    return header + lengths.tobytes() + b"".join(p for p in pieces if p)


def decode_pieces(data: bytes) -> list[bytes | None]:
    """The inverse of :func:`encode_pieces`; ValueError when the lengths and the bytes disagree."""
    if len(data) < 4:
        raise ValueError("corrupt pieces cache entry")
    count = int(np.frombuffer(data[:4], dtype="<i4")[0])
    if count < 0 or len(data) < 4 + 4 * count:
        raise ValueError("corrupt pieces cache entry")
    lengths = np.frombuffer(data[4 : 4 + 4 * count], dtype="<i4")
    blob = memoryview(data)[4 + 4 * count :]
    if int(lengths[lengths > 0].sum()) != len(blob):
        raise ValueError("corrupt pieces cache entry")
    pieces: list[bytes | None] = []
    offset = 0
    for length in lengths.tolist():
        if length < 0:
            pieces.append(None)
        else:
            pieces.append(bytes(blob[offset : offset + length]))
            offset += length
    return pieces


def load_pieces(parts: Sequence[str], n_vocab: int) -> list[bytes | None] | None:
    """A model's token pieces, when cached whole and sound for a vocabulary of ``n_vocab``."""
    data = load("pieces", parts)
    if data is None:
        return None
    try:
        pieces = decode_pieces(data)
    except ValueError:
        return None
    return pieces if len(pieces) == n_vocab else None


def store_pieces(parts: Sequence[str], pieces: Sequence[bytes | None]) -> None:
    store("pieces", parts, encode_pieces(pieces))
