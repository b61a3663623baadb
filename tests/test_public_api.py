"""The public surface: ``__all__`` guarded, every name importable, ``import localjudge`` light."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import localjudge
import localjudge.llm
import localjudge.types

ROOT = Path(__file__).resolve().parents[1]

EXPECTED_ALL = {
    "AllClientsFailedError",
    "AsyncChatClient",
    "AsyncFallbackClient",
    "AsyncOpenAICompatibleClient",
    "AsyncPoolClient",
    "ChatClient",
    "ChatResponse",
    "FallbackClient",
    "JudgeRuntimeError",
    "LlamaCppClient",
    "LocalChatModel",
    "LocalJudgeError",
    "MissingDependencyError",
    "MissingTemplateVariableError",
    "ModelError",
    "ModelLoadError",
    "ModelSpecError",
    "OpenAICompatibleClient",
    "OutlinesClient",
    "OutputParseError",
    "PoolClient",
    "TransformersClient",
    "RemoteCallError",
    "TruncatedOutputError",
    "UnsupportedSchemaError",
    "UsageError",
    "WAYS",
    "Way",
    "__version__",
    "create_async_code_llm_as_judge",
    "create_async_ensemble_judge",
    "create_async_llm_as_judge",
    "create_async_pairwise_judge",
    "create_async_trajectory_llm_as_judge",
    "create_code_llm_as_judge",
    "create_ensemble_judge",
    "create_llm_as_judge",
    "create_pairwise_judge",
    "create_trajectory_llm_as_judge",
    "default_output_schema",
    "read_calibration",
    "resolve_model",
}

HEAVY = ["llama_cpp", "torch", "transformers", "outlines", "outlines_core", "numpy", "httpx"]

OPENEVALS_PARAMETERS = [
    "prompt",
    "feedback_key",
    "judge",
    "model",
    "system",
    "continuous",
    "choices",
    "use_reasoning",
    "few_shot_examples",
    "output_schema",
]


#: paths users import (the docs teach them), each with the module it names and one of its names
PUBLIC_PATHS = {
    "localjudge.llm": ("localjudge._judges.single", "create_llm_as_judge"),
    "localjudge.batch": ("localjudge._datasets.batch", "score_rows"),
    "localjudge.ray_batch": ("localjudge._datasets.ray", "score_on_ray"),
    "localjudge.evaluators": ("localjudge._judges.evaluators", "correctness"),
    "localjudge.agreement": ("localjudge._trust.agreement", "agreement"),
    "localjudge.calibration": ("localjudge._trust.correction", "Correction"),
    "localjudge.trajectory": ("localjudge._judges.trajectory", "TRAJECTORY_ACCURACY_PROMPT"),
    "localjudge.trajectory.llm": ("localjudge._judges.trajectory", "create_trajectory_llm_as_judge"),
    "localjudge.code": ("localjudge._judges.code", "create_code_llm_as_judge"),
    "localjudge.code.llm": ("localjudge._judges.code", "create_async_code_llm_as_judge"),
    "localjudge.testing": ("localjudge.testing.assertions", "assert_judged"),
    "localjudge.pytest_plugin": ("localjudge.testing.pytest_plugin", "local_judge"),
}


def test_public_paths_stay_where_the_docs_teach_them():
    for path, (home, name) in PUBLIC_PATHS.items():
        public, module = importlib.import_module(path), importlib.import_module(home)
        assert getattr(public, name) is getattr(module, name), path
        if path not in ("localjudge.llm", "localjudge.trajectory", "localjudge.pytest_plugin", "localjudge.testing"):
            assert set(public.__all__) == set(module.__all__), path


def test_all_is_exactly_the_public_api():
    assert set(localjudge.__all__) == EXPECTED_ALL
    assert len(localjudge.__all__) == len(set(localjudge.__all__))


def test_every_name_in_all_resolves():
    """Each public name is the class or function of that name from its home module, not a stand-in or a re-binding."""
    from localjudge._judges import ways

    assert localjudge.WAYS is ways.WAYS and all(isinstance(way, localjudge.Way) for way in localjudge.WAYS.values())
    for name in sorted(EXPECTED_ALL - {"__version__", "WAYS"}):
        value = getattr(localjudge, name)
        assert inspect.isclass(value) or inspect.isfunction(value), name
        assert value.__name__ == name, name
        assert value.__module__.startswith("localjudge."), name
        assert getattr(importlib.import_module(value.__module__), name) is value, name
    assert isinstance(localjudge.__version__, str) and localjudge.__version__.count(".") == 2


def test_lazy_backends_resolve_to_their_modules():
    for name, module in [
        ("LlamaCppClient", "localjudge._clients.llamacpp"),
        ("OpenAICompatibleClient", "localjudge._clients.remote"),
        ("FallbackClient", "localjudge._clients.fallback"),
        ("PoolClient", "localjudge._clients.pool"),
        ("OutlinesClient", "localjudge._clients.outlines"),
        ("TransformersClient", "localjudge._clients.transformers"),
    ]:
        assert getattr(localjudge, name) is getattr(importlib.import_module(module), name)
        assert getattr(localjudge._clients, name) is getattr(localjudge, name)


def test_unknown_attribute_is_an_attribute_error():
    try:
        localjudge.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("expected AttributeError")


def test_version_matches_the_project():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'version = "{localjudge.__version__}"' in pyproject


def test_llm_module_mirrors_openevals():
    assert localjudge.llm.create_llm_as_judge is localjudge.create_llm_as_judge
    assert localjudge.llm.create_async_llm_as_judge is localjudge.create_async_llm_as_judge
    assert localjudge.llm._construct_default_output_json_schema is localjudge.default_output_schema
    from localjudge.llm import _construct_default_output_json_schema  # noqa: F401


def test_factories_take_the_openevals_parameters_first_keyword_only():
    """OpenEvals' parameters, in its order with its defaults; ours come after, each with a default."""
    for factory in (localjudge.create_llm_as_judge, localjudge.create_async_llm_as_judge):
        parameters = inspect.signature(factory).parameters
        assert list(parameters)[: len(OPENEVALS_PARAMETERS)] == OPENEVALS_PARAMETERS
        assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values())
        defaults = {name: p.default for name, p in parameters.items()}
        assert {name: defaults[name] for name in OPENEVALS_PARAMETERS} == {
            "prompt": inspect.Parameter.empty,
            "feedback_key": "score",
            "judge": None,
            "model": None,
            "system": None,
            "continuous": False,
            "choices": None,
            "use_reasoning": True,
            "few_shot_examples": None,
            "output_schema": None,
        }
        assert {name: defaults[name] for name in list(parameters)[len(OPENEVALS_PARAMETERS) :]} == {
            "few_shot_placement": "end",
            "cache": None,
            "calibration": None,
            "self_reference": False,
            "checklist": False,
            "screen": None,
        }


