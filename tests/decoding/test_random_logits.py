"""The random-logits adversary (benchmarks/stress_grammar.py) in the test run: 550 generations.

Random logits over the real 262,144-token Gemma vocabulary, sampled at
temperature 1, drive the real guide and decode loop under 22 schemas. Every
finished output must validate; every unfinished one must be a
TruncatedOutputError carrying the raw text. ``make stress`` runs 10,000.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import stress_grammar

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def runtime(tiny_gguf):
    return stress_grammar.load_runtime(seed=7)


def test_every_output_is_valid_or_reported_as_cut(runtime):
    counts = stress_grammar.run(runtime, generations=550, seed=7)
    assert counts.invalid == []
    assert counts.finished + counts.truncated == counts.generations == 550
    # both endings, and the budget, were exercised
    assert counts.finished > 250 and counts.truncated > 10 and counts.closed_by_budget > 10
    assert len(counts.by_schema) == len(stress_grammar.all_schemas()) >= 20
    assert len(stress_grammar.CUSTOM_SCHEMAS) >= 14


def test_the_adversary_is_adversarial_without_the_guide(runtime):
    from localjudge._decoding.loop import Sampler, decode

    prompt = runtime.prompt_tokens("Judge this.")
    texts = [
        decode(runtime, runtime.vocab, prompt, guide=None, max_tokens=12, sampler=Sampler(1.0, seed=s)).text
        for s in range(20)
    ]

    def parses(text: str) -> bool:
        try:
            json.loads(text)
        except ValueError:
            return False
        return True

    assert sum(parses(t) for t in texts) == 0
