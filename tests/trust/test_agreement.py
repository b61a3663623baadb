"""Agreement metrics, checked against values worked out by hand."""

from __future__ import annotations

import json

import pytest

from localjudge.errors import UsageError
from localjudge.trust.agreement import (
    agreement,
    cohen_kappa,
    confusion_matrix,
    expected_calibration_error,
    label_text,
    reliability_table,
)

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

    from localjudge import cli

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
    assert "3 rows compared" in result.stdout and "accuracy 0.667" in result.stdout
    assert "calibration: ECE" in result.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 20_000

    as_json = CliRunner().invoke(
        cli.main, ["agreement", str(results), "--labels", str(data), "--label-field", "human", "--json"]
    )
    report = json.loads(as_json.stdout)
    assert report["accuracy"] == pytest.approx(2 / 3) and report["confusion"] == [[0, 0], [1, 2]]


def test_the_command_says_what_is_wrong_with_its_files(tmp_path):
    from click.testing import CliRunner

    from localjudge import cli

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

    from localjudge import cli

    results = _write_jsonl(tmp_path / "results.jsonl", [{"id": "1", "result": _result(True)}])
    labels = _write_jsonl(tmp_path / "labels.jsonl", [{"id": "1", "label": "correct"}])
    result = CliRunner().invoke(cli.main, ["agreement", str(results), "--labels", str(labels)])
    assert result.exit_code == 0 and "no label (correct) is ever a verdict (true)" in result.stderr
