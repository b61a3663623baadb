"""One OpenAI-shaped client over any in-process runtime (llama.cpp, transformers, ...).

``client.chat.completions.create(messages=..., response_format=...)`` renders
the messages with the model's chat template, compiles the response schema to
a regex (:mod:`localjudge._decoding.schema_regex`) and decodes under it, so a
JSON answer always parses and validates, or stops at ``max_tokens`` with
``finish_reason="length"``. Greedy decoding (temperature 0) is the default:
one input, one verdict.

Requests in flight together (threads, the async twin ``client.aio``, or
``create_many``) are decoded side by side, one step of each per batch, on
as many sequences as the runtime has slots
(:class:`~localjudge._decoding.batcher.Batcher`); each gets the answer it
would get alone.

A request with ``score_reply`` set decodes nothing: it reads the reply that
ends its messages and answers with the log-probability of each of the
reply's tokens, then of the model's end-of-sequence token after them (the
end of a ChatML turn; Gemma's ``<eos>``, not its ``<end_of_turn>``), as
OpenAI-shaped ``logprobs``.

How the answer was decoded (sampled and forced tokens, whether a string was
closed by its budget, prefill and decode seconds) comes back on the response
as ``decode_stats``.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._decoding.batcher import Batcher
from .._decoding.readout import DEFAULT_TOLERANCE, readout_fields
from .._prompts.format_instructions import add_format_instructions
from .._prompts.schema import decoding_order
from .._runtimes.base import Runtime, refuse_what_cannot_fit
from .._runtimes.chat_templates import ChatTemplate, resolve_chat_template, text_in_markup
from .._specs.options import DECODING_OPTIONS, DEFAULT_MAX_TOKENS, DEFAULT_REASONING_BUDGET
from .._specs.registry import identity_options
from .._wording import Message
from ..errors import ContextOverflowError, ModelError, UsageError
from .base import ChatClient, ChatResponse, make_chat_completion, read_response_format
from .request import (
    SCORE_REPLY_FIELD,
    answer_length,
    check_max_tokens,
    read_request,
    refuse_special_spellings,
    scores_reply,
)

__all__ = ["DECODE_STATS_FIELD", "DEFAULT_MAX_TOKENS", "DEFAULT_REASONING_BUDGET", "READOUT_FIELD", "LocalClient"]

#: the response field that says how the answer was decoded
DECODE_STATS_FIELD = "decode_stats"
#: the response field with the probabilities of each boolean, enum or number field's values
READOUT_FIELD = "readout"


@dataclass(frozen=True)
class _Prepared:
    """A request ready to decode, and what its response needs besides the decoding."""

    generation: Any
    model: str
    prompt: list[int]  # the prompt's tokens, which the generation starts by reading
    readout_fields: dict[str, bytes]
    reply: list[int] | None = None  # a reply scored, not an answer decoded (``score_reply``)


#: changed whenever decoding changes what an answer to the same request is, so no stored answer outlives it
#: (2: the verdict decoded before the reasoning, :func:`~localjudge._prompts.schema.decoding_order`;
#: 3: prompts cut finer below 128 tokens, :mod:`~localjudge._runtimes.prefix_cache`, which moves their last digits)
DECODING_REVISION = 3


class LocalClient(ChatClient):
    """An OpenAI-shaped chat client over one loaded :class:`~localjudge._runtimes.base.Runtime`.

    ``chat_template`` overrides the model's own template (a built-in name,
    ``"gguf"`` or Jinja source). ``reasoning_budget`` caps the sampled tokens
    of each free-text JSON string (the judge's ``reasoning``): when spent, the
    string is closed and the verdict follows. ``close_loops`` closes such a
    string early when greedy decoding is stuck repeating one passage.
    ``max_tokens`` is the default answer length when a request names none.
    ``format_instructions`` tells the model in words what the answer's schema
    means (:mod:`localjudge._prompts.format_instructions`); the grammar alone holds
    only its shape.
    ``readout`` weighs every value the grammar allows for each boolean, enum
    or number field (the response's ``readout``), leaving out less than
    ``readout_tolerance`` of the probability (:mod:`localjudge._decoding.readout`).
    """

    def __init__(
        self,
        runtime: Runtime,
        *,
        chat_template: str | None = None,
        reasoning_budget: int | None = DEFAULT_REASONING_BUDGET,
        close_loops: bool = True,
        format_instructions: bool = True,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        model_name: str | None = None,
        readout: bool = True,
        readout_tolerance: float = DEFAULT_TOLERANCE,
    ) -> None:
        super().__init__()
        if not 0 < readout_tolerance < 1:
            raise UsageError(f"readout_tolerance must be between 0 and 1, got {readout_tolerance!r}")
        if reasoning_budget is not None and (isinstance(reasoning_budget, bool) or reasoning_budget < 1):
            raise UsageError("reasoning_budget must be a positive number of tokens, or None for no cap")
        self.runtime = runtime
        self.batcher = Batcher(runtime)
        self.name = runtime.backend
        self.reasoning_budget = reasoning_budget
        self.close_loops = close_loops
        self.format_instructions = format_instructions
        self.readout = readout
        self.readout_tolerance = readout_tolerance
        self.max_tokens = check_max_tokens(max_tokens)
        self.model_name = model_name or (runtime.path.stem if runtime.path.suffix == ".gguf" else runtime.path.name)
        self.template: ChatTemplate = resolve_chat_template(
            runtime.template_metadata,
            chat_template,
            bos_token=runtime.token_text(runtime.bos_id),
            eos_token=runtime.token_text(runtime.vocab.eos_id),
            model_name=str(runtime.path),
            backend=runtime.backend,
        )

    def _complete(self, request: dict[str, Any]) -> ChatResponse:
        prepared = self._prepare(request)
        return self._respond(prepared, self.batcher.run(prepared.generation, prepared.prompt))

    def create_many(
        self, requests: Sequence[Mapping[str, Any]], *, return_exceptions: bool = False
    ) -> list[ChatResponse | Exception]:
        """Several chat-completion requests (each ``create``'s keyword arguments), decoded side by side.

        The responses come back in order, each as ``create`` gives it alone.
        With ``return_exceptions`` a failed request's error takes its place;
        otherwise the first error is raised once every request has finished.
        """
        prepared: list[_Prepared | Exception] = []
        for request in requests:
            try:
                prepared.append(self._prepare(dict(request)))
            except Exception as exc:
                if not return_exceptions:
                    raise
                prepared.append(exc)
        runnable = [p for p in prepared if isinstance(p, _Prepared)]
        outcomes = iter(self.batcher.run_all([p.generation for p in runnable], prompts=[p.prompt for p in runnable]))
        responses: list[ChatResponse | Exception] = []
        for item in prepared:
            outcome = next(outcomes) if isinstance(item, _Prepared) else item
            if isinstance(item, _Prepared) and not isinstance(outcome, BaseException):
                outcome = self._respond(item, outcome)
            if isinstance(outcome, BaseException) and not return_exceptions:
                raise outcome
            responses.append(outcome)
        return responses

    def _prepare(self, request: dict[str, Any]) -> _Prepared:
        """Render, tokenize and check one request; its generation, ready to run."""
        from .._decoding.loop import Sampler, generate

        if scores_reply(request):
            return self._prepare_score(request)
        request.pop(SCORE_REPLY_FIELD, None)  # false: an ordinary request
        messages, options = read_request(request, self.name)
        guide, schema = self._guide_for(request.get("response_format"))
        if self.format_instructions:
            messages = add_format_instructions(messages, schema)
        fields = readout_fields(schema) if self.readout and guide is not None else {}
        sampler = Sampler(
            options.temperature,
            options.top_p,
            options.seed,
            frequency_penalty=options.frequency_penalty,
            presence_penalty=options.presence_penalty,
        )
        runtime = self.runtime
        tokens = self._prompt_tokens(messages)
        max_tokens = answer_length(options, self.max_tokens, runtime.n_ctx, len(tokens))
        try:
            runtime.check_fits(len(tokens), max_tokens, max_tokens_given=options.max_tokens is not None)
        except ContextOverflowError as exc:
            if not (self.format_instructions and schema):
                raise
            raise ContextOverflowError(
                Message(
                    "{reason} The schema's format instructions are part of this prompt; without them "
                    "({format_instructions:format_instructions=False}) it is shorter.",
                    reason=exc.wording if exc.wording is not None else exc.message,
                ),
                backend=exc.backend,
            ) from None
        generation = generate(
            runtime,
            runtime.vocab,
            tokens,
            guide=guide,
            max_tokens=max_tokens,
            sampler=sampler,
            string_budget=self.reasoning_budget,
            close_loops=self.close_loops,
            stop=options.stop,
            readout_after=list(fields.values()),
            readout_tolerance=self.readout_tolerance,
            logprobs=options.logprobs,
        )
        return _Prepared(generation, str(request.get("model") or self.model_name), tokens, fields)

    def _prompt_tokens(self, messages: Sequence[Mapping[str, Any]]) -> list[int]:
        """The messages rendered with the chat template and tokenized; text that spells markup is refused."""
        prompt = self.template.render_parts(messages)
        runtime = self.runtime
        with runtime.reading:
            runtime.require_open()
            refuse_special_spellings(text_in_markup(prompt, messages), runtime.spells_special, self.name)
            return runtime.prompt_tokens(prompt)

    def _prepare_score(self, request: dict[str, Any]) -> _Prepared:
        """A reply to score: the conversation before it is the prompt, its text (never markup) the reply."""
        from .._decoding.steps import Score

        request = {k: v for k, v in request.items() if k != SCORE_REPLY_FIELD}
        asked = [name for name in ("response_format", "stop", "top_logprobs") if request.get(name)]
        if asked:  # nothing is decoded, so nothing could honour them
            raise UsageError(f"a request with {SCORE_REPLY_FIELD} generates nothing: drop {', '.join(asked)}")
        messages, _ = read_request(request, self.name)
        *conversation, last = messages
        reply = last.get("content")
        if last.get("role") != "assistant" or not isinstance(reply, str) or not reply or not conversation:
            raise UsageError(
                f"a request with {SCORE_REPLY_FIELD} ends with the reply to score, "
                "{'role': 'assistant', 'content': TEXT}, after at least one message",
                param="messages",
            )
        runtime = self.runtime
        prompt_tokens = self._prompt_tokens(conversation)
        with runtime.reading:
            refuse_what_cannot_fit(
                [reply], lambda text: len(runtime.tokenize(text, special=False)), runtime.n_ctx, self.name
            )
            reply_tokens = runtime.tokenize(reply, special=False)
        if runtime.vocab.eos_id is not None:  # how likely the reply ends where it does counts too
            reply_tokens.append(runtime.vocab.eos_id)
        if len(prompt_tokens) + len(reply_tokens) > runtime.n_ctx:
            raise ContextOverflowError(
                Message(
                    "The conversation ({prompt} tokens) and the reply to score ({reply}) do not fit the context "
                    "of {size}. Shorten them, or load the model with a larger {n_ctx:n_ctx}.",
                    prompt=len(prompt_tokens),
                    reply=len(reply_tokens),
                    size=runtime.n_ctx,
                ),
                backend=self.name,
            )

        def scoring() -> Any:
            return (yield Score(prompt_tokens, reply_tokens))

        return _Prepared(scoring(), str(request.get("model") or self.model_name), prompt_tokens, {}, reply_tokens)

    def _respond_score(self, prepared: _Prepared, logprobs: list[float]) -> ChatResponse:
        assert prepared.reply is not None
        response = make_chat_completion("", model=prepared.model, prompt_tokens=len(prepared.prompt) + len(logprobs))
        pieces = self.runtime.vocab.pieces
        tokens = []
        for token, logprob in zip(prepared.reply, logprobs, strict=True):
            piece = pieces[token]  # None for a special token (the end of the reply): spelled as the tokenizer does
            text = piece.decode("utf-8", "replace") if piece is not None else self.runtime.token_text(token)
            tokens.append({"token": text, "logprob": logprob, "bytes": list(piece or b""), "top_logprobs": []})
        response.choices[0]["logprobs"] = ChatResponse({"content": tokens})
        return response

    def _respond(self, prepared: _Prepared, result: Any) -> ChatResponse:  # a DecodeResult, or a reply's scores
        if prepared.reply is not None:
            return self._respond_score(prepared, result)
        response = make_chat_completion(
            result.text,
            model=prepared.model,
            finish_reason=result.finish_reason,
            prompt_tokens=len(prepared.prompt),
            completion_tokens=len(result.tokens),
            extra={DECODE_STATS_FIELD: result.stats()},
        )
        readouts = {
            name: result.readouts[marker].metadata()
            for name, marker in prepared.readout_fields.items()
            if marker in result.readouts
        }
        if readouts:
            response[READOUT_FIELD] = ChatResponse(readouts)
        if result.logprobs is not None:
            response.choices[0]["logprobs"] = ChatResponse({"content": result.logprobs})
        return response

    def _guide_for(self, response_format: Mapping[str, Any] | None) -> tuple[Any, dict[str, Any] | None]:
        """The guide for the answer's grammar, and its schema (None for free text)."""
        from .._decoding import ANY_JSON_OBJECT_SCHEMA, guide_for, schema_to_regex

        kind, schema = read_response_format(response_format)
        if kind == "text":
            return None, None
        schema = ANY_JSON_OBJECT_SCHEMA if kind == "json_object" else schema
        assert schema is not None, "read_response_format pairs json_schema with its schema"
        schema = dict(decoding_order(schema))
        return guide_for(self.runtime.vocab, schema_to_regex(schema)), schema

    def check_schema(self, schema: Mapping[str, Any]) -> None:
        """Refuse, when an evaluator is built, a schema keyword decoding cannot enforce."""
        from .._decoding import check_schema

        check_schema(schema)

    def smoke_decode(self) -> dict[str, Any]:
        """Evaluate one prompt and pick one token: proves the model runs on this machine."""
        from .._decoding.steps import Start

        started = time.perf_counter()
        runtime = self.runtime
        with runtime.reading:
            runtime.require_open()
            tokens = runtime.prompt_tokens(self.template.render_parts([{"role": "user", "content": "Say OK."}]))

        def first_token() -> Generator[Start, Any, int]:  # through the batcher, which owns the sequences
            logits = yield Start(tokens)
            return int(logits.argmax())

        token = self.batcher.run(first_token())
        if not (0 <= token < runtime.n_vocab):
            raise ModelError(f"Smoke decode produced an impossible token id {token}", backend=self.name)
        return {"token": token, "text": runtime.token_text(token), "seconds": time.perf_counter() - started}

    def close(self) -> None:
        with self.runtime.lock, self.runtime.reading:
            self.runtime.close()

    def cache_identity(self) -> dict[str, Any]:
        """Everything about this client that decides an answer, for the result cache."""
        from importlib.metadata import PackageNotFoundError, version

        from .._paths import model_identity

        try:
            decoder = f"{version('localjudge')}+{DECODING_REVISION}"
        except PackageNotFoundError:  # a source tree that was never installed
            decoder = f"unknown+{DECODING_REVISION}"
        # the options declared to decide an answer: the client's decoding ones as it holds them,
        # the engine's loading ones as the runtime reports them (the device it chose, not "default")
        identity = identity_options()
        decoding = {option.name for option in DECODING_OPTIONS} & identity
        loading = self.runtime.load_info()
        return {
            "engine": self.runtime.backend,
            "model": model_identity(self.runtime.path),
            "loading": {k: loading[k] for k in sorted(identity - decoding) if k in loading},
            **{name: self.template.source if name == "chat_template" else getattr(self, name) for name in decoding},
            "decoder": decoder,
        }

    def load_info(self) -> dict[str, Any]:
        """How the model was loaded and how it decodes, for ``localjudge doctor``."""
        return {
            **self.runtime.load_info(),
            "chat_template": self.template.source,
            "reasoning_budget": self.reasoning_budget,
            "close_loops": self.close_loops,
        }

    def runtime_info(self) -> dict[str, Any]:
        """``load_info()`` plus what the engine says about this machine (subclasses add to it)."""
        return self.load_info()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.runtime.path)!r}, n_ctx={self.runtime.n_ctx})"
