"""Ways of judging a pair mixed after the fact: several ``check-judge --results`` runs of one set, combined.

Run: ``python benchmarks/mix_pair_ways.py --side-by-side DIR --plain DIR --alone DIR --likelihood DIR [--set NAME]``

Each DIR is the ``--results`` folder of one run on the same rows and split:

- ``--side-by-side``: ``--checklist --on-disagreement probabilities`` (the base);
- ``--plain``: ``--on-disagreement probabilities``, without the checklist;
- ``--alone``: ``--pointwise --checklist``;
- ``--likelihood``: ``--likelihood``.

It prints how many pairs each mix gets right, how many of the pairs whose
two orders disagreed, and McNemar's exact p against the base as it is.
Nothing is fitted: every mix is fixed before it sees a label. Run it on dev
rows to choose; a mix worth keeping becomes an option measured on test.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from localjudge._trust.agreement import compare_paired

Record = Mapping[str, Any]


def load(folder: Path, set_name: str) -> dict[str, Record]:
    lines = (folder / f"{set_name}.results.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["id"]: record for record in map(json.loads, lines)}


def p_a(record: Record) -> float:
    """The run's probability that A is the better answer (both orders averaged, or A's share judged alone)."""
    return float(record["result"]["metadata"]["probabilities"]["A"])


def log_odds(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def side(score: float) -> str:
    return "A" if score > 0 else "B" if score < 0 else "tie"


def mixes(runs: Mapping[str, dict[str, Record]]) -> dict[str, Callable[[str], str]]:
    """Each mix: a pair's id to the side it picks."""
    base, plain, alone, likelihood = (runs[name] for name in ("side_by_side", "plain", "alone", "likelihood"))

    def agreed(row: str) -> bool:
        return bool(base[row]["result"]["metadata"]["consistent"])

    def winner(record: Record) -> str:
        return str(record["result"]["metadata"]["winner"])

    def mean_side(row: str, *parts: dict[str, Record]) -> str:
        return side(sum(p_a(part[row]) for part in parts) / len(parts) - 0.5)

    return {
        "the checklist side by side, as it is": lambda row: winner(base[row]),
        "  disagreements judged each answer alone": lambda row: winner(base[row] if agreed(row) else alone[row]),
        "  disagreements by likelihood": lambda row: winner(base[row] if agreed(row) else likelihood[row]),
        "  log-odds added to each answer alone's": lambda row: side(
            log_odds(p_a(base[row])) + log_odds(p_a(alone[row]))
        ),
        "  probabilities averaged with the plain prompt's": lambda row: mean_side(row, base, plain),
        "  and with each answer alone's": lambda row: mean_side(row, base, plain, alone),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("side-by-side", "plain", "alone", "likelihood"):
        parser.add_argument(f"--{name}", type=Path, required=True, metavar="DIR")
    parser.add_argument("--set", default="llmbar-natural")
    args = parser.parse_args()
    runs = {name: load(getattr(args, name), args.set) for name in ("side_by_side", "plain", "alone", "likelihood")}
    rows = sorted(runs["side_by_side"])
    for name, run in runs.items():
        if sorted(run) != rows:
            raise SystemExit(f"--{name.replace('_', '-')} holds other rows than --side-by-side: judge the same split")
    labels = {row: runs["side_by_side"][row]["label"] for row in rows}
    disagreed = [row for row in rows if not runs["side_by_side"][row]["result"]["metadata"]["consistent"]]
    print(f"{args.set}: {len(rows)} pairs, {len(disagreed)} whose orders disagreed in the checklist run")
    first_rights: list[bool] = []  # the first mix's, the base as it is, which the others are tested against
    for place, (name, pick) in enumerate(mixes(runs).items()):
        rights = [pick(row) == labels[row] for row in rows]
        right, right_disagreed = sum(rights), sum(pick(row) == labels[row] for row in disagreed)
        against = f"; against the base p {compare_paired(rights, first_rights).p_value:.3f}" if place else ""
        first_rights = first_rights or rights
        print(
            f"{name:52} {right / len(rows):.2f} ({right}/{len(rows)}); "
            f"disagreements {right_disagreed}/{len(disagreed)}{against}"
        )


if __name__ == "__main__":
    main()
