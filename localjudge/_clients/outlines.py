"""OutlinesClient: any outlines model as a judge, decoding under outlines' constraints.

For users who already hold an outlines model (``outlines.from_llamacpp``,
``from_transformers``, ``from_mlxlm``, ``from_vllm_offline``). Requests are read
and refused exactly as by our other local clients (:mod:`.request`, and the
schema keywords our compiler cannot enforce), and outlines constrains the
engine with its own logits processor (an outlines-core index).

The grammar outlines enforces comes, by default, from our schema compiler
(outlines' ``Regex`` output type): outlines' own JSON-schema compiler leaves
``minimum``/``maximum`` unenforced, and a continuous score then ran to
``1000000...`` until ``max_tokens`` on the default model. With
``schema_compiler="outlines"`` outlines compiles the schema itself (JSON
whitespace bounded to one optional space), and the numeric bounds it would
ignore are refused when the evaluator is built instead.

outlines returns text only, so the client works out the rest itself: an
answer that is not complete JSON can only have been cut by ``max_tokens``
(the grammar admits no other way to stop), so it is reported as
``finish_reason="length"`` and the judge raises ``TruncatedOutputError`` with
the raw text. Unlike our own decoder, outlines has no budget for free-text
strings, so a rambling ``reasoning`` runs to ``max_tokens`` instead of being
closed.

The prompt is rendered by our sandboxed chat templates for llama.cpp and
transformers models (the model's own template, else a built-in one for its
architecture). Those engines parse special tokens anywhere in a prompt
string, so a message whose text spells one (``<end_of_turn>``) is refused
rather than let it close its turn; ``LlamaCppClient`` and
``TransformersClient`` keep such text apart and judge it safely. MLX and vLLM
models get the messages as an outlines ``Chat`` and apply their own template.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from .. import _bounded_json as bounded_json
from .._prompts.format_instructions import add_format_instructions
from .._prompts.schema import decoding_order, stated_bounds
from .._runtimes.base import check_fits, refuse_what_cannot_fit
from .._runtimes.chat_templates import text_in_markup
from .._specs.options import WHITESPACE_PATTERN
from ..errors import ContextOverflowError, ModelError, UnsupportedSchemaError, UsageError
from .base import ChatClient, ChatResponse, make_chat_completion, read_response_format
from .local import DEFAULT_MAX_TOKENS
from .outlines_engines import engine_for
from .request import RequestOptions, answer_length, check_max_tokens, read_request, refuse_special_spellings

__all__ = ["WHITESPACE_PATTERN", "OutlinesClient"]

_GENERATOR_CACHE_SIZE = 16


class OutlinesClient(ChatClient):
    """An OpenAI-shaped chat client over an outlines model; see the module docstring.

    ``schema_compiler`` says who turns a JSON schema into the grammar
    ("localjudge" or "outlines"); ``backend`` picks outlines' constraint
    backend (default: outlines-core). Callers take turns, their tokenizing
    included, with every client over the same engine; do not share the
    engine with other code while judging.
    """

    def __init__(
        self,
        model: Any,
        *,
        chat_template: str | None = None,
        schema_compiler: str = "localjudge",
        backend: str | None = None,
        whitespace_pattern: str = WHITESPACE_PATTERN,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        model_name: str | None = None,
        format_instructions: bool = True,
    ) -> None:
        super().__init__()
        self.format_instructions = format_instructions
        if schema_compiler not in ("localjudge", "outlines"):
            raise UsageError(f"schema_compiler must be 'localjudge' or 'outlines', got {schema_compiler!r}")
        self.schema_compiler = schema_compiler
        self._lock = _lock_for(model)
        with self._lock:  # reading the engine's facts tokenizes too
            self.engine = engine_for(model, chat_template)
        self.name = f"outlines:{self.engine.kind}"
        self.model_name = model_name or self.engine.name
        self.max_tokens = check_max_tokens(max_tokens)
        self.backend = backend
        self.whitespace_pattern = whitespace_pattern
        self._generators: OrderedDict[str, Any] = OrderedDict()

    def check_schema(self, schema: Mapping[str, Any]) -> None:
        """Our decoder's refusals, plus the keywords outlines' compiler ignores when it compiles."""
        from .._decoding import check_schema

        check_schema(schema)
        if self.schema_compiler == "outlines":
            _refuse_what_outlines_ignores(schema, "#")

    def _complete(self, request: dict[str, Any]) -> ChatResponse:
        messages, options = read_request(request, self.name, logprobs=False)
        kind, schema = read_response_format(request.get("response_format"))
        if kind == "json_schema":
            self.check_schema(schema or {})
            schema = dict(decoding_order(schema or {}))
            if self.format_instructions:
                messages = add_format_instructions(messages, schema)
        with self._lock:  # tokenizing too: see _lock_for
            prompt = self._prompt(messages)
            generator = self._generator(kind, schema)
            n_prompt = self._check_fits(prompt, options)
            max_tokens = answer_length(options, self.max_tokens, self.engine.n_ctx, n_prompt)
            text = self._generate(generator, prompt, self.engine.generation_kwargs(options, max_tokens))
            completion_tokens = self.engine.count_tokens(text)
        return make_chat_completion(
            text,
            model=str(request.get("model") or self.model_name),
            finish_reason=_finish_reason(kind, text, completion_tokens, max_tokens),
            prompt_tokens=n_prompt,
            completion_tokens=completion_tokens,
        )

    def _prompt(self, messages: Sequence[Mapping[str, Any]]) -> Any:
        template = self.engine.template
        if template is None:
            from outlines.inputs import Chat

            return Chat([dict(m) for m in messages])
        parts = template.render_parts(messages)
        texts = [text for text, markup in parts if not markup] + text_in_markup(parts, messages)
        refuse_special_spellings(texts, self.engine.spells_special, self.name)  # outlines parses them all
        prompt = "".join(text for text, _ in parts)
        if self.engine.adds_bos and template.bos_token and prompt.startswith(template.bos_token):
            prompt = prompt[len(template.bos_token) :]  # the engine adds BOS itself
        return prompt

    def _check_fits(self, prompt: Any, options: RequestOptions) -> int:
        engine = self.engine
        if not isinstance(prompt, str) or engine.n_ctx is None:
            return 0
        refuse_what_cannot_fit([prompt], engine.count_tokens, engine.n_ctx, self.name)
        n_prompt = engine.count_tokens(prompt) + int(engine.adds_bos)
        max_tokens = options.max_tokens or 1
        check_fits(
            n_prompt,
            max_tokens,
            engine.n_ctx,
            engine.n_ctx_train or engine.n_ctx,
            backend=self.name,
            given=options.max_tokens is not None,
        )
        return n_prompt

    def _generator(self, kind: str, schema: dict[str, Any] | None) -> Any:
        """outlines' generator for this output type, built once per schema (index building is slow)."""
        import outlines
        from outlines.types import JsonSchema, Regex

        key = json.dumps([kind, schema], sort_keys=True)
        if key in self._generators:
            self._generators.move_to_end(key)
            return self._generators[key]
        from .._decoding import ANY_JSON_OBJECT_SCHEMA, schema_to_regex

        output_type: JsonSchema | Regex | None
        if kind == "text":
            output_type = None
        elif kind == "json_schema" and self.schema_compiler == "outlines":
            output_type = JsonSchema(schema, whitespace_pattern=self.whitespace_pattern)
        else:  # the same compact grammar as our own decoder
            regex_schema = schema if kind == "json_schema" else ANY_JSON_OBJECT_SCHEMA
            assert regex_schema is not None, "read_response_format pairs json_schema with its schema"
            output_type = Regex(schema_to_regex(regex_schema))
        try:
            generator = outlines.Generator(self.engine.model, output_type, self.backend)
        except (ValueError, NotImplementedError, RuntimeError) as exc:
            raise ModelError(f"outlines could not build a generator for this output: {exc}", backend=self.name) from exc
        self._generators[key] = generator
        while len(self._generators) > _GENERATOR_CACHE_SIZE:
            self._generators.popitem(last=False)
        return generator

    def _generate(self, generator: Any, prompt: Any, kwargs: dict[str, Any]) -> str:
        try:
            text = generator(prompt, **kwargs)
        except ValueError as exc:
            if "context window" in str(exc) or "exceed" in str(exc):
                raise ContextOverflowError(str(exc), backend=self.name) from exc
            raise ModelError(f"outlines failed to generate: {exc}", backend=self.name) from exc
        except (RuntimeError, IndexError, TypeError) as exc:
            raise ModelError(f"outlines failed to generate: {exc}", backend=self.name) from exc
        if isinstance(text, list):  # a batch of one
            text = text[0]
        if not isinstance(text, str):
            raise ModelError(f"outlines returned {type(text).__name__}, not text", backend=self.name)
        return text

    def __repr__(self) -> str:
        return f"OutlinesClient({self.engine.kind}, {self.model_name!r})"


