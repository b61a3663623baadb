"""What OutlinesClient needs to know about each engine outlines can wrap: one small adapter each.

An adapter says how the engine takes our sampling options, how to count its
tokens, whether text would be read as a special token, and which chat
template renders its prompts (``None``: the engine applies its own to an
outlines ``Chat``). Options an engine cannot honour are refused, not dropped.
"""

from __future__ import annotations

import copy
import importlib
from pathlib import Path
from typing import Any, ClassVar

from .._compat.llama_cpp_internals import model_of
from .._runtimes.chat_templates import ChatTemplate, resolve_chat_template
from ..errors import MissingDependencyError, UsageError
from .request import RequestOptions

__all__ = ["LlamaCppEngine", "MLXEngine", "OutlinesEngine", "TransformersEngine", "VLLMEngine", "engine_for"]


class OutlinesEngine:
    """The defaults: no template of ours, no context check, no special-token test."""

    kind: ClassVar[str] = "outlines"
    template: ChatTemplate | None = None
    n_ctx: int | None = None
    n_ctx_train: int | None = None
    adds_bos: bool = False

    def __init__(self, model: Any, name: str) -> None:
        self.model = model  # the outlines model generate() is called on
        self.name = name

    @staticmethod
    def sampling_kwargs(options: RequestOptions, max_tokens: int) -> dict[str, Any]:
        raise NotImplementedError

    def generation_kwargs(self, options: RequestOptions, max_tokens: int) -> dict[str, Any]:
        return self.sampling_kwargs(options, max_tokens)

    def count_tokens(self, text: str) -> int:
        raise NotImplementedError

    def spells_special(self, text: str) -> bool:
        return False


def _refuse(kind: str, options: RequestOptions, *, stop: bool = True) -> None:
    if options.frequency_penalty or options.presence_penalty:
        raise UsageError(f"outlines with {kind} does not take frequency_penalty or presence_penalty")
    if stop and options.stop:
        raise UsageError(f"outlines with {kind} does not take stop strings")


def _require_kernels(library: str) -> None:
    """outlines-core's mask kernels for this tensor library, checked up front.

    Without them the logits processor fails inside llama-cpp-python's sampler
    callback, which only logs the error and samples unconstrained.
    """
    try:
        importlib.import_module(f"outlines_core.kernels.{library}")
    except ImportError as exc:
        missing = "numba" if library == "numpy" else library
        raise MissingDependencyError(f"outlines' constraints on {library} logits", missing, "outlines") from exc


