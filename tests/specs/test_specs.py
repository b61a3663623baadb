"""The engine registry and the spec parser: one declaration per option, one parser for every spec."""

from __future__ import annotations

import inspect
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from localjudge import _cli as cli
from localjudge._clients import resolve as models
from localjudge._specs import ENGINES, Engine, ModelOptions, Option, parse_spec, register, unregister
from localjudge._specs.registry import command_line_options, declared_options, identity_options
from localjudge.errors import ModelSpecError
from localjudge.testing import ScriptedClient

# A toy engine, declared as a new engine's module would: its client, its options, one registry line.
TOY_OPTIONS = (Option("loudness", int, 1, "Toy: how loud the verdict is.", identity=True),)


class ToyClient(ScriptedClient):
    """A model 'loaded' from a file that always says true."""

    def __init__(self, path: os.PathLike[str], *, loudness: int = 1) -> None:
        super().__init__(['{"reasoning": "toy", "score": true}'], repeat=True)
        self.path, self.loudness = Path(path), loudness


TOY = Engine("toy", "local", "a toy model", TOY_OPTIONS, ToyClient, prefixes=("toy",), target="a toy file")


@pytest.fixture
def toy_engine():
    register(TOY)
    models._client_cache.clear()
    yield TOY
    unregister("toy")
    models._client_cache.clear()


