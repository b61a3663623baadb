"""Request handling shared by the in-process backends (llama.cpp, transformers).

A local backend is a model adapter (tokens in, logits out: the
``LogitsBackend`` of :mod:`localjudge.decoding.loop`) plus a chat template.
Everything between the OpenAI-shaped request and the decode loop (which
fields are honoured or refused, sampling options, the response_format ->
guide step, the context check, the response object) is the same for every
backend, so it lives here once.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..chat_templates import ChatTemplate
from ..errors import ContextOverflowError, ModelError, UsageError
from .base import ChatClient, ChatCompletion, make_chat_completion, read_response_format

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_REASONING_BUDGET", "LocalModel", "LocalModelClient", "TokenizedModel"]

DEFAULT_MAX_TOKENS = 1024
DEFAULT_REASONING_BUDGET = 256

# Request fields we honour, and fields that are harmless to accept and ignore.
_HONOURED = {
    "frequency_penalty",
    "presence_penalty",
    "messages",
    "model",
    "response_format",
    "temperature",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "stop",
    "top_p",
    "n",
    "stream",
    "logprobs",
}
_IGNORED = {
    "user",
    "metadata",
    "store",
    "timeout",
    "extra_headers",
    "extra_query",
    "extra_body",
    "service_tier",
}


class LocalModel(Protocol):
    """What a model adapter offers the client (besides ``start``/``extend``/``tokenize_fragment``)."""

    lock: Any
    n_ctx: int
    n_vocab: int
    path: Any
    vocab: Any

    def require_open(self) -> None: ...

    def token_text(self, token: int) -> str: ...

    def close(self) -> None: ...

    def prompt_tokens(self, prompt: Sequence[tuple[str, bool]]) -> list[int]: ...

    def check_fits(self, n_prompt: int, max_tokens: int) -> None: ...


class TokenizedModel:
    """Prompt tokenisation and the context check, the same for every model adapter."""

    backend = "local"
    n_ctx: int
    n_ctx_train: int
    bos_id: int | None
    add_bos: bool

    def tokenize(self, text: str, *, special: bool) -> list[int]:
        raise NotImplementedError

    def prompt_tokens(self, prompt: str | Sequence[tuple[str, bool]]) -> list[int]:
        """Tokens for a rendered chat prompt, with exactly one BOS when the model wants one.

        ``prompt`` is a string (all markup) or ``(text, is_markup)`` parts from
        :meth:`ChatTemplate.render_parts`: special tokens are parsed in markup
        only, never in message text.
        """
        parts = [(prompt, True)] if isinstance(prompt, str) else prompt
        tokens = [t for text, markup in parts for t in self.tokenize(text, special=markup)]
        if self.add_bos and self.bos_id is not None and self.bos_id >= 0:
            while len(tokens) > 1 and tokens[0] == self.bos_id and tokens[1] == self.bos_id:
                tokens.pop(0)
            if not tokens or tokens[0] != self.bos_id:
                tokens.insert(0, self.bos_id)
        return tokens

    def check_fits(self, n_prompt: int, max_tokens: int) -> None:
        if n_prompt + max_tokens > self.n_ctx:
            larger = (
                f", or load the model with a larger n_ctx (it was trained for {self.n_ctx_train})"
                if self.n_ctx < self.n_ctx_train
                else f" (the model was trained for {self.n_ctx_train})"
            )
            raise ContextOverflowError(
                f"The prompt has {n_prompt} tokens and max_tokens is {max_tokens}: {n_prompt + max_tokens} "
                f"tokens do not fit the context of {self.n_ctx}. Shorten the prompt or lower max_tokens{larger}.",
                backend=self.backend,
            )


class LocalModelClient(ChatClient):
    """An OpenAI-shaped chat client over one in-process model; subclasses load ``model`` and ``template``."""

    model: LocalModel
    template: ChatTemplate
    model_name: str
    reasoning_budget: int | None
    close_loops: bool
    max_tokens: int

    def _setup(self, reasoning_budget: int | None, close_loops: bool, max_tokens: int) -> None:
        if reasoning_budget is not None and reasoning_budget < 1:
            raise UsageError("reasoning_budget must be a positive number of tokens, or None for no cap")
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise UsageError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        self.reasoning_budget = reasoning_budget
        self.close_loops = close_loops
        self.max_tokens = max_tokens
        self.last_result = None

    def _complete(self, request: dict[str, Any]) -> ChatCompletion:
        from ..decoding.loop import Sampler, decode

        messages, options = self._read_request(request)
        prompt = self.template.render_parts(messages)
        guide = self._guide_for(request.get("response_format"))
        sampler = Sampler(
            options["temperature"],
            options["top_p"],
            options["seed"],
            frequency_penalty=options["frequency_penalty"],
            presence_penalty=options["presence_penalty"],
        )
        with self.model.lock:
            self.model.require_open()
            tokens = self.model.prompt_tokens(prompt)
            max_tokens = options["max_tokens"]
            if max_tokens is None:
                max_tokens = max(1, min(self.max_tokens, self.model.n_ctx - len(tokens)))
            self.model.check_fits(len(tokens), max_tokens)
            result = decode(
                self.model,
                self.model.vocab,
                tokens,
                guide=guide,
                max_tokens=max_tokens,
                sampler=sampler,
                string_budget=self.reasoning_budget,
                close_loops=self.close_loops,
                stop=options["stop"],
            )
        self.last_result = result
        return make_chat_completion(
            result.text,
            model=str(request.get("model") or self.model_name),
            finish_reason=result.finish_reason,
            prompt_tokens=len(tokens),
            completion_tokens=len(result.tokens),
        )

    def _read_request(self, request: Mapping[str, Any]) -> tuple[list[Mapping[str, Any]], dict[str, Any]]:
        unknown = set(request) - _HONOURED - _IGNORED
        if unknown:
            raise UsageError(f"{self.name} does not support the request fields {sorted(unknown)}")
        messages = request.get("messages")
        if not isinstance(messages, (list, tuple)) or not messages:
            raise UsageError("messages must be a non-empty list of chat messages")
        if request.get("n") not in (None, 1):
            raise UsageError(f"{self.name} generates one choice per request (n=1)")
        if request.get("logprobs"):
            raise UsageError(f"{self.name} does not return logprobs")
        if request.get("stream"):
            raise UsageError(f"{self.name} does not stream; call without stream=True")
        max_tokens = request.get("max_tokens", request.get("max_completion_tokens"))
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            raise UsageError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        temperature = request.get("temperature")
        top_p = request.get("top_p")
        if temperature is not None and not 0 <= float(temperature) <= 2:
            raise UsageError(f"temperature must be between 0 and 2, got {temperature!r}")
        if top_p is not None and not 0 < float(top_p) <= 1:
            raise UsageError(f"top_p must be in (0, 1], got {top_p!r}")
        stop = request.get("stop") or ()
        return list(messages), {
            "max_tokens": max_tokens,
            "temperature": 0.0 if temperature is None else float(temperature),
            "top_p": 1.0 if top_p is None else float(top_p),
            "seed": request.get("seed"),
            "frequency_penalty": float(request.get("frequency_penalty") or 0.0),
            "presence_penalty": float(request.get("presence_penalty") or 0.0),
            "stop": [stop] if isinstance(stop, str) else list(stop),
        }

    def _guide_for(self, response_format: Mapping[str, Any] | None):
        from ..decoding import ANY_JSON_OBJECT_SCHEMA, guide_for, schema_to_regex

        kind, schema = read_response_format(response_format)
        if kind == "text":
            return None
        regex = schema_to_regex(ANY_JSON_OBJECT_SCHEMA if kind == "json_object" else schema)
        return guide_for(self.model.vocab, regex)

    def check_schema(self, schema: Mapping[str, Any]) -> None:
        """Refuse, when an evaluator is built, a schema keyword decoding cannot enforce."""
        from ..decoding import check_schema

        check_schema(schema)

    def smoke_decode(self) -> dict[str, Any]:
        """Evaluate one prompt and pick one token: proves the model runs on this machine."""
        started = time.perf_counter()
        with self.model.lock:
            self.model.require_open()
            tokens = self.model.prompt_tokens(self.template.render_parts([{"role": "user", "content": "Say OK."}]))
            token = int(self.model.start(tokens).argmax())
        if not (0 <= token < self.model.n_vocab):
            raise ModelError(f"Smoke decode produced an impossible token id {token}", backend=self.name)
        return {"token": token, "text": self.model.token_text(token), "seconds": time.perf_counter() - started}

    def close(self) -> None:
        with self.model.lock:
            self.model.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.model.path)!r}, n_ctx={self.model.n_ctx})"

    def load_info(self) -> dict[str, Any]:
        """How the model was loaded and how it decodes, for ``localjudge doctor``."""
        return {
            **self.model.load_info(),
            "chat_template": self.template.source,
            "reasoning_budget": self.reasoning_budget,
            "close_loops": self.close_loops,
        }
