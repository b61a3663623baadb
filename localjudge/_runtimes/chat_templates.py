"""Chat messages -> the prompt string a local model was trained on.

A model file may embed a Jinja chat template (GGUF metadata
``tokenizer.chat_template``, or a tokenizer's ``chat_template``). It comes
from whoever made the file, so it is untrusted: we render it in Jinja's
immutable sandbox, bounded in time and memory (:mod:`localjudge._runtimes.template_sandbox`),
and a template that fails, reaches for something unsafe or runs past its
budget is a clear error, never a crash, an escape or a hang.

Files without a template (the default Gemma 3 270M has none) get a built-in
format chosen by the architecture name either engine reports. llama-cpp-python's
own fallback is the llama-2 ``[INST]`` format, which is wrong for most models,
so an architecture we do not know is an error that says how to pass a
template, rather than a silent guess.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._prompts.messages import Part, message_text
from .._wording import Message
from ..errors import ModelError, UsageError
from .template_sandbox import RenderBudget, TemplateBudgetError, sandboxed_environment

__all__ = [
    "BUILTIN_TEMPLATES",
    "ChatTemplate",
    "builtin_template_for",
    "read_template_option",
    "resolve_chat_template",
    "text_in_markup",
]

Turn = tuple[str, str]

#: the largest template source we compile (real ones are a few KiB)
MAX_TEMPLATE_CHARS = 256 * 1024


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


def _gemma(messages: Sequence[Mapping[str, Any]], bos: str) -> list[Part]:
    parts: list[Part] = [(bos, True)]
    for role, text in _turns(messages, system_role=False):
        parts += [(f"<start_of_turn>{'model' if role == 'assistant' else role}\n", True), (text.strip(), False)]
        parts.append(("<end_of_turn>\n", True))
    parts.append(("<start_of_turn>model\n", True))
    return parts


def _chatml(messages: Sequence[Mapping[str, Any]], bos: str) -> list[Part]:
    parts: list[Part] = []
    for role, text in _turns(messages, system_role=True):
        parts += [(f"<|im_start|>{role}\n", True), (text, False), ("<|im_end|>\n", True)]
    parts.append(("<|im_start|>assistant\n", True))
    return parts


def _llama3(messages: Sequence[Mapping[str, Any]], bos: str) -> list[Part]:
    parts: list[Part] = [(bos, True)]
    for role, text in _turns(messages, system_role=True):
        parts += [(f"<|start_header_id|>{role}<|end_header_id|>\n\n", True), (text.strip(), False)]
        parts.append(("<|eot_id|>", True))
    parts.append(("<|start_header_id|>assistant<|end_header_id|>\n\n", True))
    return parts


BUILTIN_TEMPLATES: dict[str, Callable[[Sequence[Mapping[str, Any]], str], list[Part]]] = {
    "gemma": _gemma,
    "chatml": _chatml,
    "llama-3": _llama3,
}

# Architecture names as llama.cpp (GGUF general.architecture) and transformers
# (config.model_type) spell them; the same family often has two spellings.
_BY_ARCHITECTURE = {
    **dict.fromkeys(("gemma", "gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text"), "gemma"),
    **dict.fromkeys(("qwen2", "qwen2moe", "qwen2_moe", "qwen3", "qwen3moe", "qwen3_moe"), "chatml"),
}


def builtin_template_for(metadata: Mapping[str, str]) -> str | None:
    """The built-in format for a model's architecture, or None when we know none."""
    arch = metadata.get("general.architecture", "")
    if arch in _BY_ARCHITECTURE:
        return _BY_ARCHITECTURE[arch]
    if arch == "llama" and metadata.get("tokenizer.ggml.pre") in ("llama-bpe", "llama3"):
        return "llama-3"
    return None


