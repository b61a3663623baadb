"""The CLI's argument handling, through click's runner with a scripted judge."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from localjudge import _cli as cli
from localjudge._cli.commands import judging as command_judge
from localjudge._cli.commands import row_judge
from localjudge._cli.commands.settings import JudgeSettings
from localjudge._cli.info import describe_quality
from localjudge._cli.output import handle_errors
from localjudge._clients.base import ChatClient, make_chat_completion
from localjudge._judges.ways import WAYS
from localjudge._specs import ModelOptions
from localjudge.errors import OutputParseError
from localjudge.testing import ScriptedClient

ANSWER = '{"reasoning": "Four is right. Thus, the score should be: true.", "score": true}'
OWN_ANSWER = "4"  # what the scripted judge writes when asked for free text: its own answer to the question


def answer_as_asked(request: dict) -> str:
    """ANSWER in the shape the request's schema asks for (without reasoning where it has none); free text: OWN_ANSWER."""
    response_format = request.get("response_format")
    if response_format is None:
        return OWN_ANSWER
    fields = response_format["json_schema"]["schema"]["properties"]
    return json.dumps({name: value for name, value in json.loads(ANSWER).items() if name in fields})


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch):
    """Replace model resolution with a scripted judge; yields the judge and the specs asked for."""
    judge = ScriptedClient([answer_as_asked], repeat=True)
    asked: list[tuple] = []

    def build_judge(model_spec, base_urls, fallbacks, **model_options):
        asked.append((model_spec, base_urls, fallbacks))
        judge.model_options = model_options
        return judge

    monkeypatch.setattr(command_judge, "build_judge", build_judge)
    judge.asked = asked
    return judge


def run(*args: str):
    return CliRunner().invoke(cli.main, list(args))


def verdict_requests(scripted: ScriptedClient) -> list[dict]:
    """The requests that asked for a verdict (a schema), not for what the judge writes first."""
    return [request for request in scripted.requests if "response_format" in request]


def test_score_judges_an_answer_against_its_own_by_default_and_says_so(scripted):
    result = run("score", "--inputs", "What is 2+2?", "--outputs", "4")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "key": "score",
        "score": True,
        "comment": "The same result as the judge's own answer: 4",
        "metadata": {"self_reference": "4", "way": "self-reference+uncalibrated", "requests": 2},
    }
    own, verdict = scripted.requests
    assert own["messages"][-1]["content"] == "What is 2+2?" and "response_format" not in own
    user = verdict["messages"][-1]["content"]
    assert "What is 2+2?" in user and "<answer>\n4\n</answer>" in user and "<expected_answer>\n4\n" in user
    assert list(verdict["response_format"]["json_schema"]["schema"]["properties"]) == ["score"]  # the verdict only
    assert scripted.asked == [("tiny", (), ())]  # $LOCALJUDGE_MODEL, as the tests set it
    # a scripted judge has no calibration: the default judges uncalibrated and says so
    assert "not calibrated" in result.stderr
    assert "way: self-reference+uncalibrated (against the judge's own answer" in result.stderr


def test_a_damaged_calibration_file_is_an_error_not_a_missing_fit(scripted, tmp_path, monkeypatch):
    """The default way goes uncalibrated only where no fit exists: a fit it cannot read is reported, not skipped."""
    damaged = tmp_path / "fit.json"
    damaged.write_text("{not json", encoding="utf-8")
    monkeypatch.setattr("localjudge._trust.calibration_file.calibration_path", lambda key: damaged)
    monkeypatch.setattr(scripted, "cache_identity", lambda: {"model": "scripted"}, raising=False)
    result = run("score", "--inputs", "What is 2+2?", "--outputs", "4")
    assert result.exit_code != 0
    assert "not JSON" in result.stderr and str(damaged) in result.stderr


def test_way_plain_with_reasoning_is_openevals_judgement(scripted):
    result = run("score", "--inputs", "What is 2+2?", "--outputs", "4", "--way", "plain", "--reasoning")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "key": "score",
        "score": True,
        "comment": "Four is right. Thus, the score should be: true.",
        "metadata": {"way": "plain", "requests": 1},
    }
    (request,) = scripted.requests
    assert list(request["response_format"]["json_schema"]["schema"]["properties"]) == ["reasoning", "score"]
    assert "way: plain (the prompt as written)" in result.stderr


@pytest.mark.parametrize(
    ("environment", "spec"), [("/models/my judge.gguf", "/models/my judge.gguf"), ("  ", "default"), ("", "default")]
)
def test_localjudge_model_names_the_judge_whole_and_a_blank_one_means_default(scripted, monkeypatch, environment, spec):
    monkeypatch.setenv("LOCALJUDGE_MODEL", environment)
    result = run("score", "--outputs", "4")
    assert result.exit_code == 0, result.output
    assert scripted.asked == [(spec, (), ())]
    assert run("score", "--outputs", "4", "-m", "given").exit_code == 0 and scripted.asked[-1][0] == "given"


def test_a_prompt_of_ones_own_is_asked_as_written_and_calibrated_only_where_a_fit_exists(scripted):
    result = run("score", "--prompt", "Is {outputs} polite?", "--outputs", "Thanks")
    assert result.exit_code == 0, result.output
    assert scripted.requests[0]["messages"][-1]["content"].startswith("Is Thanks polite?")
    assert "way: plain (the prompt as written)" in result.stderr  # no fit for this judge: nothing corrected
    assert "no calibration" not in result.stderr  # and nothing to warn about: none was asked for
    refused = run("score", "--prompt", "Is {outputs} polite?", "--outputs", "Thanks", "--calibrated")
    assert refused.exit_code != 0 and "calibrat" in refused.output


