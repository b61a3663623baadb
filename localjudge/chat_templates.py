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

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

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
            raise UsageError(f"Chat message role {role!r} is not supported by a local judge (use system/user/assistant)")
        if role == "system" and not system_role:
            pending_system.append(text.strip())
            continue
        if role == "user" and pending_system:
            text = "\n\n".join(pending_system + [text.strip()])
            pending_system = []
        if turns and turns[-1][0] == role:
            turns[-1] = (role, turns[-1][1] + "\n\n" + text)
        else:
            turns.append((role, text))
    if pending_system:
        turns.append(("user", "\n\n".join(pending_system)))
    return turns


def _gemma(messages: Sequence[Mapping[str, Any]], bos: str, eos: str) -> str:
    parts = [bos]
    for role, text in _turns(messages, system_role=False):
        parts.append(f"<start_of_turn>{'model' if role == 'assistant' else role}\n{text.strip()}<end_of_turn>\n")
    parts.append("<start_of_turn>model\n")
    return "".join(parts)


def _chatml(messages: Sequence[Mapping[str, Any]], bos: str, eos: str) -> str:
    parts = [f"<|im_start|>{role}\n{text}<|im_end|>\n" for role, text in _turns(messages, system_role=True)]
    parts.append("<|im_start|>assistant\n")
    return "".join(parts)


def _llama3(messages: Sequence[Mapping[str, Any]], bos: str, eos: str) -> str:
    parts = [bos]
    for role, text in _turns(messages, system_role=True):
        parts.append(f"<|start_header_id|>{role}<|end_header_id|>\n\n{text.strip()}<|eot_id|>")
    parts.append("<|start_header_id|>assistant<|end_header_id|>\n\n")
    return "".join(parts)


BUILTIN_TEMPLATES: dict[str, Callable[[Sequence[Mapping[str, Any]], str, str], str]] = {
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

    def __post_init__(self) -> None:
        self._compiled: Any = None
        if self.jinja_source is not None:
            self._compiled = self._compile(self.jinja_source)

    def render(self, messages: Sequence[Mapping[str, Any]]) -> str:
        if not messages:
            raise UsageError("messages must hold at least one message")
        if self._compiled is None:
            return BUILTIN_TEMPLATES[self.name](messages, self.bos_token, self.eos_token)
        return self._render_jinja(messages)

    def _error(self, message: str) -> Exception:
        if self.source == "gguf":
            return ModelError(f"The chat template embedded in the model {message}", backend="llama.cpp")
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

    def _render_jinja(self, messages: Sequence[Mapping[str, Any]]) -> str:
        import jinja2
        from jinja2.sandbox import SecurityError

        plain = [{"role": m.get("role"), "content": message_text(m)} for m in messages]
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
        except (jinja2.TemplateError, TypeError, ValueError, AttributeError, KeyError, IndexError,
                ZeroDivisionError, OverflowError, RecursionError) as exc:
            raise self._error(f"failed to render: {type(exc).__name__}: {exc}") from None


def resolve_chat_template(
    metadata: Mapping[str, str],
    override: str | None = None,
    *,
    bos_token: str = "",
    eos_token: str = "",
    model_name: str = "the model",
) -> ChatTemplate:
    """Pick the template: the caller's override, else the GGUF's own, else a built-in one.

    ``override`` is a built-in name (``gemma``, ``chatml``, ``llama-3``), the
    word ``gguf`` (insist on the embedded template) or Jinja source.
    """
    tokens = {"bos_token": bos_token, "eos_token": eos_token}
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
