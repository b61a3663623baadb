"""The model cards in ``models/``: what each model is, where its file comes from, how to run it, how well it judged."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from .._paths import cache_dir
from ..errors import ModelSpecError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["ModelCard", "find_card", "load_cards"]


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
    #: what `localjudge check-judge` measured, by set: {"answers": {"accuracy": ..., "command": ...}, ...}
    quality: dict[str, Any] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return cache_dir() / "models" / self.file

    def is_present(self) -> bool:
        return self.path.is_file()


def _cards_dir() -> Path:
    package = Path(__file__).resolve().parents[1]
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
