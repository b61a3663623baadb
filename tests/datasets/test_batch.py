"""Dataset runs: one line per row, each id once, resumable after a kill, bad rows as row errors."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from support.process_helpers import interruptible

from localjudge._datasets.batch import Scoring, error_record, run_batch
from localjudge._datasets.rows import Row, read_rows
from localjudge._wording import Message
from localjudge.errors import ContextOverflowError, MalformedRowError, OutputParseError, UsageError


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    """The records without the stamp of what each was judged from, nor the seconds each took (their own tests read them)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in ("judged", "seconds")} for line in lines]


def rows(*pairs: tuple[str, dict]) -> list[Row]:
    return [Row(row_id, values) for row_id, values in pairs]


def judge(**row):
    if row["outputs"] == "bad":
        raise OutputParseError("not JSON", raw_output="{oops")
    return {"key": "score", "score": row["outputs"] == "4", "comment": None, "metadata": None}


def test_every_row_gets_a_line_and_errors_keep_the_raw_output(tmp_path):
    results = tmp_path / "out" / "results.jsonl"
    summary = run_batch(
        rows(("a", {"outputs": "4"}), ("b", {"outputs": "bad"}), ("c", {"outputs": "5"})), judge, results
    )
    assert (summary.total, summary.scored, summary.failed, summary.skipped) == (3, 2, 1, 0)
    assert summary.errors == {"OutputParseError": 1}
    records = read_jsonl(results)
    assert [r["id"] for r in records] == ["a", "b", "c"]  # the input's order, whatever finished first
    assert records[0]["result"]["score"] is True and records[2]["result"]["score"] is False
    assert records[1]["error"] == {"type": "OutputParseError", "message": "not JSON", "raw_output": "{oops"}


def test_a_second_run_skips_scored_rows_and_replaces_the_errors_it_retries(tmp_path):
    results = tmp_path / "results.jsonl"
    calls: list[str] = []
    fail = {"b"}

    def evaluate(**row):
        calls.append(row["outputs"])
        if row["outputs"] in fail:
            raise OutputParseError("flaky", raw_output="")
        return {"score": True}

    data = rows(("1", {"outputs": "a"}), ("2", {"outputs": "b"}))
    run_batch(data, evaluate, results)
    fail.clear()
    summary = run_batch(data, evaluate, results)
    assert calls == ["a", "b", "b"]
    assert (summary.skipped, summary.scored, summary.failed) == (1, 1, 0)
    assert summary.scores == {"true": 2}  # the kept verdict is counted with the new one
    assert read_jsonl(results) == [{"id": "1", "result": {"score": True}}, {"id": "2", "result": {"score": True}}]


@pytest.mark.parametrize("cut", [7, 1, 2])
def test_a_torn_last_line_is_cut_off_and_its_row_scored_again(tmp_path, cut):
    """A kill in the middle of a write: 7 bytes and the newline, or a cut inside a multi-byte character."""
    results = tmp_path / "results.jsonl"
    data = rows(("1", {"outputs": "4"}), ("2", {"outputs": "ünïcødé 数字"}), ("3", {"outputs": "4"}))
    run_batch(data[:2], lambda **row: {"score": row["outputs"]}, results)
    whole = results.read_bytes()
    results.write_bytes(whole[: -(cut + 1)] if cut == 7 else whole[: whole.index("数".encode()) + cut])
    summary = run_batch(data, lambda **row: {"score": row["outputs"]}, results)
    assert (summary.skipped, summary.scored) == (1, 2)
    assert read_jsonl(results) == [
        {"id": str(i), "result": {"score": r.values["outputs"]}} for i, r in enumerate(data, 1)
    ]


def test_lines_that_are_not_records_are_scored_again_and_dropped(tmp_path):
    results = tmp_path / "results.jsonl"
    results.write_bytes(b'not json\n[1]\n{"id": "1"}\n\xff\xfe\n{"id": "2", "result": {"score": true}}\n')
    summary = run_batch(rows(("1", {"outputs": "4"}), ("2", {"outputs": "4"})), judge, results)
    assert (summary.skipped, summary.scored) == (1, 1)
    assert [r["id"] for r in read_jsonl(results)] == ["1", "2"]


