"""The seed's three demo programs, run as they are with the scripted judge."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
REASONING_END = "Thus, the score should be: "


def _run(name: str, judge: str = "scripted") -> list[dict]:
    env = {**os.environ, "LOCALJUDGE_DEMO_JUDGE": judge, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, encoding="utf-8", env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    decoder, text, results, pos = json.JSONDecoder(), proc.stdout, [], 0
    while pos < len(text.rstrip()):
        while text[pos].isspace():
            pos += 1
        value, pos = decoder.raw_decode(text, pos)
        results.append(value)
    return results


def _check_shape(result: dict) -> None:
    assert list(result) == ["key", "score", "comment", "metadata"]
    assert result["key"] == "score"
    assert result["metadata"] is None
    assert isinstance(result["comment"], str)
    assert REASONING_END + json.dumps(result["score"]) in result["comment"]


def test_seed_boolean_demo():
    results = _run("seed_boolean.py")
    assert len(results) == 2
    for result in results:
        _check_shape(result)
        assert type(result["score"]) is bool
    assert [r["score"] for r in results] == [False, True]


def test_seed_continuous_demo():
    results = _run("seed_continuous.py")
    assert len(results) == 2
    for result in results:
        _check_shape(result)
        assert type(result["score"]) is float and 0.0 <= result["score"] <= 1.0
    assert [r["score"] for r in results] == [0.75, 1.0]


def test_seed_choices_few_shot_demo():
    results = _run("seed_choices_few_shot.py")
    assert len(results) == 2
    for result in results:
        _check_shape(result)
        assert result["score"] in [0.0, 0.25, 0.50, 0.75, 1.0]
    assert [r["score"] for r in results] == [0.75, 0.25]


@pytest.mark.parametrize("name", ["seed_boolean.py", "seed_continuous.py", "seed_choices_few_shot.py"])
def test_demos_only_swap_the_import_and_the_judge(name):
    source = (EXAMPLES / name).read_text(encoding="utf-8")
    assert "from localjudge import create_async_llm_as_judge" in source
    for gone in ("openevals", "langchain_openai", "ChatOpenAI", "dotenv"):
        assert gone not in source
    assert "judge= demo_judge()" in source
    assert 'prompt="""\\\n确认针对指定问题的提供的答案是否正确：' in source


def test_demo_judge_defaults_to_the_embedded_model(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import _demo_judge

    monkeypatch.delenv("LOCALJUDGE_DEMO_JUDGE", raising=False)
    assert _demo_judge.demo_judge() is None
    monkeypatch.setenv("LOCALJUDGE_DEMO_JUDGE", "local")
    assert _demo_judge.demo_judge() is None
    monkeypatch.setenv("LOCALJUDGE_DEMO_JUDGE", "scripted")
    assert _demo_judge.demo_judge() is not None


def test_scripted_demo_judge_answers_each_schema_variant(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import _demo_judge

    from localjudge import create_llm_as_judge
    from localjudge.testing import ScriptedClient

    monkeypatch.setenv("LOCALJUDGE_DEMO_JUDGE", "scripted")
    judge = _demo_judge.demo_judge()
    assert isinstance(judge, ScriptedClient)
    prompt = "**问题**\n{inputs}\n\n**答案**\n{outputs}\n"
    call = {"inputs": "说出战国四大名将的姓名", "outputs": "白起、李牧"}
    assert create_llm_as_judge(prompt=prompt, judge=judge)(**call)["score"] is False
    assert create_llm_as_judge(prompt=prompt, judge=judge, continuous=True)(**call)["score"] == 0.5
    assert create_llm_as_judge(prompt=prompt, judge=judge, choices=[0.0, 1.0])(**call)["score"] in (0.0, 1.0)