def test_score_with_a_reference_asks_whether_the_answer_gives_the_same_result(scripted):
    result = run("score", "--inputs", "q", "--outputs", "a", "--reference-outputs", "gold")
    assert result.exit_code == 0, result.output
    assert "<expected_answer>\ngold\n</expected_answer>" in scripted.requests[0]["messages"][-1]["content"]
    assert "way: same-answer" in result.stderr
    result = run("score", "--inputs", "q", "--outputs", "a", "--reference-outputs", "gold", "--way", "plain")
    assert result.exit_code == 0, result.output
    assert "<reference>\ngold\n</reference>" in scripted.requests[1]["messages"][-1]["content"]


def test_score_passes_every_option_through(scripted, tmp_path):
    few_shot = tmp_path / "shots.jsonl"
    few_shot.write_text(json.dumps({"inputs": "1+1", "outputs": "2", "score": 1.0, "reasoning": "right"}) + "\n\n")
    scripted._script = iter(['{"reasoning": "ok", "score": 0.5}'])
    result = run(
        "score",
        "--prompt", "Rate {outputs} for {topic}",
        "--outputs", "an essay",
        "--var", "topic=clarity",
        "--system", "Be terse.",
        "--choices", "0,0.5,1",
        "--few-shot", str(few_shot),
        "--feedback-key", "clarity",
        "--reasoning",
        "--model", "some.gguf",
        "--fallback", "openai:m",
        "--base-url", "http://127.0.0.1:9",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["key"] == "clarity"
    assert json.loads(result.stdout)["score"] == 0.5
    request = scripted.requests[0]
    assert request["messages"][0] == {"role": "system", "content": "Be terse."}
    assert request["messages"][1]["content"].startswith("Rate an essay for clarity")
    assert "<input>1+1</input>" in request["messages"][1]["content"]
    assert request["response_format"]["json_schema"]["schema"]["properties"]["score"]["enum"] == [0.0, 0.5, 1.0]
    assert scripted.asked == [("some.gguf", ("http://127.0.0.1:9",), ("openai:m",))]


def test_model_loading_options_reach_the_resolver(scripted, tmp_path):
    template = tmp_path / "t.jinja"
    template.write_text("{{ messages[0]['content'] }}", encoding="utf-8")
    result = run(
        "score", "--outputs", "x", "--model", "hf:dir", "--chat-template", str(template),
        "--n-ctx", "2048", "--n-threads", "3", "--max-tokens", "64", "--parallel", "2", "--device", "cpu",
        "--dtype", "bfloat16",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert scripted.model_options == {
        "chat_template": str(template),
        "n_ctx": 2048,
        "n_threads": 3,
        "max_tokens": 64,
        "parallel": 2,
        "device": "cpu",
        "dtype": "bfloat16",
        "load": True,
    }


@pytest.mark.parametrize(
    ("options", "parallel"),
    [([], None), (["-j", "3"], 3), (["-j", "40"], command_judge.MAX_DEFAULT_PARALLEL), (["-j", "3", "--parallel", "2"], 2),
     (["-j", "3", "--model", "openai:m"], None), (["-j", "3", "--model", "anthropic:claude-3"], None),
     (["-j", "3", "--model", "tiny,openai:m"], 3)],
)  # fmt: skip
def test_batch_gives_a_local_model_a_sequence_per_row_in_flight(scripted, tmp_path, options, parallel):
    data = tmp_path / "rows.jsonl"
    data.write_text('{"outputs": "4"}\n', encoding="utf-8")
    result = run("batch", str(data), *options)
    assert result.exit_code == 0, result.output
    assert scripted.model_options.get("parallel") == parallel


def test_a_provider_model_with_rows_in_flight_is_not_given_local_options(tmp_path):
    """Through the real spec resolution: once `-j 4` set --parallel for a LangChain model, which refused it."""
    data = tmp_path / "rows.jsonl"
    data.write_text('{"outputs": "4"}\n', encoding="utf-8")
    result = run("batch", str(data), "-o", str(tmp_path / "out.jsonl"), "-m", "anthropic:claude-3", "-j", "4")
    assert "--parallel" not in result.stderr
    assert "langchain-anthropic" in result.stderr  # the one thing missing to run it here


def test_build_judge_reads_a_template_file_and_refuses_misplaced_options(tmp_path):
    from localjudge.errors import ModelSpecError, UsageError

    template = tmp_path / "t.jinja"
    template.write_text("{{ messages[0]['content'] }}", encoding="utf-8")
    with pytest.raises(ModelSpecError, match="chat_template= does not apply"):
        command_judge.build_judge("openai:m", ("http://127.0.0.1:9",), (), chat_template=str(template))
    with pytest.raises(UsageError, match="no such file"):
        command_judge.build_judge("default", (), (), chat_template=str(tmp_path / "missing.jinja"))


def test_score_no_reasoning_and_continuous(scripted):
    scripted._script = iter(['{"score": 0.25}'])
    result = run("score", "--outputs", "x", "--continuous", "--no-reasoning")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "key": "score",
        "score": 0.25,
        "comment": None,
        "metadata": {"way": "plain", "requests": 1},
    }
    schema = scripted.requests[0]["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["score"]


def test_score_custom_output_schema(scripted, tmp_path):
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(
        json.dumps({"type": "object", "properties": {"verdict": {"type": "string"}}, "required": ["verdict"]})
    )
    scripted._script = iter(['{"verdict": "fine"}'])
    result = run("score", "--outputs", "x", "--output-schema", str(schema_file))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"verdict": "fine"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["score"], "Nothing to judge"),
        (["score", "--outputs", "x", "--prompt", "{outputs} {missing}"], "{missing}"),
        (["score", "--outputs", "x", "--prompt", "Is it right?"], "the prompt shows no {outputs}, so the judge"),
        (["score", "--outputs", "x", "--continuous", "--choices", "0,1"], "--continuous and --choices are each"),
        (["score", "--outputs", "x", "--choices", "a,b"], "expected numbers"),
        (["score", "--outputs", "x", "--var", "novalue"], "KEY=VALUE"),
    ],
)
def test_usage_errors_exit_2_without_traceback(scripted, args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_few_shot_file_is_usage_error(scripted, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json}\n")
    result = run("score", "--outputs", "x", "--few-shot", str(bad))
    assert result.exit_code == 2
    assert f"{bad}:1: is not valid JSON" in result.stderr


def test_runtime_error_exits_1_with_raw_output(scripted):
    scripted._script = iter(["not json at all"])
    result = run("score", "--outputs", "x")
    assert result.exit_code == 1
    assert "not json at all" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_model_path_with_nothing_there_is_the_callers_to_fix(tmp_path):
    """Exit 2, as for any other misuse, and the message names the path and the cards."""
    missing = tmp_path / "judge.gguf"
    result = run("score", "--outputs", "4", "-m", str(missing))
    assert result.exit_code == 2, result.output
    assert f"error: Model file not found: {missing}" in result.stderr and "models list" in result.stderr
    truncated = tmp_path / "short.gguf"
    truncated.write_bytes(b"GGUF" + bytes(8))
    result = run("score", "--outputs", "4", "-m", str(truncated))
    assert result.exit_code == 1 and "truncated" in result.stderr  # a broken file is no misuse: exit 1


def test_an_os_error_is_one_line_naming_the_file():
    @cli.main.command("fail-on-disk")
    @handle_errors
    def fail_on_disk() -> None:
        raise PermissionError(13, "Permission denied", "/data/rows.jsonl")

    try:
        result = CliRunner().invoke(cli.main, ["fail-on-disk"])
    finally:
        cli.main.commands.pop("fail-on-disk")
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "error: /data/rows.jsonl: Permission denied" in result.stderr


def test_every_library_error_names_options_by_the_flags_of_the_command():
    """A runtime error's advice, hint and raw output too: the options it names show as flags, the rest as is."""
    from localjudge._wording import Message
    from localjudge.errors import TruncatedOutputError

    @cli.main.command("fail-truncated")
    @handle_errors
    def fail_truncated() -> None:
        hint = Message("Raise {max_tokens:max_tokens} or {n_ctx}; {path} is kept", path="{odd}.jsonl")
        raise TruncatedOutputError(Message("stopped at {max_tokens}"), raw_output='{"score": tr', hint=hint)

    try:
        result = CliRunner().invoke(cli.main, ["fail-truncated"])
    finally:
        cli.main.commands.pop("fail-truncated")
    assert result.exit_code == 1
    assert 'error: stopped at --max-tokens\nRaw model output: {"score": tr\n' in result.stderr
    assert "Hint: Raise --max-tokens or --n-ctx; {odd}.jsonl is kept" in result.stderr


def test_debug_shows_the_exception(scripted):
    """With --debug the library's error escapes with its traceback; without, it is one line and exit 1."""
    scripted._script = iter(["not json at all"])
    result = run("--debug", "score", "--outputs", "x")
    assert result.exit_code == 1
    assert isinstance(result.exception, OutputParseError), result.exception
    assert result.exception.raw_output == "not json at all"
    assert "error:" not in result.stderr  # raised, not rendered as the one-line error
    scripted._script = iter(["not json at all"])
    plain = run("score", "--outputs", "x")
    assert plain.exit_code == 1 and isinstance(plain.exception, SystemExit)
    assert "error: [scripted] The judge's answer is not JSON" in plain.stderr


def test_unknown_model_spec_is_usage_error():
    result = run("score", "--outputs", "x", "--model", "no-such-model")
    assert result.exit_code == 2
    assert "Unknown model spec 'no-such-model'" in result.stderr


def test_models_list_shows_each_card_with_what_it_measured(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path))
    result = run("models", "list")
    assert result.exit_code == 0, result.output
    assert "qwen2.5-coder-1.5b-instruct (alias: default)  gguf qwen2 Q4_K_M  1117 MB" in result.stdout
    assert "gemma-3-270m (alias: tiny)" in result.stdout and "Apache-2.0" in result.stdout
    assert f"not present: {tmp_path}" in result.stdout
    assert "measured by: localjudge check-judge" in result.stdout


