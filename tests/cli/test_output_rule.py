"""Every option that names a file to write, aimed at the input, at each other, at a symlink and at a file not ours.

Each refused call is a bad call (exit 2) whose message names both paths,
and nothing in the folder is overwritten or moved: the count of files
changed is 0. A run resumed into its own outputs still works.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from localjudge import _cli as cli
from localjudge._cli.commands import judging as command_judge
from localjudge.testing import ScriptedClient

ANSWER = '{"score": true}'
#: each batch option that writes a file: the arguments that make it write to a path
WRITERS = {
    "results": lambda path: ["-o", str(path)],
    "csv": lambda path: ["-o", str(path.with_suffix(".jsonl")), "--output-format", "csv"],
    "summary": lambda path: ["--summary", str(path)],
    "cache": lambda path: ["--cache-file", str(path)],
}
FLAGS = {"results": "--output", "csv": "--output-format csv", "summary": "--summary", "cache": "--cache-file"}


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> ScriptedClient:
    judge = ScriptedClient([ANSWER], repeat=True)
    monkeypatch.setattr(command_judge, "build_judge", lambda *args, **options: judge)
    return judge


def run(*args: object):
    return CliRunner().invoke(cli.main, [str(arg) for arg in args])


def snapshot(folder: Path) -> dict[str, tuple]:
    """Each entry's kind, bytes, inode and link target: what overwriting or moving a file would change."""
    seen = {}
    for entry in sorted(folder.rglob("*")):
        info = entry.lstat()
        body = entry.read_bytes() if entry.is_file() and not entry.is_symlink() else b""
        seen[str(entry.relative_to(folder))] = (
            info.st_mode,
            info.st_ino,
            body,
            entry.is_symlink() and os.readlink(entry),
        )
    return seen


def changed(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    """The files that were there before and are not as they were (overwritten, moved or removed)."""
    return [name for name, state in before.items() if after.get(name) != state]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "home"))
    (tmp_path / "rows.jsonl").write_text('{"id": "a", "outputs": "4"}\n', encoding="utf-8")
    (tmp_path / "rows.csv").write_text("id,outputs\na,4\n", encoding="utf-8")
    (tmp_path / "victim.txt").write_text("keep me\n", encoding="utf-8")
    return tmp_path


def refused(folder: Path, *args: object) -> tuple[str, list[str]]:
    before = snapshot(folder)
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    return result.stderr, changed(before, snapshot(folder))


@pytest.mark.parametrize(
    ("writer", "data"),
    [
        (writer, data)
        for writer in sorted(WRITERS)
        for data in ("rows.jsonl", "rows.csv")
        if writer != "csv" or data == "rows.csv"
    ],
)  # the CSV of the results always ends in .csv
def test_no_output_may_be_the_data_file(scripted, folder, writer, data):
    extra = ["-o", "elsewhere.jsonl"] if writer != "results" and writer != "csv" else []
    stderr, lost = refused(folder, "batch", data, *extra, *WRITERS[writer](Path(data)))
    assert lost == []
    if not (writer == "results" and data.endswith(".csv")):  # -o x.csv is refused for its suffix first
        assert f"{data} is the data file itself ({data})" in stderr and FLAGS[writer] in stderr
    assert not scripted.requests


@pytest.mark.parametrize(
    ("one", "other"), [pair for pair in itertools.combinations(sorted(WRITERS), 2) if pair != ("csv", "results")]
)  # the CSV is the results' path with .csv: those two never meet
def test_no_two_outputs_may_share_a_path(scripted, folder, one, other):
    shared = Path("shared.csv" if "csv" in (one, other) else "shared.jsonl")
    extra = [] if "results" in (one, other) or "csv" in (one, other) else ["-o", "r.jsonl"]
    stderr, lost = refused(folder, "batch", "rows.jsonl", *extra, *WRITERS[one](shared), *WRITERS[other](shared))
    assert lost == [] and "are the same file" in stderr and stderr.count(str(shared)) >= 2
    assert not (folder / shared).exists()


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_no_output_is_written_through_a_symlink(scripted, folder, writer):
    link = Path("link.csv" if writer == "csv" else "link.jsonl")
    link.symlink_to("victim.txt")
    extra = [] if writer in ("results", "csv") else ["-o", "r.jsonl"]
    stderr, lost = refused(folder, "batch", "rows.jsonl", *extra, *WRITERS[writer](link))
    assert lost == [] and f"{link} is a symbolic link (to victim.txt)" in stderr
    assert (folder / "victim.txt").read_text(encoding="utf-8") == "keep me\n"


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_file_not_ours_is_replaced_only_with_overwrite_and_never_by_a_cache(scripted, folder, writer):
    notes = Path("notes.csv" if writer == "csv" else "notes.jsonl")
    notes.write_text("id,inputs\nmine,precious\n", encoding="utf-8")
    extra = [] if writer in ("results", "csv") else ["-o", "r.jsonl"]
    stderr, lost = refused(folder, "batch", "rows.jsonl", *extra, *WRITERS[writer](notes))
    assert lost == [] and f"{notes} exists and is not a" in stderr
    again = run("batch", "rows.jsonl", *extra, *WRITERS[writer](notes), "--overwrite")
    if writer == "cache":
        assert again.exit_code == 2 and "--overwrite" not in again.stderr
        assert notes.read_text(encoding="utf-8") == "id,inputs\nmine,precious\n"
    else:
        assert again.exit_code == 0, again.output
        assert "precious" not in notes.read_text(encoding="utf-8")