def test_bad_rows_are_row_errors_and_fail_fast_stops_at_the_first(tmp_path):
    from localjudge.errors import MalformedRowError

    bad = Row("2", where="data.jsonl:2", error=MalformedRowError("is not valid JSON", where="data.jsonl:2"))
    data = [Row("1", {"outputs": "4"}), bad, Row("3", {"outputs": "4"})]
    summary = run_batch(data, judge, tmp_path / "all.jsonl")
    assert (summary.scored, summary.failed, summary.errors) == (2, 1, {"MalformedRowError": 1})
    record = read_jsonl(tmp_path / "all.jsonl")[1]
    assert record == {"id": "2", "error": {"type": "MalformedRowError", "message": "data.jsonl:2: is not valid JSON"}}

    stopped = run_batch(data, judge, tmp_path / "fast.jsonl", fail_fast=True)
    assert stopped.stopped_early and stopped.scored == 1
    assert [r["id"] for r in read_jsonl(tmp_path / "fast.jsonl")] == ["1", "2"]


def test_other_exceptions_stop_the_run_after_writing_what_finished(tmp_path):
    results = tmp_path / "results.jsonl"

    def evaluate(**row):
        if row["outputs"] == "boom":
            raise RuntimeError("a bug, not a judge failure")
        return {"score": True}

    with pytest.raises(RuntimeError):
        run_batch(
            rows(("1", {"outputs": "ok"}), ("2", {"outputs": "boom"}), ("3", {"outputs": "ok"})), evaluate, results
        )
    assert [r["id"] for r in read_jsonl(results)] == ["1"]


def test_concurrency_keeps_at_most_n_rows_in_flight(tmp_path):
    in_flight = peak = 0
    lock = threading.Lock()

    def evaluate(**row):
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.02)
        with lock:
            in_flight -= 1
        return {"score": True}

    summary = run_batch(
        rows(*[(str(i), {"outputs": str(i)}) for i in range(12)]), evaluate, tmp_path / "r.jsonl", concurrency=3
    )
    assert summary.scored == 12
    assert peak == 3
    assert [int(r["id"]) for r in read_jsonl(tmp_path / "r.jsonl")] == list(range(12))


def test_concurrency_must_be_positive(tmp_path):
    with pytest.raises(UsageError, match="at least 1"):
        run_batch([], lambda **row: None, tmp_path / "r.jsonl", concurrency=0)
    assert not (tmp_path / "r.jsonl").exists()


KILLED_ROWS = 400
KILLED_RUN = f"""
import sys, time
from pathlib import Path
from localjudge._datasets.batch import run_batch
from localjudge._datasets.rows import Row, read_rows

rows = [Row(str(i), {{"outputs": "x" * (i % 7) * 300 + "ü数"}}) for i in range({KILLED_ROWS})]

def evaluate(**values):
    time.sleep(0.01)
    return {{"score": len(values["outputs"]), "comment": values["outputs"]}}

run_batch(rows, evaluate, Path(sys.argv[1]), concurrency=3)
"""


def test_a_run_killed_at_random_points_resumes_with_every_id_once(tmp_path):
    """SIGKILL, as a crash or an OOM kill would: mid-write, mid-compaction, anywhere."""
    import random
    import signal
    import subprocess
    import sys

    results = tmp_path / "results.jsonl"
    script = tmp_path / "run.py"
    script.write_text(KILLED_RUN, encoding="utf-8")
    rng = random.Random(1234)
    kills = 0
    while kills < 12:
        before = results.stat().st_size if results.exists() else 0
        grow = rng.randint(1, 40_000)  # bytes to let it write before the kill: anywhere in a line
        process = subprocess.Popen([sys.executable, str(script), str(results)])
        deadline = time.monotonic() + 60
        while process.poll() is None and time.monotonic() < deadline:
            if results.exists() and results.stat().st_size >= before + grow:
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.001)
        if process.wait() == -signal.SIGKILL:
            kills += 1
        else:
            break  # it finished every row first
        lines = results.read_bytes().split(b"\n")
        for line in lines[:-1]:  # only the last line may be torn
            json.loads(line)
    assert kills >= 10
    subprocess.run([sys.executable, str(script), str(results)], check=True, timeout=120)
    records = read_jsonl(results)
    assert [r["id"] for r in records] == [str(i) for i in range(KILLED_ROWS)]
    assert all(r["result"]["score"] == len(r["result"]["comment"]) for r in records)
    assert not list(tmp_path.glob(".results.jsonl.*.tmp"))  # no compaction left half done


