"""In-process engines behind one contract (:class:`~localjudge._runtimes.base.Runtime`): tokens in, logits out.

One module per engine: :mod:`.llamacpp` (GGUF files), :mod:`.transformers`
(model directories, and GGUFs converted once by :mod:`.gguf_conversion`).
Each loads its library only when used. A model's own chat template, which
a GGUF carries and which is untrusted, is rendered by :mod:`.chat_templates`
in the sandbox of :mod:`.template_sandbox`.
"""

from __future__ import annotations

from .._lazy import lazy_attributes

__all__ = ["LlamaCppRuntime", "Runtime", "TokenVocabulary", "TransformersRuntime"]

_LAZY = {
    "Runtime": ".base",
    "TokenVocabulary": ".vocabulary",
    "LlamaCppRuntime": ".llamacpp",
    "TransformersRuntime": ".transformers",
}

__getattr__ = lazy_attributes(__name__, _LAZY)