def test_a_cards_quality_is_a_line_per_set_then_the_command():
    quality = {
        "measured": "localjudge check-judge --split test",
        "answers": {"accuracy": 0.8, "kappa": 0.6, "ece": 0.05},
        "llmbar-natural": {"accuracy": 0.7, "position_consistency": 0.6},
    }
    assert describe_quality(quality) == [
        "answers: accuracy 0.80, kappa 0.60, ECE 0.05",
        "llmbar-natural: accuracy 0.70, consistent 0.60",
        "measured by: localjudge check-judge --split test",
    ]
    assert describe_quality({}) == []


def test_batch_scores_each_row_and_resumes(scripted, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(
        '{"id": "q1", "inputs": "2+2?", "outputs": "4"}\n{"outputs": "no question", "reference_outputs": "gold"}\n',
        encoding="utf-8",
    )
    result = run("batch", str(data))
    assert result.exit_code == 0, result.output
    results = tmp_path / "data.results.jsonl"
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["id"] for r in records] == ["q1", "2"]
    assert all(r["result"]["score"] is True for r in records)
    prompts = [request["messages"][-1]["content"] for request in verdict_requests(scripted)]
    assert "<question>\n2+2?\n</question>" in prompts[0] and "<expected_answer>\n4\n" in prompts[0]
    assert "<question>" not in prompts[1] and "<reference>\ngold\n</reference>" in prompts[1]
    assert "2 rows: 2 scored, 0 already in" in result.stderr and "scores: true 2; mean 1.000" in result.stderr

    again = run("batch", str(data))
    assert again.exit_code == 0
    assert "2 rows: 0 scored, 2 already in" in again.stderr
    assert "scores (with the 2 kept): true 2; mean 1.000" in again.stderr  # the data's verdicts, not this run's none
    assert len(scripted.requests) == 3  # q1's own answer, then each row's verdict