@dataclass
class ChatTemplate:
    """A renderer for one model: a built-in format or a sandboxed Jinja template.

    ``source`` says where it came from ("builtin:gemma", "gguf", "tokenizer",
    "user") so diagnostics can report it; errors from a model's own template
    are ModelError, errors from a template the caller passed are UsageError.
    """

    name: str
    source: str
    bos_token: str = ""
    eos_token: str = ""
    jinja_source: str | None = None
    backend: str = "llama.cpp"  # whose model embeds the template, for error context

    def __post_init__(self) -> None:
        self._compiled: Any = None
        self._render_state = threading.local()  # each thread's render has its own budget
        if self.jinja_source is not None:
            self._compiled = self._compile(self.jinja_source)

    @property
    def embedded(self) -> bool:
        return self.source in ("gguf", "tokenizer")

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
            parts = BUILTIN_TEMPLATES[self.name](messages, self.bos_token)
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
        if self.embedded:
            return ModelError(f"The chat template embedded in the model {message}", backend=self.backend)
        return UsageError(f"The chat template {message}")

    def _compile(self, source: str) -> Any:
        import jinja2

        if len(source) > MAX_TEMPLATE_CHARS:
            raise self._error(f"is {len(source)} characters long; templates over {MAX_TEMPLATE_CHARS} are refused")
        try:
            return sandboxed_environment(self._current_budget).from_string(source)
        except jinja2.TemplateError as exc:
            raise self._error(f"does not parse: {exc}") from None
        except (RecursionError, MemoryError):
            raise self._error("does not parse: it is nested too deeply to compile") from None

    def _current_budget(self) -> RenderBudget:
        """This thread's render budget; outside a render (compiling), none at all."""
        return getattr(self._render_state, "budget", None) or RenderBudget(0)

    def _render_jinja(self, plain: list[dict[str, Any]]) -> str:
        import jinja2
        from jinja2.sandbox import SecurityError

        given = sum(len(str(m.get("content") or "")) for m in plain)
        # Room for the messages several times over (templates may repeat them) plus the markup.
        self._render_state.budget = budget = RenderBudget(max_chars=8 * given + (1 << 20))
        variables = {
            "messages": plain,
            "bos_token": self.bos_token,
            "eos_token": self.eos_token,
            "add_generation_prompt": True,
            "tools": None,
        }
        try:
            return budget.render(lambda: self._compiled.generate(**variables))
        except TemplateBudgetError as exc:
            raise self._error(f"was stopped: {exc}") from None
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
            MemoryError,
        ) as exc:
            raise self._error(f"failed to render: {type(exc).__name__}: {exc}") from None
        finally:
            self._render_state.budget = None


def text_in_markup(parts: Sequence[Part], messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Message texts a render could not keep apart from its markup (a template that rewrites them).

    Such a prompt is tokenized whole as markup, so an engine must refuse it
    when one of these texts spells a special token of the model.
    """
    if any(not markup for _, markup in parts):
        return []
    return [text for text in (message_text(m) for m in messages) if text]


def is_jinja_source(value: str) -> bool:
    return "{{" in value or "{%" in value


def read_template_option(value: str | None) -> str | None:
    """A ``--chat-template`` value: a built-in name, 'gguf' or Jinja source as is, else a file of Jinja source."""
    if value is None or value in BUILTIN_TEMPLATES or value in ("gguf", "embedded") or is_jinja_source(value):
        return value
    path = Path(value).expanduser()
    if not path.is_file():
        names = ", ".join([*sorted(BUILTIN_TEMPLATES), "gguf"])
        if path.suffix or os.sep in value:
            raise UsageError(Message("{chat_template:chat_template}={value!r}: no such file", value=value))
        raise UsageError(
            Message(
                "{chat_template:chat_template}={value!r} is not a built-in template ({names}) nor a file of Jinja source",
                value=value,
                names=names,
            )
        )
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"Cannot read the chat template file {path}: {exc}") from None
    if not is_jinja_source(source):
        raise UsageError(f"{path} holds no Jinja template (no {{{{ or {{%): pass a chat template file")
    return source


def resolve_chat_template(
    metadata: Mapping[str, str],
    override: str | None = None,
    *,
    bos_token: str = "",
    eos_token: str = "",
    model_name: str = "the model",
    backend: str = "llama.cpp",
) -> ChatTemplate:
    """Pick the template: the caller's override, else the model's own, else a built-in one.

    ``override`` is a built-in name (``gemma``, ``chatml``, ``llama-3``), the
    word ``gguf`` or ``embedded`` (insist on the model's own template) or
    Jinja source.
    """
    tokens = {"bos_token": bos_token, "eos_token": eos_token, "backend": backend}
    embedded = metadata.get("tokenizer.chat_template")
    label = "gguf" if backend == "llama.cpp" else "tokenizer"
    if override is not None:
        if override in BUILTIN_TEMPLATES:
            return ChatTemplate(override, f"builtin:{override}", **tokens)
        if override in ("gguf", "embedded"):
            if not embedded:
                raise UsageError(f"chat_template={override!r} was asked for, but {model_name} embeds no chat template")
            return ChatTemplate(label, label, jinja_source=embedded, **tokens)
        if is_jinja_source(override):
            return ChatTemplate("custom", "user", jinja_source=override, **tokens)
        raise UsageError(
            f"Unknown chat template {override!r}: use one of {sorted(BUILTIN_TEMPLATES)}, 'gguf', or Jinja source"
        )
    if embedded:
        return ChatTemplate(label, label, jinja_source=embedded, **tokens)
    builtin = builtin_template_for(metadata)
    if builtin is None:
        arch = metadata.get("general.architecture", "unknown")
        raise UsageError(
            Message(
                "{model} embeds no chat template and its architecture {arch!r} has no built-in one. "
                "Pass {chat_template} one of {builtins}, a Jinja file, or the model's Jinja template.",
                model=model_name,
                arch=arch,
                builtins=sorted(BUILTIN_TEMPLATES),
            )
        )
    return ChatTemplate(builtin, f"builtin:{builtin}", **tokens)
