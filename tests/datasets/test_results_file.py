"""The results file: one writer at a time, a refused symlink, and OS errors that say what to do."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from localjudge._datasets.results_file import ResultsFile, read_results, writing_to
from localjudge.errors import ResultsFileError, ResultsWriteError, UsageError

WRITER = """
import sys, time
from pathlib import Path
from localjudge._datasets.batch import run_batch
from localjudge.errors import ResultsFileError
from localjudge._datasets.rows import Row

prefix, rows = sys.argv[2], int(sys.argv[3])

def evaluate(**values):
    time.sleep(0.05)  # a run of 0.6 s: two started together overlap
    return {"score": True, "comment": values["outputs"]}

try:
    run_batch([Row(f"{prefix}{i}", {"outputs": str(i)}) for i in range(rows)], evaluate, Path(sys.argv[1]))
except ResultsFileError as exc:
    print(exc, file=sys.stderr)
    sys.exit(3)
"""


def start_writer(script: Path, results: Path, prefix: str, rows: int = 12) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(script), str(results), prefix, str(rows)], stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow  # twenty-odd processes, each importing localjudge
def test_two_runs_on_one_results_file_never_lose_a_row(tmp_path):
    """Two real processes started together, ten times: the one that finds the file taken stops at once
    with a message, and run again it adds its rows to the other's."""
    script = tmp_path / "writer.py"
    script.write_text(WRITER, encoding="utf-8")
    refusals = 0
    for trial in range(10):
        results = tmp_path / f"results{trial}.jsonl"
        first, second = start_writer(script, results, "a"), start_writer(script, results, "b")
        outcomes = {"a": first.wait(60), "b": second.wait(60)}
        messages = {"a": first.stderr.read(), "b": second.stderr.read()}
        assert set(outcomes.values()) <= {0, 3}, messages
        for prefix, code in outcomes.items():
            if code == 3:
                refusals += 1
                assert "Another run (process" in messages[prefix] and "another results=" in messages[prefix]
                assert start_writer(script, results, prefix).wait(60) == 0
        ids = sorted(record["id"] for record in read_results(results))
        assert ids == sorted([f"a{i}" for i in range(12)] + [f"b{i}" for i in range(12)])
    assert refusals >= 1  # the runs overlapped at least once; the check above held either way


def test_the_lock_is_held_from_open_to_close_and_freed_by_close(tmp_path):
    results = tmp_path / "results.jsonl"
    first = ResultsFile(results).open()
    with pytest.raises(ResultsFileError, match=f"process {os.getpid()}"):
        ResultsFile(results).open()
    first.append({"id": "1", "result": {"score": True}})
    first.close()
    second = ResultsFile(results).open()  # free again, and it sees what the first wrote
    assert second.scored("1")
    second.close()


def test_a_killed_run_leaves_no_lock_behind(tmp_path):
    results = tmp_path / "results.jsonl"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from localjudge._datasets.results_file import "
         "ResultsFile; ResultsFile(Path(sys.argv[1])).open(); print('open', flush=True); time.sleep(60)",
         str(results)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert holder.stdout.readline().strip() == "open"
    with pytest.raises(ResultsFileError):
        ResultsFile(results).open()
    holder.kill()
    holder.wait()
    ResultsFile(results).open().close()


def test_compaction_keeps_lines_another_writer_appended(tmp_path):
    """A writer that ignores the lock (an editor, a script) still loses nothing: the rewrite re-reads the disk."""
    results = tmp_path / "results.jsonl"
    out = ResultsFile(results).open()
    out.append({"id": "mine", "result": {"score": True}})
    with results.open("a", encoding="utf-8") as other:
        other.write(json.dumps({"id": "theirs", "result": {"score": False}}) + "\n")
    out.close(order=["mine"])
    assert [record["id"] for record in read_results(results)] == ["mine", "theirs"]


def test_a_symlinked_results_path_is_refused_and_its_target_untouched(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me\n", encoding="utf-8")
    link = tmp_path / "results.jsonl"
    link.symlink_to(target)
    with pytest.raises(ResultsFileError, match="symbolic link"):
        ResultsFile(link).open()
    assert target.read_text(encoding="utf-8") == "keep me\n" and link.is_symlink()


def test_a_special_file_is_refused(tmp_path):
    fifo = tmp_path / "results.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(ResultsFileError, match="not a regular file"):
        ResultsFile(fifo).open()


def test_a_path_that_cannot_be_a_file_is_a_clear_error_not_a_traceback(tmp_path):
    (tmp_path / "file").write_text("", encoding="utf-8")
    with pytest.raises(ResultsFileError, match=r"Cannot write .*file/results\.jsonl.*check the path"):
        ResultsFile(tmp_path / "file" / "results.jsonl").open()


@pytest.mark.parametrize(("code", "advice"), [(errno.EACCES, "you may write"), (errno.EROFS, "writable disk")])
def test_os_errors_become_advice(tmp_path, code, advice):
    with pytest.raises(ResultsFileError, match=advice) as caught:
        with writing_to(tmp_path / "r.jsonl"):
            raise OSError(code, os.strerror(code))
    assert isinstance(caught.value, UsageError) and isinstance(caught.value.__cause__, OSError)


@pytest.mark.parametrize(
    ("code", "advice"),
    [(errno.ENOSPC, "free some disk space"), (errno.ENOENT, "folder was removed"), (errno.EIO, "disk failed")],
)
def test_os_errors_during_a_run_are_run_time_failures_not_bad_calls(tmp_path, code, advice):
    with pytest.raises(ResultsWriteError, match=advice) as caught:
        with writing_to(tmp_path / "r.jsonl"):
            raise OSError(code, os.strerror(code))
    assert not isinstance(caught.value, UsageError)
    assert str(tmp_path / "r.jsonl") in str(caught.value) and os.strerror(code) in str(caught.value)


def test_a_full_disk_mid_run_keeps_the_rows_written_before(tmp_path):
    """Appending to /dev/full is a real ENOSPC; the rows before it stay in the results file."""
    results = tmp_path / "results.jsonl"
    out = ResultsFile(results).open()
    out.append({"id": "1", "result": {"score": True}})
    out._out.close()
    out._out = open("/dev/full", "a", encoding="utf-8")  # the disk fills up under the run
    started = time.monotonic()
    with pytest.raises(ResultsWriteError, match=r"No space left on device.*free some disk space"):
        out.append({"id": "2", "result": {"score": True}})
    assert time.monotonic() - started < 5
    with contextlib.suppress(OSError):  # its buffer still holds the line the disk refused
        out._out.close()
    out._out = results.open("a", encoding="utf-8")
    out.close()
    assert [record["id"] for record in read_results(results)] == ["1"]