def test_default_schema_signature():
    parameters = inspect.signature(localjudge.default_output_schema).parameters
    assert list(parameters) == ["continuous", "choices", "use_reasoning"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters.values())


def test_import_localjudge_loads_no_heavy_library():
    code = (
        "import sys, json, localjudge, localjudge.llm, localjudge.types;"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(out.stdout) == []


def test_creating_and_running_an_evaluator_loads_no_heavy_library():
    code = (
        "import sys, json, localjudge, localjudge.testing;"
        'c = localjudge.testing.ScriptedClient([\'{"reasoning": "r", "score": true}\']);'
        "r = localjudge.create_llm_as_judge(prompt='{outputs}', judge=c)(outputs='x');"
        "assert r['score'] is True;"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(out.stdout) == []


#: the documented public modules: what a user imports, each name in them meaning one thing
DOCUMENTED = ["localjudge", "localjudge.evaluators", "localjudge.testing", "localjudge.llm", "localjudge.trajectory",
              "localjudge.errors", "localjudge.types"]  # fmt: skip


def test_no_public_name_means_two_things():
    """A name two public modules export is the same object in both (``ChatResponse`` was once two types)."""
    seen: dict[str, tuple[str, object]] = {}
    for path in DOCUMENTED:
        module = importlib.import_module(path)
        for name in getattr(module, "__all__", []):
            value = getattr(module, name)
            first = seen.setdefault(name, (path, value))
            assert first[1] is value, f"{name} is one thing in {first[0]} and another in {path}"


def test_our_errors_do_not_take_the_names_of_the_http_library_they_wrap():
    import httpx

    import localjudge.errors

    assert not set(localjudge.errors.__all__) & {name for name in dir(httpx) if name.endswith("Error")}


def test_the_test_double_is_in_the_testing_module_not_the_package_root():
    from localjudge.testing import ScriptedClient

    assert ScriptedClient([]).requests == [] and not hasattr(localjudge, "ScriptedClient")


def test_every_lazy_name_is_imported_for_type_checkers():
    """A lazy name (``_LAZY``) without its ``TYPE_CHECKING`` import would be ``Any`` to a user's type checker."""
    import ast

    tree = ast.parse((ROOT / "localjudge" / "__init__.py").read_text(encoding="utf-8"))
    checked = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    imported = {
        (f".{node.module}", alias.name)
        for node in checked.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == {(module, name) for name, module in localjudge._LAZY.items()}
