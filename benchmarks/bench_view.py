"""How fast ``localjudge view`` opens a big run: a 100,000-row results file, its first page and a filtered page.

Writes the file with the project's own writer (ResultsFile), rows shaped as
the judges write them (a verdict, its probabilities, a comment; some
errors with raw output), with labels; then times, through the page's own
API on the Starlette app:

- the index built and the first page of rows answered (what opening the page waits for),
- a filtered page (wrong against the label, with words to find) and a sorted one,
- the run's overview (figures against the labels), which the page loads beside the rows.

    python benchmarks/bench_view.py [--rows 100000] [--folder build/bench-view]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

from starlette.testclient import TestClient

from localjudge._datasets.results_file import ResultsFile
from localjudge._view.app import Viewer, create_app
from localjudge._view.sources import open_runs


def write_run(folder: Path, rows: int) -> tuple[Path, dict[str, bool]]:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "big.results.jsonl"
    path.unlink(missing_ok=True)
    chance = random.Random(0)
    labels = {}
    out = ResultsFile(path).open()
    for number in range(rows):
        row_id = f"row-{number:06d}"
        label = chance.random() < 0.5
        labels[row_id] = label
        if chance.random() < 0.01:
            error = {"type": "OutputParseError", "message": "not JSON", "raw_output": '{"score": tr'}
            out.append({"id": row_id, "error": error})
            continue
        score = label if chance.random() < 0.8 else not label
        p_true = min(0.99, max(0.01, chance.gauss(0.8 if score else 0.2, 0.15)))
        comment = f"The answer to question {number} names {chance.choice(['Paris', 'Lyon', 'Nice'])}. " * 3
        out.append(
            {
                "id": row_id,
                "result": {
                    "key": "score",
                    "score": score,
                    "comment": comment,
                    "metadata": {"probabilities": {"true": p_true, "false": 1 - p_true}, "way": "plain", "requests": 1},
                },
                "judged": {"judge": "0123456789abcdef", "row": f"{number:016x}"},
            }
        )
    out.close()
    return path, labels


def timed(client: TestClient, url: str, **params: str) -> tuple[float, dict]:
    started = time.perf_counter()
    answer = client.get(url, params=params)
    answer.raise_for_status()
    return time.perf_counter() - started, answer.json()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--folder", type=Path, default=Path("build/bench-view"))
    arguments = parser.parse_args()
    started = time.perf_counter()
    path, labels = write_run(arguments.folder, arguments.rows)
    print(
        f"wrote {arguments.rows:,} rows ({path.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - started:.1f} s"
    )

    started = time.perf_counter()
    runs = open_runs([path], labels, background=True)  # as localjudge view opens it
    client = TestClient(create_app(Viewer(runs)), base_url="http://127.0.0.1")
    seconds, page = timed(client, "/api/runs/0/rows")
    opened = time.perf_counter() - started
    print(f"first page: {opened:.2f} s from nothing to its 50 rows ({seconds * 1000:.0f} ms for the page itself, "
          f"{len(json.dumps(page)) / 1e3:.0f} kB sent; {page['total']:,} rows read by then)")  # fmt: skip
    started = time.perf_counter()
    runs[0].read_all()
    print(f"the rest read behind the page in {time.perf_counter() - started + opened:.2f} s from the start")
    seconds, page = timed(client, "/api/runs/0/rows", filter="wrong", q="Lyon", offset="500")
    print(f"filtered page (wrong against the label, 'Lyon', rows 501-550): {seconds:.3f} s, {page['total']:,} match")
    seconds, page = timed(client, "/api/runs/0/rows", sort="confidence", desc="1", filter="low_confidence")
    print(f"sorted page (low confidence, by confidence descending): {seconds:.3f} s, {page['total']:,} match")
    seconds, _ = timed(client, "/api/runs/0/rows", q="question 99999.")
    print(f"a word search over every record: {seconds:.3f} s")
    seconds, figures = timed(client, "/api/runs/0")
    accuracy = figures["agreement"]["accuracy"]
    print(
        f"overview (figures against {figures['agreement']['compared']:,} labels, accuracy {accuracy:.3f}): {seconds:.2f} s"
    )


if __name__ == "__main__":
    main()
