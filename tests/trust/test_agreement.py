"""Agreement metrics, checked against values worked out by hand."""

from __future__ import annotations

import json

import pytest

from localjudge._trust.agreement import (
    accuracy_interval,
    agreement,
    cohen_kappa,
    compare_paired,
    compare_runs,
    confusion_matrix,
    expected_calibration_error,
    kappa_interval,
    label_text,
    reliability_table,
)
from localjudge.errors import UsageError

TRUTH = ["true", "true", "false", "false", "true"]
PREDICTED = ["true", "false", "false", "true", "true"]


def test_confusion_matrix_rows_are_labels_and_columns_verdicts():
    assert confusion_matrix(TRUTH, PREDICTED, ["false", "true"]) == [[1, 1], [1, 2]]


def test_kappa_by_hand():
    # observed 3/5 = 0.6; chance (3/5)(3/5) + (2/5)(2/5) = 0.52; kappa = 0.08 / 0.48
    assert cohen_kappa(TRUTH, PREDICTED) == pytest.approx(0.08 / 0.48)
    assert cohen_kappa(["a", "b"], ["a", "b"]) == pytest.approx(1.0)
    assert cohen_kappa(["a", "b", "a", "b"], ["b", "a", "b", "a"]) == pytest.approx(-1.0)
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None  # chance agreement is total: undefined
    assert cohen_kappa([], []) is None


def test_accuracy_interval_is_scipys_wilson_interval_in_closed_form():
    from scipy.stats import binomtest

    cases = [(0, 1), (1, 1), (0, 7), (3, 7), (7, 7), (42, 50), (4999, 10000), (98975, 98975), (1, 100000)]
    for right, compared in cases:
        expected = binomtest(right, compared).proportion_ci(confidence_level=0.95, method="wilson")
        low, high = accuracy_interval(right, compared)
        assert low == pytest.approx(expected.low, abs=1e-12) and high == pytest.approx(expected.high, abs=1e-12)


def test_accuracy_interval_is_wilsons():
    # Wilson's score interval, z = 1.96: 42/50 gives 0.715-0.917 (worked out from the formula by hand)
    low, high = accuracy_interval(42, 50)
    assert (low, high) == (pytest.approx(0.715, abs=1e-3), pytest.approx(0.917, abs=1e-3))
    narrow_low, narrow_high = accuracy_interval(420, 500)  # ten times the rows: about a third the width
    assert narrow_low < 0.84 < narrow_high and (narrow_high - narrow_low) < (high - low) / 3 + 0.01
    all_low, all_high = accuracy_interval(50, 50)  # all right: the interval reaches 1 and no further
    assert all_high == pytest.approx(1.0) and all_low == pytest.approx(0.929, abs=1e-3)
    assert accuracy_interval(0, 0) is None


def test_kappa_interval_holds_kappa_narrows_with_rows_and_repeats():
    truth = ["A", "B"] * 25
    predicted = ["A", "B"] * 20 + ["B", "A"] * 5  # 40 of 50 agree: kappa 0.6
    low, high = kappa_interval(truth, predicted)
    assert cohen_kappa(truth, predicted) == pytest.approx(0.6) and low < 0.6 < high
    assert kappa_interval(truth, predicted) == (low, high)  # a fixed seed: one set of records, one interval
    wide_low, wide_high = kappa_interval(truth[:10] + truth[40:], predicted[:10] + predicted[40:])
    more_low, more_high = kappa_interval(truth * 8, predicted * 8)
    assert more_high - more_low < high - low < wide_high - wide_low
    assert kappa_interval(["A", "B"] * 10, ["A", "B"] * 10) == (pytest.approx(1.0), pytest.approx(1.0))
    assert kappa_interval(["A"] * 10, ["A"] * 10) is None  # kappa itself is undefined
    assert kappa_interval(["A"], ["B"]) is None


def test_paired_comparison_counts_only_the_rows_that_differ():
    first = [True] * 40 + [True, True, False, False] + [False] * 6
    second = [True] * 40 + [False, False, True, False] + [False] * 6
    found = compare_paired(first, second)
    assert (found.rows, found.first_right, found.second_right) == (50, 42, 41)
    assert (found.first_only, found.second_only) == (2, 1)
    assert found.p_value == pytest.approx(1.0)  # 2 against 1 is no evidence: the two-sided exact p is 1
    lopsided = compare_paired([True] * 10 + [False], [False] * 10 + [True])
    assert lopsided.p_value == pytest.approx(2 * (1 + 11) / 2**11)  # 10 against 1: P(0 or 1 of 11), both tails
    assert compare_paired([True, False], [True, False]).p_value == 1.0
    with pytest.raises(UsageError, match="same rows"):
        compare_paired([True], [True, False])


