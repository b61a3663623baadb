"""The package's import graph: every arrow points down the layers, and there is no cycle.

Counted from the source with ``ast``: module-level imports, imports inside
functions, and the lazy attribute tables (``_LAZY``) that import on first use.
A new module must be placed in a layer here; that is the point.
"""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "localjudge"

# Bottom to top. A module may import its own layer (without a cycle) and any below.
LAYERS: list[tuple[str, ...]] = [
    (
        "localjudge._lazy",
        "localjudge._text",
        "localjudge.cancellation",
        "localjudge.errors",
        "localjudge.paths",
        "localjudge.cpu",
        "localjudge.types",
        "localjudge.bounded_json",
    ),
    (
        "localjudge.messages",
        "localjudge.disk_cache",
        "localjudge.schema",
        "localjudge.parsing",
        "localjudge.template_sandbox",
        "localjudge.rows",
        "localjudge.results_file",
        "localjudge.result_cache",
        "localjudge.agreement",
        "localjudge.format_instructions",
        "localjudge.calibration",
        "localjudge.calibration_file",
        "localjudge.cards",
        "localjudge.model_files",
        "localjudge.trajectory.text",
        "localjudge.specs",
        "localjudge.specs.*",
    ),
    ("localjudge.judge_settings",),
    ("localjudge.chat_templates", "localjudge.runtimes", "localjudge.runtimes.*"),
    ("localjudge.decoding", "localjudge.decoding.*"),
    ("localjudge.clients", "localjudge.clients.*", "localjudge.grammars"),
    ("localjudge.integrations", "localjudge.integrations.*", "localjudge.prompting"),
    ("localjudge.models",),
    (
        "localjudge.judge",
        "localjudge.judge_core",
        "localjudge.llm",
        "localjudge.pairwise",
        "localjudge.ensemble",
        "localjudge.evaluators",
        "localjudge.trajectory",
        "localjudge.trajectory.llm",
    ),
    (
        "localjudge.batch",
        "localjudge.ray_batch",
        "localjudge.progress",
        "localjudge.doctor",
        "localjudge.command_judge",
        "localjudge.runs",
        "localjudge.judge_check",
        "localjudge.agreement_plot",
        "localjudge.calibrate",
        "localjudge.server",
        "localjudge.testing",
        "localjudge.pytest_plugin",
        "localjudge",
    ),
    # the command line: it parses, calls the layers below, prints; nothing below imports it
    ("localjudge.cli", "localjudge.cli.*", "localjudge.__main__"),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def resolve(current: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = resolve(name, is_package, node.level, node.module)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets):
            for value in node.value.values:  # type: ignore[attr-defined]
                relative = value.value
                level = len(relative) - len(relative.lstrip("."))
                found.add(resolve(name, is_package, level, relative.lstrip(".") or None))
    return {m for m in found if m in known and m != name}


def import_graph() -> dict[str, set[str]]:
    modules = all_modules()
    known = set(modules)
    return {name: imports_of(name, path, known) for name, path in modules.items()}


def layer_of(module: str) -> int:
    for index, patterns in enumerate(LAYERS):
        if any(fnmatch.fnmatchcase(module, pattern) for pattern in patterns):
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS in {__file__}")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_module_has_a_layer():
    for module in all_modules():
        layer_of(module)


def test_no_import_points_up():
    upward = [
        f"{source} (layer {layer_of(source)}) imports {target} (layer {layer_of(target)})"
        for source, targets in sorted(import_graph().items())
        for target in sorted(targets)
        if layer_of(target) > layer_of(source)
    ]
    assert upward == []


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_graph_sees_imports_inside_functions_and_lazy_tables():
    graph = import_graph()
    assert "localjudge.clients.llamacpp" in graph["localjudge"]  # through the _LAZY table
    assert "localjudge.runtimes.llamacpp" in graph["localjudge.clients.llamacpp"]  # inside __init__


def in_the_command_line(module: str) -> bool:
    return module in ("localjudge.cli", "localjudge.__main__") or module.startswith("localjudge.cli.")


def test_only_the_command_line_imports_click():
    importers = []
    for name, path in sorted(all_modules().items()):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(n == "click" or n.startswith("click.") for n in names) and not in_the_command_line(name):
                importers.append(name)
    assert importers == []


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
#: modules below the command line whose messages still name one of its flags (beside the keyword, mostly).
#: The registry declares the model flags, and the pytest plugin its own pytest options. Shrink this, never grow it.
NAMING_FLAGS = {
    "localjudge.specs.options",
    "localjudge.pytest_plugin",
    "localjudge.agreement_plot",
    "localjudge.chat_templates",
    "localjudge.clients.cached",
    "localjudge.clients.local",
    "localjudge.judge_core",
    "localjudge.models",
    "localjudge.parsing",
    "localjudge.ray_batch",
    "localjudge.rows",
    "localjudge.runtimes.base",
    "localjudge.runtimes.llamacpp",
    "localjudge.runtimes.transformers",
}


def flags_named(path: Path) -> list[str]:
    """The flags a module's strings name, docstrings left out (they may say which flag a function serves)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [
        flag
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        for flag in FLAG.findall(node.value)
    ]


def test_below_the_command_line_options_are_named_as_keywords_not_flags():
    naming = {name for name, path in all_modules().items() if not in_the_command_line(name) and flags_named(path)}
    assert naming - NAMING_FLAGS == set()  # name options by keyword: raise errors.OptionError("{option} ...")
    assert NAMING_FLAGS - naming == set()  # one that no longer names a flag leaves the list


if __name__ == "__main__":  # print the graph, layer by layer
    graph = import_graph()
    for number, patterns in enumerate(LAYERS):
        members = sorted(m for m in graph if layer_of(m) == number)
        print(f"layer {number}: {', '.join(patterns)}")
        for module in members:
            print(f"  {module} -> {', '.join(sorted(graph[module])) or '(nothing)'}")