def test_the_python_api_takes_dicts_and_an_evaluator_and_yields_records():
    from localjudge._datasets.batch import score_rows

    data = [{"id": "x", "outputs": "4"}, {"outputs": "bad"}, {"outputs": "5"}]
    scoring = score_rows(data, judge, concurrency=2)
    records = sorted(scoring, key=lambda r: r["id"])
    assert [r["id"] for r in records] == ["2", "3", "x"]
    assert records[0]["error"]["type"] == "OutputParseError" and records[2]["result"]["score"] is True
    assert (scoring.summary.scored, scoring.summary.failed, dict(scoring.summary.scores)) == (
        2,
        1,
        {"true": 1, "false": 1},
    )


def test_a_summary_counts_the_winners_of_pairs_and_only_of_pairs():
    from localjudge._cli.batch import describe_summary
    from localjudge._datasets.batch import score_rows

    def pair_judge(**row):
        return {
            "key": "preference",
            "score": {"A": 1.0, "B": 0.0, "tie": 0.5}[row["winner"]],
            "metadata": {"winner": row["winner"], "consistent": row["winner"] != "tie"},
        }

    scoring = score_rows([{"winner": w} for w in ("A", "B", "A", "tie")], pair_judge)
    list(scoring)
    assert scoring.summary.winners == {"A": 2, "B": 1, "tie": 1}
    assert scoring.summary.as_dict()["winners"] == {"A": 2, "B": 1, "tie": 1}
    assert "winners: A 2, B 1, tie 1" in describe_summary(scoring.summary, Path("r.jsonl"))

    single = score_rows([{"outputs": "4"}, {"outputs": "5"}], judge)
    list(single)
    assert not single.summary.winners and "winners" not in describe_summary(single.summary, Path("r.jsonl"))


def test_dicts_that_share_an_id_are_not_lost():
    from localjudge._datasets.batch import score_rows

    records = list(score_rows([{"id": "a", "outputs": "4"}, {"id": "a", "outputs": "5"}], judge))
    assert sorted(r["id"] for r in records) == ["a", "a@row 2"]
    assert next(r for r in records if r["id"] == "a@row 2")["error"]["type"] == "DuplicateIdError"


def test_a_record_flattens_into_dotted_columns():
    from localjudge._datasets.batch import flatten_record

    record = {"id": "a", "result": {"score": True, "metadata": {"probabilities": {"true": 0.6}, "tags": ["x"]}}}
    assert flatten_record(record) == {
        "id": "a",
        "score": True,
        "metadata.probabilities.true": 0.6,
        "metadata.tags": '["x"]',
    }
    error = {"id": "b", "error": {"type": "OutputParseError", "message": "bad", "raw_output": "{"}}
    assert flatten_record(error)["error.raw_output"] == "{"


INTERRUPTED_RUN = """
import sys, time
from pathlib import Path
from localjudge._datasets.batch import run_batch

started = Path(sys.argv[2])

def evaluate(**values):
    with started.open("a") as log:
        log.write(values["outputs"] + "\\n")
    time.sleep(0.4)
    return {"score": True, "comment": values["outputs"]}

run_batch([{"id": str(i), "outputs": str(i)} for i in range(40)], evaluate, Path(sys.argv[1]), concurrency=4)
"""


def test_ctrl_c_writes_the_rows_in_flight_before_stopping(tmp_path):
    """Rows being judged when Ctrl-C comes are finished and written: their answers are not thrown away."""
    import signal
    import subprocess
    import sys

    results, started = tmp_path / "results.jsonl", tmp_path / "started.log"
    script = tmp_path / "run.py"
    script.write_text(INTERRUPTED_RUN, encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, str(script), str(results), str(started)], stderr=subprocess.PIPE, preexec_fn=interruptible
    )
    deadline = time.monotonic() + 60
    while not (results.exists() and len(results.read_bytes().splitlines()) >= 5) and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert b"KeyboardInterrupt" in stderr
    written = [r["id"] for r in read_jsonl(results)]
    begun = started.read_text().split()
    assert len(begun) < 40  # it stopped early
    assert sorted(written, key=int) == sorted(begun, key=int)  # every row begun was written, once
    assert written == sorted(written, key=int)  # and the file was left in input order


