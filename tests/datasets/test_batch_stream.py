"""Rows flow through a run as a stream: read afresh on each pass, taken as the pool has room, none held."""

from __future__ import annotations

import json
from collections.abc import Iterator

from localjudge._datasets.batch import as_rows, run_batch, score_rows
from localjudge._datasets.rows import Reread, Row
from localjudge.errors import DuplicateIdError


def judge(**row):
    return {"key": "score", "score": row["outputs"] == "4", "comment": None, "metadata": None}


class Source:
    """Rows made on each pass, noting how many each pass has handed out so far."""

    def __init__(self, count: int) -> None:
        self.count, self.handed = count, []

    def read(self) -> Iterator[Row]:
        self.handed.append(0)
        for number in range(1, self.count + 1):
            self.handed[-1] += 1
            yield Row(f"r{number}", {"inputs": "2+2", "outputs": "4" if number % 2 else "5"})


def test_rows_are_taken_as_they_are_judged_not_all_before_the_first():
    source = Source(50)
    scoring = score_rows(Reread(source.read, 50), judge, concurrency=2)
    records = iter(scoring)
    first = next(records)
    assert first["id"] in ("r1", "r2")
    assert source.handed == [2]  # only the two in flight had been read
    assert [record["id"] for record in records][-1] == "r50"
    assert scoring.summary.total == 50 and scoring.summary.scored == 50


def test_a_run_writes_the_rows_in_their_order_going_over_them_again_rather_than_keeping_them(tmp_path):
    source = Source(30)
    results = tmp_path / "out.jsonl"
    summary = run_batch(Reread(source.read, 30), judge, results, concurrency=3)
    ids = [json.loads(line)["id"] for line in results.read_text(encoding="utf-8").splitlines()]
    assert ids == [f"r{n}" for n in range(1, 31)]
    assert summary.total == 30 and summary.scored == 30
    assert len(source.handed) == 2 and all(handed == 30 for handed in source.handed)  # stamps, then judging


def test_fail_fast_still_counts_every_row_kept_from_before_after_its_stop(tmp_path):
    results = tmp_path / "out.jsonl"
    run_batch([Row("a", {"outputs": "4"}), Row("c", {"outputs": "4"})], judge, results)
    late = [Row("a", {"outputs": "4"}), Row("b", {}, error=DuplicateIdError("bad")), Row("c", {"outputs": "4"})]
    summary = run_batch(late, judge, results, fail_fast=True)
    assert summary.stopped_early and summary.skipped == 2  # "c", after the stop, was kept too


def test_rows_that_can_be_gone_over_once_are_kept_and_repeated_ids_found_on_every_pass():
    given = ({"id": name, "outputs": "4"} for name in ["x", "y", "x"])
    checked = as_rows(given, "id")
    assert len(checked) == 3
    for _ in range(2):
        found = list(checked)
        assert [row.id for row in found] == ["x", "y", "x@row 3"]
        assert isinstance(found[2].error, DuplicateIdError)


def test_a_data_file_changed_between_passes_stops_the_run_before_judging_it(tmp_path):
    from localjudge._cli.commands.runs import _stream
    from localjudge.errors import LocalJudgeError

    data = tmp_path / "rows.jsonl"
    data.write_text('{"id": "a", "outputs": "4"}\n', encoding="utf-8")
    rows, _ = _stream(data, None, None, "id")
    assert [row.id for row in rows] == ["a"]  # unchanged: a second pass reads it again
    data.write_text('{"id": "a", "outputs": "4"}\n{"id": "b", "outputs": "5"}\n', encoding="utf-8")
    try:
        list(rows)
    except LocalJudgeError as exc:
        assert "changed while the run was going over it" in str(exc) and str(data) in str(exc)
    else:
        raise AssertionError("a changed file was read as if it were the one counted")


def test_a_pipe_is_read_once_and_its_rows_kept(tmp_path):
    """A FIFO (or /dev/stdin) cannot be opened again: its rows are kept from the one reading."""
    import os
    import threading

    from localjudge._cli.commands.runs import _stream

    fifo = tmp_path / "rows.jsonl"
    os.mkfifo(fifo)
    writer = threading.Thread(
        target=fifo.write_text, args=('{"id": "a", "outputs": "4"}\n{"id": "b", "outputs": "5"}\n',)
    )
    writer.start()
    rows, shapes = _stream(fifo, "jsonl", None, "id")
    writer.join(timeout=10)
    assert len(rows) == 2 and [row.id for row in rows] == ["a", "b"] == [row.id for row in rows] and shapes
