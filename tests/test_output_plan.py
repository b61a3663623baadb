"""The rule on every file a run writes: the pure decision from what was seen, and what is seen on a real disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from localjudge._output_plan import Found, Input, Output, check_outputs, look, refusals
from localjudge.errors import OptionError, OutputPathError

DATA = Input("the data file", Path("rows.jsonl"))
FLAGS = {"results": "--output", "summary_file": "--summary", "overwrite": "--overwrite", "cache_file": "--cache-file"}


def found(path: str, kind: str = "missing", identity=None, ours=True, target="") -> Found:
    return Found(Path(path), f"/work/{path}", kind, identity, target=target, ours=ours)  # type: ignore[arg-type]


def output(said: str, path: str, replaceable: bool = True) -> Output:
    return Output(said, Path(path), "a results file", replaceable=replaceable)


def said(messages) -> list[str]:
    return [message.render(FLAGS) for message in messages]


def test_nothing_there_and_a_file_of_ours_may_be_written():
    inputs = [(DATA, found("rows.jsonl", "regular", (1, 10)))]
    outputs = [
        (output("{results}", "r.jsonl"), found("r.jsonl", "regular", (1, 11), ours=True)),
        (output("{summary_file}", "s.json"), found("s.json")),
    ]
    assert refusals(inputs, outputs) == []


def test_an_output_on_an_input_is_refused_naming_both_paths():
    inputs = [(DATA, found("rows.jsonl", "regular", (1, 10)))]
    outputs = [(output("{summary_file}", "rows.jsonl"), found("rows.jsonl", "regular", (1, 10), ours=False))]
    (message,) = said(refusals(inputs, outputs, overwrite=True))  # overwrite never lets an input go
    assert message.startswith("--summary rows.jsonl is the data file itself (rows.jsonl), which this run reads")


def test_another_path_to_the_same_file_is_the_same_file():
    """A hard link, or a symlinked input: the inode decides, not the name."""
    inputs = [(DATA, found("rows.jsonl", "regular", (1, 10)))]
    outputs = [(output("{results}", "other-name.jsonl"), found("other-name.jsonl", "regular", (1, 10)))]
    (message,) = said(refusals(inputs, outputs))
    assert "--output other-name.jsonl is the data file itself (rows.jsonl)" in message


def test_two_outputs_on_one_path_are_refused_even_when_neither_exists():
    outputs = [
        (output("{results}", "r.jsonl"), found("r.jsonl")),
        (output("{cache_file}", "r.jsonl"), found("r.jsonl")),
    ]
    (message,) = said(refusals([], outputs))
    assert message.startswith("--cache-file r.jsonl and --output r.jsonl are the same file")


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("symlink", "is a symbolic link (to /etc/passwd)"),
        ("folder", "is a folder"),
        ("special", "is not a regular file"),
    ],
)
def test_a_symlink_a_folder_or_a_special_file_is_refused_whatever_overwrite_says(kind, words):
    outputs = [(output("{summary_file}", "s.json"), found("s.json", kind, (1, 12), target="/etc/passwd"))]
    (message,) = said(refusals([], outputs, overwrite=True))
    assert message.startswith(f"--summary s.json {words}")


def test_a_file_not_ours_needs_overwrite_and_a_cache_never_takes_its_place():
    notes = found("notes.txt", "regular", (1, 13), ours=False)
    (message,) = said(refusals([], [(output("{results}", "notes.txt"), notes)]))
    assert message == (
        "--output notes.txt exists and is not a results file localjudge wrote: "
        "choose another path, or add --overwrite to replace it"
    )
    assert refusals([], [(output("{results}", "notes.txt"), notes)], overwrite=True) == []
    (cache,) = said(refusals([], [(output("{cache_file}", "notes.txt", replaceable=False), notes)], overwrite=True))
    assert cache.endswith("localjudge wrote: choose another path")


def test_every_refusal_is_named_in_one_option_error(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text('{"outputs": "4"}\n', encoding="utf-8")
    planned = [Output("{results}", data, "a results file"), Output("{summary_file}", data, "a run's summary")]
    with pytest.raises(OutputPathError) as caught:
        check_outputs([Input("the data file", data)], planned)
    assert isinstance(caught.value, OptionError) and len(caught.value.refusals) == 2
    shown = caught.value.render(FLAGS)
    assert f"--output {data} is the data file itself" in shown and f"--summary {data} is the data" in shown
    assert data.read_text(encoding="utf-8") == '{"outputs": "4"}\n'


def test_look_sees_links_folders_fifos_hard_links_and_whose_a_file_is(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text("x\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(data)
    os.link(data, tmp_path / "hard")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "empty").touch()
    assert look(tmp_path / "link").kind == "symlink" and look(tmp_path / "link").target == str(data)
    assert look(tmp_path / "hard").identity == look(data).identity
    assert look(tmp_path / "fifo").kind == "special" and look(tmp_path).kind == "folder"
    assert look(tmp_path / "none").kind == "missing" and look(tmp_path / "no" / "where").kind == "missing"
    assert look(data, lambda path: False).ours is False
    assert look(tmp_path / "empty", lambda path: False).ours is True  # nothing there to lose

    def unreadable(path: Path) -> bool:
        raise PermissionError(path)

    assert look(data, unreadable).ours is False
    assert look(tmp_path / "sub" / ".." / "rows.jsonl").place == look(data).place
