"""A run's figures and two runs compared: the trust layer's own numbers, as agreement prints them."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.results_files import answers_run, pair, write_results

from localjudge.cli import main
from localjudge.datasets.results_file import read_results
from localjudge.trust.agreement import agreement, compare_runs
from localjudge.view.figures import comparison, overview
from localjudge.view.index import RunIndex
from localjudge.view.sources import read_data


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


@pytest.mark.model
def test_a_check_judge_run_opens_with_the_figures_check_judge_printed(tmp_path):
    """Results files as check-judge writes them (not through ResultsFile): the page measures what it printed."""
    report = tmp_path / "report.json"
    outcome = CliRunner().invoke(
        main,
        [
            *("check-judge", "-m", "tiny", "--set", "answers", "--set", "adversarial", "--limit", "4"),
            *("--way", "plain", "--no-cache", "--json", str(report), "--results", str(tmp_path)),
        ],
    )
    assert outcome.exit_code == 0, outcome.output
    for printed in json.loads(report.read_text())["sets"]:
        figures = overview(RunIndex(tmp_path / f"{printed['set']}.results.jsonl"))
        assert (figures["rows"], figures["failed"]) == (printed["rows"], printed["failed"])
        assert figures["agreement"]["accuracy"] == printed["accuracy"]
        assert figures["agreement"]["confusion"] == printed["agreement"]["confusion"]
        if printed["position_consistency"] is not None:
            assert figures["pairs"]["position_consistency"] == printed["position_consistency"]
