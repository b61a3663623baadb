"""A Jinja environment for untrusted chat templates: the immutable sandbox, bounded in time and in memory.

Jinja's sandbox stops attribute escapes but not cost: nested
``range(100000)`` loops run for hours, ``'A' * 10**8 * 50`` asks for
gigabytes, and ``lipsum(10**6)`` is one call that runs for minutes. A chat
template comes inside a model file, from whoever made it, so every render
here has a :class:`RenderBudget` (a deadline and a number of characters,
scaled to the messages it renders) and:

- every operation that can build a value larger than its inputs (``*``,
  ``**``, ``%``, ``+``, ``~``, ``join``, ``replace``, padding and width
  arguments, ``format``, ``sum``) is bounded *before* it runs, from the sizes
  of its inputs;
- methods of strings, lists and dicts are limited to the reading ones chat
  templates use;
- every value about to be written out is sized before it becomes a string;
- a trace function on the template's own frames checks the clock and the
  size of every local after each line, so growth step by step is caught too;
- the output is streamed and cut at the budget; ``lipsum`` is not offered.

Sizes count characters the way ``str()`` would spell them, shared references
included, and stop counting at the budget, so a check never costs more than
the budget it enforces.
"""

from __future__ import annotations

import functools
import re
import string
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .._compat.jinja_sandbox import namespace_values, sandbox_class

__all__ = ["RenderBudget", "TemplateBudgetError", "sandboxed_environment"]


class TemplateBudgetError(Exception):
    """Raised inside a render that would run past its budget; reported as the template's error."""


# Methods a chat template may call on strings, lists and dicts: reading ones, plus
# three that build strings (replace, join, format), which are bounded first.
_ALLOWED_METHODS: dict[type, frozenset[str]] = {
    str: frozenset(
        "strip lstrip rstrip split rsplit splitlines startswith endswith lower upper title capitalize casefold "
        "find rfind index rindex count isdigit isalpha isalnum isspace islower isupper removeprefix removesuffix "
        "partition rpartition replace join format".split()
    ),
    dict: frozenset({"items", "keys", "values", "get"}),
    list: frozenset({"index", "count"}),
    tuple: frozenset({"index", "count"}),
}
_FORMATTER = string.Formatter()


