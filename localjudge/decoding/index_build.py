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

Run as ``python -m localjudge.decoding.index_build``: it reads its job from
stdin, written by :func:`build_in_child`.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

from ..errors import SchemaTooLargeError
from .schema_limits import SchemaLimits

__all__ = ["build_in_child"]


def build_in_child(regex: str, eos_id: int, pieces: dict[bytes, list[int]], limits: SchemaLimits) -> bytes:
    """The serialised Index of ``regex`` over the vocabulary ``pieces``, built within ``limits``."""
    job = pickle.dumps((regex, eos_id, pieces, limits.index_memory_bytes), protocol=pickle.HIGHEST_PROTOCOL)
    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__],
            input=job,
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

    index = Index(regex, Vocabulary(eos_id, pieces))
    _, args = index.__reduce__()[:2]
    sys.stdout.buffer.write(bytes(args[0]))


if __name__ == "__main__":
    _main()
