"""LLMBar's "metrics" way, measured: the judge first writes three questions a response must pass, then judges the pair.

Run: ``python benchmarks/llmbar_checks.py [--model SPEC] [--split dev|test] [-j N]``

Not an option yet: a way of judging measured before it is built in. Each
pair of the ``llmbar-natural`` check set is judged as ``check-judge
--no-reasoning --on-disagreement probabilities`` judges it, with one step
before: the judge is asked (greedy, at most 160 tokens) for three yes/no
questions that check whether a response does exactly what the request
asks, and they are shown in the prompt between the request and the two
answers. It prints accuracy, kappa, position consistency and failed rows;
choose on ``--split dev``, report on ``--split test``.
"""

from __future__ import annotations

import argparse
import time

from localjudge.clients.base import call_create, read_choice
from localjudge.commands.check import CHECK_SETS, load_set
from localjudge.commands.judging import RowJudge
from localjudge.commands.settings import JudgeSettings
from localjudge.datasets.batch import score_rows
from localjudge.errors import TruncatedOutputError
from localjudge.judges.pairwise import pairwise_prompt
from localjudge.trust.agreement import agreement

QUESTIONS_PROMPT = (
    "Here is a request given to an assistant:\n\n<request>\n{inputs}\n</request>\n\n"
    "Write three short yes/no questions that check whether a response does exactly what this request asks "
    "(its task, every stated constraint, its form). One question per line, nothing else."
)
QUESTIONS_TOKENS = 160
CHECKS_SECTION = "<checks>\nQuestions a response must pass to do what the request asks:\n{checks}\n</checks>\n\n"


def checked_prompt() -> str:
    """Our pairwise prompt, with the judge's own questions shown before the two answers."""
    return pairwise_prompt().replace("<answer_a>", CHECKS_SECTION + "<answer_a>", 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("-j", type=int, default=2)
    args = parser.parse_args()
    settings = JudgeSettings(
        model_spec=args.model,
        pairwise=True,
        prompt=checked_prompt(),
        no_reasoning=True,
        on_disagreement="probabilities",
    ).with_parallel_for(args.j)
    rows = load_set(CHECK_SETS["llmbar-natural"], args.split)
    labels = {row["id"]: row.pop("label") for row in rows}
    judge = RowJudge(settings, use_cache=False)
    shape = RowJudge.shape({**rows[0], "checks": ""})
    judge.prepare({shape})
    pair = judge.evaluator(shape)

    def with_checks(**row: object) -> object:
        request = {
            "messages": [{"role": "user", "content": QUESTIONS_PROMPT.format(inputs=row["inputs"])}],
            "temperature": 0,
            "max_tokens": QUESTIONS_TOKENS,
        }
        text, finish_reason = read_choice(call_create(pair.core.client, request))
        if finish_reason == "length":
            raise TruncatedOutputError("the judge's questions were cut", raw_output=text or "", backend="checks")
        return pair(**row, checks=(text or "").strip())

    started = time.monotonic()
    records = list(score_rows(rows, with_checks, concurrency=args.j))
    report = agreement(records, labels)
    failed = sum(1 for record in records if "error" in record)
    figures = {"accuracy": report.accuracy, "kappa": report.kappa, "consistent": report.position_consistency}
    shown = ", ".join(f"{name} {'-' if value is None else f'{value:.2f}'}" for name, value in figures.items())
    print(f"llmbar-natural {args.split}: {shown}, failed {failed}, {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
