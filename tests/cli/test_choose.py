"""``localjudge choose`` through click's runner, on results files written here."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from localjudge import _cli as cli


def write_jsonl(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def results(path: Path, right: set[int], rows: int = 12, failed: frozenset[int] = frozenset()) -> Path:
    """A run on rows 0..rows-1, every one labelled true: right where the verdict is true."""
    lines = [
        {"id": str(n), "error": {"type": "OutputParseError", "message": "cut"}, "label": True}
        if n in failed
        else {"id": str(n), "result": {"score": n in right}, "label": True}
        for n in range(rows)
    ]
    return write_jsonl(path, lines)


def choose(*args: object) -> object:
    return CliRunner().invoke(cli.main, ["choose", *map(str, args)])


def test_it_prints_each_run_the_folds_and_what_to_expect(tmp_path):
    plain = results(tmp_path / "plain.jsonl", set(range(6)))
    better = results(tmp_path / "better.jsonl", set(range(10)))
    result = choose(plain, better, "--labels", plain, "--folds", 3)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "2 runs on the same labelled rows: 12"
    assert any(line.startswith(str(better)) and "0.83 (10/12)" in line and "0.55-0.95" in line for line in lines)
    assert "3-fold cross-validation (seed 0)" in result.stdout
    assert sum(str(better) in line for line in lines) == 1 + 3 + 1  # its row, chosen in every fold, and to keep
    assert "held out: 0.83 (10/12), 95% interval 0.55-0.95: the accuracy of choosing this way" in result.stdout
    assert f"keep {better}: the most right rows on all 12 (0.83 on the rows it was chosen on" in result.stdout
    assert "tied" not in result.stdout and "different runs" not in result.stdout and result.stderr == ""
    as_json = json.loads(choose(plain, better, "--labels", plain, "--folds", 3, "--json").stdout)
    assert as_json["chosen"] == str(better) and as_json["held_out_right"] == 10 and len(as_json["folds"]) == 3
    assert as_json["accuracy"][str(plain)] == 0.5
    assert sorted(int(row) for fold in as_json["folds"] for row in fold["row_ids"]) == list(range(12))


def test_it_says_when_runs_tie_or_the_folds_disagree(tmp_path):
    first = results(tmp_path / "first.jsonl", {0, 1, 2, 3, 4, 5})
    second = results(tmp_path / "second.jsonl", {6, 7, 8, 9, 10, 11})
    result = choose(first, second, "--labels", first)
    assert result.exit_code == 0, result.output
    assert f"; tied with {second}, kept as listed first" in result.stdout
    assert "the folds chose 2 different runs, so these rows do not single one out" in result.stdout
    assert f"`localjudge agreement {first} --labels {first} --against {second}`" in result.stdout


def test_a_run_that_failed_every_row_takes_part_and_loses(tmp_path):
    plain = results(tmp_path / "plain.jsonl", set(range(6)))
    broken = results(tmp_path / "broken.jsonl", set(), failed=frozenset(range(12)))
    result = choose(broken, plain, "--labels", plain, "--folds", 2)
    assert result.exit_code == 0, result.output
    assert any(
        line.startswith(str(broken)) and "0.00 (0/12)" in line and line.endswith("12")
        for line in result.stdout.splitlines()
    )
    assert f"keep {plain}" in result.stdout


def test_it_notes_rows_it_cannot_use_and_which_run_lacks_them(tmp_path):
    full = results(tmp_path / "full.jsonl", set(range(8)), rows=11)  # id 10 has no label
    part = write_jsonl(tmp_path / "part.jsonl", [{"id": str(n), "result": {"score": True}} for n in range(3, 9)])
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": str(n), "label": True} for n in range(10)])
    result = choose(full, part, "--labels", labels, "--folds", 2)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"{full}: 1 record without a label, not used",
        f"{part}: no record for 4 labelled rows, left out of the choice",
    ]
    assert f"labelled rows: 6 (left out: 4 rows that only some runs have; {part} lacks 4)" in result.stdout


def test_it_refuses_what_it_cannot_choose_among(tmp_path, monkeypatch):
    plain = results(tmp_path / "plain.jsonl", {1})
    alone = choose(plain, "--labels", plain)
    assert alone.exit_code == 2 and "two or more results files" in alone.output
    monkeypatch.chdir(tmp_path)
    twice = choose(plain, "plain.jsonl", "--labels", plain)
    assert twice.exit_code == 2 and f"plain.jsonl is the file {plain} again" in twice.output
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": "other", "label": True}])
    other = results(tmp_path / "other.jsonl", {1})
    unmatched = choose(plain, other, "--labels", labels)
    assert unmatched.exit_code == 2 and "do their ids match?" in unmatched.output
    few = choose(plain, other, "--labels", plain, "--folds", 20)
    assert few.exit_code == 2 and "only 12 of the labelled rows" in few.output and "12 folds at most" in few.output
    seed = choose(plain, other, "--labels", plain, "--seed", -1)
    assert seed.exit_code == 2 and "--seed" in seed.output


def test_labels_that_are_never_a_verdict_are_warned_of(tmp_path):
    """Pair labels in words of one's own (model_a) against winners A/B: every run would look always wrong."""
    winners = [{"id": str(n), "result": {"score": 1.0, "metadata": {"winner": "A"}}} for n in range(4)]
    first, second = (write_jsonl(tmp_path / name, winners) for name in ("first.jsonl", "second.jsonl"))
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": str(n), "label": "model_a"} for n in range(4)])
    warning = "no label (model_a) is ever a verdict (A); is --label-field the right column?"
    chosen = choose(first, second, "--labels", labels, "--folds", 2)
    assert chosen.exit_code == 0, chosen.output
    assert chosen.stderr.count(warning) == 2  # once for each run
    measured = CliRunner().invoke(cli.main, ["agreement", str(first), "--labels", str(labels)])
    assert measured.exit_code == 0 and warning in measured.stderr
