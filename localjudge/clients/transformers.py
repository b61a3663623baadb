"""TransformersClient: a transformers model directory behind the OpenAI chat-completions shape.

The optional extra ``localjudge[transformers]`` (torch + transformers), for
models that exist as a ``save_pretrained`` directory rather than a GGUF. It
shares everything but the model with :class:`~localjudge.clients.llamacpp.LlamaCppClient`:
the request handling (:mod:`.local`), the constrained decode loop and guide
(:mod:`localjudge.decoding`) and the sandboxed chat templates. The
tokenizer's own ``chat_template`` comes from the directory, so it is rendered
as untrusted input; without one a built-in format is picked by
``config.model_type``.
"""

from __future__ import annotations

import os
from typing import Any

from ..chat_templates import ChatTemplate, resolve_chat_template
from .local import DEFAULT_MAX_TOKENS, DEFAULT_REASONING_BUDGET, LocalModelClient

__all__ = ["TransformersClient"]


class TransformersClient(LocalModelClient):
    """An OpenAI-shaped chat client over a local transformers model directory.

    Greedy by default; ``reasoning_budget`` and ``close_loops`` bound free-text
    strings exactly as for llama.cpp. ``n_ctx`` defaults to the model's
    ``max_position_embeddings``. ``threads`` sets torch's (process-wide)
    thread count; None leaves torch's default.
    """

    name = "transformers"

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        chat_template: str | None = None,
        reasoning_budget: int | None = DEFAULT_REASONING_BUDGET,
        close_loops: bool = True,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        model_name: str | None = None,
        n_ctx: int | None = None,
        torch_dtype: Any = "float32",
        threads: int | None = None,
    ) -> None:
        super().__init__()
        from ._transformers_model import TransformersModel

        self._setup(reasoning_budget, close_loops, max_tokens)
        self.model = TransformersModel(model_dir, n_ctx=n_ctx, torch_dtype=torch_dtype, threads=threads)
        self.model_name = model_name or self.model.path.name
        self.template: ChatTemplate = resolve_chat_template(
            self._template_metadata(),
            chat_template,
            bos_token=self.model.tokenizer.bos_token or "",
            eos_token=self.model.tokenizer.eos_token or "",
            model_name=str(self.model.path),
            backend=self.name,
        )

    def _template_metadata(self) -> dict[str, str]:
        """The directory's template facts in the GGUF metadata keys :func:`resolve_chat_template` reads."""
        tokenizer = self.model.tokenizer
        metadata = {"general.architecture": self.model.model_type}
        template = getattr(tokenizer, "chat_template", None)
        if isinstance(template, dict):  # several named templates: the default one judges
            template = template.get("default")
        if isinstance(template, str) and template:
            metadata["tokenizer.chat_template"] = template
        if self.model.model_type == "llama" and "<|eot_id|>" in tokenizer.get_vocab():
            metadata["tokenizer.ggml.pre"] = "llama-bpe"
        return metadata

    # --- diagnostics -------------------------------------------------------------------

    def runtime_info(self) -> dict[str, Any]:
        """``load_info()`` plus the torch and transformers versions in use."""
        import torch
        import transformers

        return {**self.load_info(), "torch": torch.__version__, "transformers": transformers.__version__}