def test_batch_records_failures_and_exits_1(scripted, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"outputs": "x"}\n', encoding="utf-8")
    scripted._script = iter(["not json"])
    result = run("batch", str(data), "-o", str(tmp_path / "out.jsonl"))
    assert result.exit_code == 1
    record = json.loads((tmp_path / "out.jsonl").read_text())
    assert record["error"]["type"] == "OutputParseError" and record["error"]["raw_output"] == "not json"
    assert "1: OutputParseError" in result.stderr


def test_few_shot_first_puts_the_examples_before_the_prompt(scripted, tmp_path):
    few_shot = tmp_path / "shots.jsonl"
    few_shot.write_text(json.dumps({"inputs": "1+1", "outputs": "2", "score": True}) + "\n")
    scripted._script = iter(['{"reasoning": "ok", "score": true}'])
    result = run("score", "--outputs", "x", "--few-shot", str(few_shot), "--few-shot-first", "--reasoning")
    assert result.exit_code == 0, result.output
    assert scripted.requests[0]["messages"][-1]["content"].startswith("<example>\n<input>1+1</input>")


def test_batch_turns_every_kind_of_bad_row_into_that_rows_error(scripted, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_bytes(
        b'{"id": "ok", "outputs": "4"}\n'
        b"{not json\n"
        b"[1, 2]\n"
        b'{"id": "latin", "outputs": "caf\xe9"}\n'
        b'{"id": "ok", "outputs": "dup"}\n'
        b'{"id": "no-outputs", "inputs": "2+2?"}\n'
        b'{"id": "last", "outputs": "4"}\n'
    )
    result = run("batch", str(data))
    assert result.exit_code == 1, result.output
    records = {r["id"]: r for r in map(json.loads, (tmp_path / "data.results.jsonl").read_text().splitlines())}
    assert records["ok"]["result"]["score"] is True and records["last"]["result"]["score"] is True
    kinds = {row_id: r["error"]["type"] for row_id, r in records.items() if "error" in r}
    assert kinds == {
        "2": "MalformedRowError",
        "3": "MalformedRowError",
        "4": "InvalidEncodingError",  # its id cannot be read: the line number stands in
        "ok@data.jsonl:5": "DuplicateIdError",
        "no-outputs": "MissingTemplateVariableError",
    }
    assert "2 scored, 0 already in" in result.stderr and ", 5 failed (2 MalformedRowError, " in result.stderr

    fast = run("batch", str(data), "-o", str(tmp_path / "fast.jsonl"), "--fail-fast")
    assert fast.exit_code == 1
    assert "stopped at the first failure" in fast.stderr
    assert len((tmp_path / "fast.jsonl").read_text().splitlines()) == 2


def test_batch_reads_csv_through_a_column_map(scripted, tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("key,question,answer\nk1,2+2?,4\nk2,Sky colour?,\n", encoding="utf-8")
    result = run("batch", str(data), "--map", "inputs=question,outputs=answer", "--id-field", "key")
    assert result.exit_code == 1, result.output
    records = [json.loads(line) for line in (tmp_path / "data.results.jsonl").read_text().splitlines()]
    assert records[0]["id"] == "k1" and records[0]["result"]["score"] is True
    assert "<question>\n2+2?\n</question>" in verdict_requests(scripted)[0]["messages"][-1]["content"]
    assert records[1]["error"] == {
        "type": "MissingValueError",
        "message": "data.csv:3: the 'answer' cell is empty (mapped to outputs)",
    }
    misuse = run("batch", str(data), "--map", "outputs")
    assert misuse.exit_code == 2 and "error: --map takes VARIABLE=COLUMN pairs" in misuse.stderr


def test_batch_writes_its_summary_as_json(scripted, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"outputs": "4"}\n{"outputs": "5"}\nnot json\n', encoding="utf-8")
    result = run("batch", str(data), "--summary", str(tmp_path / "summary.json"))
    assert result.exit_code == 1
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert {k: summary[k] for k in ("rows", "scored", "skipped", "failed", "errors", "scores", "mean_score")} == {
        "rows": 3,
        "scored": 2,
        "skipped": 0,
        "failed": 1,
        "errors": {"MalformedRowError": 1},
        "scores": {"true": 2},
        "mean_score": 1.0,
    }
    assert summary["rows_per_second"] > 0


def test_an_output_folder_removed_during_a_run_is_a_run_time_failure_naming_the_path(scripted, tmp_path):
    import shutil

    data, out = tmp_path / "data.jsonl", tmp_path / "out"
    data.write_text('{"outputs": "4"}\n', encoding="utf-8")
    out.mkdir()

    def answers():
        shutil.rmtree(out)  # the folder goes while the row is judged
        yield '{"score": true}'

    scripted._script = answers()
    result = run("batch", str(data), "-o", str(out / "r.jsonl"))
    assert result.exit_code == 1, result.output  # 2 is kept for a bad call
    assert f"Cannot write {out / 'r.jsonl'}" in result.stderr and "No such file or directory" in result.stderr
    assert "Traceback" not in result.output


def test_batch_refuses_to_write_results_over_its_data(scripted, tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"outputs": "4"}\n', encoding="utf-8")
    result = run("batch", str(data), "-o", str(data))
    assert result.exit_code == 2 and "is the data file itself" in result.stderr
    assert data.read_text() == '{"outputs": "4"}\n'


def test_batch_flattens_its_results_into_csv_on_request(scripted, tmp_path):
    import csv

    data = tmp_path / "data.jsonl"
    data.write_text('{"id": "a", "outputs": "4"}\n{"id": "b", "outputs": "5"}\nnot json\n', encoding="utf-8")
    scripted._script = iter(['{"reasoning": "fine, \\"quoted\\"", "score": true}', "not json"])
    result = run("batch", str(data), "--output-format", "csv", "--reasoning")
    assert result.exit_code == 1, result.output
    with (tmp_path / "data.results.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["id"] for row in rows] == ["a", "b", "3"]
    assert rows[0]["score"] == "True" and rows[0]["comment"] == 'fine, "quoted"' and rows[0]["error.type"] == ""
    assert rows[1]["error.type"] == "OutputParseError" and rows[1]["error.raw_output"] == "not json"
    assert rows[2]["error.type"] == "MalformedRowError"
    assert (tmp_path / "data.results.jsonl").exists()  # what a re-run resumes from
    assert run("batch", str(data), "-o", str(tmp_path / "out.csv")).exit_code == 2


def test_a_csv_results_path_with_the_csv_format_given_is_told_the_real_fix(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"id": "a", "outputs": "x"}\n', encoding="utf-8")
    given = run("batch", str(data), "-o", str(tmp_path / "out.csv"), "--output-format", "csv")
    assert given.exit_code == 2
    assert "--output-format csv already writes the CSV beside it" in given.output
    assert "add --output-format" not in given.output
    missing = run("batch", str(data), "-o", str(tmp_path / "out.csv"))
    assert missing.exit_code == 2 and "add --output-format csv" in missing.output


def test_a_ray_run_passes_on_every_file_it_names_as_an_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("prompt.txt", "judge.gguf", "backup.gguf", "t.jinja"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    settings = JudgeSettings(
        prompt_file=Path("prompt.txt"),
        model_options=ModelOptions.of({"chat_template": "t.jinja", "n_ctx": 512}),
        model_spec="gguf:judge.gguf",
        fallbacks=("backup.gguf", "openai:m", "hf:judge.gguf,openai:n"),
    )
    absolute = row_judge.absolute_paths(settings)
    assert absolute.prompt_file == tmp_path / "prompt.txt"
    assert absolute.model_options == {"chat_template": str(tmp_path / "t.jinja"), "n_ctx": 512}
    assert absolute.model_spec == f"gguf:{tmp_path / 'judge.gguf'}"
    assert absolute.fallbacks == (  # a server spec stays as given
        str(tmp_path / "backup.gguf"),
        "openai:m",
        f"hf:{tmp_path / 'judge.gguf'},openai:n",
    )
    assert absolute.few_shot is None and settings.model_spec == "gguf:judge.gguf"


def test_an_ensemble_run_on_ray_names_its_members_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "judge.gguf").write_text("x", encoding="utf-8")
    settings = JudgeSettings(model_spec="judge.gguf", ensemble_specs=("tiny", "judge.gguf"))
    absolute = row_judge.absolute_paths(settings)
    assert absolute.ensemble_specs == ("tiny", str(tmp_path / "judge.gguf"))
    assert absolute.ensemble_names == ("judge.gguf", "tiny", "judge.gguf (member 3)")
    assert row_judge.absolute_paths(absolute) == absolute  # made absolute twice, still named as given

    def stand_in(settings):
        from localjudge.testing import ScriptedClient

        return ScriptedClient([])

    ensemble = command_judge.evaluator_from_settings(absolute, has_inputs=True, has_reference=False, build=stand_in)
    assert ensemble.names == ["judge.gguf", "tiny", "judge.gguf (member 3)"]


def test_judge_settings_are_immutable_and_picklable():
    import dataclasses
    import pickle

    settings = JudgeSettings(choices=[0, 0.5, 1], model_options=ModelOptions.of({"n_ctx": 512}))
    assert settings.choices == (0, 0.5, 1)  # a list given is kept as a tuple
    assert pickle.loads(pickle.dumps(settings)) == settings
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.prompt = "{outputs}"  # type: ignore[misc]


def _batch_settings(**changes):
    return JudgeSettings(feedback_key="score", **changes)


def test_the_row_judge_travels_as_its_options_and_counts_its_work(scripted):
    import pickle

    judge = row_judge.RowJudge(_batch_settings(), use_cache=False)
    result = judge(inputs="What is 2+2?", outputs="4")
    assert result["score"] is True
    assert judge.counters() == {"cached": 0, "model_calls": 2, "prompt_tokens": 0, "completion_tokens": 0}
    copy = pickle.loads(pickle.dumps(judge))  # the scripted judge it built does not travel
    assert copy.settings == judge.settings and copy.counters() == {}


def test_a_row_judge_that_failed_to_build_is_not_built_again_for_every_row(monkeypatch):
    from localjudge.errors import ModelLoadError

    attempts = []

    def failing(*args, **kwargs):
        attempts.append(1)
        raise ModelLoadError("no such file", path="/nowhere.gguf")

    monkeypatch.setattr(command_judge, "build_judge", failing)
    judge = row_judge.RowJudge(_batch_settings(), use_cache=False)
    for _ in range(3):
        with pytest.raises(ModelLoadError):
            judge(outputs="4")
    assert len(attempts) == 1


def test_no_format_instructions_reaches_a_local_model_and_is_refused_for_a_server(scripted):
    result = run("score", "--outputs", "x", "--no-format-instructions")
    assert result.exit_code == 0, result.output
    assert scripted.model_options["format_instructions"] is False
    from localjudge._clients.resolve import resolve_model
    from localjudge.errors import ModelSpecError

    with pytest.raises(ModelSpecError, match="format_instructions= does not apply"):
        resolve_model("openai:m", base_url="http://127.0.0.1:9/v1", format_instructions=False)


class LeaningJudge(ChatClient):
    """Says true always, leaning on a readout that a content-free input pushes furthest towards true."""

    def _complete(self, request):
        answer = re.search(r"<answer>\n(.*?)\n</answer>", request["messages"][-1]["content"], re.S).group(1)
        p_true = {"N/A": 0.85, "[MASK]": 0.85, "": 0.85}.get(answer, 0.9 if answer == "right" else 0.8)
        readout = {"score": {"probabilities": {"true": p_true, "false": 1 - p_true}}}
        return make_chat_completion('{"score": true}', model="leaning", extra={"readout": readout})

    def cache_identity(self):
        return {"engine": "leaning", "model": "leaning-1"}


def _leaning_rows(tmp_path, monkeypatch, judge):
    """Twelve labelled rows, right and wrong in turn, judged by ``judge`` with the cache in ``tmp_path``."""
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: judge)
    rows = [{"id": str(i), "inputs": "q", "outputs": "right" if i % 2 else "wrong", "label": i % 2} for i in range(12)]
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return data


def test_calibrate_then_batch_calibrated_find_the_same_calibration(tmp_path, monkeypatch):
    data = _leaning_rows(tmp_path, monkeypatch, LeaningJudge())

    fitted = run("calibrate", str(data), "--way", "plain", "-j", "3", "--folds", "3")
    assert fitted.exit_code == 0, fitted.output
    assert "12 readouts from 12 labelled rows (0 rows gave none)" in fitted.stdout
    assert "uncorrected: ECE" in fitted.stdout and "accuracy 0.500" in fitted.stdout  # it always said true
    assert "true 0.850, false 0.150" in fitted.stdout  # the content-free readout

    results = tmp_path / "scored.jsonl"
    scored = run("batch", str(data), "-o", str(results), "--way", "plain", "-j", "2", "--calibrated")
    assert scored.exit_code == 0, scored.output
    records = {r["id"]: r["result"] for r in map(json.loads, results.read_text().splitlines())}
    assert all(r["metadata"]["calibrated"] for r in records.values())
    assert {r["score"] for i, r in records.items() if int(i) % 2} == {True}
    assert {r["score"] for i, r in records.items() if not int(i) % 2} == {False}  # the lean towards true divided out
    assert all(r["metadata"]["uncalibrated"]["score"] is True for r in records.values())

    shown_differently = run("batch", str(data), "-o", str(tmp_path / "x.jsonl"), "--calibrated", "--reasoning")
    assert shown_differently.exit_code == 2 and "no calibration was fitted for this judge" in shown_differently.stderr


class OwnAnswerJudge(LeaningJudge):
    """The leaning judge, writing its own answer when asked for one, but never to a content-free question."""

    def _complete(self, request):
        if "response_format" in request:
            return super()._complete(request)
        question = request["messages"][-1]["content"]
        assert question not in ("N/A", "[MASK]", ""), "asked to answer a content-free question"
        return make_chat_completion("right", model="leaning")


def test_a_judge_writing_its_own_reference_is_calibrated_as_its_own(tmp_path, monkeypatch):
    data = _leaning_rows(tmp_path, monkeypatch, OwnAnswerJudge())

    fitted = run("calibrate", str(data), "--no-reasoning", "--self-reference", "--folds", "3")
    assert fitted.exit_code == 0, fitted.output
    assert "true 0.850, false 0.150" in fitted.stdout  # the content-free readout, its reference a placeholder too

    results = tmp_path / "scored.jsonl"
    scored = run("batch", str(data), "-o", str(results), "--no-reasoning", "--self-reference", "--calibrated")
    assert scored.exit_code == 0, scored.output
    records = [r["result"] for r in map(json.loads, results.read_text().splitlines())]
    assert all(r["metadata"]["calibrated"] and r["metadata"]["self_reference"] == "right" for r in records)
    without = run("batch", str(data), "-o", str(tmp_path / "x.jsonl"), "--no-reasoning", "--calibrated")
    assert without.exit_code == 2 and "no calibration was fitted for this judge" in without.stderr


def test_calibrate_checks_every_label_before_judging(tmp_path, scripted):
    data = tmp_path / "labelled.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": str(i), "outputs": "4", "label": label}) + "\n" for i, label in enumerate([1, "maybe"])
        ),
        encoding="utf-8",
    )
    result = run("calibrate", str(data))
    assert result.exit_code == 2
    assert "row 1: the label 'maybe' is none of this judge's values (true, false)" in result.stderr
    assert scripted.requests == []  # nothing was judged
    unlabelled = tmp_path / "unlabelled.jsonl"
    unlabelled.write_text(json.dumps({"id": "1", "outputs": "4"}) + "\n", encoding="utf-8")
    result = run("calibrate", str(unlabelled))
    assert result.exit_code == 2 and "no row has a 'label' field" in result.stderr
    result = run("calibrate", str(data), "--model", "openai:judge")
    assert result.exit_code == 2 and "a server gives no probabilities" in result.stderr, result.output
    offered = run("calibrate", "--help").output.partition("\nOptions:\n")[2]
    for never_taken in ["--allow-ties", "--ensemble", "--calibrated", "--base-url", "--fallback", "--output-schema"]:
        assert not re.search(rf"^\s+{never_taken}\b", offered, re.MULTILINE)
        result = run("calibrate", str(data), never_taken)
        assert result.exit_code == 2 and f"No such option '{never_taken}'" in result.stderr, result.output
    assert "--model" in offered and "--checklist" in offered
    assert "Repeat it" not in offered
    result = run("calibrate", str(data), "-m", "tiny", "-m", "default")
    assert result.exit_code == 2 and "given more than once: this command takes one judge" in result.stderr


