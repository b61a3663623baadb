"""LlamaCppClient: a GGUF model on this machine behind the OpenAI chat-completions shape.

``client.chat.completions.create(messages=..., response_format=...)`` renders
the messages with the model's chat template, compiles the response schema to
a regex (:mod:`localjudge.decoding.schema_regex`) and decodes under it, so a
JSON answer always parses and validates, or stops at ``max_tokens`` with
``finish_reason="length"``. Greedy decoding (temperature 0) is the default:
one input, one verdict. One lock per loaded model serialises callers,
including the async twin (``client.aio``), which runs in a worker thread.
"""

from __future__ import annotations

import os
from typing import Any

from ..chat_templates import ChatTemplate, resolve_chat_template
from .local import DEFAULT_MAX_TOKENS, DEFAULT_REASONING_BUDGET, LocalModelClient

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_REASONING_BUDGET", "LlamaCppClient"]


class LlamaCppClient(LocalModelClient):
    """An OpenAI-shaped chat client over a local GGUF file.

    ``reasoning_budget`` caps the sampled tokens of each free-text JSON string
    (the judge's ``reasoning``): when spent, the string is closed and the
    verdict follows. ``close_loops`` closes such a string early when greedy
    decoding is stuck repeating one passage verbatim. ``use_extra_bufts=False`` avoids the AMX repacking crash
    of llama-cpp-python 0.3.36 source builds; ``load_info()`` reports it.
    """

    name = "llama.cpp"

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        n_batch: int = 512,
        chat_template: str | None = None,
        reasoning_budget: int | None = DEFAULT_REASONING_BUDGET,
        close_loops: bool = True,
        use_extra_bufts: bool = False,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        model_name: str | None = None,
        verbose: bool = False,
    ) -> None:
        super().__init__()
        from ._llamacpp_model import LlamaModel

        self._setup(reasoning_budget, close_loops, max_tokens)
        self.model = LlamaModel(
            model_path,
            n_ctx=n_ctx,
            n_batch=n_batch,
            n_threads=n_threads,
            use_extra_bufts=use_extra_bufts,
            verbose=verbose,
        )
        self.model_name = model_name or self.model.path.stem
        self.template: ChatTemplate = resolve_chat_template(
            self.model.metadata,
            chat_template,
            bos_token=self.model.token_text(self.model.bos_id),
            eos_token=self.model.token_text(self.model.vocab.eos_id),
            model_name=str(self.model.path),
        )

    # --- diagnostics -------------------------------------------------------------------

    def runtime_info(self) -> dict[str, Any]:
        """``load_info()`` plus the CPU facts behind the AMX workaround."""
        from ._llamacpp_model import cpu_features

        return {**self.load_info(), **cpu_features()}
