"""A run's figures and two runs compared: the trust layer's own numbers, as agreement prints them."""

from __future__ import annotations

import json

import pytest
from support.results_files import answer, answers_run, check_judge_on_tiny, describe_judge, pair, write_results

from localjudge._datasets.results_file import read_results
from localjudge._trust.agreement import agreement, compare_runs
from localjudge._view.figures import comparison, overview, run_figures, shared_rows
from localjudge._view.index import RunIndex
from localjudge._view.sources import read_data


def test_the_overview_counts_and_measures_as_agreement_does(tmp_path):
    results, data = answers_run(tmp_path)
    labels, values = read_data(data)
    figures = overview(RunIndex(results, labels=labels, values=values))
    assert (figures["rows"], figures["judged"], figures["failed"]) == (120, 117, 3)
    assert figures["errors"] == {"OutputParseError": 3}
    assert figures["contradicting"] == 1
    assert figures["judge"]["ways"] == {"plain": 117}
    assert figures["cached"] is None  # results files do not say
    expected = agreement(read_results(results), labels)
    assert figures["agreement"]["accuracy"] == expected.accuracy
    assert figures["agreement"]["kappa_interval"] == expected.kappa_interval
    assert figures["agreement"]["confusion"] == expected.confusion


def test_pairs_show_consistency_ties_and_winners(tmp_path):
    path = write_results(
        tmp_path / "pairs.results.jsonl",
        [pair("p1", ("A", "A"), 0.8), pair("p2", ("A", "B"), 0.5), pair("p3", ("B", "B"), 0.3)],
    )
    figures = overview(RunIndex(path))
    assert figures["pairs"]["position_consistency"] == 2 / 3
    assert figures["pairs"]["ties"] == 1
    assert figures["pairs"]["winners"] == {"A": 1, "tie": 1, "B": 1}
    assert figures["agreement"] is None


def test_two_runs_compared_name_the_changed_rows_and_mcnemars_p(tmp_path):
    (tmp_path / "b").mkdir()
    first, data = answers_run(tmp_path)
    flipped = ["q005", "q010", "q015", "q020", "q025", "q030"]  # wrong in the first run, right in the second
    second, _ = answers_run(tmp_path / "b", flip=flipped)
    labels, _ = read_data(data)
    found = comparison(RunIndex(first, labels=labels), RunIndex(second, labels=labels))
    assert found["changed_count"] == 6
    assert [change["id"] for change in found["changed"]] == flipped
    expected = compare_runs(
        agreement(read_results(first), labels, intervals=False),
        agreement(read_results(second), labels, intervals=False),
    )
    assert found["mcnemar"]["p_value"] == expected.p_value
    assert found["mcnemar"]["second_only"] == 6


def test_the_overview_counted_in_sqlite_is_what_the_records_say(tmp_path):
    """The index's columns, counted by sqlite, give the figures run_figures reads from the records themselves."""
    results, data = answers_run(tmp_path)
    labels, values = read_data(data)
    with results.open("a", encoding="utf-8") as raw:  # a row written again, a cached one, a pair, a hand-made way
        raw.write(json.dumps({**answer("q001", False, 0.7), "seconds": 2.0, "judged": {"judge": "j2"}}) + "\n")
        cached = answer("extra", True, 0.6)
        cached["result"]["metadata"].update(cached=True, calibrated=True, requests=3, way={"not": "text"})
        raw.write(json.dumps(cached) + "\n")
        raw.write(json.dumps(pair("p1", ("A", "B"), 0.5)) + "\n")
    figures = overview(RunIndex(results, labels=labels, values=values))
    expected = run_figures(read_results(results), labels)
    for name, value in expected.items():
        assert figures[name] == value, name
    assert figures["cached"] == 1 and figures["judge"]["calibrated"] == 1 and figures["judge"]["requests"] >= 3
    assert figures["judge"]["ways"]['{"not": "text"}'] == 1 and figures["judge"]["fingerprints"] == {"j2": 1}


