"""Peak memory of `localjudge batch` against its number of rows, fresh and resumed.

Run: ``python benchmarks/bench_memory.py [--rows 10000 100000 1000000] [--out FILE]`` (``make bench-memory``)

What is measured is the batch machinery (reading rows, the results file,
resume state, summary, progress), not a model: the judge is a scripted
OpenAI-compatible server on 127.0.0.1 (tests/support/fault_server.py) that
answers at once, and every row has the same values under its own id, so
after one priming row every answer comes from the result cache. Each run is
the real command line in its own process; its peak RSS is that child's
``ru_maxrss``. A second run of the same command is the resume: every row is
already in the results file and is skipped.

It prints rows, peak RSS MB, seconds and the ratio of each peak to the
smallest row count's, for the fresh and the resumed run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from fault_server import FaultServer, completion  # noqa: E402

ROW = {"inputs": "What is 2 + 2?", "outputs": "4", "reference_outputs": "4"}


def write_rows(path: Path, count: int) -> None:
    """``count`` rows with one set of values (so one cached answer serves them all), each its own id."""
    values = json.dumps(ROW)[1:]
    with path.open("w", encoding="utf-8") as out:
        for number in range(count):
            out.write(f'{{"id": "row-{number}", {values}\n')


def run(command: list[str], log: Path) -> tuple[float, float]:
    """One child: (peak RSS MB, seconds), from the child's own rusage (``wait4``)."""
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as err:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - started
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {child.returncode}:\n{log.read_text()[-2000:]}")
    return usage.ru_maxrss / 1024, seconds


def measure(counts: list[int], folder: Path, base_url: str) -> list[dict]:
    cache = folder / "cache.sqlite3"
    base = [sys.executable, "-m", "localjudge", "batch", "--base-url", base_url, "--model", "openai:scripted"]
    base += ["--no-reasoning", "--cache-file", str(cache)]
    prime = folder / "prime.jsonl"
    write_rows(prime, 1)
    run([*base, str(prime), "-o", str(folder / "prime.results.jsonl")], folder / "log")
    found = []
    for count in counts:
        data = folder / f"rows-{count}.jsonl"
        write_rows(data, count)
        command = [*base, str(data), "-o", str(folder / f"rows-{count}.results.jsonl")]
        for kind in ("fresh", "resumed"):
            peak, seconds = run(command, folder / "log")
            found.append({"rows": count, "run": kind, "peak_rss_mb": round(peak, 1), "seconds": round(seconds, 1)})
            print(f"{count:>9} {kind:<8} {peak:>9.1f} MB {seconds:>8.1f} s", flush=True)
        data.unlink()
    for kind in ("fresh", "resumed"):
        first = next(r["peak_rss_mb"] for r in found if r["run"] == kind)
        for record in found:
            if record["run"] == kind:
                record["ratio"] = round(record["peak_rss_mb"] / first, 3)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    server = FaultServer([completion('{"score": true}')])
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    try:
        with tempfile.TemporaryDirectory() as folder:
            found = measure(args.rows, Path(folder), server.base_url)
    finally:
        server.close()
    print(f"\n{'rows':>9} {'run':<8} {'peak RSS MB':>12} {'seconds':>8} {'ratio':>6}")
    for r in found:
        print(f"{r['rows']:>9} {r['run']:<8} {r['peak_rss_mb']:>12.1f} {r['seconds']:>8.1f} {r['ratio']:>6.3f}")
    if args.out:
        args.out.write_text(json.dumps({"runs": found}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
