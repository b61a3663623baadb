"""Jinja's ``~``, ``str.format`` and ``namespace()`` reach the render budget on a real Jinja; without them, a loud error."""

from __future__ import annotations

import pytest
from jinja2.sandbox import SecurityError

from localjudge._compat import jinja_sandbox
from localjudge._compat.jinja_sandbox import namespace_values, sandbox_class
from localjudge._runtimes.template_sandbox import RenderBudget, TemplateBudgetError, sandboxed_environment
from localjudge.errors import IncompatibleDependencyError


class Recording(sandbox_class()):
    """The hooked sandbox, recording what ``~`` joins and refusing a format wider than 100."""

    def __init__(self, **options):
        super().__init__(**options)
        self.joined = []

    def concatenate(self, parts):
        self.joined.append(parts)
        return "".join(map(str, parts))

    def check_format(self, text, args, kwargs):
        if any(isinstance(v, int) and v > 100 for v in args) or ">1000" in text:
            raise SecurityError("too wide")


def test_every_tilde_goes_through_concatenate():
    env = Recording()
    assert env.from_string("{{ a ~ 'b' ~ 1 }}{% set c = a ~ a %}{{ c }}").render(a="x") == "xb1xx"
    assert env.joined == [("x", "b", 1), ("x", "x")]


@pytest.mark.parametrize(
    "source",
    [
        "{{ '{:>1000}'.format('a') }}",  # called at once
        "{% set f = '{:>1000}'.format %}{{ f('a') }}",  # taken as a value, called later
        "{{ ('{:>%d}' % 5).format(101) }}",
        "{% set f = '{a:>1000}'.format_map %}{{ f({'a': 1}) }}",
    ],
)
def test_every_str_format_is_checked_before_it_runs(source):
    with pytest.raises(SecurityError, match="too wide"):
        Recording().from_string(source).render()


def test_a_format_within_bounds_renders():
    assert Recording().from_string("{{ '{:>5}'.format('a') }}").render() == "    a"


def test_the_values_a_namespace_holds_are_read():
    seen = []
    env = Recording()
    env.globals["seen"] = lambda value: seen.append(namespace_values(value)) or ""
    env.from_string("{% set ns = namespace(text='ab', n=2) %}{% set ns.text = ns.text ~ 'c' %}{{ seen(ns) }}").render()
    assert seen == [{"text": "abc", "n": 2}]
    assert namespace_values("text") is None and namespace_values({"text": 1}) is None


@pytest.mark.parametrize(
    "source",
    [
        "{% set ns = namespace(s='xx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        "{% set s = 'x' * 900 %}{{ s ~ s }}",
        "{% set f = '{:>100000}'.format %}{{ f(1) }}",
    ],
)
def test_the_budgeted_sandbox_refuses_what_grows_through_each_hook(source):
    budget = RenderBudget(max_chars=1000)
    template = sandboxed_environment(lambda: budget).from_string(source)
    with pytest.raises(TemplateBudgetError):
        budget.render(lambda: template.generate())


@pytest.mark.parametrize(
    ("owner", "name"),
    [("jinja2.compiler.CodeGenerator", "visit_Concat"), ("jinja2.sandbox.SandboxedEnvironment", "wrap_str_format")],
)
def test_a_jinja_without_a_hook_relied_on_is_a_loud_error(monkeypatch, owner, name):
    monkeypatch.delattr(f"{owner}.{name}")
    with pytest.raises(
        IncompatibleDependencyError, match=rf"jinja2 \S+ is installed, but it has no \w+\.{name}.*tested with jinja2>="
    ):
        sandbox_class()
    with pytest.raises(IncompatibleDependencyError):
        sandboxed_environment(lambda: RenderBudget(100))


def test_a_namespace_that_keeps_its_values_elsewhere_is_a_loud_error(monkeypatch):
    class Namespace:
        def __init__(self, **values):
            self.values = values

    monkeypatch.setattr("jinja2.utils.Namespace", Namespace)
    jinja_sandbox._namespace_class.cache_clear()
    try:
        with pytest.raises(IncompatibleDependencyError, match=r"Namespace\.__attrs"):
            namespace_values(Namespace(text="x"))
    finally:
        jinja_sandbox._namespace_class.cache_clear()
