"""`localjudge batch` on a real model (the tests' tiny one): side-by-side rows, a cached re-run without model calls.

Asked plainly: the tiny base model writes no own answer short enough for the default way.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.process_helpers import interruptible

from localjudge import _cli as cli
from localjudge._clients.local import LocalClient

pytestmark = pytest.mark.model

PLAIN = ["--way", "plain", "--reasoning"]
ROWS = [
    {"id": "a", "inputs": "What is 2+2?", "outputs": "4"},
    {"id": "b", "inputs": "Capital of France?", "outputs": "Paris"},
    {"id": "c", "inputs": "Largest planet?", "outputs": "Mars"},
]


def verdicts(path):
    """A results file's records without the seconds each row took, which differ from run to run."""
    return [{k: v for k, v in json.loads(line).items() if k != "seconds"} for line in path.read_text().splitlines()]


def test_a_rerun_into_a_new_file_is_answered_from_the_cache(tmp_path, monkeypatch):
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    calls = []
    original = LocalClient._complete
    monkeypatch.setattr(LocalClient, "_complete", lambda self, request: (calls.append(1), original(self, request))[1])
    cache = ["--cache-file", str(tmp_path / "cache.sqlite3")]

    summary = tmp_path / "summary.json"
    first = CliRunner().invoke(
        cli.main,
        ["batch", str(data), "-o", str(tmp_path / "one.jsonl"), "-j", "3", *PLAIN, *cache, "--summary", str(summary)],
    )
    assert first.exit_code == 0, first.output
    assert len(calls) == 3
    counted = json.loads(summary.read_text())
    assert counted["model_calls"] == 3 and counted["tokens"]["prompt"] > 3 * 20 and counted["tokens"]["completion"] > 3
    again = CliRunner().invoke(
        cli.main, ["batch", str(data), "-o", str(tmp_path / "two.jsonl"), *PLAIN, *cache, "--summary", str(summary)]
    )
    assert again.exit_code == 0, again.output
    assert len(calls) == 3  # no model call
    assert "3 scored (3 judge calls answered from the result cache)" in again.stderr
    recounted = json.loads(summary.read_text())
    assert recounted["model_calls"] == 0 and recounted["tokens"] == {"prompt": 0, "completion": 0}
    assert verdicts(tmp_path / "one.jsonl") == verdicts(tmp_path / "two.jsonl")

    fresh = CliRunner().invoke(
        cli.main, ["batch", str(data), "-o", str(tmp_path / "three.jsonl"), *PLAIN, "--no-cache"]
    )
    assert fresh.exit_code == 0 and len(calls) == 6
    assert verdicts(tmp_path / "three.jsonl") == verdicts(tmp_path / "one.jsonl")  # -j 3 gave what -j 1 gives


def test_ctrl_c_stops_the_command_with_what_it_wrote_and_exit_130(tmp_path):
    import os
    import re
    import signal
    import subprocess
    import sys
    import time

    data = tmp_path / "data.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "inputs": f"What is {i}+{i}?", "outputs": str(2 * i)}) + "\n" for i in range(40)
        ),
        encoding="utf-8",
    )
    results = tmp_path / "results.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "localjudge", "batch", str(data), "-o", str(results), "-j", "4", *PLAIN, "--no-cache"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "100"},
        preexec_fn=interruptible,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (results.exists() and results.read_text().count("\n") >= 2):
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr[-2000:]
    written = int(re.search(r"interrupted: (\d+) rows written to", stderr).group(1))
    ids = [json.loads(line)["id"] for line in results.read_text().splitlines()]
    assert 2 <= written < 40 and len(ids) == written
    assert ids == sorted(ids, key=lambda i: int(i[1:])) and len(set(ids)) == len(ids)  # compacted, in input order


