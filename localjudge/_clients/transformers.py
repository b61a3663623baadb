"""TransformersClient: a transformers model behind the OpenAI chat-completions shape.

The optional extra ``localjudge[transformers]``. The request handling and
decoding are :class:`~localjudge._clients.local.LocalClient`'s; this class only
loads the model with torch (:class:`~localjudge._runtimes.transformers.TransformersRuntime`):
a ``save_pretrained`` directory, or a GGUF file converted once into the cache.
"""

from __future__ import annotations

import os
from typing import Any

from .local import LocalClient

__all__ = ["TransformersClient"]


class TransformersClient(LocalClient):
    """An OpenAI-shaped chat client over a transformers model directory or a GGUF file.

    ``device`` and ``dtype`` default to CPU/float32, or CUDA/bfloat16 when a
    GPU is present. ``n_ctx`` defaults to the model's
    ``max_position_embeddings``. ``n_threads`` sets torch's (process-wide)
    thread count. ``parallel`` requests in flight each keep a cache of their
    own (evaluated one after another). Every other keyword is a decoding option,
    :class:`LocalClient`'s (``chat_template``, ``max_tokens``, ``readout_tolerance``, ...).
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int | None = None,
        n_threads: int | None = None,
        device: str | None = None,
        dtype: str | None = None,
        parallel: int = 1,
        **decoding: Any,
    ) -> None:
        from .._runtimes.transformers import TransformersRuntime

        runtime = TransformersRuntime(
            model_path, n_ctx=n_ctx, device=device, dtype=dtype, n_threads=n_threads, parallel=parallel
        )
        super().__init__(runtime, **decoding)

    def runtime_info(self) -> dict[str, Any]:
        """``load_info()`` plus the torch and transformers versions in use."""
        import torch
        import transformers

        return {**self.load_info(), "torch": torch.__version__, "transformers": transformers.__version__}
