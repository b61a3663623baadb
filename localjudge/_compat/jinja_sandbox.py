"""Jinja: the compiler's ``~``, the sandbox's ``str.format`` and ``namespace()``'s values.

An untrusted chat template is rendered under a budget of time and characters
(:mod:`localjudge._runtimes.template_sandbox`). The sandbox's public hooks
(``intercepted_binops`` with ``call_binop``, and ``call``) see ``+``, ``*``
and calls, but not ``a ~ b``, not a ``str.format`` taken as a value and
called later, and not what a ``namespace()`` holds: those need the internals
below.
"""

from __future__ import annotations

import functools
from typing import Any

from .versions import require

__all__ = ["namespace_values", "sandbox_class"]

_NEEDED_FOR_BUDGET = "a chat template's render is bounded in time and size"


def _require_attribute(owner: type, name: str) -> None:
    require("jinja2", hasattr(owner, name), missing=f"{owner.__name__}.{name}", needed_for=_NEEDED_FOR_BUDGET)


def sandbox_class() -> type[Any]:
    """Jinja's ``ImmutableSandboxedEnvironment``, with ``~`` and ``str.format`` sent to methods of its subclass.

    A subclass defines ``concatenate(parts) -> str``, which every ``a ~ b``
    becomes, and ``check_format(text, args, kwargs)``, called before a
    string's ``format`` runs, however the template reached the method.
    Relies on: ``CodeGenerator.visit_Concat`` writing the Python that ``~``
    compiles to through ``write`` and ``visit``, with the environment in
    scope as ``environment``; ``SandboxedEnvironment.wrap_str_format``
    (Jinja 3.1.5 on) being where the sandbox wraps every ``str.format``;
    and ``call``, ``call_binop`` and ``intercepted_binops``, which the
    budget overrides.
    """
    from jinja2.compiler import CodeGenerator
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    for name in ("visit_Concat", "write", "visit"):
        _require_attribute(CodeGenerator, name)
    for name in ("code_generator_class", "wrap_str_format", "call", "call_binop", "intercepted_binops"):
        _require_attribute(ImmutableSandboxedEnvironment, name)

    class ConcatenatingCodeGenerator(CodeGenerator):
        def visit_Concat(self, node: Any, frame: Any) -> None:
            self.write("environment.concatenate((")
            for arg in node.nodes:
                self.visit(arg, frame)
                self.write(", ")
            self.write("))")

    class HookedSandbox(ImmutableSandboxedEnvironment):
        code_generator_class = ConcatenatingCodeGenerator

        def concatenate(self, parts: tuple[Any, ...]) -> str:
            raise NotImplementedError("a subclass says how ~ joins its parts")

        def check_format(self, text: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            """Raise before ``text.format(*args, **kwargs)`` would run past what is allowed."""

        def wrap_str_format(self, value: Any) -> Any:
            wrapped = super().wrap_str_format(value)
            owner = getattr(value, "__self__", None)
            if wrapped is None or not isinstance(owner, str):
                return wrapped

            def checked(*args: Any, **kwargs: Any) -> str:  # "{:>999999999}".format(...) and friends
                self.check_format(owner, args, kwargs)
                return wrapped(*args, **kwargs)

            return checked

    return HookedSandbox


@functools.cache
def _namespace_class() -> type[Any]:
    """Jinja's ``Namespace``, checked once to keep its values where :func:`namespace_values` reads them."""
    from jinja2.utils import Namespace

    probe = Namespace(value=1)
    require(
        "jinja2",
        getattr(probe, "_Namespace__attrs", None) == {"value": 1},
        missing="Namespace.__attrs (the dict where a namespace() keeps its values)",
        needed_for=_NEEDED_FOR_BUDGET,
    )
    return Namespace


def namespace_values(value: Any) -> dict[str, Any] | None:
    """The values a Jinja ``namespace()`` holds, or None for any other object.

    Why: a template can grow a value step by step inside a namespace
    (``{% set ns.text = ns.text ~ ns.text %}``), and a namespace offers no
    public way to list what it holds, so the budget could not size it.
    Relies on: ``jinja2.utils.Namespace`` keeping its values in its
    name-mangled ``__attrs`` dict.
    """
    if not isinstance(value, _namespace_class()):
        return None
    attrs = value._Namespace__attrs
    return attrs if isinstance(attrs, dict) else None
