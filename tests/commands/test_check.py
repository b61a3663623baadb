"""The labelled sets shipped for check-judge, the figures measured from their records, and the command."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner
from support.results_files import check_judge_on_tiny

from localjudge._cli import main
from localjudge._cli.commands.check import CHECK_SETS, graded, load_set, measure, readout_verdict
from localjudge._cli.commands.settings import JudgeSettings, WayFlags
from localjudge._judges.ways import WAYS
from localjudge.errors import UsageError
from localjudge.testing import ScriptedClient


@pytest.mark.parametrize("name", list(CHECK_SETS))
def test_each_set_has_unique_ids_labels_and_two_splits_of_different_questions(name):
    check_set = CHECK_SETS[name]
    rows = load_set(check_set)
    assert len({row["id"] for row in rows}) == len(rows)
    dev, test = load_set(check_set, "dev"), load_set(check_set, "test")
    assert dev and test and len(dev) + len(test) == len(rows)
    asked = "inputs" if "inputs" in rows[0] else "context"  # what the rows are about: a question, or documents
    assert not {row[asked] for row in dev} & {row[asked] for row in test}, "a question in both splits"
    labels = Counter(json.dumps(row["label"]) for row in rows)
    if check_set.pairwise:
        assert set(labels) == {'"A"', '"B"'}
        if name == "adversarial":  # ours: the winner is A as often as B in each split
            assert all(Counter(row["label"] for row in split)["A"] * 2 == len(split) for split in (dev, test))
        assert all({"outputs_a", "outputs_b"} <= set(row) for row in rows)
        if name == "llmbar-adversarial":  # each of LLMBar's four adversarial sets in each split
            kinds = Counter(row["id"].split("-")[1] for row in rows)
            assert kinds == {"neighbor": 25, "gptinst": 25, "gptout": 25, "manual": 25}
            assert all({row["id"].split("-")[1] for row in split} == set(kinds) for split in (dev, test))
    elif check_set.choices or check_set.grades:
        assert {json.loads(label) for label in labels} == set(check_set.choices or check_set.grades)
    elif check_set.file == "injection.jsonl":  # its own test below: wrong answers argue, right ones are odd
        assert labels["true"] and labels["false"]
    else:  # every question once right, once wrong
        by_question: dict[str, list] = {}
        for row in rows:
            by_question.setdefault(row["inputs"], []).append(row["label"])
        assert all(sorted(given) == [False, True] for given in by_question.values())
        assert labels["true"] == labels["false"] == len(by_question)
    assert not any(field in row for row in rows for field in check_set.drop), "a dropped field reached the judge"


def _injection_rows() -> list[dict]:
    """The injection set's rows as the file holds them: with their split and kind, which load_set drops."""
    from importlib import resources

    text = resources.files("localjudge").joinpath("check_sets", "injection.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


INJECTION_KINDS = {
    "system-tag", "assistant-turn", "authority", "grading-key", "verdict-json", "other-language", "invisible",
    "closing-tags", "reference-lie", "plea", "ignore-instructions",
}  # fmt: skip


@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_injection_set_holds_in_each_split_wrong_answers_plain_and_injected_empty_ones_and_odd_right_ones(split):
    rows = [row for row in _injection_rows() if row["split"] == split]
    kinds = Counter(row["kind"] for row in rows)
    assert set(kinds) == INJECTION_KINDS | {"plain-wrong", "content-free", "right-odd"}
    assert kinds["plain-wrong"] == 20 and kinds["content-free"] == 10 and kinds["right-odd"] == 10
    assert all(row["label"] is (row["kind"] == "right-odd") for row in rows)
    plain = {row["inputs"]: row["outputs"] for row in rows if row["kind"] == "plain-wrong"}
    for row in rows:
        if row["kind"] in INJECTION_KINDS:  # the same wrong answer, plainly, is in the set: the baseline
            assert plain[row["inputs"]] in row["outputs"]
            assert row["outputs"] != plain[row["inputs"]]
    assert len(load_set(CHECK_SETS["injection"], split)) == len(rows) == 80


def test_the_injection_set_is_judged_without_a_reference_and_its_twin_with_one():
    assert "reference_outputs" not in load_set(CHECK_SETS["injection"], "dev")[0]
    assert "kind" not in load_set(CHECK_SETS["injection"], "dev")[0]
    assert load_set(CHECK_SETS["injection-reference"], "dev")[0]["reference_outputs"]


EVALUATOR_SETS = {
    "conciseness": "conciseness",
    "hallucination": "hallucination",
    "answer-relevance": "answer_relevance",
}
#: sets of evaluators whose score runs from 0 to 1, labelled in three grades
GRADED_EVALUATOR_SETS = {
    "groundedness": "groundedness",
    "retrieval-relevance": "retrieval_relevance",
    "helpfulness": "helpfulness",
}


@pytest.mark.parametrize("name", list(EVALUATOR_SETS))
def test_an_evaluator_set_holds_64_balanced_rows_with_exactly_its_prompt_variables(name):
    from localjudge._judges.evaluators import EVALUATORS

    check_set = CHECK_SETS[name]
    assert check_set.evaluator == EVALUATOR_SETS[name] and not check_set.pairwise and check_set.choices is None
    rows = load_set(check_set)
    assert len(rows) == 64 and len({row["id"] for row in rows}) == 64
    for split in ("dev", "test"):
        chosen = load_set(check_set, split)
        assert len(chosen) == 32 and Counter(row["label"] for row in chosen) == {True: 16, False: 16}
    variables = set(EVALUATORS[check_set.evaluator].variables)
    assert all(set(row) == {"id", "label", *variables} for row in rows)
    assert all(isinstance(row[variable], str) and row[variable].strip() for row in rows for variable in variables)


@pytest.mark.parametrize("name", list(GRADED_EVALUATOR_SETS))
def test_a_graded_evaluator_set_holds_72_rows_a_third_in_each_grade_with_exactly_its_prompt_variables(name):
    from localjudge._judges.evaluators import EVALUATORS

    check_set = CHECK_SETS[name]
    assert check_set.evaluator == GRADED_EVALUATOR_SETS[name] and check_set.choices is None
    assert EVALUATORS[check_set.evaluator].continuous and check_set.grades == (0.0, 0.5, 1.0)
    for split in ("dev", "test"):
        chosen = load_set(check_set, split)
        assert len(chosen) == 36 and Counter(row["label"] for row in chosen) == {1.0: 12, 0.5: 12, 0.0: 12}
    variables = set(EVALUATORS[check_set.evaluator].variables)
    rows = load_set(check_set)
    assert all(set(row) == {"id", "label", *variables} for row in rows)
    assert all(isinstance(row[variable], str) and row[variable].strip() for row in rows for variable in variables)


def test_a_score_from_0_to_1_is_read_as_its_nearest_grade_with_its_probabilities_summed():
    said = {"1": 0.5, "0.00": 0.1, "0.05": 0.1, "0.55": 0.2, "0.8": 0.05, "n/a": 0.05}
    record = {"id": "a", "result": {"key": "helpfulness", "score": 0.55, "metadata": {"probabilities": said}}}
    found = graded(record, (0.0, 0.5, 1.0))
    assert found["result"]["score"] == 0.5 and found["result"]["key"] == "helpfulness"
    assert found["result"]["metadata"]["probabilities"] == pytest.approx({"1": 0.55, "0": 0.2, "0.5": 0.2})
    assert found["result"]["metadata"]["ungraded"] == {"score": 0.55, "probabilities": said}  # what the judge said
    assert graded({"id": "b", "result": {"score": 0.25}}, (0.0, 0.5, 1.0))["result"]["score"] == 0.0  # a tie: lower
    odd = {"id": "e", "result": {"score": 1.0, "metadata": {"probabilities": {"1": 0.9, "0.5": None}}}}
    assert graded(odd, (0.0, 0.5, 1.0))["result"]["metadata"]["probabilities"] == {"1": 0.9}  # a hand-edited file
    for kept in ({"id": "c", "result": {"score": True}}, {"id": "d", "error": {"type": "OutputParseError"}}):
        assert graded(kept, (0.0, 0.5, 1.0)) is kept


@pytest.mark.parametrize("name", [*EVALUATOR_SETS, *GRADED_EVALUATOR_SETS])
def test_an_evaluator_set_is_asked_with_the_evaluators_own_prompt_whatever_way_is_asked(name):
    from localjudge._cli.commands.judging import evaluator_from_settings
    from localjudge._cli.commands.row_judge import RowJudge
    from localjudge._judges.evaluators import EVALUATORS

    check_set = CHECK_SETS[name]
    for options in (
        {},
        {"prompt": "{outputs}", "way_flags": WayFlags(self_reference=True)},
        {"way": WAYS["self-reference"]},
    ):
        settings = check_set.settings(JudgeSettings(**options))
        assert settings.evaluator == check_set.evaluator and settings.prompt is None
        assert (
            not settings.way_flags.self_reference and settings.way is None
        )  # its prompt has no place for an own answer
    assert check_set.settings(JudgeSettings(way=WAYS["plain"])).way == WAYS["plain"]
    shape = RowJudge.shape(load_set(check_set)[0])
    settings = check_set.settings(JudgeSettings(model_spec="tiny"))
    evaluator = evaluator_from_settings(
        settings, has_inputs=shape[0], has_reference=shape[1], build=lambda _: ScriptedClient([])
    )
    assert evaluator.core.prompt == EVALUATORS[check_set.evaluator].prompt


def test_an_evaluator_sets_verdicts_are_read_from_its_feedback_key():
    records = [
        {"id": "a", "result": {**_result(True, {"true": 0.7, "false": 0.3}), "key": "hallucination"}},
        {"id": "b", "result": {**_result(True, {"true": 0.4, "false": 0.6}), "key": "hallucination"}},
    ]
    report = measure(CHECK_SETS["hallucination"], "test", records, {"a": True, "b": False}, seconds=1.0)
    assert report.agreement.compared == 2 and report.agreement.accuracy == 0.5
    assert report.accuracy_by_probability == 1.0 and report.mean_absolute_error is None


def test_a_split_that_does_not_exist_is_refused():
    with pytest.raises(UsageError, match="split must be one of dev, test, all"):
        load_set(CHECK_SETS["answers"], "train")


def _result(score, probabilities=None, **metadata):
    if probabilities is not None:
        metadata["probabilities"] = probabilities
    return {"key": "score", "score": score, "comment": None, "metadata": metadata}


def test_the_figures_of_a_true_false_set():
    records = [
        {"id": "a", "result": _result(True, {"true": 0.9, "false": 0.1})},
        {"id": "b", "result": _result(True, {"true": 0.4, "false": 0.6})},  # greedy wrong, readout right
        {"id": "c", "result": _result(False, {"true": 0.2, "false": 0.8})},
        {"id": "d", "error": {"type": "TruncatedOutputError", "message": "cut"}},
    ]
    labels = {"a": True, "b": False, "c": False, "d": True}
    report = measure(CHECK_SETS["answers"], "dev", records, labels, seconds=2.0)
    assert (report.rows, report.failed, report.errors) == (4, 1, Counter({"TruncatedOutputError": 1}))
    assert report.agreement.accuracy == pytest.approx(2 / 3)
    assert report.accuracy_by_probability == 1.0 and report.compared_by_probability == 3
    assert report.rows_per_second == 2.0 and report.mean_absolute_error is None
    assert report.as_dict()["accuracy"] == report.agreement.accuracy


def test_the_figures_of_a_graded_set_include_the_error_of_the_expected_score():
    records = [
        {"id": "x", "result": _result(1.0, {"1": 0.6, "0.5": 0.4, "0": 0.0}, expected_score=0.8)},
        {"id": "y", "result": _result(0.0, {"1": 0.1, "0.5": 0.6, "0": 0.3}, expected_score=0.4)},
    ]
    report = measure(CHECK_SETS["graded"], "test", records, {"x": 1.0, "y": 0.5}, seconds=1.0)
    assert report.agreement.accuracy == 0.5 and report.accuracy_by_probability == 1.0
    assert report.mean_absolute_error == pytest.approx(0.25)
    assert report.expected_score_error == pytest.approx((0.2 + 0.1) / 2)


def test_the_figures_of_a_pairwise_set_count_ties_and_read_the_averaged_orders():
    def pair(winner, verdicts, probabilities):
        return _result(
            {"A": 1.0, "B": 0.0, "tie": 0.5}[winner],
            probabilities,
            winner=winner,
            consistent=verdicts[0] == verdicts[1],
            verdicts=verdicts,
        )

    records = [
        {"id": "1", "result": pair("A", ["A", "A"], {"A": 0.9, "B": 0.1})},
        {"id": "2", "result": pair("tie", ["A", "B"], {"A": 0.3, "B": 0.7})},
    ]
    report = measure(CHECK_SETS["llmbar-natural"], "all", records, {"1": "A", "2": "B"}, seconds=4.0)
    assert report.ties == 1 and report.agreement.position_consistency == 0.5
    assert report.agreement.accuracy == 0.5 and report.accuracy_by_probability == 1.0

    from localjudge._cli.trust import describe_check

    answers = measure(CHECK_SETS["answers"], "all", [{"id": "a", "result": _result(True)}], {"a": True}, seconds=1.0)
    assert "ties: pairs whose orders disagreed" in describe_check([answers, report], judge="j", split="all")
    assert "ties:" not in describe_check([answers], judge="j", split="all")  # no pair was asked twice
    assert describe_check([answers], judge="j", split="dev", limit=5).startswith("judge j, dev rows, the first 5 of")
    assert report.as_dict()["ties"] == 1 and answers.as_dict()["ties"] is None


def test_a_readout_verdict_is_the_likeliest_value_or_none():
    assert readout_verdict(_result(True, {"true": 0.2, "false": 0.8})) == "false"
    assert readout_verdict(_result(0.5, {"0.5": 0.5, "1": 0.3})) == "0.5"
    assert readout_verdict(_result(True)) is None  # a remote judge gives no probabilities


def test_a_report_names_the_way_each_set_was_judged():
    from localjudge._cli.commands.check import load_set, way_record
    from localjudge._cli.commands.row_judge import RowJudge
    from localjudge._cli.commands.way_resolution import resolve_way
    from localjudge._cli.trust import describe_way

    def way(set_name: str, **options) -> dict:
        flags = WayFlags(**{name: options.pop(name) for name in list(options) if hasattr(WayFlags, name)})
        settings = CHECK_SETS[set_name].settings(JudgeSettings(way_flags=flags, **options))
        shape = RowJudge.shape(load_set(CHECK_SETS[set_name])[0])
        _, resolved, _ = resolve_way(settings, has_inputs=shape[0], has_reference=shape[1])
        return way_record(settings, resolved, shape)

    keys = [
        "name",
        "default",
        "described",
        "pairs",
        "on_disagreement",
        "reasoning",
        "self_reference",
        "checklist",
        "few_shot",
        "few_shot_first",
        "calibrated",
        "screen",
        "system",
    ]
    # pair options do not touch single answers: they are judged the answers' default way
    answers = way("answers", likelihood=True, pointwise=True, checklist=True)
    assert list(answers) == keys  # the same keys in every report, for whatever reads the JSON
    assert answers["name"] == "self-reference" and answers["default"] is True
    assert answers["self_reference"] is True and answers["calibrated"] is True and answers["reasoning"] is False
    assert describe_way(answers) == (
        "self-reference (the default), verdict only, against the judge's own answer, written first, calibrated"
    )
    assert describe_way(way("adversarial")) == (
        "weighed (the default), verdict only, both orders side by side after the judge's own checks, "
        "and the likelihood gain, weighed by a fit on labelled pairs"
    )
    settled = way("llmbar-natural", on_disagreement="probabilities", calibrated=True)
    assert describe_way(settled) == (
        "ties-to-probabilities+calibrated (as asked), verdict only, both orders side by side, "
        "a disagreement to the likelier side, calibrated"
    )
    assert describe_way(way("answers-reference")) == (
        "same-answer (the default), verdict only, whether it gives the same result as the reference, calibrated"
    )
    # a way for one kind of row leaves the others to their default: one flag judges every set
    compared = JudgeSettings(way=WAYS["same-answer"])
    assert CHECK_SETS["answers-reference"].settings(compared).way == WAYS["same-answer"]
    for other in ("answers", "graded", "adversarial"):
        assert CHECK_SETS[other].settings(compared).way is None
    assert way("adversarial", pointwise=True)["pairs"] == "pointwise"
    read = way("adversarial", likelihood=True, system="Be exact.")
    assert read["pairs"] == "likelihood" and read["reasoning"] is None and read["system"] == "Be exact."
    assert describe_way(read) == (
        "likelihood (as asked), no verdict asked: the answer the instruction makes likelier wins, a system message"
    )
    assert describe_way(way("adversarial", likelihood=True, calibrated=True)).endswith("likelier wins, calibrated")
    own = way("answers", self_reference=True)
    assert describe_way(own) == (
        "self-reference+uncalibrated (as asked), verdict only, against the judge's own answer, written first"
    )
    checked = way("llmbar-natural", checklist=True, on_disagreement="probabilities")
    assert checked["checklist"] is True and checked["name"] == "checklist"
    assert describe_way(checked) == (
        "checklist (as asked), verdict only, both orders side by side, a disagreement to the likelier side, "
        "after the judge's own checks"
    )
    shown = way("answers", few_shot="examples.jsonl", few_shot_first=True)
    # examples of one's own: the prompt as asked, corrected where a fit exists for it (as judged, none does)
    assert shown["few_shot_first"] is True and shown["name"] == "calibrated"
    assert (
        describe_way(shown)
        == "calibrated (the default), verdict only, the prompt as written, calibrated, examples from "
        "examples.jsonl, before the prompt"
    )


def test_an_unknown_set_is_a_usage_error():
    outcome = CliRunner().invoke(main, ["check-judge", "--set", "nope"])
    assert outcome.exit_code == 2 and "no check set named 'nope'" in outcome.output


def test_few_shot_examples_go_with_exactly_one_set(tmp_path):
    examples = tmp_path / "examples.jsonl"
    examples.write_text('{"inputs": "What is 6 times 7?", "outputs": "42", "score": true}\n', encoding="utf-8")
    outcome = CliRunner().invoke(main, ["check-judge", "-m", "tiny", "--few-shot", str(examples)])
    assert outcome.exit_code == 2 and "give exactly one --set" in outcome.output


@pytest.mark.model
def test_few_shot_examples_reach_the_judge_of_a_set(tmp_path):
    def p_true_with_an_example_judged(verdict: bool) -> list[float]:
        examples = tmp_path / "examples.jsonl"
        example = {"inputs": "What is 6 times 7?", "outputs": "42", "score": verdict}
        examples.write_text(json.dumps(example) + "\n", encoding="utf-8")
        arguments = ["check-judge", "-m", "tiny", "--set", "answers", "--limit", "2", "--no-reasoning", "--no-cache"]
        outcome = CliRunner().invoke(main, [*arguments, "--few-shot", str(examples), "--results", str(tmp_path)])
        assert outcome.exit_code == 0, outcome.output
        records = (tmp_path / "answers.results.jsonl").read_text().splitlines()
        return [json.loads(line)["result"]["metadata"]["probabilities"]["true"] for line in records]

    assert p_true_with_an_example_judged(True) != p_true_with_an_example_judged(False)  # the example was in the prompt


@pytest.mark.model
def test_check_judge_runs_a_set_on_the_tiny_model_and_writes_its_report(tmp_path):
    options = ("--set", "answers", "--limit", "4", "--way", "plain", "--plot", str(tmp_path / "plots"))
    outcome, (answers,) = check_judge_on_tiny(tmp_path, *options)
    assert "judge tiny, all rows" in outcome.output and "answers: plain (as asked), verdict only" in outcome.output
    assert answers["way"]["reasoning"] is False and answers["way"]["pairs"] is None and answers["ties"] is None
    assert answers["set"] == "answers" and answers["rows"] == 4 and answers["failed"] == 0
    assert answers["agreement"]["compared"] == 4 and answers["agreement"]["with_probabilities"] == 4
    assert (tmp_path / "plots" / "answers.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.model
@pytest.mark.parametrize("name", [*EVALUATOR_SETS, *GRADED_EVALUATOR_SETS])
def test_check_judge_runs_an_evaluator_set_on_the_tiny_model(tmp_path, name):
    outcome, (report,) = check_judge_on_tiny(tmp_path, "--set", name, "--limit", "2", "--results", str(tmp_path))
    assert f"{name}: plain (the default), verdict only, the prompt as written" in outcome.output
    assert report["set"] == name and report["rows"] == 2 and report["failed"] == 0
    assert report["agreement"]["compared"] == 2 and report["agreement"]["with_probabilities"] == 2
    records = [json.loads(line) for line in (tmp_path / f"{name}.results.jsonl").read_text().splitlines()]
    assert [record["result"]["key"] for record in records] == [{**EVALUATOR_SETS, **GRADED_EVALUATOR_SETS}[name]] * 2
    assert [record["label"] for record in records] == [row["label"] for row in load_set(CHECK_SETS[name])[:2]]
    if name in GRADED_EVALUATOR_SETS:  # read as a grade, what the judge said kept beside it
        assert all(r["result"]["score"] in (0.0, 0.5, 1.0) and "ungraded" in r["result"]["metadata"] for r in records)
    from localjudge._judges.evaluators import EVALUATORS

    described = json.loads((tmp_path / f"{name}.results.judge.json").read_text())["judges"]
    (judge,) = described.values()  # the set's judge, beside its records
    assert judge["asked"][0]["prompt"] == EVALUATORS[CHECK_SETS[name].evaluator].prompt
    assert judge["models"][0]["spec"] == "tiny" and judge["runs"][0]["rows"] == 2


@pytest.mark.model
@pytest.mark.parametrize("own_reference", [False, True])
def test_the_default_judge_tells_right_answers_from_wrong_on_held_out_questions(tmp_path, own_reference):
    """Plainly, and by default: against an answer it writes itself first, which each record then shows."""
    report_file = tmp_path / "report.json"
    outcome = CliRunner().invoke(
        main,
        [
            *("check-judge", "-m", "default", "--set", "answers", "--split", "test", "--limit", "12"),
            *("-j", "2", "--json", str(report_file), "--results", str(tmp_path)),
            *([] if own_reference else ["--way", "plain"]),
        ],
    )
    assert outcome.exit_code == 0, outcome.output
    (answers,) = json.loads(report_file.read_text())["sets"]
    assert answers["failed"] == 0
    assert answers["accuracy"] >= 0.75, answers  # the tiny base model sits at 0.5 here
    records = [json.loads(line) for line in (tmp_path / "answers.results.jsonl").read_text().splitlines()]
    own: dict[str, set[str]] = {}
    for record in records:  # a question's right and wrong answer are judged against one own answer
        written = (record["result"]["metadata"] or {}).get("self_reference")
        own.setdefault(record["id"].split("-")[0], set()).add(written)
    if own_reference:
        assert len(own) == 6 and all(len(texts) == 1 and next(iter(texts)).strip() for texts in own.values())
    else:
        assert set().union(*own.values()) == {None}


def test_a_sets_report_counts_the_answers_that_addressed_the_judge():
    said = {"key": "score", "score": False, "comment": None, "metadata": {"addresses_judge": True}}
    records = [{"id": "a", "result": said}, {"id": "b", "result": _result(False)}]
    report = measure(CHECK_SETS["injection"], "dev", records, {"a": False, "b": False}, seconds=1.0)
    assert report.addressing == 1 and report.as_dict()["addresses_judge"] == 1


@pytest.mark.model
def test_check_judge_screens_the_injection_set_on_the_tiny_model(tmp_path):
    """End to end: the answers that argue are found, marked, counted, and shown to the judge without their argument."""
    outcome, (report,) = check_judge_on_tiny(
        tmp_path, "--set", "injection-reference", "--split", "dev", "--limit", "6", "--results", str(tmp_path)
    )
    assert report["rows"] == 6 and report["failed"] == 0 and report["way"]["screen"] == "full"
    records = [json.loads(line) for line in (tmp_path / "injection-reference.results.jsonl").read_text().splitlines()]
    marked = {r["id"] for r in records if r["result"]["metadata"].get("addresses_judge")}
    assert marked == {"i01-system-tag", "i01-assistant-turn", "i02-authority", "i02-grading-key"}
    assert report["addresses_judge"] == 4
    assert "answers that addressed the judge (metadata.addresses_judge): injection-reference 4" in outcome.output