def test_a_run_resumes_into_its_own_outputs_and_a_second_run_replaces_them(scripted, folder):
    args = ["batch", "rows.csv", "-o", "scored.jsonl", "--output-format", "csv", "--summary", "summary.json"]
    args += ["--cache-file", "cache.sqlite3"]
    first = run(*args)
    assert first.exit_code == 0, first.output
    again = run(*args)
    assert again.exit_code == 0, again.output
    assert "1 already in scored.jsonl" in again.stderr
    assert json.loads(Path("summary.json").read_text(encoding="utf-8"))["skipped"] == 1
    assert Path("scored.csv").read_text(encoding="utf-8").startswith("id,key,score")
    assert Path("rows.csv").read_text(encoding="utf-8") == "id,outputs\na,4\n"


def test_an_output_on_the_prompt_file_is_refused(scripted, folder):
    Path("prompt.txt").write_text("Is {outputs} right?", encoding="utf-8")
    stderr, lost = refused(folder, "batch", "rows.jsonl", "--prompt-file", "prompt.txt", "--summary", "prompt.txt")
    assert lost == [] and "--summary prompt.txt is --prompt-file itself (prompt.txt)" in stderr


def write_results(path: Path) -> None:
    path.write_text('{"id": "a", "result": {"key": "score", "score": true, "comment": null}}\n', encoding="utf-8")


def test_report_refuses_its_inputs_a_symlink_and_a_file_not_ours(folder):
    write_results(folder / "r.jsonl")
    Path("link.html").symlink_to("victim.txt")
    for target, words in [
        ("r.jsonl", "--output r.jsonl is the results file itself (r.jsonl)"),
        ("rows.jsonl", "--output rows.jsonl is --labels itself (rows.jsonl)"),
        ("link.html", "--output link.html is a symbolic link (to victim.txt)"),
        ("victim.txt", "--output victim.txt exists and is not a report localjudge wrote"),
    ]:
        stderr, lost = refused(folder, "report", "r.jsonl", "--labels", "rows.jsonl", "-o", target)
        assert lost == [] and words in stderr
    assert run("report", "r.jsonl", "-o", "page.html").exit_code == 0
    assert run("report", "r.jsonl", "-o", "page.html").exit_code == 0  # its own page, replaced


def test_agreement_and_check_judge_refuse_to_draw_or_write_over_what_they_were_given(scripted, folder):
    pytest.importorskip("matplotlib")
    write_results(folder / "r.jsonl")
    Path("rows.jsonl").write_text('{"id": "a", "label": true}\n', encoding="utf-8")
    stderr, lost = refused(folder, "agreement", "r.jsonl", "--labels", "rows.jsonl", "--plot", "rows.jsonl")
    assert lost == [] and "--plot rows.jsonl is --labels itself (rows.jsonl)" in stderr
    stderr, lost = refused(folder, "agreement", "r.jsonl", "--labels", "rows.jsonl", "--plot", "victim.txt")
    assert lost == [] and "--plot victim.txt exists and is not a plot localjudge wrote" in stderr
    Path("link.json").symlink_to("victim.txt")
    stderr, lost = refused(folder, "check-judge", "--set", "answers", "--limit", "1", "--json", "link.json")
    assert lost == [] and "--json link.json is a symbolic link" in stderr and not scripted.requests


def test_grammar_write_replaces_its_own_files_and_no_other(folder):
    assert run("grammar", "--write", "grammars").exit_code == 0
    assert run("grammar", "--write", "grammars").exit_code == 0  # its own files, written again
    Path("grammars/boolean.gbnf").write_text("my notes\n", encoding="utf-8")
    stderr, lost = refused(folder, "grammar", "--write", "grammars")
    assert lost == [] and "--write grammars/boolean.gbnf exists and is not a grammar localjudge wrote" in stderr
    assert run("grammar", "--write", "grammars", "--overwrite").exit_code == 0
    assert Path("grammars/boolean.gbnf").read_text(encoding="utf-8").startswith("root ::=")


def test_with_the_tiny_model_a_csv_run_beside_its_csv_data_keeps_the_data_and_resumes(tiny_gguf, folder):
    """The reported call, as a user makes it: refused before the model loads; under another -o it runs and resumes."""
    data = "id,inputs,outputs,reference_outputs\nc1,What is 2+2?,4,4\n"
    Path("answers.csv").write_text(data, encoding="utf-8")
    args = ["batch", "answers.csv", "-m", str(tiny_gguf), "--output-format", "csv", "--no-reasoning"]
    stderr, lost = refused(folder, *args, "-o", "answers.jsonl")
    assert lost == [] and "answers.csv is the data file itself (answers.csv)" in stderr
    for _ in range(2):  # the second run resumes into its own results and replaces its own CSV
        done = run(*args, "-o", "scored.jsonl", "--no-cache")
        assert done.exit_code == 0 and "Traceback" not in done.output, done.output
    assert "1 already in scored.jsonl" in done.stderr
    assert Path("answers.csv").read_text(encoding="utf-8") == data
    assert Path("scored.csv").read_text(encoding="utf-8").startswith("id,")