class LlamaCppEngine(OutlinesEngine):
    """``outlines.from_llamacpp(Llama(...))``: greedy at temperature 0 through llama-cpp-python's sampler."""

    kind = "llama.cpp"

    def __init__(self, model: Any, chat_template: str | None) -> None:
        from outlines.models.llamacpp import LlamaCppTypeAdapter

        _require_kernels("numpy")
        llm = model.model
        raw = copy.copy(model)  # the same Llama and tokenizer, reading strings as prompts, not chat turns
        raw.type_adapter = LlamaCppTypeAdapter(has_chat_template=False)
        super().__init__(raw, Path(llm.model_path).stem)
        bos = llm.token_bos()
        self.template = resolve_chat_template(
            llm.metadata,
            chat_template,
            bos_token=llm.detokenize([bos], special=True).decode("utf-8", "replace") if bos >= 0 else "",
            eos_token=llm.detokenize([llm.token_eos()], special=True).decode("utf-8", "replace"),
            model_name=str(llm.model_path),
        )
        llama_model = model_of(llm)
        self.n_ctx, self.n_ctx_train = llm.n_ctx(), llama_model.n_ctx_train()
        self.adds_bos = bool(llama_model.add_bos_token())

    @staticmethod
    def sampling_kwargs(options: RequestOptions, max_tokens: int) -> dict[str, Any]:
        return {
            "max_tokens": max_tokens,
            "temperature": options.temperature,
            "top_p": options.top_p,
            "seed": options.seed,
            "frequency_penalty": options.frequency_penalty,
            "presence_penalty": options.presence_penalty,
            "stop": list(options.stop),
        }

    def count_tokens(self, text: str) -> int:
        return len(self.model.model.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    def spells_special(self, text: str) -> bool:
        data, llm = text.encode("utf-8"), self.model.model
        return bool(llm.tokenize(data, add_bos=False, special=True) != llm.tokenize(data, add_bos=False, special=False))


class TransformersEngine(OutlinesEngine):
    """``outlines.from_transformers(model, tokenizer)``: ``generate`` with sampling off at temperature 0."""

    kind = "transformers"

    def __init__(self, model: Any, chat_template: str | None) -> None:
        from .._runtimes.transformers import adds_bos, template_metadata

        _require_kernels("torch")
        tokenizer, config = model.hf_tokenizer, model.model.config
        raw = copy.copy(model)
        raw.type_adapter = copy.copy(model.type_adapter)
        raw.type_adapter.has_chat_template = False
        super().__init__(raw, Path(str(getattr(config, "name_or_path", "") or "transformers")).name)
        self.template = resolve_chat_template(
            template_metadata(tokenizer, str(getattr(config, "model_type", "") or "")),
            chat_template,
            bos_token=tokenizer.bos_token or "",
            eos_token=tokenizer.eos_token or "",
            model_name=str(getattr(config, "name_or_path", "the model")),
            backend="transformers",
        )
        self.n_ctx = self.n_ctx_train = getattr(config, "max_position_embeddings", None)
        self.adds_bos = adds_bos(tokenizer)

    @staticmethod
    def sampling_kwargs(options: RequestOptions, max_tokens: int) -> dict[str, Any]:
        _refuse("transformers", options, stop=False)
        kwargs: dict[str, Any] = {"max_new_tokens": max_tokens, "do_sample": options.temperature > 0}
        if options.temperature > 0:
            kwargs.update(temperature=options.temperature, top_p=options.top_p)
        return kwargs

    def generation_kwargs(self, options: RequestOptions, max_tokens: int) -> dict[str, Any]:
        kwargs = self.sampling_kwargs(options, max_tokens)
        if options.stop:
            kwargs.update(stop_strings=list(options.stop), tokenizer=self.model.hf_tokenizer)
        if options.seed is not None:
            import transformers

            transformers.set_seed(options.seed)  # generate() takes no generator; the caller holds the lock
        return kwargs

    def count_tokens(self, text: str) -> int:
        return len(self.model.hf_tokenizer(text, add_special_tokens=False)["input_ids"])

    def spells_special(self, text: str) -> bool:
        tokenizer = self.model.hf_tokenizer
        plain = tokenizer(text, add_special_tokens=False, split_special_tokens=True)["input_ids"]
        return bool(tokenizer(text, add_special_tokens=False)["input_ids"] != plain)


class MLXEngine(OutlinesEngine):
    """``outlines.from_mlxlm(...)`` on Apple silicon; its own chat template. Not run on this project's CI."""

    kind = "mlx-lm"

    @staticmethod
    def sampling_kwargs(options: RequestOptions, max_tokens: int) -> dict[str, Any]:
        _refuse("mlx-lm", options)
        if options.seed is not None and options.temperature > 0:
            raise UsageError("outlines with mlx-lm takes no seed; sample without one or at temperature 0")
        from mlx_lm.sample_utils import make_sampler

        return {"max_tokens": max_tokens, "sampler": make_sampler(temp=options.temperature, top_p=options.top_p)}

    def count_tokens(self, text: str) -> int:
        return len(self.model.mlx_tokenizer.encode(text))


class VLLMEngine(OutlinesEngine):
    """``outlines.from_vllm_offline(LLM(...))`` on a GPU box; its own chat template. Not run on this project's CI."""

    kind = "vllm"

    @staticmethod
    def sampling_kwargs(options: RequestOptions, max_tokens: int) -> dict[str, Any]:
        _refuse("vllm", options)
        from vllm import SamplingParams

        params = SamplingParams(
            max_tokens=max_tokens, temperature=options.temperature, top_p=options.top_p, seed=options.seed
        )
        return {"sampling_params": params}

    def count_tokens(self, text: str) -> int:
        return len(self.model.model.get_tokenizer().encode(text, add_special_tokens=False))


def engine_for(model: Any, chat_template: str | None) -> OutlinesEngine:
    """The adapter for an outlines model, by its class."""
    try:
        from outlines.models.llamacpp import LlamaCpp
        from outlines.models.transformers import Transformers
    except ImportError as exc:
        raise MissingDependencyError("OutlinesClient", "outlines", "outlines") from exc
    if isinstance(model, LlamaCpp):
        return LlamaCppEngine(model, chat_template)
    if isinstance(model, Transformers) and type(model).__name__ == "Transformers":  # not its multimodal subclass
        return TransformersEngine(model, chat_template)
    adapter = {"MLXLM": MLXEngine, "VLLMOffline": VLLMEngine}.get(type(model).__name__)
    if adapter is None:
        raise UsageError(
            "OutlinesClient takes an outlines model from from_llamacpp, from_transformers, from_mlxlm or "
            f"from_vllm_offline; got {type(model).__name__}"
        )
    if chat_template is not None:
        raise UsageError(f"chat_template= is not used with {adapter.kind}: the engine applies its own chat template")
    return adapter(model, adapter.kind)