def test_compare_reads_each_of_its_texts_from_a_file_too(scripted, tmp_path):
    scripted._script = itertools.repeat('{"winner": "A"}')
    for name, text in [("q.txt", "Name a prime."), ("a.txt", "7"), ("b.txt", "8"), ("ref.txt", "2, 3, 5 or 7")]:
        (tmp_path / name).write_text(text + "\n", encoding="utf-8")
    files = {"--inputs": "q.txt", "--output-a": "a.txt", "--output-b": "b.txt", "--reference-outputs": "ref.txt"}
    arguments = [item for flag, name in files.items() for item in (flag, f"@{tmp_path / name}")]
    result = run("compare", *arguments, "--no-reasoning", "--way", "plain")
    assert result.exit_code == 0, result.output
    shown = scripted.requests[0]["messages"][-1]["content"]
    assert all(text in shown for text in ["Name a prime.", "2, 3, 5 or 7"]) and "@" not in shown


def test_an_empty_answer_is_judged_and_said_to_be_empty(scripted):
    result = run("score", "--inputs", "2+2?", "--outputs", " ")  # false without asking: nothing to judge
    assert result.exit_code == 0, result.output
    assert "note: --outputs is empty" in result.stderr and not verdict_requests(scripted)
    assert json.loads(result.stdout)["score"] is False and "no claim" in json.loads(result.stdout)["comment"]
    result = run("score", "--inputs", "2+2?", "--outputs", " ", "--screen", "off")
    assert result.exit_code == 0, result.output
    assert (
        "note: --outputs is empty" in result.stderr
        and "<answer>\n \n</answer>" in verdict_requests(scripted)[0]["messages"][-1]["content"]
    )
    scripted._script = itertools.repeat('{"winner": "A"}')
    result = run("compare", "--output-a", "", "--output-b", "7", "--no-reasoning")
    assert result.exit_code == 0 and "note: --output-a is empty" in result.stderr and "--output-b" not in result.stderr
    assert "is empty" not in run("score", "--outputs", "4").stderr


