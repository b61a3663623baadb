"""A judge on the tiny model shared by the judges' model tests: loaded once, with room for OpenEvals' prompts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def tiny_judge(tiny_gguf) -> Iterator[object]:
    """The tiny model's llama.cpp client: a 2,048-token context, free text held to 24 tokens, answers to 256."""
    from localjudge import LlamaCppClient

    client = LlamaCppClient(tiny_gguf, n_ctx=2048, reasoning_budget=24, max_tokens=256)
    yield client
    client.close()