def test_two_runs_are_compared_on_the_rows_both_judged():
    labels = {str(n): True for n in range(12)}
    first = [{"id": str(n), "result": _result(n < 11)} for n in range(12)]  # right on 0-10
    second = [{"id": str(n), "result": _result(n == 11)} for n in range(1, 12)]  # no row 0; right on 11 only
    second.append({"id": "0", "error": {"type": "OutputParseError", "message": "cut"}})
    found = compare_runs(agreement(first, labels), agreement(second, labels))
    assert (found.rows, found.first_right, found.second_right) == (11, 10, 1)  # row 0 has no verdict in the second
    assert (found.first_only, found.second_only) == (10, 1)
    assert found.p_value == pytest.approx(2 * (1 + 11) / 2**11)
    assert agreement(first, labels).right == {str(n): n < 11 for n in range(12)}


def test_reliability_table_and_ece_by_hand():
    confidences, correct = [0.9, 0.8, 0.6, 0.7, 0.95], [True, False, True, False, True]
    table = reliability_table(confidences, correct, bins=10)
    assert [b.count for b in table] == [0, 0, 0, 0, 0, 0, 1, 1, 1, 2]
    assert table[9].mean_confidence == pytest.approx(0.925) and table[9].accuracy == 1.0
    assert table[0].accuracy is None and table[0].mean_confidence is None
    # (2 x 0.075 + 0.8 + 0.7 + 0.4) / 5
    assert expected_calibration_error(table) == pytest.approx(0.41)
    assert reliability_table([1.0], [True], bins=10)[9].count == 1  # the last bin holds 1.0
    with pytest.raises(UsageError, match="between 0 and 1"):
        reliability_table([1.5], [True])


@pytest.mark.parametrize(
    ("value", "text"),
    [(True, "true"), ("True", "true"), (" false ", "false"), (1, "1"), (1.0, "1"), ("1.0", "1"), (0.5, "0.5"),
     ("A", "A")],
)  # fmt: skip
def test_labels_and_verdicts_compare_as_values(value, text):
    assert label_text(value) == text


def _result(score, probabilities=None, **metadata):
    if probabilities is not None:
        metadata["probabilities"] = probabilities
    return {"key": "score", "score": score, "comment": None, "metadata": metadata or None}


def test_agreement_over_results_records():
    records = [
        {"id": "1", "result": _result(True, {"true": 0.9, "false": 0.1})},
        {"id": "2", "result": _result(False, {"true": 0.2, "false": 0.8})},
        {"id": "3", "result": _result(False, {"true": 0.4, "false": 0.6})},
        {"id": "4", "result": _result(True)},  # no probabilities: counted, not in the calibration
        {"id": "5", "error": {"type": "OutputParseError", "message": "x"}},
        {"id": "extra", "result": _result(True)},
    ]
    labels = {"1": True, "2": "true", "3": False, "4": "false", "5": True}
    report = agreement(records, labels, bins=10)
    assert (report.compared, report.without_label, report.without_verdict) == (4, 1, 1)
    assert report.accuracy == pytest.approx(2 / 4)
    assert report.accuracy_interval == accuracy_interval(2, 4)
    assert report.as_dict()["accuracy_interval"] == report.accuracy_interval
    assert report.classes == ["false", "true"] and report.confusion == [[1, 1], [1, 1]]
    assert report.kappa == pytest.approx(0.0)
    assert report.with_probabilities == 3
    # confidences 0.9 (right), 0.8 (wrong), 0.6 (right): (0.1 + 0.8 + 0.4) / 3
    assert report.ece == pytest.approx(1.3 / 3)
    assert report.position_consistency is None and report.flip_rate is None