def test_only_runs_that_share_rows_are_compared(tmp_path):
    (tmp_path / "b").mkdir()
    first, data = answers_run(tmp_path)
    second, _ = answers_run(tmp_path / "b", flip=["q005"])
    other = write_results(tmp_path / "other.results.jsonl", [answer("t1", True, 0.9), answer("t2", False, 0.8)])
    labels, _ = read_data(data)
    runs = [RunIndex(first, labels=labels), RunIndex(second, labels=labels), RunIndex(other, labels=labels)]
    assert shared_rows(runs) == [
        {"first": 0, "second": 1, "shared": 120},
        {"first": 0, "second": 2, "shared": 0},
        {"first": 1, "second": 2, "shared": 0},
    ]
    apart = comparison(runs[0], runs[2])
    assert (apart["shared"], apart["only_first"], apart["only_second"]) == (0, 120, 2)
    assert apart["mcnemar"] is None and "agreement" not in apart["first"]  # nothing measured side by side


@pytest.mark.model
def test_a_check_judge_run_opens_with_the_figures_check_judge_printed(tmp_path):
    """Results files as check-judge writes them (not through ResultsFile): the page measures what it printed."""
    options = ("--set", "answers", "--set", "adversarial", "--limit", "4", "--way", "plain", "--results", str(tmp_path))
    _, sets = check_judge_on_tiny(tmp_path, *options)
    for printed in sets:
        figures = overview(RunIndex(tmp_path / f"{printed['set']}.results.jsonl"))
        assert (figures["rows"], figures["failed"]) == (printed["rows"], printed["failed"])
        (judge,) = figures["judges"]  # as the file beside the records describes it
        assert judge["models"][0]["spec"] == "tiny" and judge["models"][0]["sha256_from"] == "model card"
        assert judge["asked"][0]["way"] == "plain" and "{outputs" in judge["asked"][0]["prompt"]
        assert figures["timed_rows"] == printed["rows"] and figures["seconds_per_row"] > 0
        assert figures["agreement"]["accuracy"] == printed["accuracy"]
        assert figures["agreement"]["confusion"] == printed["agreement"]["confusion"]
        if printed["position_consistency"] is not None:
            assert figures["pairs"]["position_consistency"] == printed["position_consistency"]


def test_the_overview_shows_the_judge_the_file_beside_describes_and_the_time_per_row(tmp_path):
    records = [
        {**answer(row_id, True, 0.9), "seconds": seconds, "judged": {"judge": "j1", "row": row_id}}
        for row_id, seconds in (("a", 0.5), ("b", 1.5), ("c", 0.1))
    ]
    path = write_results(tmp_path / "data.results.jsonl", records)
    figures = overview(RunIndex(path))
    assert figures["judges"] is None and figures["judge_file"] is None  # nothing beside it: not recorded
    assert (figures["seconds_per_row"], figures["seconds_total"], figures["timed_rows"]) == (0.5, 2.1, 3)
    huge = [{**answer(row_id, True, 0.9), "seconds": 1e308} for row_id in ("x", "y")]  # hand-edited: finite each
    assert run_figures(huge, {})["seconds_total"] is None  # their sum is not, and JSON holds no infinity

    describe_judge(path, "j0")  # a judge whose rows were all judged again since
    describe_judge(path, "j1", prompt="Is {outputs} right? <b>not markup</b>")
    figures = overview(RunIndex(path))
    (judge,) = figures["judges"]
    assert figures["judges_elsewhere"] == 1 and figures["judge_file"].endswith("data.results.judge.json")
    assert (judge["fingerprint"], judge["rows"], judge["version"]) == ("j1", 3, "0.1.0")
    assert judge["models"][0]["servers"] == []
    assert (judge["models"][0]["spec"], judge["models"][0]["sha256_from"]) == ("tiny", "model card")
    (asked,) = judge["asked"]
    assert (asked["way"], asked["prompt"]) == ("plain", "Is {outputs} right? <b>not markup</b>")
    assert asked["schema"]["required"] == ["score"]
    assert judge["runs"] == 1 and judge["last_run"]["rows_per_second"] == 2.0

    unstamped = write_results(tmp_path / "answers.results.jsonl", [answer("a", True, 0.9)])  # as check-judge writes
    describe_judge(unstamped, "j9")
    assert [judge["fingerprint"] for judge in overview(RunIndex(unstamped))["judges"]] == ["j9"]
    assert overview(RunIndex(unstamped))["seconds_per_row"] is None  # written before rows were timed

    (tmp_path / "data.results.judge.json").write_text("{not json", encoding="utf-8")
    figures = overview(RunIndex(path))
    assert figures["judges"] is None and "is not JSON" in figures["judge_file_error"]