_ENGINE_LOCKS: weakref.WeakKeyDictionary[Any, threading.Lock] = weakref.WeakKeyDictionary()
_ENGINE_LOCKS_GUARD = threading.Lock()


def _lock_for(model: Any) -> threading.Lock:
    """The lock of the engine under an outlines model, shared by every client over it and over copies of it.

    Neither takes two callers at once: a llama.cpp context is not
    thread-safe, and a transformers tokenizer keeps "split special tokens"
    as a setting that each call changes, so one caller's check of a message
    could leave it set while outlines tokenized another caller's prompt.
    """
    engine = getattr(model, "model", model)  # the Llama or transformers model; a copy of the outlines model shares it
    with _ENGINE_LOCKS_GUARD:
        try:
            return _ENGINE_LOCKS.setdefault(engine, threading.Lock())
        except TypeError:  # an engine that takes no weak reference: a lock of this client's own
            return threading.Lock()


_IGNORED_BY_OUTLINES = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


def _refuse_what_outlines_ignores(schema: Any, path: str) -> None:
    """outlines-core's schema compiler writes any number for a bounded one: refuse the bound, do not ignore it."""
    if isinstance(schema, Mapping):
        for keyword in _IGNORED_BY_OUTLINES:
            if keyword in schema:
                raise UnsupportedSchemaError(
                    f"Schema keyword {keyword!r} is not enforced by outlines' schema compiler; "
                    "use schema_compiler='localjudge' (the default)",
                    path=path,
                    keyword=keyword,
                )
        if stated_bounds(schema) != (None, None):  # a range stated in words, as OpenEvals' continuous score's
            raise UnsupportedSchemaError(
                "This number's description states a range (0 to 1), which outlines' schema compiler "
                "cannot hold; use schema_compiler='localjudge' (the default)",
                path=path,
                keyword="description",
            )
        for key, value in schema.items():
            if key in ("properties", "$defs", "definitions") and isinstance(value, Mapping):
                for name, sub in value.items():  # names here are property names, not keywords
                    _refuse_what_outlines_ignores(sub, f"{path}/{key}/{name}")
            elif key not in ("enum", "const", "default", "examples"):
                _refuse_what_outlines_ignores(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            _refuse_what_outlines_ignores(value, f"{path}/{index}")


def _finish_reason(kind: str, text: str, completion_tokens: int, max_tokens: int) -> str:
    """ "stop" for a complete answer; "length" when it can only have been cut at ``max_tokens``."""
    if kind == "text":
        return "length" if completion_tokens >= max_tokens else "stop"
    try:
        bounded_json.loads(text)
    except ValueError:
        return "length"
    return "stop"
