"""llama-cpp-python: its ``_internals`` wrappers of llama.cpp's objects, and the model under a ``Llama``.

llama-cpp-python is pinned to one version (it is built from source), so
these checks guard an install made otherwise: a llama-cpp-python that moved
its internals fails here, by name, and not inside a decode.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any

from .versions import require

__all__ = ["llama_internals", "model_of"]

_NEEDED_FOR_RUNTIME = "the local GGUF runtime drives llama.cpp's model, context and batch"

#: what the runtime (:mod:`localjudge._runtimes.llamacpp`) calls or reads on each wrapper: methods, and the
#: handles each constructor sets
_USED = {
    "LlamaModel": (("metadata", "n_ctx_train", "n_vocab", "token_bos", "add_bos_token", "tokenize", "close"),
                   ("model", "vocab")),
    "LlamaContext": (("n_ctx", "decode", "get_logits_ith"), ("ctx", "memory")),
    "LlamaBatch": ((), ("batch",)),
}  # fmt: skip


def _sets(cls: type, attribute: str) -> bool:
    """Whether ``cls.__init__``'s code names ``attribute`` (a handle the constructor sets)."""
    return attribute in getattr(getattr(getattr(cls, "__init__", None), "__code__", None), "co_names", ())


def llama_internals() -> ModuleType:
    """llama-cpp-python's ``llama_cpp._internals``, checked to have every method and handle the runtime uses.

    Why: the public ``Llama`` keeps one context per object and decodes the
    way its own generation needs; the runtime needs several sequences in one
    context, each with its own cache, one-token steps of several sequences
    in one ``llama_decode``, logits read row by row and per-sequence state
    snapshots. llama.cpp's C API gives those; ``_internals`` holds its
    objects and frees them. Relies on: ``LlamaModel``, ``LlamaContext`` and
    ``LlamaBatch`` with the methods and handles in ``_USED``.
    """
    from llama_cpp import _internals

    for name, (methods, handles) in _USED.items():
        cls = getattr(_internals, name, None)
        require("llama-cpp-python", inspect.isclass(cls), missing=f"_internals.{name}", needed_for=_NEEDED_FOR_RUNTIME)
        assert cls is not None
        for method in methods:
            require(
                "llama-cpp-python",
                callable(getattr(cls, method, None)),
                missing=f"_internals.{name}.{method}()",
                needed_for=_NEEDED_FOR_RUNTIME,
            )
        for handle in handles:
            require(
                "llama-cpp-python",
                _sets(cls, handle),
                missing=f"_internals.{name}.{handle} (set by its constructor)",
                needed_for=_NEEDED_FOR_RUNTIME,
            )
    return _internals


def model_of(llm: Any) -> Any:
    """The ``LlamaModel`` under a ``llama_cpp.Llama``.

    Why: ``Llama`` does not say how long a context its model was trained for
    (its ``n_ctx()`` is the context it was opened with) or whether its
    tokenizer adds a BOS token, and an outlines judge over a ``Llama`` needs
    both. Relies on: ``Llama`` keeping its model as ``_model``, with
    ``n_ctx_train()`` and ``add_bos_token()``.
    """
    model = getattr(llm, "_model", None)
    require(
        "llama-cpp-python",
        all(callable(getattr(model, method, None)) for method in ("n_ctx_train", "add_bos_token")),
        missing="Llama._model (its LlamaModel, with n_ctx_train() and add_bos_token())",
        needed_for="an outlines judge over llama.cpp knows its model's trained context and BOS",
    )
    return model
