"""Spec resolution, model cards and the default model's cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from localjudge import models, paths
from localjudge.errors import MissingDependencyError, ModelLoadError, ModelSpecError


def test_cache_dir_prefers_localjudge_home(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_dir() == tmp_path / "home"
    monkeypatch.delenv("LOCALJUDGE_HOME")
    assert paths.cache_dir() == tmp_path / "xdg" / "localjudge"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert paths.cache_dir() == Path.home() / ".cache" / "localjudge"


def test_default_card_is_complete():
    card = models.find_card("default")
    assert card is not None and card.name == "gemma-3-270m"
    assert len(card.sha256) == 64 and card.architecture == "gemma3" and card.chat_template == "gemma"
    assert card.context_length > 0 and card.recommended["n_ctx"] <= card.context_length
    assert models.find_card("gemma-3-270m") == card


def test_every_card_names_a_source_and_checksum():
    cards = models.load_cards()
    assert cards
    for card in cards:
        assert card.file.endswith(".gguf") and len(card.sha256) == 64


def test_ensure_default_model_assembles_once_and_verifies(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path))
    path = models.ensure_default_model()
    assert path == tmp_path / "models" / "gemma-3-270m-q4_k_m.gguf"
    assert path.read_bytes()[:4] == b"GGUF"
    assert not list(path.parent.glob("*.part")), "temporary files must not be left behind"
    stamp = path.with_name(path.name + ".verified")
    assert stamp.read_text().split()[-1] == models.find_card("default").sha256

    mtime = path.stat().st_mtime_ns
    assert models.ensure_default_model() == path
    assert path.stat().st_mtime_ns == mtime, "a verified model is reused, not rebuilt"

    with path.open("r+b") as handle:  # corrupt one byte: the stamp no longer matches
        handle.seek(1000)
        handle.write(b"\xff")
    with pytest.raises(ModelLoadError, match="does not match the sha256"):
        models.ensure_default_model()


def test_missing_model_package_names_the_install(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path))
    card = models.find_card("default")
    broken = models.ModelCard(**{**card.__dict__, "source": {"module": "no_such_module_xyz", "pypi": "no-such-pkg"}})
    with pytest.raises(MissingDependencyError, match="pip install no-such-pkg"):
        models.ensure_card_model(broken)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "non-empty string"),
        ("nonsense", "Unknown model spec 'nonsense'"),
    ],
)
def test_bad_specs_are_clear_errors(monkeypatch, spec, message):
    monkeypatch.delenv(models.BASE_URL_ENV, raising=False)
    with pytest.raises(ModelSpecError, match=message):
        models.resolve_model(spec)


def test_comma_spec_is_a_fallback_chain():
    from localjudge.clients.deferred import DeferredClient
    from localjudge.clients.fallback import FallbackClient
    from localjudge.clients.remote import OpenAICompatibleClient

    chain = models.resolve_model("missing.gguf, openai:judge", base_url="http://127.0.0.1:9/v1")
    assert isinstance(chain, FallbackClient)
    first, second = chain.clients
    assert isinstance(first, DeferredClient) and first.name == "missing.gguf"
    assert isinstance(second, OpenAICompatibleClient)


@pytest.mark.parametrize("spec", ["default,", ",default"])
def test_a_chain_with_an_empty_spec_is_refused(spec):
    with pytest.raises(ModelSpecError, match="two or more non-empty specs"):
        models.resolve_model(spec)


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({"OPENAI_API_KEY": "sk-openai"}, ("https://api.openai.com/v1", "sk-openai")),
        ({"LOCALJUDGE_BASE_URL": "http://127.0.0.1:8080/v1", "LOCALJUDGE_API_KEY": "ours"},
         ("http://127.0.0.1:8080/v1", None)),  # the key is the client's to read: ours first
        ({"LOCALJUDGE_BASE_URL": "http://127.0.0.1:8080/v1", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
          "LOCALJUDGE_API_KEY": "ours", "OPENAI_API_KEY": "sk-openai"}, ("http://127.0.0.1:9/v1", "sk-openai")),
        ({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "LOCALJUDGE_API_KEY": "ours"}, ("http://127.0.0.1:9/v1", "")),
    ],
)  # fmt: skip
def test_openai_specs_find_their_server_as_openevals_does_and_keys_stay_with_their_server(environment, expected):
    assert models.openai_server("gpt-4o-mini", None, environment) == expected
    assert models.openai_server("gpt-4o-mini", "given", environment)[1] == "given"


def test_openai_s_api_without_its_key_is_refused_before_anything_is_sent(monkeypatch):
    for name in (models.BASE_URL_ENV, models.OPENAI_BASE_URL_ENV, "OPENAI_API_KEY", "LOCALJUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ModelSpecError, match=r"goes to OpenAI's API .* needs OPENAI_API_KEY"):
        models.resolve_model("openai:gpt-4o-mini")
    monkeypatch.setenv("LOCALJUDGE_API_KEY", "ours")  # never sent to OpenAI
    with pytest.raises(ModelSpecError, match="needs OPENAI_API_KEY"):
        models.resolve_model("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert models.resolve_model("openai:gpt-4o-mini").base_url == "https://api.openai.com/v1"
    assert models.resolve_model("openai:m", base_url="http://127.0.0.1:7/v1").base_url == "http://127.0.0.1:7/v1"


def test_other_providers_go_through_langchain(monkeypatch):
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from localjudge.clients.langchain import LangChainClient

    made = []

    def init_chat_model(spec, **kwargs):
        made.append(spec)
        if spec.startswith("anthropic:"):
            raise ImportError(
                "Unable to import langchain_anthropic. Please install with `pip install -U langchain-anthropic`"
            )
        return FakeListChatModel(responses=['{"score": true}'])

    monkeypatch.setattr("langchain.chat_models.init_chat_model", init_chat_model)
    client = models.resolve_model("ollama:qwen2.5")
    assert isinstance(client, LangChainClient) and made == ["ollama:qwen2.5"]
    with pytest.raises(ModelSpecError, match=r"needs a package .* `pip install -U langchain-anthropic`"):
        models.resolve_model("anthropic:claude-x")
    with pytest.raises(ModelSpecError, match="langchain-anthropic"):  # in a chain, reported before anything runs
        models.resolve_model("default,anthropic:claude-x")
    chain = models.resolve_model("default,ollama:qwen2.5", n_ctx=512)  # local options go to the local member only
    assert isinstance(chain.clients[1], LangChainClient)
    with pytest.raises(ModelSpecError, match=r"--n-ctx does not apply to 'ollama:qwen2\.5', a LangChain chat model"):
        models.resolve_model("ollama:qwen2.5", n_ctx=512)
    with pytest.raises(ModelSpecError, match=r"--base-url .* is for openai:NAME specs"):
        models.resolve_model("ollama:qwen2.5", base_url="http://127.0.0.1:9/v1")


def test_hf_spec_resolves_to_the_transformers_backend(tmp_path):
    pytest.importorskip("transformers")
    missing = tmp_path / "no-model-here"
    with pytest.raises(ModelLoadError) as info:
        models.resolve_model(f"hf:{missing}")
    assert info.value.path == str(missing)


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("default", {"device": "cuda"}, "--device does not apply to 'default', a llama.cpp model"),
        ("hf:default", {"n_gpu_layers": 4}, "--n-gpu-layers does not apply to 'hf:default', a transformers model"),
        ("openai:judge", {"n_ctx": 2048}, "--n-ctx does not apply to 'openai:judge', a server's model"),
        ("openai:a,openai:b", {"chat_template": "gemma"}, "--chat-template does not apply"),
        ("default", {"no_such_option": 1}, "does not take these options"),
    ],
)
def test_an_option_the_engine_does_not_take_is_an_error_not_ignored(spec, options, message):
    base_url = "http://127.0.0.1:9/v1" if "openai:" in spec else None
    with pytest.raises(ModelSpecError, match=message):
        models.resolve_model(spec, base_url=base_url, **options)


def test_loading_options_given_as_none_are_not_given_but_other_nones_are_passed(monkeypatch):
    built = []

    class Recorder:
        def __init__(self, path, **settings):
            built.append(settings)

    import localjudge.clients.llamacpp as llamacpp_client

    monkeypatch.setattr(llamacpp_client, "LlamaCppClient", Recorder)
    models._client_cache.clear()
    models.resolve_model("some.gguf", n_ctx=None, device=None, reasoning_budget=None, chat_template="chatml")
    assert built == [{"reasoning_budget": None, "chat_template": "chatml"}]
    models._client_cache.clear()


def test_a_chain_gives_loading_options_to_its_local_members_only():
    from localjudge.clients.remote import OpenAICompatibleClient

    chain = models.resolve_model("missing.gguf,openai:judge", base_url="http://127.0.0.1:9/v1", n_ctx=512)
    local, remote = chain.clients
    assert local._load.keywords == {"n_ctx": 512}
    assert isinstance(remote, OpenAICompatibleClient)


def test_a_base_url_for_a_local_model_is_refused():
    with pytest.raises(ModelSpecError, match="--base-url"):
        models.resolve_model("some.gguf", base_url="http://127.0.0.1:9/v1")
