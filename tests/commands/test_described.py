"""A judge described for the file beside its results: what names the model and how it was asked, no secret."""

from __future__ import annotations

import hashlib
import json

import pytest
from click.testing import CliRunner
from support.fault_server import FaultServer, completion

from localjudge._cli import main
from localjudge._cli.commands.described import describe_model, server_address
from localjudge._cli.commands.row_judge import RowJudge
from localjudge._cli.commands.settings import JudgeSettings
from localjudge._datasets.judge_file import judge_file_path, read_judge_file
from localjudge._specs import ModelOptions
from localjudge._specs.cards import find_card

SECRETS = ("key-s3cret", "query-s3cret", "header-s3cret")


@pytest.fixture
def fresh_formats():
    """Each test negotiates a server's response_format from scratch (as the client tests do)."""
    from localjudge._clients.bound import BOUND_FIELD
    from localjudge._clients.formats import FIXED_TEMPERATURE, FORMATS

    for memo in (FORMATS, FIXED_TEMPERATURE, BOUND_FIELD):
        memo.forget()
    yield
    for memo in (FORMATS, FIXED_TEMPERATURE, BOUND_FIELD):
        memo.forget()


def test_a_server_is_named_without_what_its_url_may_hide():
    assert server_address("https://user:pw@judge.example:8443/v1?api_key=k#x") == "https://judge.example:8443/v1"
    assert server_address("http://[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert server_address("http://host:notaport/v1") == "(an address that could not be read)"
    for malformed in ("user:secret@host:8000/v1", "http:user:secret@host/v1", "http:/host/user:secret@x"):
        assert "secret" not in server_address(malformed)  # no // part: the credentials would sit in the path


def test_a_card_gives_its_checksum_and_a_file_named_by_path_is_hashed(tmp_path):
    card = find_card("tiny")
    (described,) = describe_model("tiny", "judge")
    assert (described["file"], described["sha256"], described["sha256_from"]) == (card.file, card.sha256, "model card")
    model = tmp_path / "my-judge.gguf"
    model.write_bytes(b"GGUF not really a model")
    (described,) = describe_model(str(model), "judge")
    assert described["file"] == "my-judge.gguf" and described["sha256_from"] == "computed from the file"
    assert described["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    chain = describe_model(f"openai:big,{model}", "judge", ["http://127.0.0.1:9/v1"])
    assert [(m["kind"], m.get("servers")) for m in chain] == [("server", ["http://127.0.0.1:9/v1"]), ("local", None)]


def test_a_judge_loaded_elsewhere_is_described_by_its_stand_in_with_no_header(monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_API_KEY", "key-s3cret")
    settings = JudgeSettings(
        model_spec="openai:judge",
        base_urls=("http://127.0.0.1:9/v1?token=query-s3cret",),
        model_options=ModelOptions.of({"headers": {"X-Token": "header-s3cret"}}),
        prompt="Is {outputs} polite?",
        system="Be strict.",
    )
    described = RowJudge(settings, use_cache=False).describe([(False, False)])
    (asked,) = described["asked"]
    assert asked["prompt"] == "Is {outputs} polite?" and asked["system"] == "Be strict."
    assert asked["schema"]["properties"]["score"]["type"] == "boolean"
    assert described["models"][0]["servers"] == ["http://127.0.0.1:9/v1"]
    text = json.dumps(described)
    assert not any(secret in text for secret in SECRETS)


@pytest.mark.server
def test_a_batch_run_on_a_server_with_a_key_describes_its_judge_and_writes_no_secret(
    tmp_path, monkeypatch, fresh_formats
):
    server = FaultServer([completion('{"score": true}')])
    try:
        data = tmp_path / "data.jsonl"
        data.write_text('{"id": "a", "inputs": "2+2?", "outputs": "4"}\n', encoding="utf-8")
        monkeypatch.setenv("LOCALJUDGE_API_KEY", "key-s3cret")
        url = server.base_url + "?token=query-s3cret"
        arguments = ["batch", str(data), "-m", "openai:judge", "--base-url", url, "--way", "plain", "--no-cache"]
        outcome = CliRunner().invoke(main, arguments)
        assert outcome.exit_code == 0, outcome.output
        assert server.requests[0].headers.get("authorization") == "Bearer key-s3cret"  # the key was used
    finally:
        server.close()
    results = data.with_name("data.results.jsonl")
    judges = read_judge_file(judge_file_path(results))
    ((fingerprint, judge),) = judges.items()
    assert json.loads(results.read_text())["judged"]["judge"] == fingerprint
    assert judge["models"] == [
        {"role": "judge", "spec": "openai:judge", "kind": "server", "servers": [server.base_url]}
    ]
    assert judge["asked"][0]["way"] == {"label": "plain", "described": "the prompt as written"}
    for written in (judge_file_path(results), results):
        assert not any(secret in written.read_text() for secret in SECRETS)


def test_check_judge_refuses_a_symlink_where_a_sets_judge_goes_before_it_judges(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me", encoding="utf-8")
    (tmp_path / "answers.results.judge.json").symlink_to(target)
    arguments = ["check-judge", "-m", "tiny", "--set", "answers", "--limit", "1", "--results", str(tmp_path)]
    outcome = CliRunner().invoke(main, arguments)
    assert outcome.exit_code == 2 and "symbolic link" in outcome.output
    assert not (tmp_path / "answers.results.jsonl").exists() and target.read_text() == "keep me"
