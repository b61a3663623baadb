"""The judge described beside its results: written whole, one entry per judge, a run resumed updates its own."""

from __future__ import annotations

import json

import pytest

from localjudge._datasets.batch import run_batch
from localjudge._datasets.judge_file import (
    FORMAT,
    check_judge_file,
    judge_file_path,
    read_judge_file,
    record_judge,
)
from localjudge._datasets.rows import Row
from localjudge.errors import ResultsFileError

DESCRIBED = {"localjudge": "0", "models": [{"spec": "tiny"}], "asked": [{"prompt": "Is {outputs} right?"}]}


def rows(*outputs: str) -> list[Row]:
    return [Row(f"r{number}", {"outputs": output}) for number, output in enumerate(outputs, 1)]


def judge(**row):
    return {"key": "score", "score": row["outputs"] == "4", "comment": None, "metadata": None}


def test_the_judge_file_sits_beside_the_results_under_their_name():
    assert judge_file_path("runs/data.results.jsonl").as_posix() == "runs/data.results.judge.json"
    assert judge_file_path("out.JSONL").name == "out.judge.json"
    assert judge_file_path("scores.txt").name == "scores.txt.judge.json"


def test_a_run_describes_its_judge_before_its_first_row_and_its_speed_after_its_last(tmp_path):
    results = tmp_path / "data.results.jsonl"
    seen = []

    def watching(**row):
        seen.append(read_judge_file(judge_file_path(results)))  # what a kill at this moment would leave
        return judge(**row)

    run_batch(rows("4", "5"), watching, results, judge="j1", described=DESCRIBED)
    during = seen[0]["j1"]
    assert during["models"] == [{"spec": "tiny"}] and during["runs"][0]["finished"] is None
    document = json.loads(judge_file_path(results).read_text())
    assert document["format"] == FORMAT and document["results"] == "data.results.jsonl"
    (run,) = document["judges"]["j1"]["runs"]
    assert run["rows"] == 2 and run["finished"] >= run["started"] and run["rows_per_second"] > 0
    assert document["judges"]["j1"]["asked"] == DESCRIBED["asked"]
    assert [json.loads(line)["id"] for line in results.read_text().splitlines()] == ["r1", "r2"]  # rows only


def test_a_run_whose_start_could_not_be_written_leaves_the_last_runs_entry_as_it_was(tmp_path, monkeypatch):
    import localjudge._datasets.judge_file as judge_file

    results = tmp_path / "data.results.jsonl"
    run_batch(rows("4"), judge, results, judge="j1", described=DESCRIBED)
    (before,) = read_judge_file(judge_file_path(results))["j1"]["runs"]

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(judge_file, "record_judge", full_disk)
    with pytest.raises(OSError):
        run_batch(rows("4", "5"), judge, results, judge="j1", described=DESCRIBED)
    monkeypatch.undo()
    assert read_judge_file(judge_file_path(results))["j1"]["runs"] == [before]  # not overwritten by a finish


def test_a_resumed_run_updates_its_judges_entry_and_another_judge_adds_one(tmp_path):
    results = tmp_path / "results.jsonl"
    run_batch(rows("4"), judge, results, judge="j1", described=DESCRIBED)
    run_batch(rows("4", "5"), judge, results, judge="j1", described={**DESCRIBED, "localjudge": "1"})
    judges = read_judge_file(judge_file_path(results))
    assert list(judges) == ["j1"] and judges["j1"]["localjudge"] == "1"
    assert [run["rows"] for run in judges["j1"]["runs"]] == [1, 1]  # the second judged only the new row
    run_batch(rows("4", "5"), judge, results, judge="j2", rejudge=True, described=DESCRIBED)
    judges = read_judge_file(judge_file_path(results))
    assert list(judges) == ["j1", "j2"] and [run["rows"] for run in judges["j2"]["runs"]] == [2]


def test_a_run_without_a_description_writes_none(tmp_path):
    results = tmp_path / "results.jsonl"
    run_batch(rows("4"), judge, results, judge="j1")
    assert read_judge_file(judge_file_path(results)) is None


def test_a_symlink_or_a_folder_where_the_judge_is_described_stops_the_run_before_it_judges(tmp_path):
    results = tmp_path / "results.jsonl"
    target = tmp_path / "precious.txt"
    target.write_text("keep me", encoding="utf-8")
    judge_file_path(results).symlink_to(target)
    calls = []

    def counting(**row):
        calls.append(row)
        return judge(**row)

    with pytest.raises(ResultsFileError, match="symbolic link"):
        run_batch(rows("4"), counting, results, judge="j1", described=DESCRIBED)
    assert calls == [] and target.read_text() == "keep me"
    judge_file_path(results).unlink()
    judge_file_path(results).mkdir()
    with pytest.raises(ResultsFileError, match="not a regular file"):
        check_judge_file(results)


def test_a_file_there_that_is_not_ours_is_reported_by_a_reader_and_replaced_by_a_run(tmp_path):
    results = tmp_path / "results.jsonl"
    path = judge_file_path(results)
    for junk in ("{not json", "[1, 2]", '{"judges": {"j1": 3}}'):
        path.write_text(junk, encoding="utf-8")
        with pytest.raises(ValueError):
            read_judge_file(path)
    (tmp_path / f".{path.name}.x1.tmp").write_text("a write a kill cut short", encoding="utf-8")
    record_judge(results, "j1", DESCRIBED, {"started": "t0", "rows": 0})
    assert list(read_judge_file(path)) == ["j1"]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    record_judge(results, "j2", DESCRIBED, {"started": "t1", "rows": 1}, alone=True)  # a file written whole
    assert list(read_judge_file(path)) == ["j2"]


def test_a_reader_refuses_a_symlink_and_a_file_too_big_to_be_ours(tmp_path, monkeypatch):
    from localjudge._datasets import judge_file

    path = tmp_path / "r.judge.json"
    assert read_judge_file(path) is None
    record_judge(tmp_path / "r.jsonl", "j1", DESCRIBED, {"started": "t0", "rows": 0})
    monkeypatch.setattr(judge_file, "MAX_BYTES", 10)
    with pytest.raises(ValueError, match="over 10 bytes"):
        read_judge_file(path)
    link = tmp_path / "l.judge.json"
    link.symlink_to(path)
    with pytest.raises(ValueError, match="symbolic link"):
        read_judge_file(link)
