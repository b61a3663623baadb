"""Constrained decoding, independent of any one backend.

- :mod:`.schema_regex`: JSON schema -> regex, refusing what it cannot enforce
  (pure Python, imported eagerly: evaluators call ``check_schema`` when built);
- :mod:`.guide`: the outlines-core index over a runtime's vocabulary, per-state
  masks and forced text (needs numpy and outlines-core, imported on first use);
- :mod:`.loop`: the decode loop over any runtime that returns logits.
"""

from __future__ import annotations

from .._lazy import lazy_attributes
from .schema_regex import ANY_JSON_OBJECT_SCHEMA, check_schema, schema_to_regex

__all__ = [
    "ANY_JSON_OBJECT_SCHEMA",
    "DecodeResult",
    "Guide",
    "Sampler",
    "TokenVocabulary",
    "check_schema",
    "decode",
    "guide_for",
    "schema_to_regex",
]

_LAZY = {
    "Guide": ".guide",
    "TokenVocabulary": "..runtimes.vocabulary",
    "guide_for": ".guide",
    "DecodeResult": ".loop",
    "Sampler": ".loop",
    "decode": ".loop",
}

__getattr__ = lazy_attributes(__name__, _LAZY)