def test_a_rows_error_names_the_flags_and_its_hint_is_kept_and_shown_once(scripted, tmp_path):
    scripted.finish_reason = "length"  # every answer cut at max_tokens
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "outputs": "4"}) + "\n" for i in (1, 2)), encoding="utf-8")
    result = run("batch", str(data))
    assert result.exit_code == 1, result.output
    records = [json.loads(line) for line in (tmp_path / "data.results.jsonl").read_text().splitlines()]
    hints = {record["error"]["hint"] for record in records}
    assert hints == {"Raise --max-tokens, shorten the prompt, or ask for shorter reasoning."}
    assert result.stderr.count("Hint: Raise --max-tokens") == 1 and "max_tokens=" not in result.stderr
    assert "r2: TruncatedOutputError: The judge stopped at max_tokens" in result.stderr


def test_texts_come_from_standard_input_or_a_file(scripted, tmp_path):
    answer = tmp_path / "answer.txt"
    answer.write_text("Four.\nThe sum is four.\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli.main, ["score", "--inputs", "-", "--outputs", f"@{answer}", "--reference-outputs", "@@4"], input="2+2?\n"
    )
    assert result.exit_code == 0, result.output
    text = scripted.requests[-1]["messages"][-1]["content"]
    assert "<question>\n2+2?\n</question>" in text  # one final newline dropped, as $(...) does
    assert "<answer>\nFour.\nThe sum is four.\n</answer>" in text
    assert "<expected_answer>\n@4\n</expected_answer>" in text
    both = CliRunner().invoke(cli.main, ["score", "--inputs", "-", "--outputs", "-"], input="x")
    assert both.exit_code == 2 and "standard input (-) already feeds --inputs" in both.output
    missing = run("score", "--outputs", f"@{tmp_path / 'nope.txt'}")
    assert missing.exit_code == 2 and "no file" in missing.output
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9\n")
    latin1 = run("score", "--outputs", f"@{tmp_path / 'latin1.txt'}")
    assert latin1.exit_code == 2 and "not UTF-8" in latin1.output


