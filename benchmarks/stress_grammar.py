"""A random-logits adversary for the constrained decoder.

Run: ``python benchmarks/stress_grammar.py [--generations N] [--seed S]`` (``make stress``)

A fake runtime returns random logits over the real vocabulary of the default
model (its 262,144 token pieces, tokenised by llama.cpp loaded vocab-only),
sampled at temperature 1, and drives the real guide and the real decode loop
under the six default score schemas and the custom schemas below. Whatever
the logits, two things must hold:

- every output that finishes is valid JSON that validates against its schema;
- every output that does not finish (cut at ``max_tokens``) is a
  ``TruncatedOutputError`` from the judge's parser, with the raw text.

``max_tokens`` (8..96) and the free-text budget (3..16 tokens) vary per
generation, so outputs are cut in every part of the grammar. Prints the
counts; exits 1 on any violation.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from localjudge._decoding.grammars import DEFAULT_VARIANTS
from localjudge._prompts.schema import default_output_schema
from localjudge._runtimes.base import Runtime
from localjudge.errors import OutputParseError, TruncatedOutputError

CUSTOM_SCHEMAS: dict[str, dict[str, Any]] = {
    "nested objects and arrays": {
        "type": "object",
        "properties": {
            "summary": {"type": "object", "properties": {"ok": {"type": "boolean"}, "note": {"type": "string"}}},
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 0}}},
                "maxItems": 3,
            },
        },
        "required": ["summary", "items"],
    },
    "string enum with unicode and escapes": {
        "type": "object",
        "properties": {"label": {"enum": ["naïve", "café ☕", 'say "hi"', "back\\slash", "tab\tand\nnewline", "数字"]}},
        "required": ["label"],
    },
    "number enum": {"type": "object", "properties": {"w": {"enum": [0, 0.25, -1.5, 100, 3.125]}}, "required": ["w"]},
    "integer bounds": {
        "type": "object",
        "properties": {"grade": {"type": "integer", "minimum": -3, "maximum": 12}},
        "required": ["grade"],
    },
    "number bounds": {
        "type": "object",
        "properties": {"x": {"type": "number", "minimum": 1, "maximum": 5}, "y": {"type": "number", "minimum": 0}},
        "required": ["x", "y"],
    },
    "one-sided integer": {
        "type": "object",
        "properties": {"count": {"type": "integer", "minimum": 1}, "free": {"type": "integer"}},
        "required": ["count", "free"],
    },
    "optional fields": {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}, "c": {"type": "number"}},
        "required": ["b"],
    },
    "all optional, no additional properties": {
        "type": "object",
        "properties": {"p": {"type": "null"}, "q": {"type": "integer", "minimum": 0, "maximum": 3}},
        "additionalProperties": False,
    },
    "bounded boolean array": {
        "type": "object",
        "properties": {"flags": {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 4}},
        "required": ["flags"],
    },
    "anyOf string, null or integer": {
        "type": "object",
        "properties": {"v": {"anyOf": [{"type": "string", "maxLength": 6}, {"type": "null"}, {"type": "integer"}]}},
        "required": ["v"],
    },
    "string length bounds": {
        "type": "object",
        "properties": {"code": {"type": "string", "minLength": 2, "maxLength": 5}},
        "required": ["code"],
    },
    "refs and defs": {
        "$defs": {"point": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/point"}, "b": {"$ref": "#/$defs/point"}},
        "required": ["a", "b"],
    },
    "const and type lists": {
        "type": "object",
        "properties": {"kind": {"const": "judge"}, "score": {"type": ["number", "null"]}},
        "required": ["kind", "score"],
    },
    "matrix": {
        "type": "object",
        "properties": {
            "m": {
                "type": "array",
                "items": {"type": "array", "items": {"type": "integer"}, "maxItems": 2},
                "maxItems": 2,
            }
        },
        "required": ["m"],
    },
    "three levels deep": {
        "type": "object",
        "properties": {
            "l1": {
                "type": "object",
                "properties": {
                    "l2": {
                        "type": "object",
                        "properties": {"l3": {"type": "string"}, "n": {"type": "number"}},
                        "required": ["l3"],
                    }
                },
                "required": ["l2"],
            }
        },
        "required": ["l1"],
    },
    "free strings": {
        "type": "object",
        "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
        "required": ["title", "body"],
    },
}


def all_schemas() -> dict[str, dict[str, Any]]:
    defaults = {f"default {name}": default_output_schema(**kw)[0] for name, kw in DEFAULT_VARIANTS.items()}
    return {**defaults, **CUSTOM_SCHEMAS}


class RandomLogitsRuntime(Runtime):
    """A runtime that knows nothing: standard-normal logits over another runtime's vocabulary.

    The vocabulary, tokenizer and special tokens are the source's (a model
    loaded vocab-only is enough); only the logits are noise.
    """

    backend = "random"

    def __init__(self, source: Runtime, *, seed: int = 0) -> None:
        super().__init__()
        self.source = source
        self.path = source.path
        self.vocab = source.vocab
        self.n_vocab = source.n_vocab
        self.n_ctx = self.n_ctx_train = 1 << 20
        self.bos_id, self.add_bos = source.bos_id, source.add_bos
        self.template_metadata = source.template_metadata
        self.rng = np.random.default_rng(seed)

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        return self.source.tokenize(text, special=special)

    def tokenize_fragment(self, data: bytes) -> list[int]:
        return self.source.tokenize_fragment(data)

    def token_text(self, token: int | None) -> str:
        return self.source.token_text(token)

    def _reset(self, seq: int) -> None:
        pass

    def _truncate(self, n_past: int, seq: int) -> None:
        pass

    def _evaluate(self, tokens: Sequence[int], n_past: int, seq: int) -> np.ndarray:
        return self.rng.standard_normal(self.n_vocab, dtype=np.float32)

    def load_info(self) -> dict[str, Any]:
        return {"backend": self.backend, "vocabulary": str(self.path)}

    @property
    def closed(self) -> bool:
        return False

    def close(self) -> None:
        pass


@dataclass
class Counts:
    generations: int = 0
    finished: int = 0
    truncated: int = 0
    closed_by_budget: int = 0
    invalid: list[tuple[str, str, str]] = field(default_factory=list)  # (schema, finish, text)
    by_schema: Counter = field(default_factory=Counter)


def load_runtime(seed: int) -> RandomLogitsRuntime:
    from localjudge._clients.resolve import ensure_tiny_model
    from localjudge._runtimes.llamacpp import LlamaCppRuntime

    return RandomLogitsRuntime(LlamaCppRuntime(ensure_tiny_model(), vocab_only=True), seed=seed)


def run(runtime: RandomLogitsRuntime, generations: int, seed: int = 0) -> Counts:
    """``generations`` random generations, round-robin over every schema; the counts, violations included."""
    import jsonschema

    from localjudge._decoding import guide_for, schema_to_regex
    from localjudge._decoding.loop import Sampler, decode
    from localjudge._prompts.parsing import parse_json_output

    schemas = all_schemas()
    guides = {name: guide_for(runtime.vocab, schema_to_regex(schema)) for name, schema in schemas.items()}
    prompt = runtime.prompt_tokens("Judge this.")
    choose = random.Random(seed)
    counts = Counts()
    names = list(schemas)
    for i in range(generations):
        name = names[i % len(names)]
        schema = schemas[name]
        result = decode(
            runtime,
            runtime.vocab,
            prompt,
            guide=guides[name],
            max_tokens=choose.randint(8, 96),
            sampler=Sampler(temperature=1.0, seed=choose.getrandbits(32)),
            string_budget=choose.randint(3, 16),
        )
        counts.generations += 1
        counts.by_schema[name] += 1
        counts.closed_by_budget += result.closed_by == "budget"
        try:
            if result.finish_reason == "stop":
                jsonschema.validate(json.loads(result.text), schema)
                parse_json_output(result.text, schema, finish_reason="stop")
                counts.finished += 1
            else:
                try:
                    parse_json_output(result.text, schema, finish_reason=result.finish_reason)
                except TruncatedOutputError as exc:
                    if exc.raw_output != result.text:
                        raise AssertionError("the error lost the raw text") from exc
                    counts.truncated += 1
                else:
                    raise AssertionError("a cut output parsed as a verdict")
        except (AssertionError, ValueError, OutputParseError, jsonschema.ValidationError) as exc:
            counts.invalid.append((name, result.finish_reason, f"{result.text!r}: {exc}"[:400]))
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--generations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    runtime = load_runtime(args.seed)
    loaded = time.perf_counter()
    counts = run(runtime, args.generations, args.seed)
    elapsed = time.perf_counter() - loaded
    schemas = all_schemas()
    print(
        f"vocabulary: {runtime.n_vocab} token pieces of {runtime.path.name}; {len(schemas)} schemas "
        f"({len(schemas) - len(CUSTOM_SCHEMAS)} default, {len(CUSTOM_SCHEMAS)} custom); "
        f"loaded in {loaded - started:.1f} s"
    )
    print(
        f"{counts.generations} generations in {elapsed:.1f} s: {counts.finished} finished and valid, "
        f"{counts.truncated} cut at max_tokens and reported as TruncatedOutputError, "
        f"{len(counts.invalid)} invalid ({counts.closed_by_budget} strings closed by their budget)"
    )
    for name, finish, text in counts.invalid[:20]:
        print(f"  INVALID [{name}] finish={finish}: {text}")
    return 1 if counts.invalid else 0


if __name__ == "__main__":
    raise SystemExit(main())
