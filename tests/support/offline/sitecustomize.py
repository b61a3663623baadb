"""What `make test-fast` runs under: no model file, no torch, no socket on 127.0.0.1 (or anywhere).

On PYTHONPATH, Python runs this at start-up, in the test process and in every Python process it starts.
With ``LOCALJUDGE_HOME`` pointing at an empty directory it hides every model a test could find: the files
the shipped model cards are assembled from (their packages) cannot be read, so the cache stays empty.
A test that needs what is hidden here fails, and so shows the marker it lacks (``model``, ``torch``, ``server``).
"""

from __future__ import annotations

import importlib.abc
import importlib.metadata
import re
import socket
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

BLOCKED_MODULES = {"torch", "transformers"}
CARDS = Path(__file__).resolve().parents[3] / "models"
REFUSAL = "hidden under `make test-fast`: mark the test"


def _card_sources() -> tuple[set[str], list[re.Pattern[str]]]:
    """The modules and distributions the shipped model cards are assembled from."""
    modules: set[str] = set()
    distributions: list[re.Pattern[str]] = []
    for card in CARDS.glob("*.toml"):
        source = tomllib.loads(card.read_text(encoding="utf-8")).get("source", {})
        if source.get("module"):
            modules.add(source["module"])
        for key in ("pypi", "distribution"):
            if source.get(key):
                pattern = re.escape(_normal(source[key])).replace(r"\{n\}", r"\d+")
                distributions.append(re.compile(pattern + "$"))
    return modules, distributions


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


MODEL_MODULES, MODEL_DISTRIBUTIONS = _card_sources()


class _Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        top = name.partition(".")[0]
        if top in BLOCKED_MODULES or top in MODEL_MODULES:
            raise ModuleNotFoundError(f"No module named {name!r} ({REFUSAL} torch or model)", name=name)


sys.meta_path.insert(0, _Refuse())

_distribution = importlib.metadata.distribution


def _hidden_distribution(name: str) -> importlib.metadata.Distribution:
    if any(pattern.match(_normal(name)) for pattern in MODEL_DISTRIBUTIONS):
        raise importlib.metadata.PackageNotFoundError(f"{name} ({REFUSAL} model)")
    return _distribution(name)


importlib.metadata.distribution = _hidden_distribution


def _refusing(method):
    def refuse(self: socket.socket, address: object) -> object:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            raise OSError(f"{method.__name__} {address!r}: {REFUSAL} server")
        return method(self, address)

    return refuse


for _name in ("bind", "connect", "connect_ex"):
    setattr(socket.socket, _name, _refusing(getattr(socket.socket, _name)))