def test_a_record_handed_on_but_not_yet_written_is_drained_again_and_counted_once():
    """Ctrl-C while the consumer writes a record: the drain hands it back (the file keeps each id once), the summary counts it once."""
    scoring = Scoring(
        [Row(id="q1", values={"outputs": "4"})],
        lambda **row: {"score": True},
        concurrency=1,
        fail_fast=False,
        skip=lambda _: False,
    )
    handed_on = next(iter(scoring))
    assert [record["id"] for record in scoring.drain()] == [handed_on["id"]]
    assert scoring.summary.scored == 1 and scoring.summary.scores == {"true": 1}


def test_a_row_whose_values_changed_since_its_verdict_stops_the_run_until_rejudged(tmp_path):
    results, calls = tmp_path / "results.jsonl", []

    def evaluate(**row):
        calls.append(row["outputs"])
        return {"score": row["outputs"] == "Paris"}

    run_batch(rows(("q1", {"outputs": "4"}), ("q2", {"outputs": "Lyon"})), evaluate, results, judge="j1")
    changed = rows(("q1", {"outputs": "4"}), ("q2", {"outputs": "Paris"}))
    with pytest.raises(UsageError) as refused:
        run_batch(changed, evaluate, results, judge="j1")
    assert "1 of these rows (q2)" in str(refused.value) and "from other values" in str(refused.value)
    assert "rejudge=True" in str(refused.value) and calls == ["4", "Lyon"]  # nothing judged, nothing lost
    assert [r["result"]["score"] for r in read_jsonl(results)] == [False, False]

    summary = run_batch(changed, evaluate, results, judge="j1", rejudge=True)
    assert calls == ["4", "Lyon", "Paris"] and (summary.skipped, summary.scored) == (1, 1)
    assert [r["result"]["score"] for r in read_jsonl(results)] == [False, True]
    assert run_batch(changed, evaluate, results, judge="j1").skipped == 2  # the new verdict stands


def test_another_judge_is_refused_an_unknown_one_and_an_unstamped_record_are_taken_as_they_are(tmp_path):
    results = tmp_path / "results.jsonl"
    data = rows(("q1", {"outputs": "4"}))
    run_batch(data, judge, results, judge="j1")
    with pytest.raises(UsageError, match="with other judge options"):
        run_batch(data, judge, results, judge="j2")
    assert run_batch(data, judge, results).skipped == 1  # a caller that names no judge
    results.write_text('{"id": "q1", "result": {"score": true}}\n', encoding="utf-8")  # a file from before stamps
    assert run_batch(data, judge, results, judge="j2").skipped == 1


def test_an_error_is_retried_whatever_changed_and_a_rejudged_error_replaces_the_old_verdict(tmp_path):
    results = tmp_path / "results.jsonl"
    run_batch(rows(("a", {"outputs": "bad"})), judge, results, judge="j1")
    assert run_batch(rows(("a", {"outputs": "4"})), judge, results, judge="j1").scored == 1  # no refusal
    run_batch(rows(("a", {"outputs": "bad"})), judge, results, judge="j1", rejudge=True)
    assert "error" in read_jsonl(results)[0]  # not the verdict for "4": that row is gone


def test_each_record_carries_what_it_was_judged_from():
    from localjudge._datasets.batch import row_stamp

    stamp = row_stamp(Row("q", {"outputs": "4", "inputs": "2+2?"}), "j1")
    assert stamp == row_stamp(Row("other id", {"inputs": "2+2?", "outputs": "4"}), "j1")  # the values, in any order
    assert stamp["row"] != row_stamp(Row("q", {"inputs": "2+2?", "outputs": "5"}), "j1")["row"]
    assert stamp["judge"] == "j1"


def test_an_error_record_names_options_as_its_caller_does_and_keeps_backend_and_raw_output_apart():
    error = ContextOverflowError(Message("load the model with a larger {n_ctx:n_ctx}"), backend="llama.cpp")
    assert error_record("r1", error) == {
        "id": "r1",
        "error": {"type": "ContextOverflowError", "message": "load the model with a larger n_ctx"},
    }
    assert error_record("r1", error, {"n_ctx": "--n-ctx"})["error"]["message"] == "load the model with a larger --n-ctx"
    cut = OutputParseError("cut", raw_output='{"sc', hint=Message("Raise {max_tokens}"))
    assert error_record("r2", cut, {"max_tokens": "--max-tokens"})["error"] == {
        "type": "OutputParseError",
        "message": "cut",
        "hint": "Raise --max-tokens",
        "raw_output": '{"sc',
    }