@pytest.mark.parametrize(
    ("options", "refused"),
    [
        (["-m", "openai:m", "--base-url", "http://127.0.0.1:9", "--n-ctx", "2048"], "--n-ctx does not apply"),
        (["-m", "anthropic:claude-3", "--parallel", "2"], "--parallel does not apply"),
        (["-m", "tiny", "--base-url", "http://127.0.0.1:9"], "--base-url"),
    ],
)
def test_the_real_resolver_refuses_what_a_spec_does_not_take(options, refused):
    """No scripted judge here: the spec is parsed and resolved as a user's would be, and nothing loads."""
    result = run("score", "--outputs", "4", *options)
    assert result.exit_code == 2, result.output
    assert refused in result.stderr


def test_options_that_do_not_fit_are_named_by_the_flags_of_the_command(scripted, tmp_path):
    """The library names options by keyword (prompt_file=); each command shows its own flag for them."""
    prompt = tmp_path / "p.txt"
    prompt.write_text("{outputs}", encoding="utf-8")
    data = tmp_path / "rows.jsonl"
    data.write_text('{"outputs": "4"}\n', encoding="utf-8")
    both = run("score", "--outputs", "4", "--prompt", "{outputs}", "--prompt-file", str(prompt))
    assert both.exit_code == 2 and "Give --prompt or --prompt-file, not both" in both.stderr
    itself = run("batch", str(data), "-o", str(data))
    assert itself.exit_code == 2 and f"--output {data} is the data file itself" in itself.stderr
    from localjudge._cli.commands.judging import evaluator_from_settings
    from localjudge.errors import OptionError

    with pytest.raises(OptionError, match="Give prompt= or prompt_file=, not both"):
        evaluator_from_settings(
            JudgeSettings(model_spec="tiny", prompt="{outputs}", prompt_file=prompt),
            has_inputs=False,
            has_reference=False,
        )