def test_pairwise_results_give_position_consistency_and_flips():
    def pair(winner, verdicts):
        score = {"A": 1.0, "B": 0.0, "tie": 0.5}[winner]
        return _result(score, winner=winner, consistent=verdicts[0] == verdicts[1], verdicts=verdicts)

    records = [
        {"id": "1", "result": pair("A", ["A", "A"])},
        {"id": "2", "result": pair("tie", ["A", "B"])},  # flipped with the order
        {"id": "3", "result": pair("B", ["B", "B"])},
        {"id": "4", "result": pair("tie", ["tie", "B"])},  # inconsistent, not a flip
    ]
    report = agreement(records, {"1": "A", "2": "A", "3": "A", "4": "B"})
    assert report.accuracy == pytest.approx(1 / 4)
    assert report.classes == ["A", "B", "tie"]
    assert report.position_consistency == pytest.approx(2 / 4) and report.flip_rate == pytest.approx(1 / 4)


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_the_command_reports_and_draws(tmp_path):
    pytest.importorskip("matplotlib")
    from click.testing import CliRunner

    from localjudge import _cli as cli

    results = _write_jsonl(
        tmp_path / "results.jsonl",
        [
            {"id": "1", "result": _result(True, {"true": 0.9, "false": 0.1})},
            {"id": "2", "result": _result(False, {"true": 0.3, "false": 0.7})},
            {"id": "3", "result": _result(True, {"true": 0.6, "false": 0.4})},
        ],
    )
    with (tmp_path / "results.jsonl").open("a") as torn:
        torn.write('{"id": "4", "res')  # a kill mid-write leaves this; it is skipped
    data = tmp_path / "data.csv"
    data.write_text("id,question,human\n1,a,true\n2,b,true\n3,c,true\n", encoding="utf-8")
    plot = tmp_path / "plots" / "agreement.png"
    result = CliRunner().invoke(
        cli.main, ["agreement", str(results), "--labels", str(data), "--label-field", "human", "--plot", str(plot)]
    )
    assert result.exit_code == 0, result.output
    assert "3 rows compared" in result.stdout and "accuracy 0.667 (95% interval 0.208-0.939)" in result.stdout
    assert "calibration: ECE" in result.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 20_000

    as_json = CliRunner().invoke(
        cli.main, ["agreement", str(results), "--labels", str(data), "--label-field", "human", "--json"]
    )
    report = json.loads(as_json.stdout)
    assert report["accuracy"] == pytest.approx(2 / 3) and report["confusion"] == [[0, 0], [1, 2]]


def test_the_command_compares_two_runs(tmp_path):
    from click.testing import CliRunner

    from localjudge import _cli as cli

    labels = _write_jsonl(tmp_path / "labels.jsonl", [{"id": str(n), "label": True} for n in range(12)])
    new = _write_jsonl(tmp_path / "new.jsonl", [{"id": str(n), "result": _result(n < 11)} for n in range(12)])
    old = _write_jsonl(tmp_path / "old.jsonl", [{"id": str(n), "result": _result(n == 11)} for n in range(12)])
    args = ["agreement", str(new), "--labels", str(labels), "--against", str(old)]
    result = CliRunner().invoke(cli.main, args)
    assert result.exit_code == 0, result.output
    assert f"against {old}, on the 12 rows both runs judged: 11 right in this run, 1 in the other" in result.stdout
    assert "11 right only in this run, 1 only in the other; McNemar's exact p 0.006 (a split" in result.stdout
    same = CliRunner().invoke(cli.main, ["agreement", str(new), "--labels", str(labels), "--against", str(new)])
    assert same.exit_code == 0 and "p 1.000 (the rows do not tell the two runs apart)" in same.stdout
    as_json = json.loads(CliRunner().invoke(cli.main, [*args, "--json"]).stdout)
    assert as_json["against"] == {
        "results": str(old),
        **{"rows": 12, "first_right": 11, "second_right": 1, "first_only": 11, "second_only": 1},
        **{"p_value": pytest.approx(2 * (1 + 12) / 2**12), "first_unmatched": 0, "second_unmatched": 0},
    }


def test_a_comparison_says_which_rows_it_left_out(tmp_path):
    from click.testing import CliRunner

    from localjudge import _cli as cli

    labels = _write_jsonl(tmp_path / "labels.jsonl", [{"id": str(n), "label": True} for n in range(4)])
    new = _write_jsonl(tmp_path / "new.jsonl", [{"id": str(n), "result": _result(True)} for n in range(4)])
    failed = {"type": "OutputParseError", "message": "cut"}
    old = _write_jsonl(
        tmp_path / "old.jsonl",
        [{"id": "0", "result": _result(False)}] + [{"id": str(n), "error": failed} for n in (1, 2)],
    )
    result = CliRunner().invoke(cli.main, ["agreement", str(new), "--labels", str(labels), "--against", str(old)])
    assert result.exit_code == 0, result.output
    assert (
        "on the 1 rows both runs judged (3 rows with a verdict only in this run and 0 only in the other"
        in result.stdout
    )
    none = _write_jsonl(tmp_path / "none.jsonl", [{"id": "1", "error": failed}])
    args = ["agreement", str(new), "--labels", str(labels), "--against", str(none)]
    assert "no labelled row has a verdict in both runs" in CliRunner().invoke(cli.main, args).stdout
    as_json = json.loads(CliRunner().invoke(cli.main, [*args, "--json"]).stdout)
    assert as_json["against"]["rows"] == 0 and as_json["against"]["p_value"] is None


