"""``view`` and ``report`` on the command line: a report written, and bad input named with what to do."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner
from support.results_files import answers_run

from localjudge._cli import main


def test_report_writes_one_html_file(tmp_path):
    results, data = answers_run(tmp_path)
    target = tmp_path / "out" / "report.html"
    outcome = CliRunner().invoke(main, ["report", str(results), "--labels", str(data), "-o", str(target)])
    assert outcome.exit_code == 0, outcome.output
    assert target.read_text(encoding="utf-8").startswith("<!doctype html>")


def test_a_file_that_is_not_a_results_file_is_named(tmp_path):
    _, data = answers_run(tmp_path)
    outcome = CliRunner().invoke(main, ["report", str(data), "-o", str(tmp_path / "r.html")])
    assert outcome.exit_code == 2
    assert "is not a results file" in outcome.output and "give the results file" in outcome.output


def test_a_missing_file_is_named(tmp_path):
    outcome = CliRunner().invoke(main, ["view", str(tmp_path / "nothing.results.jsonl")])
    assert outcome.exit_code == 2 and "does not exist" in outcome.output


@pytest.mark.server
def test_a_port_in_use_is_named(tmp_path):
    results, _ = answers_run(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        outcome = CliRunner().invoke(main, ["view", str(results), "--port", str(port)])
    assert outcome.exit_code == 2 and f"cannot listen on 127.0.0.1:{port}" in outcome.output
