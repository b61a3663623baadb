"""Building a large token index in a child process, bounded in memory and time.

The limits of :mod:`.schema_limits` refuse what is plainly too large, but
how large outlines-core's automaton gets is not plain from a schema:
measured on Gemma's 262k-token vocabulary, a string of at most 16
characters took 8 s and +200 MB, two such strings of 32 inside an object
7 s, and one string of 32 on its own ran for 8 minutes up to 13 GB before
outlines-core gave up. So a regex that is not plainly small is built in a
child process under ``RLIMIT_AS`` and a deadline. A build past either
ends the child, never this process, and the request is refused with an
error that says so. The child hands back the index in outlines-core's own
serialised form, which the caller loads and caches on disk.

Run as ``python -m localjudge._decoding.index_build``: it reads its job from
stdin, written by :func:`build_in_child`.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading
from typing import Protocol

import numpy as np

from .._runtimes.vocabulary import TokenVocabulary
from ..errors import SchemaTooLargeError
from .schema_limits import SchemaLimits

__all__ = ["build_in_child", "index_bytes", "token_ids_by_piece"]

_builds = threading.Lock()
_refused_before: dict[tuple[str, str], SchemaTooLargeError] = {}
_REFUSALS_KEPT = 64


def build_in_child(regex: str, vocab: TokenVocabulary, limits: SchemaLimits) -> bytes:
    """The serialised Index of ``regex`` over ``vocab``, built within ``limits``.

    One build runs at a time (each may take ``index_memory_bytes``), and a
    regex refused once is refused again at once for the same vocabulary.
    """
    key = (vocab.key, regex)
    with _builds:
        if key in _refused_before:
            raise _refused_before[key]
        try:
            return _build(regex, vocab, limits)
        except SchemaTooLargeError as exc:
            _refused_before[key] = exc
            while len(_refused_before) > _REFUSALS_KEPT:
                _refused_before.pop(next(iter(_refused_before)))
            raise


def _build(regex: str, vocab: TokenVocabulary, limits: SchemaLimits) -> bytes:
    job = (regex, vocab.eos_id, token_ids_by_piece(vocab), limits.index_memory_bytes)
    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__],
            input=pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL),
            capture_output=True,
            timeout=limits.index_seconds,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise _refused(f"building it took over {limits.index_seconds:g} s", limits) from None
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        last = detail[-1] if detail else f"exit status {done.returncode}"
        if "MemoryError" in last or "memory allocation" in last or done.returncode < 0:
            raise _refused(f"building it needed over {limits.index_memory_bytes >> 20:,} MB ({last})", limits)
        raise _refused(f"outlines-core could not build it: {last}", limits)
    return done.stdout


def token_ids_by_piece(vocab: TokenVocabulary) -> dict[bytes, list[int]]:
    """What outlines-core's Vocabulary is made of: each piece of text and the tokens that spell it."""
    by_piece: dict[bytes, list[int]] = {}
    for token_id in np.flatnonzero(vocab.first_byte >= 0).tolist():
        by_piece.setdefault(vocab.pieces[token_id], []).append(token_id)
    return by_piece


class _SerialisedByPickle(Protocol):
    """An outlines-core Index, as far as :func:`index_bytes` reads it: pickled as ``(Index.from_binary, (its bytes,))``."""

    def __reduce__(self) -> tuple[object, tuple[bytes]]: ...


def index_bytes(index: _SerialisedByPickle) -> bytes:
    """An Index's own serialised form (what its pickle support carries), which ``Index.from_binary`` reads."""
    _, args = index.__reduce__()[:2]
    return bytes(args[0])


def _refused(why: str, limits: SchemaLimits) -> SchemaTooLargeError:
    return SchemaTooLargeError(
        f"The schema's grammar is too large for local constrained decoding: {why}. Use fewer or smaller "
        "bounds (maxLength, maxItems, enum values); a string without maxLength costs almost nothing",
        path="#",
        keyword="schema",
    )


def _main() -> None:
    import resource

    regex, eos_id, pieces, memory = pickle.loads(sys.stdin.buffer.read())  # our own parent's job
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    from outlines_core import Index, Vocabulary

    sys.stdout.buffer.write(index_bytes(Index(regex, Vocabulary(eos_id, pieces))))


if __name__ == "__main__":
    _main()
