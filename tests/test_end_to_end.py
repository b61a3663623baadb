"""The user's path, with the real default model: the CLI and the seed's demo programs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.model

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
LOCALJUDGE = [sys.executable, "-m", "localjudge._cli"]


def _run(command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "LOCALJUDGE_DEMO_JUDGE"}
    return subprocess.run(command, capture_output=True, text=True, timeout=240, env={**environment, **env}, cwd=ROOT)


def _json_documents(text: str) -> list[object]:
    decoder, documents, position = json.JSONDecoder(), [], 0
    text = text.strip()
    while position < len(text):
        document, position = decoder.raw_decode(text, position)
        documents.append(document)
        while position < len(text) and text[position].isspace():
            position += 1
    return documents


def _check_result(result: dict, score_check) -> None:
    assert set(result) == {"key", "score", "comment", "metadata"}
    assert result["key"] == "score"
    assert score_check(result["score"]), result
    assert isinstance(result["comment"], str)


@pytest.mark.parametrize(("answer", "right"), [("4", True), ("5", False)])
def test_the_readme_command_and_its_twin_are_judged_right_by_the_default_judge(answer, right):
    """The README's first command, as a new user runs it: no flag, the default judge (not the tests' tiny one)."""
    process = _run([*LOCALJUDGE, "score", "--inputs", "What is 2+2?", "--outputs", answer], LOCALJUDGE_MODEL="")
    assert process.returncode == 0, process.stderr
    result = json.loads(process.stdout)
    _check_result(result, lambda score: score is right)
    assert result["metadata"]["way"] == "self-reference" and result["metadata"]["calibrated"] is True
    assert "way: self-reference (against the judge's own answer, written first, calibrated)" in process.stderr


@pytest.mark.parametrize(("answer", "right"), [("four", True), ("22", False)])
def test_an_answer_with_a_reference_is_judged_right_by_the_default_judge(answer, right):
    """With a reference, the default asks whether the answer gives the same result, calibrated by the shipped fit."""
    process = _run(
        [*LOCALJUDGE, "score", "--inputs", "What is 2+2?", "--outputs", answer, "--reference-outputs", "4"],
        LOCALJUDGE_MODEL="",
    )
    assert process.returncode == 0, process.stderr
    result = json.loads(process.stdout)
    assert result["score"] is right, result
    assert result["metadata"]["way"] == "same-answer" and result["metadata"]["calibrated"] is True
    assert "shipped with localjudge" in process.stderr


@pytest.mark.usefixtures("tiny_gguf")
def test_cli_choices_without_reasoning():
    process = _run(
        [
            *LOCALJUDGE,
            "score",
            "--inputs",
            "Capital of France?",
            "--outputs",
            "Paris",
            "--choices",
            "0,0.5,1",
            "--no-reasoning",
        ]
    )
    assert process.returncode == 0, process.stderr
    result = json.loads(process.stdout)
    assert result["score"] in (0.0, 0.5, 1.0) and result["comment"] is None


@pytest.mark.parametrize(
    ("program", "score_check"),
    [
        ("seed_boolean.py", lambda score: isinstance(score, bool)),
        ("seed_continuous.py", lambda score: isinstance(score, float) and 0.0 <= score <= 1.0),
        ("seed_choices_few_shot.py", lambda score: score in (0.0, 0.25, 0.5, 0.75, 1.0)),
    ],
)
@pytest.mark.usefixtures("tiny_gguf")
def test_seed_demos_with_the_default_model(program, score_check):
    process = _run([sys.executable, str(EXAMPLES / program)])
    assert process.returncode == 0, process.stderr
    results = _json_documents(process.stdout)
    assert len(results) == 2
    for result in results:
        _check_result(result, score_check)


@pytest.mark.usefixtures("tiny_gguf")
def test_cli_falls_back_from_a_missing_model_file(tmp_path):
    missing = tmp_path / "missing.gguf"
    process = _run(
        [*LOCALJUDGE, "score", "--outputs", "4", "--no-reasoning", "--model", str(missing), "--fallback", "tiny"]
    )
    assert process.returncode == 0, process.stderr
    metadata = json.loads(process.stdout)["metadata"]
    assert metadata["client"] == "tiny"
    assert [failure["client"] for failure in metadata["failures"]] == [str(missing)]
    assert str(missing) in metadata["failures"][0]["message"]


@pytest.mark.usefixtures("tiny_gguf")
def test_batch_with_the_default_model(tmp_path):
    data = tmp_path / "data.jsonl"
    data.write_text(
        "".join(
            json.dumps({"inputs": q, "outputs": a}) + "\n"
            for q, a in [("What is 2+2?", "4"), ("Capital of Italy?", "Rome"), ("Largest ocean?", "The Atlantic")]
        )
    )
    process = _run([*LOCALJUDGE, "batch", str(data), "--continuous", "-j", "2"])
    assert process.returncode == 0, process.stderr
    records = [json.loads(line) for line in (tmp_path / "data.results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in records) == ["1", "2", "3"]
    assert all(0.0 <= r["result"]["score"] <= 1.0 for r in records)
