"""Chat messages -> the prompt string a local model was trained on.

A model file may embed a Jinja chat template (GGUF metadata
``tokenizer.chat_template``, or a tokenizer's ``chat_template``). It comes
from whoever made the file, so it is untrusted: we render it in Jinja's
immutable sandbox, within a budget of time and size (:class:`RenderBudget`),
and a template that fails, reaches for something unsafe or runs past its
budget is a clear error, never a crash, an escape or a hang.

Files without a template (the default Gemma 3 270M has none) get a built-in
format chosen by the architecture name either engine reports. llama-cpp-python's
own fallback is the llama-2 ``[INST]`` format, which is wrong for most models,
so an architecture we do not know is an error that says how to pass a
template, rather than a silent guess.
"""

from __future__ import annotations

import functools
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ModelError, UsageError
from .messages import message_text

__all__ = [
    "BUILTIN_TEMPLATES",
    "ChatTemplate",
    "RenderBudget",
    "builtin_template_for",
    "read_template_option",
    "resolve_chat_template",
]

Turn = tuple[str, str]
Part = tuple[str, bool]  # (text, is_markup): markup may spell special tokens, message text may not

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


class TemplateBudgetError(Exception):
    """Raised inside a render that ran past its budget; reported as the template's error."""


class RenderBudget:
    """Bounds one render of an untrusted template in time and in size.

    Jinja's sandbox stops attribute escapes but not cost: nested
    ``range(100000)`` loops run for hours and ``'A' * 10**8 * 50`` asks for
    gigabytes. So, while a template renders, a trace function on the
    template's own frames checks the clock and the size of every local value
    after each line, operators that multiply or pad are checked before they
    run, filter results are checked after, and the output is streamed and
    cut at ``max_chars``.
    """

    seconds: float = 2.0
    #: the largest count any call, filter or operator may take (a width, a repeat)
    max_count: int = 1_000_000

    def __init__(self, max_chars: int, seconds: float | None = None) -> None:
        self.max_chars = max_chars
        if seconds is not None:
            self.seconds = seconds
        self.deadline = 0.0

    # -- checks the sandbox calls -----------------------------------------------

    def check_count(self, value: Any) -> None:
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > self.max_count:
            raise TemplateBudgetError(f"a count of {value} is more than the {self.max_count} a template may use")

    def check_product(self, values: Sequence[Any]) -> None:
        """Before an operation that can multiply its inputs (join, replace, padding) runs.

        The output of such an operation is bounded by the sum of its inputs'
        sizes plus the largest times the second largest; refuse it when that
        bound is past the budget, instead of allocating to find out.
        """
        sizes = sorted((_count_of(v) for v in values), reverse=True)
        bound = sum(sizes) + (sizes[0] * sizes[1] if len(sizes) > 1 else 0)
        if bound > self.max_chars:
            raise TemplateBudgetError(f"an operation on values of sizes {sizes[:3]} could exceed {self.max_chars}")

    def check_size(self, value: Any) -> Any:
        if _size(value) > self.max_chars:
            raise TemplateBudgetError(f"a value grew past {self.max_chars} characters")
        return value

    def check_binop(self, operator: str, left: Any, right: Any) -> None:
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                if isinstance(seq, (str, list, tuple)) and isinstance(count, int):
                    if len(seq) * max(count, 0) > self.max_chars:
                        raise TemplateBudgetError(f"repeating a value {count} times makes more than {self.max_chars}")
        elif operator == "**":
            if isinstance(right, int) and isinstance(left, (int, float)) and abs(left) > 1:
                bits = abs(right) * max(abs(left), 2).bit_length() if isinstance(left, int) else abs(right)
                if bits > 1_000_000:
                    raise TemplateBudgetError(f"{left} ** {right} is too large to compute")
        elif operator == "%" and isinstance(left, str):
            _check_format_widths(left, self)
            args = right if isinstance(right, tuple) else (right,)
            for arg in args:
                self.check_count(arg)
        elif operator == "+" and isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple)):
            if len(left) + len(right) > self.max_chars:
                raise TemplateBudgetError(f"a value grew past {self.max_chars} characters")

    # -- the clock and the locals, line by line -----------------------------------

    def _trace(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code.co_filename.startswith("<template"):
            return self._trace_line
        return None

    def _trace_line(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            if time.perf_counter() > self.deadline:
                raise TemplateBudgetError(f"it ran for more than {self.seconds:g} s")
            for value in frame.f_locals.values():
                self.check_size(value)
        return self._trace_line

    def render(self, chunks: Callable[[], Iterator[str]]) -> str:
        """Join the chunks a template generates, within the budget."""
        previous = sys.gettrace()
        self.deadline = time.perf_counter() + self.seconds
        out: list[str] = []
        total = 0
        sys.settrace(self._trace)
        try:
            for chunk in chunks():
                total += len(chunk)
                if total > self.max_chars:
                    raise TemplateBudgetError(f"its output grew past {self.max_chars} characters")
                out.append(chunk)
        finally:
            sys.settrace(previous)
        return "".join(out)


_FORMAT_WIDTH = re.compile(r"[0-9]{7,}")


def _check_format_widths(fmt: str, budget: RenderBudget) -> None:
    """Widths and precisions in a format string ("%1000000000d", "{:>999999999}") count as counts."""
    for digits in _FORMAT_WIDTH.findall(fmt):
        budget.check_count(int(digits))


# Filters and string methods whose output can be much larger than their inputs.
_EXPANDING = frozenset(
    {"join", "replace", "center", "ljust", "rjust", "zfill", "expandtabs", "indent", "wordwrap", "format", "format_map"}
)


def _count_of(value: Any) -> int:
    """How much a value can contribute to an operation's output: a length, or an int taken as a count."""
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value)
    try:
        return len(value)
    except TypeError:
        return 0


def _size(value: Any, depth: int = 2) -> int:
    """Characters held by a value: strings directly, containers two levels deep (bounded work)."""
    if isinstance(value, (str, bytes)):
        return len(value)
    namespace = getattr(value, "_Namespace__attrs", None)  # a Jinja namespace() keeps its values here
    if isinstance(namespace, dict):
        value = namespace
    if depth == 0 or not isinstance(value, (list, tuple, dict)):
        return 0
    items = value.values() if isinstance(value, dict) else value
    total = len(value)
    for index, item in enumerate(items):
        if index >= 1000:
            break
        total += _size(item, depth - 1)
    return total


def _is_context(value: Any) -> bool:
    """The environment or context Jinja passes to some filters first: not data."""
    return type(value).__name__ in ("Context", "EvalContext") or hasattr(value, "filters")


def _sandbox(budget_of: Callable[[], RenderBudget]) -> Any:
    """An immutable sandbox whose operators, calls and filters answer to the current render's budget."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    class BudgetedSandbox(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"*", "**", "%", "+"})

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            budget_of().check_binop(operator, left, right)
            return super().call_binop(context, operator, left, right)

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            budget = budget_of()
            for value in (*args, *kwargs.values()):
                budget.check_count(value)
            if getattr(__obj, "__name__", "") in _EXPANDING:
                owner = getattr(__obj, "__self__", None)
                budget.check_product([*([owner] if isinstance(owner, str) else []), *args, *kwargs.values()])
            return budget.check_size(super().call(__context, __obj, *args, **kwargs))

        def wrap_str_format(self, value: Any) -> Any:
            owner = getattr(value, "__self__", None)
            if isinstance(owner, str):  # "{:>999999999}".format(...): the width is in the format string
                _check_format_widths(owner, budget_of())
            return super().wrap_str_format(value)

    env = BudgetedSandbox(trim_blocks=True, lstrip_blocks=True, autoescape=False)

    def guarded(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            budget = budget_of()
            for value in (*args, *kwargs.values()):
                budget.check_count(value)
            if name in _EXPANDING:
                budget.check_product([a for a in (*args, *kwargs.values()) if not _is_context(a)])
            return budget.check_size(function(*args, **kwargs))

        return wrapper

    env.filters = {name: guarded(name, f) for name, f in env.filters.items()}

    def raise_exception(message: str) -> None:
        raise jinja2.TemplateError(str(message))

    def strftime_now(fmt: str) -> str:
        import datetime

        return datetime.datetime.now().strftime(str(fmt)[:100])

    def tojson(value: Any, indent: int | None = None) -> str:
        import json

        return json.dumps(value, ensure_ascii=False, indent=indent)

    env.globals.update(raise_exception=raise_exception, strftime_now=strftime_now)
    env.filters["tojson"] = guarded("tojson", tojson)
    return env


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
        self._budget = RenderBudget(0)
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
            return _sandbox(lambda: self._budget).from_string(source)
        except jinja2.TemplateError as exc:
            raise self._error(f"does not parse: {exc}") from None

    def _render_jinja(self, plain: list[dict[str, Any]]) -> str:
        import jinja2
        from jinja2.sandbox import SecurityError

        given = sum(len(str(m.get("content") or "")) for m in plain)
        # Room for the messages several times over (templates may repeat them) plus the markup.
        self._budget = budget = RenderBudget(max_chars=8 * given + (1 << 20))
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


def read_template_option(value: str | None) -> str | None:
    """A ``--chat-template`` value: a built-in name or 'gguf' as is, else a file of Jinja source."""
    if value is None or value in BUILTIN_TEMPLATES or value in ("gguf", "embedded") or "{" in value:
        return value
    path = Path(value).expanduser()
    if not path.is_file():
        raise UsageError(
            f"--chat-template {value!r} is neither a built-in template ({', '.join(sorted(BUILTIN_TEMPLATES))}, "
            "gguf) nor a file of Jinja source"
        )
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"Cannot read the chat template file {path}: {exc}") from None


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
        if "{{" in override or "{%" in override:
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
            f"{model_name} embeds no chat template and its architecture {arch!r} has no built-in one. "
            f"Pass chat_template= (--chat-template) one of {sorted(BUILTIN_TEMPLATES)}, a Jinja file, "
            "or the model's Jinja template."
        )
    return ChatTemplate(builtin, f"builtin:{builtin}", **tokens)
