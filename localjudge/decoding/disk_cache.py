"""Small on-disk cache for what is slow to rebuild per process: token pieces and token indexes.

A cold ``localjudge score`` otherwise spends ~1.5 s reading 262k token pieces
through ctypes and ~3 s building the outlines-core index; from the cache both
load in tens of milliseconds. Entries are plain bytes (no pickle), written
atomically, keyed by a hash of everything they depend on; any failure just
means a rebuild.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

__all__ = ["decode_pieces", "encode_pieces", "load", "store"]

# Bumped whenever what we store (or how we derive it) changes.
FORMAT_VERSION = "1"


def _directory() -> Path | None:
    try:
        from ..models import cache_dir

        return cache_dir() / "decoding"
    except Exception:
        return None


def _path(kind: str, parts: Sequence[str]) -> Path | None:
    directory = _directory()
    if directory is None:
        return None
    digest = hashlib.sha256("\x00".join((FORMAT_VERSION, *parts)).encode("utf-8")).hexdigest()[:32]
    return directory / f"{kind}-{digest}.bin"


def load(kind: str, parts: Sequence[str]) -> bytes | None:
    path = _path(kind, parts)
    try:
        return path.read_bytes() if path is not None else None
    except OSError:
        return None


def store(kind: str, parts: Sequence[str], data: bytes) -> None:
    path = _path(kind, parts)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        pass


def encode_pieces(pieces: Sequence[bytes | None]) -> bytes:
    """Token pieces as int32 lengths (-1 for none) followed by the concatenated bytes."""
    lengths = np.array([-1 if p is None else len(p) for p in pieces], dtype="<i4")
    header = np.array([len(pieces)], dtype="<i4").tobytes()
    return header + lengths.tobytes() + b"".join(p for p in pieces if p)


def decode_pieces(data: bytes) -> list[bytes | None]:
    count = int(np.frombuffer(data[:4], dtype="<i4")[0])
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
