"""Module attributes imported on first use, so heavy backends load only when asked for."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_attributes(package: str, table: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving ``name`` from the submodule ``table[name]`` (relative to ``package``)."""

    def __getattr__(name: str) -> Any:
        if name in table:
            return getattr(importlib.import_module(table[name], package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
