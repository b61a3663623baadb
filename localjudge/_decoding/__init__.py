"""Constrained decoding, independent of any one backend.

- :mod:`.schema_regex`: JSON schema -> regex, refusing what it cannot enforce
  (pure Python, imported eagerly: evaluators call ``check_schema`` when built),
  joining the patterns of single values that :mod:`.value_regex` writes;
- :mod:`.guide`: the outlines-core index over a runtime's vocabulary, per-state
  masks and forced text (needs numpy and outlines-core, imported on first use);
- :mod:`.steps`: what a generation asks of a runtime, and running one alone;
- :mod:`.loop`: the decode loop, a generation over any runtime that returns logits;
- :mod:`.readout`: the probability of every value the grammar allows at one point;
- :mod:`.batcher`: several generations on one runtime, their steps batched together;
- :mod:`.grammars`: the default score schemas' grammars as files (the regex, and as llama.cpp GBNF).
"""

from __future__ import annotations

from .._lazy import lazy_attributes
from .schema_regex import ANY_JSON_OBJECT_SCHEMA, check_schema, schema_to_regex

__all__ = [
    "ANY_JSON_OBJECT_SCHEMA",
    "Batcher",
    "DecodeResult",
    "Guide",
    "Sampler",
    "TokenVocabulary",
    "check_schema",
    "decode",
    "generate",
    "guide_for",
    "schema_to_regex",
]

_LAZY = {
    "Batcher": ".batcher",
    "Guide": ".guide",
    "TokenVocabulary": ".._runtimes.vocabulary",
    "guide_for": ".guide",
    "DecodeResult": ".loop",
    "Sampler": ".loop",
    "decode": ".loop",
    "generate": ".loop",
}

__getattr__ = lazy_attributes(__name__, _LAZY)
