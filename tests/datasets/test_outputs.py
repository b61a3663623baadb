"""Telling the files a batch run writes from files it did not write, by their content alone."""

from __future__ import annotations

import json

from localjudge._datasets.judge_file import is_judge_file, record_judge
from localjudge._datasets.outputs import is_results_csv, is_summary_file
from localjudge._datasets.results_file import is_results_file

RECORD = '{"id": "a", "result": {"key": "score", "score": true, "comment": null}}\n'


def test_a_results_file_is_told_by_its_records_not_its_name(tmp_path):
    results, data = tmp_path / "r.jsonl", tmp_path / "data.results.jsonl"
    results.write_text(RECORD, encoding="utf-8")
    data.write_text('{"id": "a", "outputs": "4"}\n{"id": "b", "outputs": "5"}\n', encoding="utf-8")
    assert is_results_file(results) and not is_results_file(data)
    torn = tmp_path / "torn.jsonl"
    torn.write_text(RECORD[:20], encoding="utf-8")  # a run killed during its first write
    assert is_results_file(torn)
    (tmp_path / "one.jsonl").write_text('{"id": "a", "outputs": "4"}\n', encoding="utf-8")
    assert not is_results_file(tmp_path / "one.jsonl")


def test_a_results_csv_has_only_the_columns_a_record_gives(tmp_path):
    results = tmp_path / "r.jsonl"
    results.write_text('{"id": "a", "result": {"verdict": "yes", "why": "it is"}}\n', encoding="utf-8")
    ours, data = tmp_path / "r.csv", tmp_path / "data.csv"
    ours.write_text("id,verdict,why\na,yes,it is\n", encoding="utf-8")
    data.write_text("id,inputs,outputs\nc1,q,4\n", encoding="utf-8")
    assert is_results_csv(ours, results) and not is_results_csv(data, results)
    (tmp_path / "plain.csv").write_text("id,score,metadata.way,error.type\n", encoding="utf-8")
    assert is_results_csv(tmp_path / "plain.csv", tmp_path / "none.jsonl")
    (tmp_path / "scores.csv").write_text("name,score\n", encoding="utf-8")
    assert not is_results_csv(tmp_path / "scores.csv", results)


def test_a_summary_and_a_judge_file_are_told_by_their_fields(tmp_path):
    summary = tmp_path / "s.json"
    summary.write_text(json.dumps({"rows": 1, "scored": 1, "skipped": 0, "failed": 0, "errors": {}, "seconds": 1}))
    other = tmp_path / "o.json"
    other.write_text(json.dumps({"rows": [1, 2]}))
    assert is_summary_file(summary) and not is_summary_file(other)
    judged = record_judge(tmp_path / "r.jsonl", "f", {"model": "tiny"}, {"started": "now"})
    assert is_judge_file(judged) and not is_judge_file(other)
