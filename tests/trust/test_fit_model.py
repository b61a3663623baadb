"""`localjudge calibrate` on the real default model, then `--calibrated` scoring with what it kept."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from localjudge import _cli as cli
from localjudge._trust.calibration_file import read_calibration
from localjudge._trust.correction import CANDIDATES

pytestmark = pytest.mark.model


def _rows(count: int) -> list[dict]:
    rows = []
    for i in range(count):
        a, b = 3 + i, 7 + 2 * i
        right = i % 2 == 0
        rows.append(
            {"id": f"q{i}", "inputs": f"What is {a}+{b}?", "outputs": str(a + b + (0 if right else 3)), "label": right}
        )
    return rows


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path / "home"))  # the calibration and result cache land here
    return tmp_path / "home"


def _run(*args: str):
    return CliRunner().invoke(cli.main, list(args))


def test_calibrate_then_score_with_what_it_kept(home, tmp_path, tiny_gguf):
    data = tmp_path / "labelled.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in _rows(12)), encoding="utf-8")
    model = ["--model", str(tiny_gguf), "--no-reasoning"]

    fitted = _run("calibrate", str(data), *model, "--way", "plain", "-j", "2", "--folds", "3")  # tiny: no own answer
    assert fitted.exit_code == 0, fitted.output
    assert "12 readouts from 12 labelled rows (0 rows gave none); held out over 3 folds" in fitted.stdout
    for candidate in CANDIDATES:
        assert f"  {candidate} " in fitted.stdout
    [path] = (home / "calibration").glob("*.json")
    stored = read_calibration(path)
    assert stored.rows == 12 and set(stored.validations) == set(CANDIDATES)
    assert stored.about["model"] == str(tiny_gguf)

    scored = _run("score", "--inputs", "What is 2+2?", "--outputs", "5", *model, "--calibrated")
    assert scored.exit_code == 0, scored.output
    metadata = json.loads(scored.stdout)["metadata"]
    if stored.correction is None:
        assert "was not kept" in scored.stderr and "uncalibrated" not in metadata
    else:
        assert f"calibrated: {stored.chosen}" in scored.stderr
        assert metadata["calibrated"] is True and set(metadata["uncalibrated"]) == {"score", "probabilities"}
        assert sum(metadata["probabilities"].values()) == pytest.approx(1.0)

    other_prompt = _run(
        "score", "--inputs", "What is 2+2?", "--outputs", "5", *model, "--system", "Be strict.", "--calibrated"
    )
    assert other_prompt.exit_code == 2
    assert "no calibration was fitted for this judge" in other_prompt.stderr


def test_calibrating_a_pair_judge_reads_both_orders(home, tmp_path, tiny_gguf):
    pairs = [
        {"id": str(i), "inputs": f"What is {i}+1?", "outputs_a": str(i + 1), "outputs_b": str(i + 5), "label": "A"}
        if i % 2
        else {"id": str(i), "inputs": f"What is {i}+1?", "outputs_a": str(i + 7), "outputs_b": str(i + 1), "label": "B"}
        for i in range(8)
    ]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in pairs), encoding="utf-8")
    model = ["--model", str(tiny_gguf), "--no-reasoning"]

    fitted = _run("calibrate", str(data), "--pairwise", *model, "-j", "2", "--folds", "2")
    assert fitted.exit_code == 0, fitted.output
    assert "16 readouts from 8 labelled rows" in fitted.stdout  # two orders a pair
    assert 'content-free readout (the judge\'s bias before reading anything): "A"' in fitted.stdout
    [path] = (home / "calibration").glob("*.json")
    assert read_calibration(path).about["pairwise"] is True

    compared = _run("compare", "--inputs", "What is 1+1?", "--output-a", "2", "--output-b", "3", *model, "--calibrated")
    assert compared.exit_code == 0, compared.output
    metadata = json.loads(compared.stdout)["metadata"]
    assert len(metadata["order_probabilities"]) == 2
    stored = read_calibration(path)
    if stored.correction is None:
        assert "was not kept" in compared.stderr and "calibrated" not in metadata
    else:
        assert f"calibrated: {stored.chosen}" in compared.stderr
        assert metadata["calibrated"] is True and len(metadata["uncalibrated_verdicts"]) == 2


def test_calibrating_a_likelihood_judge_rescales_its_gains(home, tmp_path, tiny_gguf):
    pairs = [
        {"id": str(i), "inputs": f"What is {i} plus 1?", "outputs_a": f"{i} plus 1 is {i + 1}.",
         "outputs_b": "The sky is blue.", "label": "A"}
        if i % 2
        else {"id": str(i), "inputs": f"Name a colour, then say what {i} plus 1 is.",
              "outputs_a": "I like trains.", "outputs_b": f"Red; {i} plus 1 is {i + 1}.", "label": "B"}
        for i in range(8)
    ]  # fmt: skip
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in pairs), encoding="utf-8")
    model = ["--model", str(tiny_gguf), "--likelihood"]

    fitted = _run("calibrate", str(data), "--pairwise", *model, "-j", "2", "--folds", "2")
    assert fitted.exit_code == 0, fitted.output
    assert "16 readouts from 8 labelled rows" in fitted.stdout  # each pair and its mirror
    assert "content-free" not in fitted.stdout  # nothing is asked, so there is no empty question to read
    [path] = (home / "calibration").glob("*.json")
    stored = read_calibration(path)
    assert set(stored.validations) == {"temperature"} and stored.about["likelihood"] is True  # mirrored: no bias

    compared = _run("compare", "--inputs", "What is 1 plus 1?", "--output-a", "Blue.", "--output-b", "2", *model,
                    "--calibrated")  # fmt: skip
    assert compared.exit_code == 0, compared.output
    metadata = json.loads(compared.stdout)["metadata"]
    assert set(metadata["likelihood_gain"]) == {"A", "B"}
    if stored.correction is None:
        assert "was not kept" in compared.stderr and "probabilities" not in metadata
    else:
        assert f"calibrated: {stored.chosen}" in compared.stderr and metadata["calibrated"] is True
        assert sum(metadata["probabilities"].values()) == pytest.approx(1.0)
