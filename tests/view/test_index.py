"""The index over a results file: filters, search, sort, pages, and a file that grows or is replaced."""

from __future__ import annotations

import json

import pytest
from support.results_files import answer, answers_run, failure, pair, write_results

from localjudge._datasets.results_file import ResultsFile
from localjudge._view.index import RowQuery, RunIndex
from localjudge._view.sources import open_runs, read_data
from localjudge.errors import UsageError


@pytest.fixture
def run(tmp_path):
    results, data = answers_run(tmp_path)
    labels, values = read_data(data)
    return RunIndex(results, labels=labels, values=values)


def ids(page):
    return [row["id"] for row in page.rows]


def test_every_filter_finds_its_rows(run):
    assert run.count() == 120
    assert ids(run.page(RowQuery(filter="failed"))) == ["q007", "q050", "q099"]
    wrong = run.page(RowQuery(filter="wrong"))
    assert wrong.total == 23  # every fifth verdict, less q050 which failed
    assert all(row["right"] is False and row["verdict"] != row["label"] for row in wrong.rows)
    low = run.page(RowQuery(filter="low_confidence"))
    assert low.total == 16 and all(row["confidence"] < 0.6 for row in low.rows)
    assert ids(run.page(RowQuery(filter="contradicting"))) == ["q012"]
    assert run.page(RowQuery(filter="disagreeing")).total == 0


def test_search_finds_text_in_records_and_in_the_judged_rows_literally(run):
    assert ids(run.page(RowQuery(search="Reasoning 42."))) == ["q042"]
    assert ids(run.page(RowQuery(search="QUESTION 77"))) == ["q077"]  # the data file's inputs, any case
    assert run.page(RowQuery(search="100%")).total == 0  # % and _ are letters, not patterns
    assert run.page(RowQuery(search="q_01")).total == 0
    assert ids(run.page(RowQuery(filter="failed", search="onerror"))) == ["q050", "q099"]  # in their raw output


def test_pages_and_sorts_on_the_server_side(run):
    first, second = run.page(RowQuery(limit=50)), run.page(RowQuery(limit=50, offset=50))
    assert first.total == second.total == 120
    assert ids(first)[0] == "q001" and ids(second)[0] == "q051" and len(second.rows) == 50
    by_confidence = run.page(RowQuery(sort="confidence", descending=True, limit=500)).rows
    confidences = [row["confidence"] for row in by_confidence if row["confidence"] is not None]
    assert confidences == sorted(confidences, reverse=True)
    assert by_confidence[-1]["failed"]  # rows without a confidence come last either way


def test_a_bad_query_is_named(run):
    with pytest.raises(UsageError, match="no filter 'nope'"):
        run.page(RowQuery(filter="nope"))
    with pytest.raises(UsageError, match="no sort"):
        run.page(RowQuery(sort="record; DROP TABLE rows"))


def test_one_row_whole(run):
    row = run.row("q007")
    assert row["record"]["error"]["type"] == "OutputParseError"
    assert row["values"]["inputs"] == "question 7"
    assert row["label"] == "false" and row["right"] is None
    assert run.row("no such id") is None


def test_a_run_in_progress_is_followed_line_by_line(tmp_path):
    path = tmp_path / "growing.results.jsonl"
    out = ResultsFile(path).open()
    out.append(answer("a", True, 0.9))
    index = RunIndex(path)
    assert index.count() == 1
    with path.open("a", encoding="utf-8") as raw:  # a line cut in the middle of its write
        raw.write('{"id": "b", "result": {"score": tr')
    assert not index.refresh() and index.count() == 1
    with path.open("a", encoding="utf-8") as raw:
        raw.write("ue}}\n")
    assert index.refresh() and index.count() == 2
    out.append(failure("c"))
    out.append(answer("c", False, 0.2))  # the retried row supersedes its error, in its place
    index.refresh()
    assert index.page(RowQuery(filter="failed")).total == 0
    assert ids(index.page(RowQuery())) == ["a", "b", "c"]
    version = index.version
    out.close()  # the run's final rewrite replaces the file whole
    assert index.refresh() and index.version > version
    assert ids(index.page(RowQuery())) == ["a", "b", "c"]


def test_a_result_is_not_superseded_by_a_later_error(tmp_path):
    path = write_results(tmp_path / "r.results.jsonl", [answer("a", True, 0.9)])
    with path.open("a", encoding="utf-8") as raw:
        raw.write(json.dumps(failure("a")) + "\n")
    index = RunIndex(path)
    assert index.page(RowQuery(filter="failed")).total == 0  # as read_results keeps it


def test_a_line_only_the_standard_library_reads_is_a_row(tmp_path):
    """NaN and integers past 64 bits, which Python writes and orjson refuses: read as the rest of the project reads them."""
    path = tmp_path / "r.results.jsonl"
    odd = answer("nan", True, 0.9)
    odd["result"]["metadata"]["probabilities"] = {"true": float("nan"), "false": 0.1}
    odd["result"]["metadata"]["requests"] = 2**70
    path.write_text(json.dumps(odd) + "\n" + json.dumps(answer("b", False, 0.8)) + "\n", encoding="utf-8")
    index = RunIndex(path)
    assert index.count() == 2 and index.invalid_lines == 0
    assert index.row("nan")["record"]["result"]["metadata"]["requests"] == 2**70


def test_pairs_whose_orders_disagree(tmp_path):
    path = write_results(
        tmp_path / "pairs.results.jsonl",
        [pair("p1", ("A", "A"), 0.8), pair("p2", ("A", "B"), 0.5), pair("p3", ("B", "B"), 0.3)],
    )
    index = RunIndex(path, labels={"p1": "a", "p2": "B", "p3": "B"})
    assert ids(index.page(RowQuery(filter="disagreeing"))) == ["p2"]
    assert ids(index.page(RowQuery(filter="wrong"))) == ["p2"]  # a tie against B


def test_a_file_that_is_not_a_results_file_is_refused_with_what_to_do(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text('{"inputs": "q", "outputs": "a"}\n', encoding="utf-8")
    with pytest.raises(UsageError, match=r"not a results file.*give the results file"):
        RunIndex(data)
    with pytest.raises(UsageError, match="is not a file"):
        RunIndex(tmp_path / "missing.results.jsonl")


def test_check_judge_records_bring_their_labels_and_the_shipped_rows(tmp_path):
    from localjudge._cli.commands.check import CHECK_SETS, load_set

    rows = load_set(CHECK_SETS["answers"], limit=4)
    records = [{**answer(row["id"], True, 0.9), "label": row["label"]} for row in rows]
    (run,) = open_runs([write_results(tmp_path / "answers.results.jsonl", records)])
    wrong = {row["id"] for row in run.page(RowQuery(filter="wrong")).rows}
    assert wrong == {row["id"] for row in rows if row["label"] is False}
    assert run.row(rows[0]["id"])["values"]["outputs"] == rows[0]["outputs"]


def test_two_runs_of_one_name_are_told_apart(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    first = write_results(tmp_path / "old" / "r.results.jsonl", [answer("a", True, 0.9)])
    second = write_results(tmp_path / "new" / "r.results.jsonl", [answer("a", True, 0.9)])
    assert [run.name for run in open_runs([first, second])] == ["old/r.results.jsonl", "new/r.results.jsonl"]
