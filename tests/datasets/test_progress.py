"""A run's progress: a rich bar on a terminal, plain lines in a log; failed rows shown either way."""

from __future__ import annotations

import io

from localjudge._datasets.progress import RunProgress

RECORDS = [
    {"id": "a", "result": {"score": True}},
    {"id": "b[1]", "error": {"type": "OutputParseError", "message": "not [bold]JSON"}},
    {"id": "c", "result": {"score": False}},
]


def test_a_terminal_gets_a_bar_with_rows_rate_and_errors():
    stream = io.StringIO()
    with RunProgress(len(RECORDS), stream=stream, terminal=True) as progress:
        for record in RECORDS:
            progress.advance(record)
    shown = stream.getvalue()
    assert "scoring" in shown and "3/3" in shown and "rows/s" in shown and "1 error" in shown
    assert "b[1]" in shown and "OutputParseError: not [bold]JSON" in shown  # markup in data is shown, not obeyed


def test_a_log_gets_plain_lines_and_each_failed_row():
    stream = io.StringIO()
    with RunProgress(len(RECORDS), stream=stream, interval=0.0, terminal=False) as progress:
        for record in RECORDS:
            progress.advance(record)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("1/3 rows, 0 failed, ") and "rows/s" in lines[0]
    assert "b[1]: OutputParseError: not [bold]JSON" in lines
    assert lines[-1].startswith("3/3 rows, 1 failed, ")
    assert "\x1b[" not in stream.getvalue()  # no terminal codes in a log
