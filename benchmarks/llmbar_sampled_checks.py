"""Several checklists per pair: does averaging over checklists the judge wrote help it pick the better output?

Run: ``python benchmarks/llmbar_sampled_checks.py [--split dev|test] [--model SPEC] [-j N] [--results DIR]``

The checklist way (``--checklist --on-disagreement probabilities --no-reasoning``)
rests on one greedy checklist, and one poor question can carry the pair. Here
each pair gets three: the greedy one and two sampled at temperature 0.7 (seeds
1 and 2; a cut or empty one is drawn again with another seed, up to three times).
Each checklist is judged in both orders side by side, and the pair goes to the
side whose P(A), averaged over the checklists, is the larger. Fixed before it
ran: it goes to test only with at least 43 of the 50 dev pairs right and no
failed row.

It prints, for the split: the greedy checklist alone, each sampled one alone,
and the mean, each with its 95% interval, and McNemar's test of the mean
against the greedy checklist on the same pairs.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from localjudge._cli.commands.check import find_set, load_set
from localjudge._cli.commands.judging import judge_from_settings
from localjudge._cli.commands.row_judge import RowJudge
from localjudge._cli.commands.settings import JudgeSettings, WayFlags
from localjudge._datasets.batch import score_rows
from localjudge._judges.checklist import Checklist
from localjudge._trust.agreement import accuracy_interval, compare_paired
from localjudge.errors import LocalJudgeError

TEMPERATURE = 0.7
SAMPLED_SEEDS = (1, 2)
DRAWS = 3  # a cut or empty sampled checklist is drawn again, with seed + 1000 each time


def write_checklists(
    settings: JudgeSettings, rows: Sequence[Mapping[str, Any]], seeds: Sequence[int] = SAMPLED_SEEDS
) -> dict[str, list[str]]:
    """Each row's checklists: the greedy one first, then one per sampled seed, all decoded side by side.

    A checklist that could not be written is empty.
    """
    client = judge_from_settings(settings)
    checklist = Checklist()
    backend = type(client).__name__
    wanted = [(row["id"], None) for row in rows] + [(row["id"], seed) for seed in seeds for row in rows]
    inputs = {row["id"]: row["inputs"] for row in rows}
    written: dict[tuple[str, Any], str] = {}
    for draw in range(DRAWS):
        missing = [(row_id, seed) for row_id, seed in wanted if (row_id, seed) not in written]
        if not missing:
            break
        requests = []
        for row_id, seed in missing:
            request = checklist.request(inputs[row_id], None)
            if seed is not None:
                request |= {"temperature": TEMPERATURE, "seed": seed + 1000 * draw}
            requests.append(request)
        for key, response in zip(missing, client.create_many(requests, return_exceptions=True), strict=True):
            if isinstance(response, Exception):
                continue
            try:
                written[key] = checklist.read(response, backend=backend)
            except LocalJudgeError:
                if key[1] is None:  # the greedy one comes out the same every time: no second draw
                    written[key] = ""
    return {row["id"]: [written.get((row["id"], seed), "") for seed in (None, *seeds)] for row in rows}


def p_a(record: Mapping[str, Any]) -> float | None:
    result = record.get("result")
    if not isinstance(result, Mapping):
        return None
    return float(result["metadata"]["probabilities"]["A"])


def line(name: str, right: int, compared: int, total: int) -> str:
    """A way's accuracy over the pairs it has a verdict for, with its interval, and how many of the split those are."""
    if not compared:
        return f"{name:28} no verdict on any of the {total} pairs"
    low, high = accuracy_interval(right, compared)  # type: ignore[misc]  # never None with rows compared
    return f"{name:28} {right / compared:.2f} ({right}/{compared} of {total}; 95% interval {low:.2f}-{high:.2f})"


def llmbar_arguments(doc: str, *, in_flight: str, results: str) -> argparse.Namespace:
    """The options the LLMBar experiment scripts share: split, model, calls in flight, a smoke limit, a results folder."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--split", default="dev", choices=("dev", "test"))
    parser.add_argument("--model", default="default")
    parser.add_argument("-j", type=int, default=2, help=in_flight)
    parser.add_argument("--limit", type=int, help="the split's first N pairs only (a smoke run)")
    parser.add_argument("--results", type=Path, help=results)
    return parser.parse_args()


def main() -> None:
    args = llmbar_arguments(
        __doc__,
        in_flight="pairs in flight (each two orders)",
        results="a folder for the checklists and each row's record",
    )

    check_set = find_set("llmbar-natural")
    rows = load_set(check_set, args.split, args.limit)
    labels = {row["id"]: row.pop("label") for row in rows}
    way = JudgeSettings(model_spec=args.model, way_flags=WayFlags(checklist=True, on_disagreement="probabilities"))
    settings = check_set.settings(way).with_parallel_for(args.j)

    started = time.monotonic()
    checklists = write_checklists(settings, rows)
    written_in = time.monotonic() - started
    unwritten = sum(1 for texts in checklists.values() for text in texts if not text)
    print(f"{len(rows)} pairs, {args.split}: 3 checklists each written in {written_in:.0f} s, {unwritten} not written")

    judged = [
        {**row, "id": f"{row['id']}#{place}", "checks": text}
        for row in rows
        for place, text in enumerate(checklists[row["id"]])
        if text
    ]
    judge = RowJudge(settings, use_cache=False)
    records = {record["id"]: record for record in score_rows(judged, judge, concurrency=args.j)}
    failed = sum(1 for record in records.values() if "error" in record)
    seconds = time.monotonic() - started
    print(f"{len(judged)} checklists judged in both orders, {failed} failed; {seconds:.0f} s in all")
    if args.results is not None:
        args.results.mkdir(parents=True, exist_ok=True)
        (args.results / "checklists.json").write_text(json.dumps(checklists, indent=1), encoding="utf-8")
        with open(args.results / "records.jsonl", "w", encoding="utf-8") as out:
            for record in records.values():
                out.write(json.dumps(record) + "\n")

    def picks(places: Sequence[int]) -> dict[str, str]:
        chosen = {}
        for row in rows:
            keys = (f"{row['id']}#{place}" for place in places)
            found = [share for key in keys if key in records and (share := p_a(records[key])) is not None]
            if found:
                mean = sum(found) / len(found)
                chosen[row["id"]] = "A" if mean > 0.5 else "B" if mean < 0.5 else "tie"
        return chosen

    ways = {"greedy checklist": [0], "sampled, seed 1": [1], "sampled, seed 2": [2], "mean of the three": [0, 1, 2]}
    verdicts = {name: picks(places) for name, places in ways.items()}
    for name, chosen in verdicts.items():
        right = sum(side == labels[row_id] for row_id, side in chosen.items())
        print(line(name, right, len(chosen), len(rows)))
    both = sorted(set(verdicts["greedy checklist"]) & set(verdicts["mean of the three"]))
    test = compare_paired(
        [verdicts["greedy checklist"][row_id] == labels[row_id] for row_id in both],
        [verdicts["mean of the three"][row_id] == labels[row_id] for row_id in both],
    )
    p = "-" if test.p_value is None else f"{test.p_value:.3f}"
    print(
        f"on {len(both)} pairs, {test.first_only} right only by the greedy checklist, {test.second_only} only by "
        f"the mean (McNemar's exact p = {p})"
    )


if __name__ == "__main__":
    main()