def test_a_registered_engine_is_parsed_resolved_checked_and_judged_with(toy_engine, tmp_path):
    model = tmp_path / "judge.toy"
    model.write_text("toy", encoding="utf-8")
    assert parse_spec(f"toy:{model}") == parse_spec(f"toy:{model}")
    assert parse_spec(f"toy:{model}").engine == "toy" and parse_spec(f"toy:{model}").runs_here
    client = models.resolve_model(f"toy:{model}", loudness=3)
    assert isinstance(client, ToyClient) and client.path == model and client.loudness == 3
    with pytest.raises(ModelSpecError, match=r"n_ctx= does not apply to 'toy:.*', a toy model"):
        models.resolve_model(f"toy:{model}", n_ctx=512)
    with pytest.raises(ModelSpecError, match=r"loudness= does not apply to 'x\.gguf', a llama\.cpp model"):
        models.resolve_model("x.gguf", loudness=3)
    chain = models.resolve_model(f"toy:{model},openai:m", base_url="http://127.0.0.1:9/v1", loudness=2)
    assert chain.clients[0]._load.keywords == {"loudness": 2}  # to the member that takes it
    result = CliRunner().invoke(cli.main, ["score", "--outputs", "4", "-m", f"toy:{model}", "--reasoning"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["score"] is True


def test_an_engine_cannot_take_a_prefix_another_holds():
    with pytest.raises(ModelSpecError, match="'gguf'"):
        register(Engine("copy", "local", "a copy", (), ToyClient, prefixes=("gguf",)))
    assert "copy" not in ENGINES


@pytest.mark.parametrize(
    ("text", "kind", "engine", "target"),
    [
        ("default", "local", "llama.cpp", "default"),
        ("  tiny ", "local", "llama.cpp", "tiny"),
        ("models/judge.gguf", "local", "llama.cpp", "models/judge.gguf"),
        ("gguf:judge.gguf", "local", "llama.cpp", "judge.gguf"),
        ("hf:some/dir", "local", "transformers", "some/dir"),
        ("transformers:tiny", "local", "transformers", "tiny"),
        ("openai:gpt-4o-mini", "server", "server", "gpt-4o-mini"),
        ("anthropic:claude-3", "provider", "langchain", "anthropic:claude-3"),
        ("ollama:qwen2.5", "provider", "langchain", "ollama:qwen2.5"),
        ("nosuchprovider:x", "local", "llama.cpp", "nosuchprovider:x"),  # no prefix claims it: a card or a path
        ("openai:", "local", "llama.cpp", "openai:"),
        ("tiny,openai:m", "chain", None, "tiny,openai:m"),
    ],
)
def test_parse_spec(text, kind, engine, target):
    spec = parse_spec(text)
    assert (spec.kind, spec.engine, spec.target) == (kind, engine, target)


def test_a_chain_lists_its_members_engines_and_runs_here_when_any_member_does():
    spec = parse_spec("openai:m, hf:dir ,anthropic:c")
    assert spec.engines == ("server", "transformers", "langchain") and spec.runs_here
    assert not parse_spec("openai:a,anthropic:c").runs_here
    assert [member.text for member in spec.members] == ["openai:m", "hf:dir", "anthropic:c"]


def test_a_path_with_a_comma_or_a_provider_prefix_is_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a,b.gguf").write_text("x", encoding="utf-8")
    (tmp_path / "ollama:x").write_text("x", encoding="utf-8")
    assert parse_spec("a,b.gguf").kind == "local" and parse_spec("ollama:x").engine == "llama.cpp"


@pytest.mark.parametrize("text", ["", "   ", "tiny,", ",tiny", "a,,b"])
def test_a_spec_that_names_nothing_is_refused(text):
    with pytest.raises(ModelSpecError, match="non-empty"):
        parse_spec(text)


def _keywords(cls: type) -> dict[str, inspect.Parameter]:
    """The keywords a class's constructor takes, following ``**kwargs`` on to its base classes."""
    found: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        parameters = list(inspect.signature(vars(klass)["__init__"]).parameters.values())[1:]
        for parameter in parameters:
            if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD):
                found.setdefault(parameter.name, parameter)
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            break
    return found


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_every_declared_option_is_taken_by_its_engine_s_client_with_the_declared_default(name):
    engine = ENGINES[name]
    accepted = _keywords(engine.client_class())
    for option in engine.options:
        assert option.name in accepted, f"{engine.client_class().__name__} drops {option.name}"
        default = accepted[option.name].default
        assert option.default is None or option.default == default, (option.name, option.default, default)


@pytest.mark.parametrize("name", [name for name, engine in ENGINES.items() if engine.kind in ("local", "object")])
def test_every_keyword_a_local_client_takes_is_declared(name):
    engine = ENGINES[name]
    keyword_only = {n for n, p in _keywords(engine.client_class()).items() if p.kind is p.KEYWORD_ONLY}
    assert keyword_only <= engine.option_names, keyword_only - engine.option_names


def test_the_command_line_flags_are_the_declared_ones_in_the_docs():
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    flags = [option.flag for option in command_line_options()]
    assert flags == [
        "--chat-template",
        "--n-ctx",
        "--n-threads",
        "--max-tokens",
        "--parallel",
        "--no-format-instructions",
        "--n-gpu-layers",
        "--device",
        "--dtype",
    ]
    assert all(f"[{flag}" in page for flag in flags)
    help_text = CliRunner().invoke(cli.main, ["batch", "--help"]).output
    assert all(flag in help_text for flag in flags)


def test_a_local_judge_s_cache_identity_holds_the_declared_identity_options():
    assert identity_options() >= {
        "chat_template",
        "max_tokens",
        "reasoning_budget",
        "close_loops",
        "format_instructions",
        "readout",
        "readout_tolerance",
        "n_gpu_layers",
        "device",
        "dtype",
    }
    assert not identity_options() & {"n_ctx", "n_threads", "parallel", "n_batch", "prefix_cache_bytes"}


def test_every_option_is_declared_once():
    seen: dict[str, Option] = {}
    for engine in ENGINES.values():
        for option in engine.options:
            assert seen.setdefault(option.name, option) is option, f"{option.name} is declared twice"
    assert set(seen) == set(declared_options())


def test_model_options_are_immutable_picklable_and_compare_as_mappings():
    import pickle

    options = ModelOptions.of({"n_ctx": 512})
    assert pickle.loads(pickle.dumps(options)) == options == {"n_ctx": 512}
    assert options.with_default("n_ctx", 9) == {"n_ctx": 512}
    assert options.with_default("parallel", 4) == {"n_ctx": 512, "parallel": 4}
    assert options.replace(n_ctx=None) == {} and options == {"n_ctx": 512}
    assert list(options.values()) == [512] and list(options.items()) == [("n_ctx", 512)]  # the Mapping API whole


def _batch(tmp_path: Path, *args: str):
    data = tmp_path / "rows.jsonl"
    data.write_text('{"outputs": "4"}\n', encoding="utf-8")
    return CliRunner().invoke(cli.main, ["batch", str(data), "-o", str(tmp_path / "out.jsonl"), *args])


def test_a_provider_model_with_rows_in_flight_goes_as_far_as_its_package(tmp_path, monkeypatch):
    """The real resolver, through the real command: -j gives a provider model no local option."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = _batch(tmp_path, "-m", "anthropic:claude-3", "-j", "4")
    assert "does not apply" not in result.output
    # the package LangChain needs for the provider, or the network: nothing about options
    assert result.exit_code in (1, 2) and ("langchain" in result.output or "row" in result.output), result.output


def test_a_misplaced_flag_is_refused_by_the_real_resolver(tmp_path):
    result = _batch(tmp_path, "-m", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--device", "cpu")
    assert result.exit_code == 2 and "--device does not apply to 'openai:m', a server's model" in result.output
    result = _batch(tmp_path, "-m", "hf:somewhere", "--n-gpu-layers", "2")
    assert result.exit_code == 2 and "--n-gpu-layers does not apply to 'hf:somewhere', a transformers model" in (
        result.output
    )
