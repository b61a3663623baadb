"""LlamaCppClient: a GGUF model on this machine behind the OpenAI chat-completions shape.

The request handling and decoding are :class:`~localjudge.clients.local.LocalClient`'s;
this class only loads the model with llama.cpp
(:class:`~localjudge.runtimes.llamacpp.LlamaCppRuntime`).
"""

from __future__ import annotations

import os
from typing import Any

from ..runtimes.prefix_cache import DEFAULT_BUDGET_BYTES
from .local import DEFAULT_MAX_TOKENS, DEFAULT_REASONING_BUDGET, LocalClient

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_REASONING_BUDGET", "LlamaCppClient"]


class LlamaCppClient(LocalClient):
    """An OpenAI-shaped chat client over a local GGUF file.

    ``n_gpu_layers`` offloads layers to a GPU (-1: all) on a llama-cpp-python
    built with CUDA or Metal. ``parallel`` requests in flight are decoded
    side by side in one batch, each with a KV cache of ``n_ctx`` tokens (the
    cache's memory grows with ``parallel * n_ctx``). ``prefix_cache_bytes`` bounds the evaluated
    prompt starts kept for later calls that share them (0: none). ``use_extra_bufts=False`` avoids the AMX
    repacking crash of llama-cpp-python 0.3.36 source builds; ``load_info()``
    reports it. The decoding options are :class:`LocalClient`'s.
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
        chat_template: str | None = None,
        reasoning_budget: int | None = DEFAULT_REASONING_BUDGET,
        close_loops: bool = True,
        format_instructions: bool = True,
        use_extra_bufts: bool = False,
        prefix_cache_bytes: int = DEFAULT_BUDGET_BYTES,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        model_name: str | None = None,
        verbose: bool = False,
    ) -> None:
        from ..runtimes.llamacpp import LlamaCppRuntime

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
        super().__init__(
            runtime,
            chat_template=chat_template,
            reasoning_budget=reasoning_budget,
            close_loops=close_loops,
            format_instructions=format_instructions,
            max_tokens=max_tokens,
            model_name=model_name,
        )

    def runtime_info(self) -> dict[str, Any]:
        """``load_info()`` plus the CPU facts behind the AMX workaround."""
        from ..runtimes.llamacpp import system_info

        return {**self.load_info(), **system_info()}
