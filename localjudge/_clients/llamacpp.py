"""LlamaCppClient: a GGUF model on this machine behind the OpenAI chat-completions shape.

The request handling and decoding are :class:`~localjudge._clients.local.LocalClient`'s;
this class only loads the model with llama.cpp
(:class:`~localjudge._runtimes.llamacpp.LlamaCppRuntime`).
"""

from __future__ import annotations

import os
from typing import Any

from .._specs.options import DEFAULT_MAX_TOKENS, DEFAULT_PREFIX_CACHE_BYTES, DEFAULT_REASONING_BUDGET
from .local import LocalClient

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_REASONING_BUDGET", "LlamaCppClient"]


class LlamaCppClient(LocalClient):
    """An OpenAI-shaped chat client over a local GGUF file.

    ``n_gpu_layers`` offloads layers to a GPU (-1: all) on a llama-cpp-python
    built with CUDA or Metal. ``parallel`` requests in flight are decoded
    side by side in one batch, each with a KV cache of ``n_ctx`` tokens (the
    cache's memory grows with ``parallel * n_ctx``). ``prefix_cache_bytes`` bounds the evaluated
    prompt starts kept for later calls that share them (0: none). ``use_extra_bufts=False`` avoids the AMX
    repacking crash of llama-cpp-python 0.3.36 source builds; ``load_info()``
    reports it. Every other keyword is a decoding option, :class:`LocalClient`'s
    (``chat_template``, ``max_tokens``, ``reasoning_budget``, ``readout_tolerance``, ...).
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_batch: int = 512,
        n_gpu_layers: int = 0,
        parallel: int = 1,
        use_extra_bufts: bool = False,
        prefix_cache_bytes: int = DEFAULT_PREFIX_CACHE_BYTES,
        verbose: bool = False,
        **decoding: Any,
    ) -> None:
        from .._runtimes.llamacpp import LlamaCppRuntime

        runtime = LlamaCppRuntime(
            model_path,
            n_ctx=n_ctx,
            n_batch=n_batch,
            n_threads=n_threads,
            n_gpu_layers=n_gpu_layers,
            parallel=parallel,
            use_extra_bufts=use_extra_bufts,
            prefix_cache_bytes=prefix_cache_bytes,
            verbose=verbose,
        )
        super().__init__(runtime, **decoding)

    def runtime_info(self) -> dict[str, Any]:
        """``load_info()`` plus the CPU facts behind the AMX workaround."""
        from .._runtimes.llamacpp import system_info

        return {**self.load_info(), **system_info()}