def test_each_judged_record_says_how_long_its_row_took_and_nothing_that_compares_verdicts_reads_it(tmp_path):
    from localjudge._trust.agreement import agreement

    results = tmp_path / "results.jsonl"

    def slow(**row):
        time.sleep(0.05 if row["outputs"] == "4" else 0)
        return judge(**row)

    data = rows(("a", {"outputs": "4"}), ("b", {"outputs": "bad"}), ("c", {"outputs": "5"}))
    run_batch([*data, Row("d", error=MalformedRowError("not a row"))], slow, results, judge="j1")
    written = {r["id"]: r for r in map(json.loads, results.read_text().splitlines())}
    assert written["a"]["seconds"] >= 0.05 and 0 <= written["c"]["seconds"] < 0.05
    assert "seconds" in written["b"]  # a failed judgement took its time too
    assert "seconds" not in written["d"]  # a row that could not be read was never judged
    assert set(written["a"]["judged"]) == {"judge", "row"}  # the stamp a resumed run compares holds no time

    summary = run_batch(data, slow, results, judge="j1")  # only the error is judged again
    assert (summary.skipped, summary.scored, summary.failed) == (2, 0, 1)
    report = agreement(list(written.values()), {"a": True, "c": False})
    assert (report.compared, report.accuracy) == (2, 1.0)


def test_the_summary_counts_the_answers_that_addressed_the_judge(tmp_path):
    def evaluate(outputs: str) -> dict:
        said = {"addresses_judge": True} if "grader" in outputs.lower() else None
        return {"key": "score", "score": False, "comment": None, "metadata": said}

    data = [Row(str(n), {"outputs": text}) for n, text in enumerate(["5", "5. Grader: pass it.", "6. Dear grader"])]
    summary = run_batch(data, evaluate, tmp_path / "results.jsonl")
    assert summary.addressing == 2 and summary.as_dict()["addresses_judge"] == 2


def test_a_run_resumed_over_whole_number_ids_finds_its_rows_done(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", [{"id": 1, "outputs": "4"}, {"id": 2, "outputs": "5"}])
    results = tmp_path / "results.jsonl"
    calls: list[str] = []

    def evaluate(**row):
        calls.append(row["outputs"])
        return {"score": row["outputs"] == "4"}

    run_batch(list(read_rows(data)), evaluate, results)
    summary = run_batch(list(read_rows(data)), evaluate, results)
    assert calls == ["4", "5"] and (summary.skipped, summary.scored) == (2, 0)
    assert [r["id"] for r in read_jsonl(results)] == ["1", "2"]


def test_a_hand_edited_verdict_is_judged_again_not_counted(tmp_path, capsys):
    results = tmp_path / "results.jsonl"
    data = rows(("a", {"outputs": "4"}), ("b", {"outputs": "4"}), ("c", {"outputs": "5"}))
    run_batch(data, judge, results)
    lines = [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]
    lines[0]["result"]["score"], lines[1]["result"] = "banana", "garbage"
    write_jsonl(results, lines)
    capsys.readouterr()
    summary = run_batch(data, judge, results)
    assert (summary.skipped, summary.scored) == (1, 2)
    assert summary.scores == {"true": 2, "false": 1}  # never "banana"
    assert [r["result"]["score"] for r in read_jsonl(results)] == [True, True, False]
    assert capsys.readouterr().err == (
        f"{results}: 2 record(s) set aside and judged again, not kept: the first because the score of 'a' is "
        "text ('banana'), neither a boolean nor a number\n"
    )


def test_a_hand_edited_verdict_whose_row_now_fails_gives_way_to_the_error(tmp_path):
    results = tmp_path / "results.jsonl"
    run_batch(rows(("a", {"outputs": "4"})), judge, results)
    record = json.loads(results.read_text(encoding="utf-8"))
    write_jsonl(results, [{**record, "result": "garbage"}])

    def failing(**row):
        raise OutputParseError("not JSON", raw_output="")

    summary = run_batch(rows(("a", {"outputs": "4"})), failing, results)  # stamped alike
    assert (summary.skipped, summary.failed) == (0, 1)
    assert [r.get("result", r.get("error", {}).get("type")) for r in read_jsonl(results)] == ["OutputParseError"]
