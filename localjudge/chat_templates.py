"""Chat messages -> the prompt string a local model was trained on.

A GGUF file may embed a Jinja chat template (metadata ``tokenizer.chat_template``).
It comes from whoever made the file, so it is untrusted: we render it in
Jinja's immutable sandbox, and a template that fails or reaches for something
unsafe is a clear error, never a crash or an escape.

Files without a template (the default Gemma 3 270M has none) get a built-in
format chosen by ``general.architecture``. llama-cpp-python's own fallback is
the llama-2 ``[INST]`` format, which is wrong for most models, so an
architecture we do not know is an error that says how to pass a template,
rather than a silent guess.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .clients.base import message_text
from .errors import ModelError, UsageError

__all__ = [
    "BUILTIN_TEMPLATES",
    "ChatTemplate",
    "builtin_template_for",
    "resolve_chat_template",
]


Turn = tuple[str, str]


def _turns(messages: Sequence[Mapping[str, Any]], *, system_role: bool) -> list[Turn]:
    """(role, text) pairs with roles normalised to system/user/assistant.

    Consecutive messages of one role are joined, so a format that insists on
    alternation still renders. Without a system role, system text is folded
    into the next user turn (as Gemma's own template does).
    """
    turns: list[Turn] = []
    pending_system: list[str] = []
    for message in messages:
        role = message.get("role")
        text = message_text(message)
        if role == "developer":
            role = "system"
        if role not in ("system", "user", "assistant"):
            raise UsageError(
                f"Chat message role {role!r} is not supported by a local judge (use system/user/assistant)"
            )
        if role == "system" and not system_role:
            pending_system.append(text.strip())
            continue
        if role == "user" and pending_system:
            text = "\n\n".join([*pending_system, text.strip()])
            pending_system = []
        if turns and turns[-1][0] == role:
            turns[-1] = (role, turns[-1][1] + "\n\n" + text)
        else:
            turns.append((role, text))
    if pending_system:
        turns.append(("user", "\n\n".join(pending_system)))
    return turns


Part = tuple[str, bool]  # (text, is_markup): markup may spell special tokens, message text may not


def _gemma(messages: Sequence[Mapping[str, Any]], bos: str, eos: str) -> list[Part]:
    parts: list[Part] = [(bos, True)]
    for role, text in _turns(messages, system_role=False):
        parts += [(f"<start_of_turn>{'model' if role == 'assistant' else role}\n", True), (text.strip(), False)]
        parts.append(("<end_of_turn>\n", True))
    parts.append(("<start_of_turn>model\n", True))
    return parts


def _chatml(messages: Sequence[Mapping[str, Any]], bos: str, eos: str) -> list[Part]:
    parts: list[Part] = []
    for role, text in _turns(messages, system_role=True):
        parts += [(f"<|im_start|>{role}\n", True), (text, False), ("<|im_end|>\n", True)]
    parts.append(("<|im_start|>assistant\n", True))
    return parts


def _llama3(messages: Sequence[Mapping[str, Any]], bos: str, eos: str) -> list[Part]:
    parts: list[Part] = [(bos, True)]
    for role, text in _turns(messages, system_role=True):
        parts += [(f"<|start_header_id|>{role}<|end_header_id|>\n\n", True), (text.strip(), False)]
        parts.append(("<|eot_id|>", True))
    parts.append(("<|start_header_id|>assistant<|end_header_id|>\n\n", True))
    return parts


BUILTIN_TEMPLATES: dict[str, Callable[[Sequence[Mapping[str, Any]], str, str], list[Part]]] = {
    "gemma": _gemma,
    "chatml": _chatml,
    "llama-3": _llama3,
}

_BY_ARCHITECTURE = {
    "gemma": "gemma",
    "gemma2": "gemma",
    "gemma3": "gemma",
    "gemma3n": "gemma",
    "qwen2": "chatml",
    "qwen2moe": "chatml",
    "qwen3": "chatml",
    "qwen3moe": "chatml",
}


def builtin_template_for(metadata: Mapping[str, str]) -> str | None:
    """The built-in format for a GGUF's architecture, or None when we know none."""
    arch = metadata.get("general.architecture", "")
    if arch in _BY_ARCHITECTURE:
        return _BY_ARCHITECTURE[arch]
    if arch == "llama" and metadata.get("tokenizer.ggml.pre") in ("llama-bpe", "llama3"):
        return "llama-3"
    return None


@dataclass
class ChatTemplate:
    """A renderer for one model: a built-in format or a sandboxed Jinja template.

    ``source`` says where it came from ("builtin:gemma", "gguf", "user") so
    diagnostics can report it; errors from a GGUF template are ModelError,
    errors from a template the caller passed are UsageError.
    """

    name: str
    source: str
    bos_token: str = ""
    eos_token: str = ""
    jinja_source: str | None = None
    backend: str = "llama.cpp"  # whose model embeds the template, for error context

    def __post_init__(self) -> None:
        self._compiled: Any = None
        if self.jinja_source is not None:
            self._compiled = self._compile(self.jinja_source)

    def render(self, messages: Sequence[Mapping[str, Any]]) -> str:
        return "".join(text for text, _ in self.render_parts(messages))

    def render_parts(self, messages: Sequence[Mapping[str, Any]]) -> list[Part]:
        """The prompt as (text, is_markup) pieces.

        Only markup is tokenized with special tokens enabled, so an answer
        under evaluation that contains ``<end_of_turn>`` stays text and cannot
        close its turn and write the verdict itself.
        """
        if not messages:
            raise UsageError("messages must hold at least one message")
        if self._compiled is None:
            parts = BUILTIN_TEMPLATES[self.name](messages, self.bos_token, self.eos_token)
            return [(text, markup) for text, markup in parts if text]
        return self._render_jinja_parts(messages)

    def _render_jinja_parts(self, messages: Sequence[Mapping[str, Any]]) -> list[Part]:
        """Locate each message's text in the render by rendering once more with sentinels.

        When the template transforms the text beyond trimming (so it cannot be
        located), the whole prompt is returned as markup, as other runtimes do.
        """
        contents = [message_text(m) for m in messages]
        full = self._render_jinja(
            [{"role": m.get("role"), "content": c} for m, c in zip(messages, contents, strict=True)]
        )
        marks = [f"\x00{i}\x00" for i in range(len(contents))]
        marked = self._render_jinja(
            [{"role": m.get("role"), "content": k} for m, k in zip(messages, marks, strict=True)]
        )
        pieces = re.split("\x00([0-9]+)\x00", marked)
        found = [int(i) for i in pieces[1::2]]
        if sorted(found) == list(range(len(contents))):
            for transform in (str, str.strip):
                parts: list[Part] = []
                for i, text in enumerate(pieces):
                    parts.append((text, True) if i % 2 == 0 else (transform(contents[int(text)]), False))
                if "".join(text for text, _ in parts) == full:
                    return [(text, markup) for text, markup in parts if text]
        return [(full, True)]

    def _error(self, message: str) -> Exception:
        if self.source == "gguf":
            return ModelError(f"The chat template embedded in the model {message}", backend=self.backend)
        return UsageError(f"The chat template {message}")

    def _compile(self, source: str) -> Any:
        import jinja2
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, autoescape=False)

        def raise_exception(message: str) -> None:
            raise jinja2.TemplateError(str(message))

        def strftime_now(fmt: str) -> str:
            import datetime

            return datetime.datetime.now().strftime(str(fmt))

        def tojson(value: Any, indent: int | None = None) -> str:
            import json

            return json.dumps(value, ensure_ascii=False, indent=indent)

        env.globals.update(raise_exception=raise_exception, strftime_now=strftime_now)
        env.filters["tojson"] = tojson
        try:
            return env.from_string(source)
        except jinja2.TemplateError as exc:
            raise self._error(f"does not parse: {exc}") from None

    def _render_jinja(self, plain: list[dict[str, Any]]) -> str:
        import jinja2
        from jinja2.sandbox import SecurityError

        try:
            return self._compiled.render(
                messages=plain,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
                add_generation_prompt=True,
                tools=None,
            )
        except SecurityError as exc:
            raise self._error(f"tried an unsafe operation and was stopped: {exc}") from None
        except (
            jinja2.TemplateError,
            TypeError,
            ValueError,
            AttributeError,
            KeyError,
            IndexError,
            ZeroDivisionError,
            OverflowError,
            RecursionError,
        ) as exc:
            raise self._error(f"failed to render: {type(exc).__name__}: {exc}") from None