def size_of(value: Any, limit: int) -> int:
    """Characters ``str(value)`` would take, counted until past ``limit`` (then any larger number)."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            total += len(item)
        elif isinstance(item, bool) or item is None:
            total += 5
        elif isinstance(item, int):
            total += item.bit_length() // 3 + 1
        elif isinstance(item, float):
            total += 24
        elif isinstance(item, dict):  # not any Mapping: Jinja's Context is one, and not ours to size
            total += 4 * len(item) + 2
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            total += 2 * len(item) + 2
            stack.extend(item)
        else:
            total += 16
            held = namespace_values(item)  # a Jinja namespace(): what it holds counts
            if held is not None:
                stack.append(held)
        if total > limit:
            return total
    return total


def _int_count(value: Any) -> int:
    return abs(value) if isinstance(value, int) and not isinstance(value, bool) else 0


class RenderBudget:
    """The time and the characters one render may use; every check raises :class:`TemplateBudgetError`."""

    def __init__(self, max_chars: int, seconds: float = 2.0) -> None:
        self.max_chars = max_chars
        self.seconds = seconds
        self.deadline = 0.0

    def fail(self, what: str) -> TemplateBudgetError:
        return TemplateBudgetError(f"{what} would exceed the budget of {self.max_chars} characters")

    def check_value(self, value: Any) -> Any:
        if size_of(value, self.max_chars) > self.max_chars:
            raise self.fail("a value")
        return value

    def check_bound(self, bound: int, what: str) -> None:
        if bound > self.max_chars:
            raise self.fail(what)

    # -- operations, before they run ----------------------------------------------------

    def check_binop(self, operator: str, left: Any, right: Any) -> None:
        limit = self.max_chars
        if operator == "*":
            count = _int_count(right) or _int_count(left)
            operand = left if _int_count(right) else right
            if count and not isinstance(operand, (int, float)):
                self.check_bound(size_of(operand, limit) * count, f"repeating a value {count} times")
        elif operator == "**":
            if _int_count(right) and isinstance(left, (int, float)) and abs(left) > 1:
                digits = _int_count(right) * (max(_int_count(left), 2).bit_length() // 3 + 1)
                self.check_bound(digits, f"{left} ** {right}")
        elif operator == "%" and isinstance(left, str):
            args = right if isinstance(right, tuple) else (right,)
            self.check_bound(self._format_bound(left, args, {}), "a %-format")
        elif operator == "+":
            self.check_bound(size_of(left, limit) + size_of(right, limit), "adding two values")

    def _format_bound(self, fmt: str, args: tuple, kwargs: Mapping[str, Any]) -> int:
        """What ``fmt`` can write: its text, plus for each field the widest argument or width it names."""
        values = (*args, *kwargs.values())
        fields, widths = _format_fields(fmt)
        widest = max([size_of(v, self.max_chars) for v in values] + [_int_count(v) for v in values] + widths + [0])
        return len(fmt) + fields * widest

    def check_call(self, name: str, owner: Any, args: tuple, kwargs: Mapping[str, Any]) -> None:
        """Bounds for the string-building methods and filters, from their inputs."""
        limit = self.max_chars
        if name == "center":
            for value in (*args, *kwargs.values()):
                self.check_bound(_int_count(value), f"a width of {value}")
        if name == "replace" and len(args) >= 2:
            text, old, new = (owner, *args[:2]) if owner is not None else args[:3]
            if isinstance(text, str) and isinstance(new, str):
                matches = len(text) // max(len(str(old)), 1) + 1
                self.check_bound(len(text) + matches * len(new), "a replace")
        elif name == "indent" and args:
            text, width = args[0], (args[1] if len(args) > 1 else kwargs.get("width", 4))
            pad = len(width) if isinstance(width, str) else _int_count(width)
            self.check_bound(size_of(text, limit) + (str(text).count("\n") + 1) * pad, "an indent")
        elif name == "format" and owner is not None:
            self.check_bound(self._format_bound(owner, args, kwargs), "a format")
        elif name == "format" and args:  # the filter: fmt|format(*args)
            self.check_bound(self._format_bound(str(args[0]), args[1:], kwargs), "a format")
        elif name == "sum" and args:
            self.check_bound(size_of(list(args[0]) if isinstance(args[0], range) else args[0], limit), "a sum")

    def joined(self, separator: str, items: Any) -> str:
        """``separator.join(items)``, refused before it is built when it would be too large."""
        parts = []
        total = 0
        for item in items:
            total += size_of(item, self.max_chars) + len(separator)
            self.check_bound(total, "a join")
            parts.append(item if isinstance(item, str) else str(item))
        return separator.join(parts)

    # -- the clock and the locals, line by line -------------------------------------------

    def _trace(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "call" and frame.f_code.co_filename.startswith("<template"):
            return self._trace_line
        return None

    def _trace_line(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            if time.perf_counter() > self.deadline:
                raise TemplateBudgetError(f"it ran for more than {self.seconds:g} s")
            for value in frame.f_locals.values():
                self.check_value(value)
        return self._trace_line

    def render(self, chunks: Callable[[], Iterator[str]]) -> str:
        """Join the chunks a template generates, within the budget, with the trace on for the render only."""
        previous = sys.gettrace()
        self.deadline = time.perf_counter() + self.seconds
        out: list[str] = []
        total = 0
        sys.settrace(self._trace)
        try:
            for chunk in chunks():
                total += len(chunk)
                if total > self.max_chars:
                    raise self.fail("the output")
                out.append(chunk)
        finally:
            sys.settrace(previous)
        return "".join(out)


_PERCENT_FIELD = re.compile(r"%[-+ #0]*(\*|\d*)(?:\.(\*|\d*))?[a-zA-Z%]")


def _format_fields(fmt: str) -> tuple[int, list[int]]:
    """``(fields, widths)`` of a ``{}`` or ``%`` format string: how many values it writes, and the widths it names."""
    fields, widths = 0, []
    try:
        parsed = list(_FORMATTER.parse(fmt)) if "{" in fmt else []
    except ValueError:
        parsed = []
    for _, name, spec, _ in parsed:
        if name is not None:
            fields += 1
            widths += [int(run) for run in re.findall(r"\d+", spec or "")]
    for match in _PERCENT_FIELD.finditer(fmt):
        fields += 1
        widths += [int(w) for w in match.groups() if w and w.isdigit()]
    return fields, widths


def sandboxed_environment(budget: Callable[[], RenderBudget]) -> Any:
    """An immutable sandbox whose operators, calls, filters, concatenation and output answer to ``budget()``."""
    import jinja2
    from jinja2.sandbox import SecurityError

    class BudgetedSandbox(sandbox_class()):  # type: ignore[misc]
        intercepted_binops = frozenset({"*", "**", "%", "+"})

        def concatenate(self, parts: tuple) -> str:  # ``a ~ b``, sized before it is built
            return budget().joined("", parts)

        def check_format(self, text: str, args: tuple, kwargs: dict[str, Any]) -> None:
            budget().check_call("format", text, args, kwargs)

        def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
            budget().check_binop(operator, left, right)
            return super().call_binop(context, operator, left, right)

        def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            current = budget()
            owner = getattr(__obj, "__self__", None)
            name = getattr(__obj, "__name__", "")
            allowed = _ALLOWED_METHODS.get(type(owner))
            if allowed is not None and name not in allowed:
                raise SecurityError(f"{type(owner).__name__}.{name}() is not available to a chat template")
            for value in (*args, *kwargs.values()):
                current.check_value(value)
            if isinstance(owner, str) and name == "join" and len(args) == 1 and not kwargs:
                return current.joined(owner, args[0])
            current.check_call(name, owner if isinstance(owner, str) else None, args, kwargs)
            return current.check_value(super().call(__context, __obj, *args, **kwargs))

    env = BudgetedSandbox(
        trim_blocks=True, lstrip_blocks=True, autoescape=False, finalize=lambda value: budget().check_value(value)
    )

    def guarded(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            current = budget()
            data = [a for a in args if not _is_jinja_context(a)]
            if name == "join" and data:
                separator = data[1] if len(data) > 1 else kwargs.get("d", "")
                if isinstance(separator, str) and not kwargs.get("attribute"):
                    return current.joined(separator, data[0])
            current.check_call(name, None, tuple(data), kwargs)
            return current.check_value(function(*args, **kwargs))

        return wrapper

    def raise_exception(message: str) -> None:
        raise jinja2.TemplateError(str(message))

    def strftime_now(fmt: str) -> str:
        import datetime

        return datetime.datetime.now().strftime(str(fmt)[:100])

    def tojson(
        value: Any,
        ensure_ascii: bool = False,
        indent: int | None = None,
        separators: Any = None,
        sort_keys: bool = False,
    ) -> str:  # the arguments transformers' chat templates use
        import json

        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env.filters["tojson"] = tojson
    env.filters = {name: guarded(name, f) for name, f in env.filters.items()}
    env.globals.pop("lipsum", None)  # one call can run for minutes
    env.globals.update(raise_exception=raise_exception, strftime_now=strftime_now)
    return env


def _is_jinja_context(value: Any) -> bool:
    """The environment or context Jinja passes to some filters first: not data."""
    return type(value).__name__ in ("Context", "EvalContext") or hasattr(value, "filters")