def test_a_run_describes_its_judge_beside_its_results_and_a_resumed_run_keeps_the_entry(tmp_path):
    from localjudge._datasets.judge_file import judge_file_path, read_judge_file
    from localjudge._specs.cards import find_card

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS[:2]), encoding="utf-8")
    results = tmp_path / "data.results.jsonl"

    def run(*extra: str) -> dict:
        outcome = CliRunner().invoke(cli.main, ["batch", str(data), "-m", "tiny", "--way", "plain", *extra])
        assert outcome.exit_code == 0, outcome.output
        return read_judge_file(judge_file_path(results))

    judges = run("--no-cache")
    ((fingerprint, judge),) = judges.items()
    assert {json.loads(line)["judged"]["judge"] for line in results.read_text().splitlines()} == {fingerprint}
    card = find_card("tiny")
    (model,) = judge["models"]
    assert (model["spec"], model["file"], model["sha256"], model["sha256_from"]) == (
        "tiny",
        card.file,
        card.sha256,
        "model card",
    )
    (asked,) = judge["asked"]
    assert asked["rows"] == "with inputs" and asked["way"] == {"label": "plain", "described": "the prompt as written"}
    assert "<question>\n{inputs}\n</question>" in asked["prompt"]  # the template as sent, not filled
    assert asked["schema"]["properties"]["score"]["type"] == "boolean"
    assert judge["options"]["reasoning"] is False and judge["localjudge"]
    (first,) = judge["runs"]
    assert first["rows"] == 2 and first["rows_per_second"] > 0 and first["finished"] >= first["started"]
    seconds = [json.loads(line)["seconds"] for line in results.read_text().splitlines()]
    assert all(0 < s < first["seconds"] + 0.01 for s in seconds)

    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")  # one row more
    resumed = run("--no-cache")
    assert list(resumed) == [fingerprint] and [r["rows"] for r in resumed[fingerprint]["runs"]] == [2, 1]
    other = run("--reasoning", "--rejudge", "--no-cache")
    (kept, added) = other  # another judge: an entry of its own
    assert kept == fingerprint and other[added]["options"]["reasoning"] is True


def test_kept_exchanges_show_each_request_and_the_raw_answer_of_a_verdict_and_of_a_failure(tmp_path):
    """`--keep-exchanges`: a verdict's record holds the messages sent and the model's text; a failure's too."""
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in ROWS[:2]), encoding="utf-8")
    plain = CliRunner().invoke(
        cli.main, ["batch", str(data), "-o", str(tmp_path / "plain.jsonl"), "--way", "plain", "--keep-exchanges"]
    )
    assert plain.exit_code == 0, plain.output
    for record, row in zip(verdicts(tmp_path / "plain.jsonl"), ROWS, strict=False):
        (exchange,) = record["result"]["metadata"]["exchanges"]
        assert (
            row["inputs"] in exchange["messages"][-1]["content"]
            and row["outputs"] in exchange["messages"][-1]["content"]
        )
        assert (
            json.loads(exchange["output"])["score"] == record["result"]["score"]
        )  # the text the verdict was read from
    own = CliRunner().invoke(  # the default way: the tiny model's own answer runs to its bound, so each row fails
        cli.main, ["batch", str(data), "-o", str(tmp_path / "own.jsonl"), "--keep-exchanges", "--no-cache"]
    )
    assert own.exit_code == 1
    for record, row in zip(verdicts(tmp_path / "own.jsonl"), ROWS, strict=False):
        (exchange,) = record["error"]["exchanges"]  # the request that went before the failure
        assert (
            exchange["messages"][-1]["content"] == row["inputs"] and exchange["output"] == record["error"]["raw_output"]
        )
    unkept = CliRunner().invoke(cli.main, ["batch", str(data), "-o", str(tmp_path / "unkept.jsonl"), "--way", "plain"])
    assert unkept.exit_code == 0 and all(
        "exchanges" not in r["result"]["metadata"] for r in verdicts(tmp_path / "unkept.jsonl")
    )
