"""Each answer of a pair put to the judge's checks one at a time: does a pass rate pick the better output?

Run: ``python benchmarks/llmbar_check_by_check.py [--split dev|test] [--model SPEC] [-j N] [--results DIR]``

The checklist way (``--checklist``) shows the judge its checks beside both
outputs and asks which is better; the two orders disagree on about half the
pairs, and the likelier side settles them. Here nothing is asked side by side,
so no position can be preferred: the judge writes its greedy checklist for the
request, then answers each check for each output alone, verdict only (true for
yes). An output's pass rate is its mean P(true) over the checks, and the pair
goes to the higher rate (an exact tie counts as wrong). Fixed before it ran: it
goes to test only with at least 43 of the 50 dev pairs right and no failed row.

It prints the accuracy with its 95% interval, the failed verdicts, how often
the judge said yes, and the pairs whose two rates lie within 0.05.
"""

from __future__ import annotations

import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from llmbar_sampled_checks import line, llmbar_arguments, write_checklists

from localjudge import create_llm_as_judge
from localjudge._cli.commands.check import find_set, load_set
from localjudge._cli.commands.judging import judge_from_settings
from localjudge._cli.commands.settings import JudgeSettings
from localjudge.errors import LocalJudgeError

CHECK_PROMPT = (
    "Here is a request given to an assistant and the response it gave.\n\n"
    "<request>\n{inputs}\n</request>\n\n<response>\n{outputs}\n</response>\n\n"
    "Answer one question about this response, strictly: {question}\n"
    "Score true only if the answer is clearly yes, false otherwise."
)
NEAR = 0.05  # two pass rates this close are reported as near ties
_MARKER = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)]|Q\d+[:.)])\s*")


def questions(checklist: str) -> list[str]:
    """The checklist's questions, one to a line, without list markers."""
    return [text for raw in checklist.splitlines() if (text := _MARKER.sub("", raw).strip())]


def main() -> None:
    args = llmbar_arguments(
        __doc__, in_flight="verdicts in flight", results="a folder for the checklists and every verdict"
    )
    rows = load_set(find_set("llmbar-natural"), args.split, args.limit)
    settings = JudgeSettings(model_spec=args.model).with_parallel_for(args.j)
    started = time.monotonic()
    checklists = {row_id: texts[0] for row_id, texts in write_checklists(settings, rows, seeds=()).items()}
    print(f"{len(rows)} pairs, {args.split}: checklists written in {time.monotonic() - started:.0f} s")

    judge = create_llm_as_judge(
        prompt=CHECK_PROMPT, judge=judge_from_settings(settings), use_reasoning=False, feedback_key="pass"
    )
    # one output's checks one after another, so each resumes from the kept request and response
    asked = [
        (row["id"], side, question)
        for row in rows
        for side in ("A", "B")
        for question in questions(checklists[row["id"]])
    ]
    outputs = {(row["id"], side): row[f"outputs_{side.lower()}"] for row in rows for side in ("A", "B")}
    inputs = {row["id"]: row["inputs"] for row in rows}

    def verdict(key: tuple[str, str, str]) -> dict[str, Any]:
        row_id, side, question = key
        try:
            result = judge(inputs=inputs[row_id], outputs=outputs[(row_id, side)], question=question)
        except LocalJudgeError as exc:
            return {"id": row_id, "side": side, "question": question, "error": str(exc)}
        return {"id": row_id, "side": side, "question": question, "p_yes": result["metadata"]["probabilities"]["true"]}

    with ThreadPoolExecutor(args.j) as pool:
        verdicts = list(pool.map(verdict, asked))
    failed = sum("error" in v for v in verdicts)
    print(f"{len(verdicts)} verdicts, {failed} failed; {time.monotonic() - started:.0f} s in all")
    if args.results is not None:
        args.results.mkdir(parents=True, exist_ok=True)
        (args.results / "checklists.json").write_text(json.dumps(checklists, indent=1), encoding="utf-8")
        (args.results / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts), encoding="utf-8")

    rates: dict[tuple[str, str], list[float]] = {}
    for v in verdicts:
        if "p_yes" in v:
            rates.setdefault((v["id"], v["side"]), []).append(v["p_yes"])
    right = compared = near = 0
    for row in rows:
        a, b = rates.get((row["id"], "A")), rates.get((row["id"], "B"))
        if not a or not b:
            continue
        rate_a, rate_b = sum(a) / len(a), sum(b) / len(b)
        compared += 1
        right += ("A" if rate_a > rate_b else "B" if rate_b > rate_a else "tie") == row["label"]
        near += abs(rate_a - rate_b) < NEAR
    print(line("pass rate over the checks", right, compared, len(rows)))
    said_yes = [v["p_yes"] > 0.5 for v in verdicts if "p_yes" in v]
    print(f"the judge said yes to {sum(said_yes)} of {len(said_yes)} checks; {near} pairs within {NEAR} of a tie")


if __name__ == "__main__":
    main()