def test_a_prompt_that_leaves_out_the_given_question_says_so_and_judges(scripted):
    result = run("score", "--inputs", "2+2?", "--outputs", "4", "--prompt", "Is {outputs} right?")
    assert result.exit_code == 0, result.output
    assert "note: the prompt shows no {inputs}: what was given for it is not shown to the judge" in result.stderr
    assert "2+2?" not in scripted.requests[0]["messages"][-1]["content"]


def test_a_library_warning_is_one_line_on_stderr(scripted, tmp_path):
    examples = tmp_path / "few.jsonl"
    examples.write_text(json.dumps({"inputs": "2+2?", "outputs": "4", "score": 7}) + "\n", encoding="utf-8")
    result = run("score", "--inputs", "2+2?", "--outputs", "4", "--way", "plain", "--few-shot", str(examples))
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.stderr.splitlines() if "few_shot_examples[0]" in line]
    assert line.startswith("warning: few_shot_examples[0] has score 7") and "UserWarning" not in result.stderr


@pytest.mark.parametrize("name", [name for name, way in WAYS.items() if not way.same_answer])  # the rest: one answer
def test_every_way_judges_the_same_labelled_file_of_pairs(name, monkeypatch, tmp_path):
    """Columns a way does not show the judge (a label, a source) are data: said once, never an error."""
    from tests.support.likelihood_readings import PAIR, scored

    def answer(request):
        if request.get("score_reply"):
            return scored(request)
        if "response_format" not in request:  # what the way has the judge write first
            return "Does the response name the capital?"
        field = next(iter(request["response_format"]["json_schema"]["schema"]["properties"]))
        value = {"winner": ('"B"', '"A"'), "score": ("true", "false")}[field]
        readout = {field: {"probabilities": {value[0]: 0.7, value[1]: 0.3}}}
        return make_chat_completion(f'{{"{field}": {value[0]}}}', model="m", extra={"readout": readout})

    judge = ScriptedClient([answer], repeat=True)
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **kwargs: judge)
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"id": "p1", **PAIR, "label": "B", "source": "ours"}) + "\n", encoding="utf-8")
    result = run("batch", str(data), "--pairwise", "--way", name, "--no-cache")
    assert result.exit_code == 0, result.output
    (record,) = map(json.loads, (tmp_path / "pairs.results.jsonl").read_text().splitlines())
    assert record["result"]["metadata"]["way"].startswith(name), record
    assert record["result"]["metadata"]["winner"] in ("A", "B", "tie")
    assert result.stderr.count("not shown to the judge") == 1 and "source" in result.stderr
