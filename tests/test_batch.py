"""Dataset runs: one line per row, resumable, errors kept with the raw output."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from localjudge.batch import read_rows, run_batch, scored_ids
from localjudge.errors import OutputParseError, UsageError


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_rows_take_their_id_or_line_number(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"outputs": "a"}\n\n{"id": "x", "outputs": "b"}\n', encoding="utf-8")
    assert read_rows(data) == [("1", {"outputs": "a"}), ("x", {"outputs": "b"})]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"outputs": "a"}\nnot json\n', "data.jsonl:2 is not valid JSON"),
        ('["a"]\n', "must be a JSON object"),
        ('{"id": 1, "outputs": "a"}\n{"id": 1, "outputs": "b"}\n', "repeats the id '1'"),
    ],
)
def test_bad_data_files_name_the_line(tmp_path, text, message):
    data = tmp_path / "data.jsonl"
    data.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=message):
        read_rows(data)


def test_every_row_gets_a_line_and_errors_keep_the_raw_output(tmp_path):
    results = tmp_path / "out" / "results.jsonl"

    def evaluate(row):
        if row["outputs"] == "bad":
            raise OutputParseError("not JSON", raw_output="{oops")
        return {"key": "score", "score": row["outputs"] == "4", "comment": None, "metadata": None}

    rows = [("a", {"outputs": "4"}), ("b", {"outputs": "bad"}), ("c", {"outputs": "5"})]
    summary = run_batch(rows, evaluate, results)
    assert (summary.total, summary.scored, summary.failed, summary.skipped) == (3, 2, 1, 0)
    records = {r["id"]: r for r in read_jsonl(results)}
    assert records["a"]["result"]["score"] is True and records["c"]["result"]["score"] is False
    assert records["b"]["error"] == {"type": "OutputParseError", "message": "not JSON", "raw_output": "{oops"}


def test_a_second_run_skips_scored_rows_and_retries_failed_ones(tmp_path):
    results = tmp_path / "results.jsonl"
    calls: list[str] = []
    fail = {"b"}

    def evaluate(row):
        calls.append(row["outputs"])
        if row["outputs"] in fail:
            raise OutputParseError("flaky", raw_output="")
        return {"score": True}

    rows = [("1", {"outputs": "a"}), ("2", {"outputs": "b"})]
    run_batch(rows, evaluate, results)
    fail.clear()
    summary = run_batch(rows, evaluate, results)
    assert calls == ["a", "b", "b"]
    assert (summary.skipped, summary.scored, summary.failed) == (1, 1, 0)
    assert scored_ids(results) == {"1", "2"}


def test_a_line_cut_by_an_interruption_is_scored_again(tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_text('{"id": "1", "result": {"score": true}}\n{"id": "2", "res', encoding="utf-8")
    assert scored_ids(results) == {"1"}


def test_other_exceptions_stop_the_run_after_writing_what_finished(tmp_path):
    results = tmp_path / "results.jsonl"

    def evaluate(row):
        if row["outputs"] == "boom":
            raise RuntimeError("a bug, not a judge failure")
        return {"score": True}

    with pytest.raises(RuntimeError):
        run_batch([("1", {"outputs": "ok"}), ("2", {"outputs": "boom"}), ("3", {"outputs": "ok"})], evaluate, results)
    assert [r["id"] for r in read_jsonl(results)] == ["1"]


def test_concurrency_keeps_at_most_n_rows_in_flight(tmp_path):
    in_flight = peak = 0
    lock = threading.Lock()

    def evaluate(row):
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.02)
        with lock:
            in_flight -= 1
        return {"score": True}

    rows = [(str(i), {"outputs": str(i)}) for i in range(12)]
    summary = run_batch(rows, evaluate, tmp_path / "results.jsonl", concurrency=3)
    assert summary.scored == 12
    assert peak == 3
    assert sorted(int(r["id"]) for r in read_jsonl(tmp_path / "results.jsonl")) == list(range(12))


def test_concurrency_must_be_positive(tmp_path):
    with pytest.raises(UsageError, match="at least 1"):
        run_batch([], lambda row: None, tmp_path / "r.jsonl", concurrency=0)
