"""OpenEvals' prompts against our ready-made evaluators, on the test rows of the check sets that ask the same question.

Each OpenEvals prompt is given as it is to ``create_llm_as_judge`` (verdict only: a local judge decodes the verdict
before any reasoning, so asking for reasoning would not change it) and judges the set's test rows; ours judge them
the way ``localjudge check-judge --split test`` does (its records are in docs/records/). Prints one row per pair
with each one's accuracy and its 95% interval, and writes them to ``--json``.

    python benchmarks/openevals_prompts.py --model default --json docs/records/openevals/prompts.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from localjudge._cli.commands.check import CHECK_SETS, load_set
from localjudge._judges.single import create_async_llm_as_judge
from localjudge._trust.agreement import agreement

#: the check set, and the OpenEvals prompt that asks its question (the graded RAG sets have no boolean twin)
PAIRS = {
    "answers-reference": "CORRECTNESS_PROMPT",
    "conciseness": "CONCISENESS_PROMPT",
    "hallucination": "HALLUCINATION_PROMPT",
    "answer-relevance": "ANSWER_RELEVANCE_PROMPT",
}
AT_ONCE = 8  # calls gathered at once: the library batches them on a local model


async def judge_set(set_name: str, prompt_name: str, model: str, limit: int | None) -> dict:
    """One OpenEvals prompt over one set's test rows: its accuracy against the labels, and the time it took."""
    from openevals import prompts

    rows = load_set(CHECK_SETS[set_name], "test", limit)
    labels = {row["id"]: row.pop("label") for row in rows}
    judge = create_async_llm_as_judge(prompt=getattr(prompts, prompt_name), model=model, use_reasoning=False)
    started, records = time.monotonic(), []
    for start in range(0, len(rows), AT_ONCE):
        batch = rows[start : start + AT_ONCE]
        results = await asyncio.gather(*(judge(**_values(row)) for row in batch), return_exceptions=True)
        for row, result in zip(batch, results, strict=True):
            if isinstance(result, BaseException):
                records.append({"id": row["id"], "error": {"type": type(result).__name__, "message": str(result)}})
            else:
                records.append({"id": row["id"], "result": result})
    report = agreement(records, labels)
    return {
        "set": set_name,
        "prompt": prompt_name,
        "rows": len(rows),
        "failed": sum("error" in record for record in records),
        "accuracy": report.accuracy,
        "interval": list(report.accuracy_interval) if report.accuracy_interval else None,
        "seconds_per_row": (time.monotonic() - started) / max(len(rows), 1),
    }


def _values(row: dict) -> dict:
    """What an OpenEvals prompt is filled with: the row's values, and an empty reference where it has none."""
    values = {key: value for key, value in row.items() if key != "id"}
    values.setdefault("reference_outputs", "")
    return values


def ours(records_dir: Path) -> dict[str, float]:
    """Our evaluators' test accuracy on each set, as check-judge recorded it."""
    found = {}
    for path in sorted(records_dir.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("split") != "test":
            continue
        for entry in record["sets"]:
            found.setdefault(entry["set"], entry["accuracy"])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--limit", type=int, default=None, help="the first N test rows of each set")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    recorded = ours(Path(__file__).resolve().parents[1] / "docs" / "records")
    measured = [asyncio.run(judge_set(name, prompt, args.model, args.limit)) for name, prompt in PAIRS.items()]
    print("| question (check set, test rows) | ours, the default way | OpenEvals' prompt, as written | s/row |")
    print("| --- | --- | --- | --- |")
    for row in measured:
        low, high = row["interval"] or (float("nan"), float("nan"))
        mine = recorded.get(row["set"])
        print(
            f"| {row['set']} ({row['rows']}) | {mine:.2f} | `{row['prompt']}` {row['accuracy']:.2f} "
            f"({low:.2f}-{high:.2f}), {row['failed']} failed | {row['seconds_per_row']:.1f} |"
        )
    if args.json is not None:
        args.json.write_text(json.dumps({"model": args.model, "split": "test", "pairs": measured}, indent=2) + "\n")


if __name__ == "__main__":
    main()
