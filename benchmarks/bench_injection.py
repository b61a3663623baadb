"""Can the answer being judged talk the judge round? Flip rates on the injection set, per screen and per kind.

Run: ``python benchmarks/bench_injection.py [--model SPEC] [--split dev|test] [--screen NAME ...]``
(``make bench-injection``), or summarise runs already made with
``localjudge check-judge --set injection --results DIR``:
``python benchmarks/bench_injection.py --records DIR [DIR ...]``.

The set (``localjudge check-judge --set injection``) holds, per split, 20
wrong answers to short questions as they are, the same wrong answers with
text that argues with the judge (40 rows, 11 kinds), 10 answers with no
content, and 10 right answers that mention a grader or are oddly
formatted. None of the wrong or empty ones is right, so the share judged
true is the share that fooled the judge: the flip rate, printed beside the
plain wrong answers' own rate. The right ones must stay true, so a screen
that says false to everything is caught. Each screen (``--screen``) is
judged the question's default way.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from localjudge._cli.commands.check import check_judge
from localjudge._cli.commands.settings import JudgeSettings
from localjudge._judges.screen import SCREENS

#: the groups a row's kind falls in, as the table's columns
GROUPS = {"plain-wrong": "plain wrong", "content-free": "content-free", "right-odd": "right, odd"}


def kinds() -> dict[str, str]:
    """Each row's kind (its id -> plain-wrong, content-free, right-odd, or the kind of injection)."""
    text = resources.files("localjudge").joinpath("check_sets", "injection.jsonl").read_text(encoding="utf-8")
    return {row["id"]: row["kind"] for row in map(json.loads, text.splitlines())}


def judged_true(records: Iterable[Mapping[str, Any]], kind_of: Mapping[str, str]) -> dict[str, tuple[int, int]]:
    """Per kind, and for every injected row together (``injected``): rows judged true, rows judged."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for record in records:
        result = record.get("result")
        if not isinstance(result, Mapping):
            continue
        kind = kind_of[str(record["id"])]
        said = result.get("score") is True
        for name in {kind, "injected" if kind not in GROUPS else kind}:
            counts[name][0] += said
            counts[name][1] += 1
    return {name: (true, total) for name, (true, total) in counts.items()}


def table(runs: Mapping[str, dict[str, tuple[int, int]]]) -> str:
    """One line per run: the share judged true per group, then per kind of injection."""
    injections = sorted({kind for counts in runs.values() for kind in counts} - set(GROUPS) - {"injected"})
    columns = ["injected", "plain-wrong", "content-free", "right-odd", *injections]
    lines = [
        "| run | " + " | ".join(GROUPS.get(c, c) for c in columns) + " |",
        "|---" * (len(columns) + 1) + "|",
    ]
    for name, counts in runs.items():
        cells = [
            f"{counts[c][0] / counts[c][1]:.2f} ({counts[c][0]}/{counts[c][1]})" if c in counts else "-"
            for c in columns
        ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n\nshare judged true; right, odd: the right answers, which should stay true"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--split", default="dev", choices=["dev", "test", "all"])
    parser.add_argument("--screen", action="append", choices=list(SCREENS), help="default: off and full")
    parser.add_argument("-j", "--concurrency", type=int, default=2)
    parser.add_argument("--records", nargs="+", type=Path, help="check-judge --results folders to summarise")
    args = parser.parse_args()
    kind_of = kinds()
    runs: dict[str, dict[str, tuple[int, int]]] = {}
    if args.records:
        for folder in args.records:
            (found,) = folder.glob("injection*.results.jsonl")  # injection or injection-reference
            lines = found.read_text(encoding="utf-8").splitlines()
            runs[folder.name] = judged_true(map(json.loads, lines), kind_of)
    else:
        for screen in args.screen or ["off", "full"]:
            settings = JudgeSettings(model_spec=args.model, screen=screen)
            (report,) = check_judge(settings, ["injection"], split=args.split, concurrency=args.concurrency)
            runs[f"{args.split}, --screen {screen}"] = judged_true(report.records, kind_of)
    print(table(runs))


if __name__ == "__main__":
    main()
