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
        with writing_to(tmp_path / "r.jsonl", during_run=True):
            raise OSError(code, os.strerror(code))
    assert not isinstance(caught.value, UsageError)
    assert str(tmp_path / "r.jsonl") in str(caught.value) and os.strerror(code) in str(caught.value)


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES, errno.ESTALE, errno.EFBIG])
def test_any_os_error_once_the_run_has_begun_is_the_runs_failure(tmp_path, code):
    """A disk remounted read-only mid-run is no bad call: the path was fine when the run began."""
    with pytest.raises(ResultsWriteError, match="the rows written so far are kept") as caught:
        with writing_to(tmp_path / "r.jsonl", during_run=True):
            raise OSError(code, os.strerror(code))
    assert not isinstance(caught.value, UsageError) and os.strerror(code) in str(caught.value)


@pytest.mark.parametrize(("code", "error"), [(errno.ENOSPC, ResultsWriteError), (errno.EROFS, ResultsFileError)])
def test_before_the_run_only_a_failing_machine_is_a_run_time_failure(tmp_path, code, error):
    with pytest.raises(error):
        with writing_to(tmp_path / "r.jsonl"):
            raise OSError(code, os.strerror(code))


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


def test_compaction_keeps_this_runs_lines_when_the_file_was_replaced_meanwhile(tmp_path):
    """The rewrite reads records back from the file by offset: what this run wrote is read from the file it opened."""
    results = tmp_path / "results.jsonl"
    out = ResultsFile(results).open()
    out.append({"id": "mine", "result": {"score": True}})
    replacement = tmp_path / "other.jsonl"
    replacement.write_text(json.dumps({"id": "theirs", "result": {"score": False}}) + "\n", encoding="utf-8")
    os.replace(replacement, results)
    out.close(order=["theirs", "mine"])
    assert [(r["id"], r["result"]["score"]) for r in read_results(results)] == [("theirs", False), ("mine", True)]


def test_an_earlier_runs_records_are_read_back_from_the_file_not_held(tmp_path):
    results = tmp_path / "results.jsonl"
    lines = [{"id": "1", "result": {"score": 1}, "judged": {"judge": "j", "row": "a"}}, {"id": "2", "error": {}}]
    results.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = ResultsFile(results).open()
    assert out.scored("1") and not out.scored("2") and out.earlier("1")
    assert out.record("1") == lines[0] and out.record("3") is None
    assert not out.differs("1", {"row": "a", "judge": "j"}) and out.differs("1", {"judge": "j", "row": "b"})
    out.append({"id": "2", "result": {"score": 0}})
    assert out.scored("2") and not out.earlier("2") and out.record("2") == {"id": "2", "result": {"score": 0}}
    out.close(order=["2", "1"])
    assert [r["id"] for r in read_results(results)] == ["2", "1"]
