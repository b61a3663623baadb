"""DeepEval's GEval judging through ``localjudge serve``, run by the interpreter of DeepEval's own environment.

``python deepeval_runner.py JOB.json RESULT.json``: JOB holds ``base_url`` (the
server's ``/v1``) and ``cases`` (``input``, ``actual_output``); the key is
``$LOCALJUDGE_SERVER_KEY``, never an argument. RESULT gets each case's
``score``, ``reason`` and ``success``, the metric's evaluation steps, and the
connections refused for not going to loopback (there should be none).
"""

from __future__ import annotations

import json
import os
import sys

from network_guard import loopback_only  # this folder is sys.path[0]

# Before DeepEval is imported: no telemetry, no .env files read, no update check.
os.environ["DEEPEVAL_TELEMETRY_OPT_OUT"] = "YES"
os.environ["DEEPEVAL_DISABLE_DOTENV"] = "1"
os.environ["DEEPEVAL_UPDATE_WARNING_OPT_IN"] = "NO"

#: DeepEval reads what a model can do from its own table of OpenAI names: this one has logprobs and
#: structured outputs there. The server ignores the name; it serves the one judge it was started with.
MODEL_NAME = "gpt-4.1"


def main(job_path: str, result_path: str) -> None:
    with open(job_path, encoding="utf-8") as file:
        job = json.load(file)
    with loopback_only() as refused:
        from deepeval.metrics import GEval
        from deepeval.models import OpenAIModel
        from deepeval.test_case import LLMTestCase, SingleTurnParams

        judge = OpenAIModel(model=MODEL_NAME, base_url=job["base_url"], api_key=os.environ["LOCALJUDGE_SERVER_KEY"])
        metric = GEval(
            name="Correctness",
            criteria="Is the actual output a correct answer to the input?",
            evaluation_params=[SingleTurnParams.INPUT, SingleTurnParams.ACTUAL_OUTPUT],
            model=judge,
        )
        results = []
        for case in job["cases"]:
            score = metric.measure(LLMTestCase(**case), _show_indicator=False)
            results.append({"score": score, "reason": metric.reason, "success": metric.is_successful()})
    with open(result_path, "w", encoding="utf-8") as file:
        json.dump({"results": results, "steps": metric.evaluation_steps, "refused": [repr(a) for a in refused]}, file)


if __name__ == "__main__":
    main(*sys.argv[1:3])
