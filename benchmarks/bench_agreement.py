"""The pairwise judge against human labels: LLMBar's 100 natural pairs.

Run: ``python benchmarks/bench_agreement.py [--model SPEC] [--limit N] [-j N]`` (``make bench-agreement``)

Each pair (an instruction and two outputs, one of which people judged
better) is judged with ``localjudge batch --pairwise``, in both orders, then
measured with ``localjudge agreement``: accuracy against the human choice,
position consistency (both orders agreed) and the flip share (the verdict
followed the position). Each is measured again calibrated, held out: a
correction is fitted on four fifths of the pairs (with the judge's readout
of a content-free pair) and applied to the other fifth. Four variants: the verdict alone or reasoning
first, each with and without format instructions (the schema's meaning in
words, which local models get by default). The pairs are the package's own copy
(``localjudge/check_sets/``, with LLMBar's MIT licence).

The default judge is Qwen2.5-Coder-1.5B-Instruct; ``--model tiny`` runs the
270M base model, whose figures show the machinery working, not judgement.
``localjudge check-judge --set llmbar-natural`` judges the same pairs (shipped
with the package, in a dev and a test half) with any judge.
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

import numpy as np

from localjudge._cli.commands.check import CHECK_SETS, load_set
from localjudge._judges.both_orders import combine_orders, read_order
from localjudge._judges.core import recalibrate
from localjudge._trust.correction import Correction
from localjudge._trust.fit import content_free_values, fit_calibration, label_index, labelled_samples, mean_readout


def pairs(limit: int | None) -> list[dict]:
    return load_set(CHECK_SETS["llmbar-natural"], "all", limit)


def localjudge(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "localjudge", *arguments], capture_output=True, text=True)


def judge_pairs(name: str, data: Path, results: Path, options: list[str]) -> list[dict]:
    summary = results.with_suffix(".summary.json")
    scored = localjudge("batch", str(data), "--pairwise", "-o", str(results), "--summary", str(summary), *options)
    if scored.returncode not in (0, 1):
        raise SystemExit(f"{name}: batch failed\n{scored.stderr[-3000:]}")
    return [json.loads(line) for line in results.read_text(encoding="utf-8").splitlines()]


def run_variant(name: str, data: Path, work: Path, options: list[str]) -> dict:
    results = work / f"{name}.results.jsonl"
    summary = results.with_suffix(".summary.json")
    started = time.monotonic()
    records = judge_pairs(name, data, results, options)
    measured = localjudge(
        "agreement", str(results), "--labels", str(data), "--json", "--plot", str(results.with_suffix(".png"))
    )
    if measured.returncode != 0:
        raise SystemExit(f"{name}: agreement failed\n{measured.stderr[-3000:]}")
    report = json.loads(measured.stdout)
    report["failed"] = json.loads(summary.read_text())["failed"]
    report["seconds"] = time.monotonic() - started
    if options[options.index("--model") + 1].startswith("openai:"):
        return report  # a server gives no probabilities to calibrate
    content_free = work / f"{name}.content-free.jsonl"
    values = content_free_values(["inputs"], pairwise=True)
    content_free.write_text("".join(json.dumps({"id": f"cf{i}", **v}) + "\n" for i, v in enumerate(values)))
    prior_records = judge_pairs(name, content_free, work / f"{name}.content-free.results.jsonl", options)
    answered = [r["result"] for r in prior_records if "result" in r]
    prior = mean_readout(answered, CLASSES, pairwise=True) if answered else None  # none: temperature only
    labels = {json.loads(line)["id"]: json.loads(line)["label"] for line in data.read_text().splitlines()}
    report["calibrated"] = calibrated_held_out(records, labels, prior)
    report["prior"] = prior
    return report


CLASSES = ('"A"', '"B"')


def pair_verdict(record: dict, correction: Correction) -> dict:
    """A pair's result again, each order's probabilities corrected by position, as ``--calibrated`` does."""
    orders = []
    for seen, swapped in zip(record["result"]["metadata"]["order_probabilities"], (False, True), strict=True):
        metadata = {"probabilities": {json.dumps(side): p for side, p in seen.items()}}
        winner = max(seen, key=seen.get)
        parsed, metadata = recalibrate({"winner": winner}, metadata, "winner", correction)
        orders.append(read_order(parsed, metadata, swapped))
    return combine_orders("preference", *orders)


def calibrated_held_out(records: list[dict], labels: dict[str, str], prior: list[float] | None, folds: int = 5) -> dict:
    """The pair verdicts with a correction fitted on the other folds' pairs: accuracy, consistency, flips.

    Each fold's correction is chosen as ``localjudge calibrate`` chooses
    (cross-validated within the training pairs, kept only if it helped), then
    applied to each held-out pair as ``--calibrated`` applies it. The rows are
    those ``agreement`` compares: every pair the judge answered.
    """
    scored = [r for r in records if "order_probabilities" in (r.get("result", {}).get("metadata") or {})]
    indices = {r["id"]: label_index(labels[r["id"]], CLASSES, pairwise=True) for r in scored}
    order = np.random.default_rng(0).permutation(len(scored))
    right = consistent = flipped = 0
    chosen = Counter()
    for held in np.array_split(order, folds):
        samples = labelled_samples([scored[i] for i in np.setdiff1d(order, held)], indices, CLASSES, pairwise=True)
        inner = min(folds, len(set(samples.groups)) // 2)  # a small run (--limit) has few pairs to fit on
        correction = Correction(CLASSES)
        if inner >= 2 and len(set(samples.labels)) == 2:
            fit = fit_calibration(samples, CLASSES, prior, folds=inner)
            chosen[fit.chosen or "none helped"] += 1
            correction = fit.correction or correction
        else:
            chosen["too few pairs to fit"] += 1
        for index in held:
            verdict = pair_verdict(scored[index], correction)["metadata"]
            consistent += verdict["consistent"]
            flipped += set(verdict["verdicts"]) == {"A", "B"}
            right += verdict["winner"] == labels[scored[index]["id"]]
    count = len(scored)
    return {
        "accuracy": right / count if count else None,
        "position_consistency": consistent / count if count else None,
        "flip_rate": flipped / count if count else None,
        "ties": count - consistent,
        "chosen": dict(chosen),
    }


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
        held_out = report.get("calibrated")
        if held_out is None:
            continue
        print(
            f"| {name}, calibrated (held out) | {_number(held_out['accuracy'])} "
            f"| {_number(held_out['position_consistency'])} | {_number(held_out['flip_rate'])} "
            f"| {held_out['ties']} | {report['failed']} | |"
        )
    print("\nContent-free readout, P(first shown, second shown), and the correction each fold kept:")
    for name, report in reports.items():
        if "calibrated" not in report:
            continue
        chosen = ", ".join(f"{kind} {count}" for kind, count in report["calibrated"]["chosen"].items())
        prior = "none answered" if report["prior"] is None else f"{report['prior'][0]:.2f}, {report['prior'][1]:.2f}"
        print(f"  {name}: {prior}; {chosen}")
    print(f"\nFor scale: always answering B would score {labels['B'] / len(rows):.2f}; a coin, 0.50.")


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    main()
