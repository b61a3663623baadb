"""The engines a model spec can name, each with its options: one registry line per engine.

An :class:`Engine` says how specs name it (a prefix such as ``gguf:``, or
the bare specs: card names and paths), how its models are reached (in this
process, on a server, through a provider's library), which options its
client takes, and the client class. The resolver (:mod:`localjudge._clients.resolve`)
and the command line read everything about an engine from here; adding one
is a module with its client and options plus one :func:`register` call.

The client is named by import path ("module:Class") where this module must
not import it: the registry sits below the clients, which read their
options from it; the resolver imports the client when a spec needs it.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .._wording import Message
from ..errors import ModelSpecError
from .options import (
    LLAMACPP_OPTIONS,
    LOCAL_OPTIONS,
    OUTLINES_OPTIONS,
    SERVER_OPTIONS,
    TRANSFORMERS_OPTIONS,
    ModelOptions,
    Option,
)

__all__ = [
    "ENGINES",
    "LANGCHAIN_PROVIDERS",
    "Engine",
    "check_options",
    "command_line_options",
    "declared_options",
    "engine_named",
    "given_options",
    "identity_options",
    "register",
    "unregister",
]

#: in this process (loaded from a file), on a server, through a provider's library, or built from an object
EngineKind = Literal["local", "server", "provider", "object"]

#: the providers LangChain's init_chat_model knows by prefix, when LangChain cannot be asked (openai: is ours)
LANGCHAIN_PROVIDERS = frozenset(
    "anthropic anthropic_bedrock azure_ai azure_openai baseten bedrock bedrock_converse cohere deepseek fireworks "
    "google_anthropic_vertex google_genai google_vertexai groq huggingface ibm litellm meta mistralai nvidia ollama "
    "openrouter perplexity together upstage xai".split()
)


@dataclass(frozen=True)
class Engine:
    """One engine: how specs name it, how its models are reached, its options and its client.

    ``describe`` names its models in messages ("a llama.cpp model");
    ``target`` says what follows its prefix ("a path to a .gguf file").
    ``claims`` recognises prefixes known elsewhere (LangChain's providers);
    ``bare`` takes the specs no prefix claims (card names and paths).
    """

    name: str
    kind: EngineKind
    describe: str
    options: tuple[Option, ...]
    client: type | str
    prefixes: tuple[str, ...] = ()
    target: str = ""
    claims: Callable[[str], bool] | None = None
    bare: bool = False

    @functools.cached_property
    def option_names(self) -> frozenset[str]:
        return frozenset(option.name for option in self.options)

    def takes(self, name: str) -> bool:
        return name in self.option_names

    def client_class(self) -> type:
        """The client class, imported now where the registry names it by path."""
        if not isinstance(self.client, str):
            return self.client
        module, _, name = self.client.partition(":")
        return getattr(importlib.import_module(module), name)


ENGINES: dict[str, Engine] = {}


def register(engine: Engine) -> Engine:
    """Add ``engine``; a prefix or name another engine holds is refused."""
    if engine.name in ENGINES:
        raise ModelSpecError(f"An engine named {engine.name!r} is registered already")
    for other in ENGINES.values():
        shared = set(engine.prefixes) & set(other.prefixes)
        if shared:
            raise ModelSpecError(f"The spec prefix {sorted(shared)[0]!r}: is {other.name}'s already")
        if engine.bare and other.bare:
            raise ModelSpecError(f"Bare specs go to {other.name} already")
    ENGINES[engine.name] = engine
    return engine


def unregister(name: str) -> None:
    ENGINES.pop(name, None)


def engine_named(name: str) -> Engine:
    try:
        return ENGINES[name]
    except KeyError:
        raise ModelSpecError(f"No engine named {name!r}; the engines: {', '.join(ENGINES)}") from None


def declared_options(engines: Iterable[Engine] | None = None) -> dict[str, Option]:
    """Every option the engines take, once each, in registry order."""
    found: dict[str, Option] = {}
    for engine in ENGINES.values() if engines is None else engines:
        for option in engine.options:
            found.setdefault(option.name, option)
    return found


def command_line_options() -> list[Option]:
    """The options with a command-line flag, in the order the flags are listed."""
    return [option for option in declared_options().values() if option.flag]


def identity_options() -> frozenset[str]:
    """The options whose value decides an answer: part of a local judge's cache identity."""
    return frozenset(name for name, option in declared_options().items() if option.identity)


def given_options(options: Mapping[str, Any]) -> ModelOptions:
    """The options a call gave: a None is "not given" unless the option takes None as a value."""
    declared = declared_options()
    return ModelOptions.of(
        {
            name: value
            for name, value in options.items()
            if value is not None or (name in declared and declared[name].nullable)
        }
    )


def check_options(spec: str, engines: Iterable[Engine], options: Mapping[str, Any], *, what: str) -> None:
    """Refuse an option no engine of ``spec`` takes: one that belongs elsewhere names its flag, an unknown one its name."""
    engines = list(engines)
    declared = declared_options()
    unknown = sorted(name for name in options if name not in declared)
    if unknown:
        raise ModelSpecError(
            f"{spec!r} ({what}) does not take these options: {', '.join(unknown)}; "
            f"it takes: {', '.join(sorted(set().union(*(e.option_names for e in engines))))}"
        )
    wrong = [option for name, option in declared.items() if name in options and not any(e.takes(name) for e in engines)]
    if wrong:
        named = ", ".join(f"{{{option.name}}}" for option in wrong)
        raise ModelSpecError(Message(named + " does not apply to {spec!r}, {what}", spec=spec, what=what))


@functools.lru_cache(maxsize=1)
def _langchain_providers() -> frozenset[str]:
    """LangChain's own list where it is installed (it grows), else ours."""
    try:
        from langchain.chat_models.base import _BUILTIN_PROVIDERS  # LangChain's table; no public accessor
    except ImportError:
        return LANGCHAIN_PROVIDERS
    return (frozenset(_BUILTIN_PROVIDERS) | LANGCHAIN_PROVIDERS) - {"openai"}


def is_langchain_provider(prefix: str) -> bool:
    return prefix.isidentifier() and prefix in _langchain_providers()


register(
    Engine(
        "llama.cpp",
        "local",
        "a llama.cpp model",
        LOCAL_OPTIONS + LLAMACPP_OPTIONS,
        "localjudge._clients.llamacpp:LlamaCppClient",
        prefixes=("gguf",),
        target="a path to a .gguf file",
        bare=True,
    )
)
register(
    Engine(
        "transformers",
        "local",
        "a transformers model",
        LOCAL_OPTIONS + TRANSFORMERS_OPTIONS,
        "localjudge._clients.transformers:TransformersClient",
        prefixes=("hf", "transformers"),
        target="a transformers directory or GGUF file",
    )
)
register(
    Engine(
        "server",
        "server",
        "a server's model",
        SERVER_OPTIONS,
        "localjudge._clients.remote:OpenAICompatibleClient",
        prefixes=("openai",),
        target="a model's name on an OpenAI-compatible server",
    )
)
register(
    Engine(
        "langchain",
        "provider",
        "a LangChain chat model",
        (),
        "localjudge._clients.langchain:LangChainClient",
        target="a provider's model, as LangChain's init_chat_model names it",
        claims=is_langchain_provider,
    )
)
# outlines models are objects the caller holds: no spec names one, but its options are declared here too
register(
    Engine("outlines", "object", "an outlines model", OUTLINES_OPTIONS, "localjudge._clients.outlines:OutlinesClient")
)
