"""Ways of judging, measured: ``localjudge check-judge`` over variants of one judge, a table of variants x figures.

Run: ``python benchmarks/bench_judging.py [--model SPEC] [--split dev|test] [--set NAME ...] [-j N]``
(``make bench-judging``)

Choose a way of judging on ``--split dev``, then report it on ``--split
test``: the two splits hold different questions (and different LLMBar
pairs), so a figure on test was never tuned on. Each variant is one
``check-judge`` run with its own options; "by prob." is the same run's
verdict read from the judge's probabilities instead of its greedy answer;
"p" is McNemar's exact test of the variant against the first one run on the
same set (below 0.05: the rows tell the two apart).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from localjudge._trust.agreement import AgreementReport, agreement, compare_runs

EXAMPLES = Path(__file__).parent / "data"  # judged examples of our own, on questions in neither split

PAIR_SETS = ("llmbar-natural", "adversarial")
#: each variant's check-judge options, and the sets it applies to (None: every set)
VARIANTS: dict[str, tuple[list[str], tuple[str, ...] | None]] = {
    "verdict only": (["--no-reasoning"], None),
    "verdict only, no format instructions": (["--no-reasoning", "--no-format-instructions"], None),
    "reasoning first": ([], None),
    "reasoning first, no format instructions": (["--no-format-instructions"], None),
    "verdict only, 4 examples after the prompt": (
        ["--no-reasoning", "--few-shot", str(EXAMPLES / "few_shot_answers.jsonl")],
        ("answers",),
    ),
    "verdict only, 4 examples before the prompt": (
        ["--no-reasoning", "--few-shot-first", "--few-shot", str(EXAMPLES / "few_shot_answers.jsonl")],
        ("answers",),
    ),
    "verdict only, 2 judged pairs, likelier side on disagreement": (
        ["--no-reasoning", "--on-disagreement", "probabilities", "--few-shot", str(EXAMPLES / "few_shot_pairs.jsonl")],
        ("llmbar-natural",),
    ),
    "verdict only, against an answer the judge writes itself first": (
        ["--no-reasoning", "--self-reference"],
        ("answers",),
    ),
    "verdict only, against the judge's own answer, calibrated (the fit on the dev rows that ships)": (
        ["--no-reasoning", "--self-reference", "--calibrated"],
        ("answers",),
    ),
    "verdict only, against the judge's own answer, likelier side on disagreement": (
        ["--no-reasoning", "--self-reference", "--on-disagreement", "probabilities"],
        ("adversarial",),
    ),
    "verdict only, after the judge's own checks, likelier side on disagreement": (
        ["--no-reasoning", "--checklist", "--on-disagreement", "probabilities"],
        PAIR_SETS,
    ),
    "reasoning first, likelier side on disagreement": (["--on-disagreement", "probabilities"], ("llmbar-natural",)),
    "verdict only, each answer of a pair judged alone": (["--no-reasoning", "--pointwise"], PAIR_SETS),
    "no verdict: the answer the instruction makes likelier": (["--likelihood"], PAIR_SETS),
    "verdict only, ensemble with the 0.5B, likelier side on disagreement": (
        ["--no-reasoning", "--on-disagreement", "probabilities", "-m", "qwen2.5-coder-0.5b-instruct", "--ensemble"],
        None,
    ),
}


def run(model: str, variant: list[str], sets: list[str], split: str, jobs: int, work: Path) -> list[dict]:
    """Each set's check-judge report, with ``agreement``: the report rebuilt from its records, row by row."""
    report, records = work / "report.json", work / "records"
    command = [sys.executable, "-m", "localjudge", "check-judge", "-m", model, "--split", split, "-j", str(jobs)]
    for name in sets:
        command += ["--set", name]
    command += [*variant, "--json", str(report), "--results", str(records)]
    process = subprocess.run(command, capture_output=True, text=True)
    if process.returncode != 0:
        raise SystemExit(f"check-judge failed:\n{process.stderr[-3000:]}")
    reports = json.loads(report.read_text())["sets"]
    for found in reports:
        lines = (records / f"{found['set']}.results.jsonl").read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines]
        found["agreement"] = agreement(rows, {row["id"]: row["label"] for row in rows})
    return reports


def number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    parser.add_argument("--set", dest="sets", action="append", help="check set (repeatable; default: all)")
    parser.add_argument("--variant", dest="variants", action="append", choices=list(VARIANTS))
    parser.add_argument("-j", type=int, default=2)
    args = parser.parse_args()
    sets = args.sets or ["answers", "graded", "llmbar-natural", "adversarial"]
    print(f"model {args.model}, {args.split} split")
    print("| variant | set | rows | accuracy | p | kappa | ECE | by prob. | consistent | ties | failed | rows/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    first: dict[str, AgreementReport] = {}  # each set's first variant, which the others are tested against
    with tempfile.TemporaryDirectory() as work:
        for name in args.variants or VARIANTS:
            options, applies_to = VARIANTS[name]
            groups = [[s] for s in sets if s in applies_to] if applies_to else [sets]  # examples fit one set
            for group in groups:
                for report in run(args.model, options, group, args.split, args.j, Path(work)):
                    base = first.setdefault(report["set"], report["agreement"])
                    p = None if base is report["agreement"] else compare_runs(report["agreement"], base).p_value
                    print(table_row(name, report, p), flush=True)


def table_row(variant: str, s: dict, p: float | None) -> str:
    cells = [variant, s["set"], str(s["rows"]), number(s["accuracy"]), "-" if p is None else f"{p:.3f}"]
    cells.append(number(s["kappa"]))
    cells.append(number(s["ece"]))
    cells += [number(s["accuracy_by_probability"]), number(s["position_consistency"])]
    cells += [str(s["ties"]) if s["position_consistency"] is not None else "-", str(s["failed"])]
    cells.append(f"{s['rows_per_second']:.2f}")
    return "| " + " | ".join(cells) + " |"


if __name__ == "__main__":
    main()
