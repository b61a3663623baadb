"""Token indexes too large to foresee are built in a child process that a limit ends, never this one."""

from __future__ import annotations

import resource
import time

import pytest

from localjudge._decoding import schema_to_regex
from localjudge._decoding.guide import outlines_vocabulary
from localjudge._decoding.index_build import build_in_child
from localjudge._decoding.schema_limits import SchemaLimits
from localjudge.errors import SchemaTooLargeError

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def vocab(tiny_gguf):
    from localjudge._runtimes.llamacpp import LlamaCppRuntime

    return LlamaCppRuntime(tiny_gguf, vocab_only=True).vocab


def test_a_child_builds_the_same_index_as_this_process(vocab):
    from outlines_core import Index

    regex = schema_to_regex({"type": "object", "properties": {"score": {"enum": [1, 2, 3]}}, "required": ["score"]})
    built = Index.from_binary(build_in_child(regex, vocab, SchemaLimits()))
    here = Index(regex, outlines_vocabulary(vocab))
    assert built.get_transitions() == here.get_transitions() and built.get_final_states() == here.get_final_states()


def test_a_build_past_its_limits_is_refused_and_this_process_does_not_grow(vocab):
    """A lone string of at most 32 characters: its automaton ran for 8 minutes up to 13 GB once."""
    regex = schema_to_regex({"type": "string", "maxLength": 16}).replace("{0,16}", "{0,32}")  # past the counts
    limits = SchemaLimits(index_seconds=5, index_memory_bytes=1 << 30)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with pytest.raises(SchemaTooLargeError, match="too large for local constrained decoding") as refused:
        build_in_child(regex, vocab, limits)
    assert time.monotonic() - started < 15
    assert "over 5 s" in str(refused.value) or "over 1,024 MB" in str(refused.value)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024  # KB: under 100 MB here
    started = time.monotonic()
    with pytest.raises(SchemaTooLargeError):  # refused once: refused again at once
        build_in_child(regex, vocab, limits)
    assert time.monotonic() - started < 0.1
