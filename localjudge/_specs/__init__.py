"""Model specs and the engines they name: the option declarations, the engine registry, the spec parser.

The model cards (:mod:`.cards`) say what each named model is, and :mod:`.model_files`
fetches and checks its file; turning a spec into a client is :mod:`localjudge._clients.resolve`.
"""

from __future__ import annotations

from .options import ModelOptions, Option
from .parse import Spec, parse_spec
from .registry import ENGINES, Engine, engine_named, register, unregister

__all__ = [
    "ENGINES",
    "Engine",
    "ModelOptions",
    "Option",
    "Spec",
    "engine_named",
    "parse_spec",
    "register",
    "unregister",
]
