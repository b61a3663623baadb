"""The package's import graph: every arrow points down the layers, and there is no cycle.

The layers are the package's folders, bottom to top (``LAYERS``): a module is
in its folder's layer, so a new module is placed by where it is put. The
modules directly in ``localjudge/`` are the foundation at the bottom (errors,
types, paths, the CPU probe, ...), except the package's face just below the
command line: the package itself, and the modules that only re-export a
public path (``localjudge.batch`` is ``localjudge._datasets.batch``).
``python -m localjudge`` is the command line.

Counted from the source with ``ast``: module-level imports, imports inside
functions, and the lazy attribute tables (``_LAZY``) that import on first use.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "localjudge"

FOUNDATION = "(the modules directly in localjudge/)"
FACE = "(the package's face)"
COMMANDS = "_cli.commands"
# Bottom to top. A module may import its own layer (without a cycle) and any below.
LAYERS = [
    FOUNDATION,
    # the hooks into other libraries' internals, each checked (the compatibility layer)
    "_compat",
    "_specs",
    "_datasets",
    "_prompts",
    "_runtimes",
    "_decoding",
    "_clients",
    "_trust",
    "_judges",
    # what the commands do, below their parsing: judges built from options, check-judge, doctor
    COMMANDS,
    # the page over results files: reads results, figures and check sets from the layers below
    "_view",
    "testing",
    # localjudge serve: any judge behind an OpenAI-compatible HTTP API
    "_serving",
    FACE,
    # the command line: it parses, calls the layers below, prints; nothing below imports it
    "_cli",
]
#: modules directly in localjudge/ that are not the foundation but its face
FACE_MODULES = {"localjudge"}


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


def imports_in(name: str, source: str, is_package: bool, known: set[str]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
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


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    return imports_in(name, path.read_text(encoding="utf-8"), path.name == "__init__.py", known)


def import_graph() -> dict[str, set[str]]:
    modules = all_modules()
    known = set(modules)
    return {name: imports_of(name, path, known) for name, path in modules.items()}


def only_reexports(source: str) -> bool:
    """A module of imports and ``__all__`` only: a public path kept for what lives elsewhere."""
    body = ast.parse(source).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return bool(body) and all(
        isinstance(node, (ast.Import, ast.ImportFrom))
        or (isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"])
        for node in body
    )


def layer_of(module: str, path: Path | None = None) -> int:
    """The module's folder's layer; ``path`` (where the module is not in a folder of LAYERS) tells a re-export."""
    path = path or all_modules().get(module)
    parts = module.split(".")[1:]
    is_package = path is not None and path.name == "__init__.py"
    folder = parts[0] if len(parts) > 1 or (parts and is_package) else None
    if module == "localjudge.__main__":
        return LAYERS.index("_cli")
    if module == f"localjudge.{COMMANDS}" or module.startswith(f"localjudge.{COMMANDS}."):
        return LAYERS.index(COMMANDS)
    if folder in LAYERS:
        return LAYERS.index(folder)
    if module in FACE_MODULES or (path is not None and path.is_file() and only_reexports(path.read_text("utf-8"))):
        return LAYERS.index(FACE)
    if folder is None:
        return LAYERS.index(FOUNDATION)
    raise AssertionError(f"{module} is in no layer: add its folder {folder!r} to LAYERS in {__file__}")


def upward_imports(graph: dict[str, set[str]], layer: dict[str, int]) -> list[str]:
    return [
        f"{source} (layer {LAYERS[layer[source]]}) imports {target} (layer {LAYERS[layer[target]]})"
        for source, targets in sorted(graph.items())
        for target in sorted(targets)
        if layer[target] > layer[source]
    ]


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
    for module, path in all_modules().items():
        layer_of(module, path)


def test_no_import_points_up():
    modules = all_modules()
    layer = {name: layer_of(name, path) for name, path in modules.items()}
    assert upward_imports(import_graph(), layer) == []


def test_no_import_cycle():
    assert cycles(import_graph()) == []


def test_the_graph_sees_imports_inside_functions_and_lazy_tables():
    graph = import_graph()
    assert "localjudge._clients.llamacpp" in graph["localjudge"]  # through the _LAZY table
    assert "localjudge._runtimes.llamacpp" in graph["localjudge._clients.llamacpp"]  # inside __init__


def test_a_new_module_is_placed_by_its_folder():
    assert layer_of("localjudge._judges.new_judge", Path("new_judge.py")) == LAYERS.index("_judges")
    assert layer_of("localjudge.new_leaf", Path("new_leaf.py")) == LAYERS.index(FOUNDATION)
    with pytest.raises(AssertionError, match="add its folder 'elsewhere'"):
        layer_of("localjudge.elsewhere.thing", Path("thing.py"))


def test_a_wrong_direction_import_is_reported():
    """A spec module importing a judge inside a function: the checker must see it and say so."""
    known = set(all_modules()) | {"localjudge._specs.new_module"}
    source = "def build():\n    from .._judges.core import JudgeCore\n    return JudgeCore\n"
    graph = {"localjudge._specs.new_module": imports_in("localjudge._specs.new_module", source, False, known)}
    graph["localjudge._judges.core"] = set()
    layer = {name: layer_of(name, Path(name.rsplit(".", 1)[-1] + ".py")) for name in graph}
    assert upward_imports(graph, layer) == [
        "localjudge._specs.new_module (layer _specs) imports localjudge._judges.core (layer _judges)"
    ]
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]


def test_only_reexports_tells_a_public_path_from_a_module_that_works():
    assert only_reexports('"""Doc."""\n\nfrom ._datasets.batch import *\nfrom ._datasets.batch import __all__\n')
    assert not only_reexports('"""Doc."""\n\nfrom ._judges import core\n\nX = core.build_core()\n')
    assert layer_of("localjudge.batch") == LAYERS.index(FACE)
    assert layer_of("localjudge.errors") == LAYERS.index(FOUNDATION)


def in_the_command_line(module: str) -> bool:
    """The parsing and printing: ``localjudge._cli`` but not the commands' work beneath it."""
    if layer_of(module) == LAYERS.index(COMMANDS):
        return False
    return module in ("localjudge._cli", "localjudge.__main__") or module.startswith("localjudge._cli.")


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
    "localjudge._specs.options",
    "localjudge.testing.pytest_plugin",
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
    assert naming - NAMING_FLAGS == set()  # name options by keyword: wording.Message("{option} ...")
    assert NAMING_FLAGS - naming == set()  # one that no longer names a flag leaves the list


if __name__ == "__main__":  # print the graph, layer by layer
    graph = import_graph()
    modules = all_modules()
    for number, folder in enumerate(LAYERS):
        members = sorted(m for m in graph if layer_of(m, modules[m]) == number)
        print(f"layer {number}: {folder}")
        for module in members:
            print(f"  {module} -> {', '.join(sorted(graph[module])) or '(nothing)'}")
