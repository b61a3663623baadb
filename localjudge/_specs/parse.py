"""One parser for the model specs users type: which engine each names, and what it names there.

::

    default, tiny, NAME     a model card (llama.cpp)
    PATH.gguf, gguf:PATH    a GGUF file on disk (llama.cpp)
    hf:DIR, hf:FILE.gguf    a transformers model (hf:NAME takes a card's model)
    openai:NAME             a model on an OpenAI-compatible server
    PROVIDER:NAME           a provider's model through LangChain (anthropic:..., ollama:...)
    SPEC,SPEC,...           a fallback chain

Prefixes come from the registry (:mod:`.registry`), so an engine registered
there is parsed here with no change. Parsing reads no model: a card is
looked up, and a model loaded, only when the spec is resolved.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import ModelSpecError
from .registry import ENGINES, Engine

__all__ = ["Spec", "parse_spec"]

SpecKind = Literal["chain", "local", "server", "provider"]


@dataclass(frozen=True)
class Spec:
    """A parsed model spec: ``kind`` says how its model is reached, ``target`` what its engine is given.

    A chain has no engine or target of its own, only ``members``.
    """

    text: str
    kind: SpecKind
    engine: str | None
    target: str
    members: tuple[Spec, ...] = ()

    @property
    def engines(self) -> tuple[str, ...]:
        """The engine of each model named, in order (one for a spec that is not a chain)."""
        return tuple(m.engine for m in self.members if m.engine) if self.members else (self.engine or "",)

    @property
    def runs_here(self) -> bool:
        """Whether any model named runs in this process, so that local options (--parallel) apply."""
        return any(m.kind == "local" for m in (self.members or (self,)))

    @property
    def all_here(self) -> bool:
        """Whether every model named runs in this process (so each can score a reply, as likelihood needs)."""
        return all(m.kind == "local" for m in (self.members or (self,)))

    @property
    def names_a_path(self) -> bool:
        """Whether a local target is a file or directory rather than a model card's name."""
        path = Path(self.target).expanduser()
        return path.exists() or self.target.lower().endswith(".gguf") or os.sep in self.target


def parse_spec(text: str) -> Spec:
    """The one place a spec is classified; everything that asks what a spec names asks this."""
    if not isinstance(text, str) or not text.strip():
        raise ModelSpecError(f"A model spec must be a non-empty string, got {text!r}")
    text = text.strip()
    if "," in text and not Path(text).expanduser().exists():
        parts = [part.strip() for part in text.split(",")]
        if not all(parts):
            raise ModelSpecError(f"A fallback chain needs two or more non-empty specs, got {parts!r}")
        return Spec(text, "chain", None, text, tuple(parse_spec(part) for part in parts))
    prefix, _, rest = text.partition(":")
    if rest:
        for engine in ENGINES.values():
            if prefix in engine.prefixes:
                return _spec(text, engine, rest)
        if not Path(text).expanduser().exists():
            for engine in ENGINES.values():
                if engine.claims is not None and engine.claims(prefix):
                    return _spec(text, engine, text)  # the provider's library reads the whole spec
    bare = next((engine for engine in ENGINES.values() if engine.bare), None)
    if bare is None:
        raise ModelSpecError(f"No engine takes {text!r}")
    return _spec(text, bare, text)


def _spec(text: str, engine: Engine, target: str) -> Spec:
    if engine.kind == "object":
        raise ModelSpecError(f"{engine.describe} is built from an object, not named by a spec ({text!r})")
    return Spec(text, engine.kind, engine.name, target)
