"""DeepEval's GEval, with its OpenAI model pointed at `localjudge serve`: structured outputs for its steps, logprobs
for its scores.

DeepEval runs in an environment of its own (``.venv-peers``, made by ``make install``): it pins click below 8.4,
which the transformers extra's huggingface-hub does not allow. The test drives it there as a process.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest
from support.serve_process import KEY

PEERS_PYTHON = Path(__file__).resolve().parents[2] / ".venv-peers" / "bin" / "python"
RUNNER = Path(__file__).resolve().parents[1] / "support" / "deepeval_runner.py"
CASES = [{"input": "What is 2+2?", "actual_output": "4"}, {"input": "What is 2+2?", "actual_output": "5"}]


def weighted_score(written: int, tokens: list[dict]) -> float:
    """G-Eval's score: the digits offered at the score's token (each at 1% or more), averaged by probability.

    A score of more than one token ("10") stays as written.
    """
    at = next((token for token in reversed(tokens) if token["token"] == str(written)), None)
    if at is None:
        return written
    offered = [
        (int(option["token"]), math.exp(option["logprob"]))
        for option in at["top_logprobs"]
        if option["token"].isdecimal() and option["logprob"] >= math.log(0.01)
    ]
    return sum(digit * p for digit, p in offered) / sum(p for _, p in offered)


@pytest.mark.server
@pytest.mark.model
def test_deepeval_geval_judges_through_serve_and_weighs_our_logprobs(relay, tmp_path):
    if not PEERS_PYTHON.exists():
        pytest.skip("DeepEval's environment is missing: `make install` makes .venv-peers")
    job, result = tmp_path / "job.json", tmp_path / "result.json"
    job.write_text(json.dumps({"base_url": relay.base_url, "cases": CASES}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}  # nothing of a real account
    env.update(LOCALJUDGE_SERVER_KEY=KEY, DEEPEVAL_HOME=str(tmp_path / "deepeval"))
    ran = subprocess.run(
        [str(PEERS_PYTHON), str(RUNNER), str(job), str(result)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-3000:]
    out = json.loads(result.read_text())
    assert out["refused"] == []  # loopback only: nothing reached for OpenAI, a hub or telemetry

    right, wrong = out["results"]
    for verdict in (right, wrong):
        assert isinstance(verdict["score"], float) and 0.0 <= verdict["score"] <= 1.0 and verdict["reason"]
    assert right["score"] > wrong["score"] and right["success"] and not wrong["success"], out["results"]

    chats = relay.chats()
    assert [chat.status for chat in chats] == [200, 200, 200], chats
    steps, *scorings = chats
    asked = steps.request["response_format"]
    assert asked["type"] == "json_schema" and asked["json_schema"]["strict"] is True
    assert json.loads(steps.response["choices"][0]["message"]["content"]) == {"steps": out["steps"]}

    moved = 0
    for scoring, verdict in zip(scorings, out["results"], strict=True):
        assert scoring.request["logprobs"] is True and scoring.request["top_logprobs"] == 20
        choice = scoring.response["choices"][0]
        tokens = choice["logprobs"]["content"]
        assert "".join(token["token"] for token in tokens) == choice["message"]["content"]
        written = json.loads(choice["message"]["content"])["score"]
        expected = weighted_score(written, tokens)
        assert verdict["score"] == pytest.approx(expected / 10), (written, tokens)
        moved += expected != written
    assert moved >= 1  # a score DeepEval took from our logprobs, not from the digit written