def test_several_records_for_one_id_count_once():
    failed = {"type": "OutputParseError", "message": "cut"}
    records = [
        {"id": "1", "result": _result(True)},
        {"id": "1", "result": _result(False)},  # a later record replaces it
        {"id": "2", "result": _result(True)},
        {"id": "2", "error": failed},  # but an error never replaces a result
    ]
    report = agreement(records, {"1": True, "2": True})
    assert (report.compared, report.accuracy, report.right) == (2, 0.5, {"1": False, "2": True})


def test_the_command_says_what_is_wrong_with_its_files(tmp_path):
    from click.testing import CliRunner

    from localjudge import _cli as cli

    results = _write_jsonl(tmp_path / "results.jsonl", [{"id": "1", "result": _result(True)}, {"no": "id"}])
    labels = _write_jsonl(tmp_path / "labels.jsonl", [{"id": "1", "label": True}])
    bad = CliRunner().invoke(cli.main, ["agreement", str(results), "--labels", str(labels)])
    assert bad.exit_code == 2 and "results.jsonl:2 is not a results line" in bad.stderr
    unlabelled = CliRunner().invoke(
        cli.main, ["agreement", str(results), "--labels", str(labels), "--label-field", "x"]
    )
    assert unlabelled.exit_code == 2 and "no rows with a 'x' value" in unlabelled.stderr


def test_labels_are_read_in_the_verdicts_terms():
    records = [{"id": 1, "result": _result(True)}, {"id": 2, "result": _result(False)}]
    report = agreement(records, {1: 1, 2: 0})  # ids as numbers, labels as 0/1
    assert (report.compared, report.accuracy, report.without_verdict) == (2, 1.0, 0)
    assert report.label_classes == ["false", "true"]
    pairs = [{"id": "p", "result": _result(1.0, winner="A", consistent=True, verdicts=["A", "A"])}]
    assert agreement(pairs, {"p": "a"}).accuracy == 1.0


def test_a_tie_from_disagreeing_orders_stays_in_the_calibration():
    tie = _result(0.5, winner="tie", consistent=False, verdicts=["A", "B"], probabilities={"A": 0.7, "B": 0.3})
    report = agreement([{"id": "1", "result": tie}], {"1": "B"})
    assert report.with_probabilities == 1 and report.reliability[7].accuracy == 0.0  # it stood for A, 0.7: wrong
    assert report.accuracy == 0.0 and report.flip_rate == 1.0


def test_position_consistency_counts_unlabelled_pairs_too():
    records = [
        {"id": "1", "result": _result(1.0, winner="A", consistent=True, verdicts=["A", "A"])},
        {"id": "2", "result": _result(0.5, winner="tie", consistent=False, verdicts=["A", "B"])},
    ]
    report = agreement(records, {"1": "A"})
    assert report.position_consistency == 0.5 and report.compared == 1


def test_labels_that_never_match_a_verdict_are_warned_about(tmp_path):
    from click.testing import CliRunner

    from localjudge import _cli as cli

    results = _write_jsonl(tmp_path / "results.jsonl", [{"id": "1", "result": _result(True)}])
    labels = _write_jsonl(tmp_path / "labels.jsonl", [{"id": "1", "label": "correct"}])
    result = CliRunner().invoke(cli.main, ["agreement", str(results), "--labels", str(labels)])
    assert result.exit_code == 0 and "no label (correct) is ever a verdict (true)" in result.stderr


def test_the_command_refuses_labels_that_match_no_verdict(tmp_path):
    from click.testing import CliRunner

    from localjudge import _cli as cli

    results = _write_jsonl(tmp_path / "results.jsonl", [{"id": "q1", "result": _result(True)}])
    labels = _write_jsonl(tmp_path / "labels.jsonl", [{"id": "1", "label": True}, {"id": "2", "label": False}])
    result = CliRunner().invoke(cli.main, ["agreement", str(results), "--labels", str(labels)])
    assert result.exit_code == 2
    assert "no verdict in" in result.stderr and "(1 verdicts, 2 labelled rows): do their ids match?" in result.stderr