def resolve_chat_template(
    metadata: Mapping[str, str],
    override: str | None = None,
    *,
    bos_token: str = "",
    eos_token: str = "",
    model_name: str = "the model",
    backend: str = "llama.cpp",
) -> ChatTemplate:
    """Pick the template: the caller's override, else the GGUF's own, else a built-in one.

    ``override`` is a built-in name (``gemma``, ``chatml``, ``llama-3``), the
    word ``gguf`` (insist on the embedded template) or Jinja source.
    """
    tokens = {"bos_token": bos_token, "eos_token": eos_token, "backend": backend}
    embedded = metadata.get("tokenizer.chat_template")
    if override is not None:
        if override in BUILTIN_TEMPLATES:
            return ChatTemplate(override, f"builtin:{override}", **tokens)
        if override == "gguf":
            if not embedded:
                raise UsageError(f"chat_template='gguf' was asked for, but {model_name} embeds no chat template")
            return ChatTemplate("gguf", "gguf", jinja_source=embedded, **tokens)
        if "{{" in override or "{%" in override:
            return ChatTemplate("custom", "user", jinja_source=override, **tokens)
        raise UsageError(
            f"Unknown chat template {override!r}: use one of {sorted(BUILTIN_TEMPLATES)}, 'gguf', or Jinja source"
        )
    if embedded:
        return ChatTemplate("gguf", "gguf", jinja_source=embedded, **tokens)
    builtin = builtin_template_for(metadata)
    if builtin is None:
        arch = metadata.get("general.architecture", "unknown")
        raise UsageError(
            f"{model_name} embeds no chat template and its architecture {arch!r} has no built-in one. "
            f"Pass chat_template= one of {sorted(BUILTIN_TEMPLATES)} or the model's Jinja template."
        )
    return ChatTemplate(builtin, f"builtin:{builtin}", **tokens)
