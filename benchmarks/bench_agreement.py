"""The pairwise judge against human labels: LLMBar's 100 natural pairs.

Run: ``python benchmarks/bench_agreement.py [--model SPEC] [--limit N] [-j N]`` (``make bench-agreement``)

Each pair (an instruction and two outputs, one of which people judged
better) is judged with ``localjudge batch --pairwise``, in both orders, then
measured with ``localjudge agreement``: accuracy against the human choice,
position consistency (both orders agreed) and the flip share (the verdict
followed the position). Four variants: the verdict alone or reasoning
first, each with and without format instructions (the schema's meaning in
words, which local models get by default). The data is read from ``../shared/data/llmbar-natural``
(MIT licence beside it), never copied here.

The default model is a 270M base model: its figures show the machinery
working, not judgement. For a real judge, point ``--model`` at one, e.g.
``python benchmarks/bench_agreement.py --model /models/qwen2.5-7b-instruct-q4_k_m.gguf``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT.parent / "shared" / "data" / "llmbar-natural" / "dataset.json"


def pairs(limit: int | None) -> list[dict]:
    if not DATASET.is_file():
        raise SystemExit(f"{DATASET} is not there: this bench reads LLMBar from the shared data folder")
    rows = []
    for number, item in enumerate(json.loads(DATASET.read_text(encoding="utf-8")), 1):
        rows.append(
            {
                "id": f"llmbar-{number}",
                "inputs": item["input"],
                "outputs_a": item["output_1"],
                "outputs_b": item["output_2"],
                "label": {1: "A", 2: "B"}[item["label"]],
            }
        )
    return rows[:limit] if limit else rows


def localjudge(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "localjudge", *arguments], capture_output=True, text=True)


def run_variant(name: str, data: Path, work: Path, options: list[str]) -> dict:
    results = work / f"{name}.results.jsonl"
    summary = work / f"{name}.summary.json"
    started = time.monotonic()
    scored = localjudge("batch", str(data), "--pairwise", "-o", str(results), "--summary", str(summary), *options)
    if scored.returncode not in (0, 1):
        raise SystemExit(f"{name}: batch failed\n{scored.stderr[-3000:]}")
    measured = localjudge(
        "agreement", str(results), "--labels", str(data), "--json", "--plot", str(results.with_suffix(".png"))
    )
    if measured.returncode != 0:
        raise SystemExit(f"{name}: agreement failed\n{measured.stderr[-3000:]}")
    report = json.loads(measured.stdout)
    report["failed"] = json.loads(summary.read_text())["failed"]
    report["seconds"] = time.monotonic() - started
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--limit", type=int, help="only the first N pairs")
    parser.add_argument("-j", "--concurrency", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--keep", type=Path, help="keep each variant's results and its agreement plot in this folder")
    args = parser.parse_args()
    rows = pairs(args.limit)
    labels = Counter(row["label"] for row in rows)
    common = ["--model", args.model, "-j", str(args.concurrency), "--max-tokens", str(args.max_tokens), "--no-cache"]
    variants = {
        "verdict only, without format instructions": ["--no-reasoning", "--no-format-instructions"],
        "verdict only, with format instructions (default)": ["--no-reasoning"],
        "reasoning first, without format instructions": ["--no-format-instructions"],
        "reasoning first, with format instructions (default)": [],
    }
    if args.model.startswith("openai:"):  # a server reads the schema itself; there is nothing to switch
        variants = {name: options for name, options in variants.items() if "--no-format-instructions" not in options}
    with tempfile.TemporaryDirectory(prefix="bench-agreement-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        data = work / "pairs.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        reports = {}
        for name, options in variants.items():
            reports[name] = run_variant(f"variant{len(reports)}", data, work, common + options)
            print(f"  {name}: done in {reports[name]['seconds']:.0f} s", file=sys.stderr)

    print(f"\nLLMBar natural, {len(rows)} pairs (human choice: A {labels['A']}, B {labels['B']}), model {args.model}")
    print(f"{os.cpu_count()} CPUs; a verdict is a tie when the two orders disagree\n")
    print("| variant | accuracy | position consistency | flip share | ties | failed rows | seconds |")
    print("|---|---|---|---|---|---|---|")
    for name, report in reports.items():
        ties = (
            sum(row[report["classes"].index("tie")] for row in report["confusion"]) if "tie" in report["classes"] else 0
        )
        print(
            f"| {name} | {_number(report['accuracy'])} | {_number(report['position_consistency'])} "
            f"| {_number(report['flip_rate'])} | {ties} | {report['failed']} | {report['seconds']:.0f} |"
        )
    print(f"\nFor scale: always answering B would score {labels['B'] / len(rows):.2f}; a coin, 0.50.")


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    main()
