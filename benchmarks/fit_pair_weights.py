"""The weighed way's weights: fitted on the pair sets' dev pairs, measured on their test pairs and by cross-validation.

Run: ``python benchmarks/fit_pair_weights.py --checklist DIR --likelihood DIR [--write]``

Each DIR is the ``--results`` folder of one ``check-judge --split all`` run
over the three pair sets (``llmbar-natural``, ``adversarial``,
``llmbar-adversarial``) with the default judge: ``--checklist
--on-disagreement probabilities`` and ``--likelihood``. The weighed way
asks exactly those requests, so its verdict on a pair is what these
records give through the weights.

It fits the two weights on every set's dev pairs, then prints, per set and
split, how many pairs the weighed way gets right beside each way alone
(dev: the rows it was fitted on; test: held out), and LLMBar natural
cross-validated: each of five folds of its 100 pairs judged with weights
fitted on the other four and the adversarial sets' dev pairs. ``--write``
ships the weights fitted on the dev pairs (``localjudge/_trust/shipped/pair-weights.json``).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from localjudge._cli.commands.check import CHECK_SETS, load_set
from localjudge._specs.cards import find_card
from localjudge._trust.pair_weights import SHIPPED_PAIR_WEIGHTS, PairSignals, PairWeights, fit_pair_weights

SETS = ("llmbar-natural", "adversarial", "llmbar-adversarial")
Sample = tuple[str, PairSignals, bool]  # id, signals, whether A won


def records(folder: Path, set_name: str) -> dict[str, Mapping[str, Any]]:
    lines = (folder / f"{set_name}.results.jsonl").read_text(encoding="utf-8").splitlines()
    return {record["id"]: record for record in map(json.loads, lines)}


def samples(checklist: Path, likelihood: Path, set_name: str) -> dict[str, list[Sample]]:
    """The set's pairs by split, each with both ways' figures; a pair either way failed on is left out, and said."""
    checked, read = records(checklist, set_name), records(likelihood, set_name)
    by_split: dict[str, list[Sample]] = {}
    for split in ("dev", "test"):
        rows = []
        for row in load_set(CHECK_SETS[set_name], split):
            one, other = checked.get(row["id"], {}), read.get(row["id"], {})
            if "result" not in one or "result" not in other:
                print(f"  {set_name} {row['id']}: left out (no verdict from one of the ways)")
                continue
            p_a = one["result"]["metadata"]["probabilities"]["A"]
            gains = other["result"]["metadata"]["likelihood_gain"]
            rows.append((row["id"], PairSignals(float(p_a), float(gains["A"]), float(gains["B"])), row["label"] == "A"))
        by_split[split] = rows
    return by_split


def right(rows: list[Sample], pick: Any) -> int:
    return sum(1 for _, signals, a_won in rows if pick(signals) == a_won)


def picks(weights: PairWeights) -> dict[str, Any]:
    return {
        "weighed": lambda s: weights.probability_a(s) > 0.5,
        "checklist": lambda s: s.checks_p_a > 0.5,
        "likelihood": lambda s: s.gain_a > s.gain_b,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checklist", type=Path, required=True)
    parser.add_argument("--likelihood", type=Path, required=True)
    parser.add_argument("--write", action="store_true", help="ship the weights fitted on the dev pairs")
    args = parser.parse_args()

    sets = [name for name in SETS if (args.checklist / f"{name}.results.jsonl").is_file()]
    data = {name: samples(args.checklist, args.likelihood, name) for name in sets}
    dev = [(signals, a_won) for name in sets for _, signals, a_won in data[name]["dev"]]
    card = find_card("default")
    about = {"fitted_on": "the dev pairs of " + ", ".join(sets), "model": card.name, "model_sha256": card.sha256}
    weights = fit_pair_weights(dev, about=about)
    print(f"weights fitted on {len(dev)} dev pairs: checks {weights.checks:.4f}, gain {weights.gain:.4f}")
    print(f"{'set':<20}{'split':<7}{'pairs':>6}" + "".join(f"{name:>12}" for name in picks(weights)))
    for name in sets:
        for split in ("dev", "test"):
            rows = data[name][split]
            cells = "".join(f"{right(rows, pick) / len(rows):>12.2f}" for pick in picks(weights).values())
            print(f"{name:<20}{split:<7}{len(rows):>6}{cells}")

    # LLMBar natural cross-validated: folds from a seed-0 shuffle of its sorted ids
    natural = sorted(data["llmbar-natural"]["dev"] + data["llmbar-natural"]["test"], key=lambda sample: sample[0])
    random.Random(0).shuffle(natural)
    folds = [natural[start::5] for start in range(5)]
    adversarial_dev = [(s, w) for name in sets if name != "llmbar-natural" for _, s, w in data[name]["dev"]]
    held_out = 0
    for place, fold in enumerate(folds):
        rest = [(s, w) for other, rows in enumerate(folds) if other != place for _, s, w in rows]
        fold_weights = fit_pair_weights(rest + adversarial_dev)
        held_out += right(fold, picks(fold_weights)["weighed"])
    print(f"llmbar-natural cross-validated (5 folds): {held_out}/{len(natural)} = {held_out / len(natural):.2f}")
    if args.write:
        weights.write(SHIPPED_PAIR_WEIGHTS)
        print(f"written to {SHIPPED_PAIR_WEIGHTS}")


if __name__ == "__main__":
    main()
