"""Dataset runs: rows/s of `localjudge batch` on each engine, on one dataset, side by side.

Run: ``python benchmarks/bench_batch.py [--rows N]`` (``make bench-batch``)

Every configuration is the real command line in a fresh process, on the same
rows with the tiny model (Gemma 3 270M), ``--no-cache`` and the same ``--max-tokens``:

- local, one row at a time, and 8 rows decoded side by side (``-j 8``);
- a pool of two llama.cpp servers (``--base-url`` twice, ``-j 4``), and one
  of them alone for comparison;
- Ray (``--engine ray``), a local cluster of 2 actors, 1 and 4 rows each.

It prints rows/s (the run's own summary: rows finished over the run's time;
for the local engine after the model is loaded, for Ray including the
cluster's start and each actor loading its model, as a user waits for them),
the wall time of the whole command, and whether each engine gave the
verdicts of the local one-at-a-time run. The servers sample with their own
defaults (no temperature is sent), so their verdicts are not compared.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
SERVER_LAUNCHER = ROOT / "tests" / "support" / "llama_server.py"
MAX_TOKENS = "96"


def make_rows(count: int) -> list[dict]:
    rows = []
    for i in range(count):
        a, b = 3 + i, 7 + 2 * i
        answer = a + b if i % 3 else a + b + 1
        rows.append({"id": f"q{i}", "inputs": f"What is {a} + {b}?", "outputs": f"{a} + {b} = {answer}."})
    return rows


def run_batch(data: Path, out: Path, *options: str) -> dict:
    summary = out.with_suffix(".summary.json")
    started = time.monotonic()
    command = [sys.executable, "-m", "localjudge", "batch", str(data), "-o", str(out), "--no-cache"]
    command += ["--max-tokens", MAX_TOKENS, "--summary", str(summary), *options]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "RAY_ADDRESS": ""})
    if done.returncode not in (0, 1):  # 1: some rows failed, which the table shows
        raise SystemExit(f"{' '.join(options)} failed:\n{done.stderr[-3000:]}")
    return {**json.loads(summary.read_text()), "wall": time.monotonic() - started}


def start_server(model: Path, log_dir: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, str(SERVER_LAUNCHER), "--model", str(model), "--model_alias", "gemma-3-270m"]
    command += ["--chat_format", "gemma", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"]
    with open(log_dir / f"server-{port}.log", "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/models", timeout=1).status_code == 200:
                return process, url
        except httpx.HTTPError:
            time.sleep(0.25)
    process.kill()
    raise SystemExit(f"the llama.cpp server on port {port} did not start")


def verdicts(path: Path) -> list:
    return [json.loads(line).get("result", {}).get("score") for line in path.read_text().splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=32)
    args = parser.parse_args()
    from localjudge._clients.resolve import ensure_tiny_model

    model = ensure_tiny_model()
    with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
        work = Path(tmp)
        data = work / "rows.jsonl"
        data.write_text("".join(json.dumps(row) + "\n" for row in make_rows(args.rows)), encoding="utf-8")
        results: list[tuple[str, dict, Path]] = []

        def measure(label: str, name: str, *options: str) -> None:
            out = work / f"{name}.jsonl"
            summary = run_batch(data, out, *options)
            results.append((label, summary, out))
            print(f"  {label}: {summary['rows_per_second']:.2f} rows/s", file=sys.stderr)

        measure("local, -j 1", "local1")
        measure("local, -j 8 (side by side)", "local8", "-j", "8")
        servers: list[tuple[subprocess.Popen, str]] = []
        try:
            for _ in range(2):
                servers.append(start_server(model, work))
            remote = ["--model", "openai:gemma-3-270m"]
            measure("one llama.cpp server, -j 4", "server1", *remote, "--base-url", servers[0][1], "-j", "4")
            pool = [item for _, url in servers for item in ("--base-url", url)]
            measure("pool of 2 llama.cpp servers, -j 4", "pool2", *remote, *pool, "-j", "4")
        finally:
            for process, _ in servers:
                process.terminate()
                process.wait(timeout=30)
        measure("Ray, 2 actors, -j 1 each", "ray2x1", "--engine", "ray", "--actors", "2")
        measure("Ray, 2 actors, -j 4 each", "ray2x4", "--engine", "ray", "--actors", "2", "-j", "4")

        reference = verdicts(results[0][2])
        print(f"\n{args.rows} rows, tiny model, --max-tokens {MAX_TOKENS}, {os.cpu_count()} CPUs\n")
        print(
            "| engine | rows/s | vs local -j 1 | command wall s | failed rows | tokens out | verdicts as local -j 1 |"
        )
        print("|---|---|---|---|---|---|---|")
        base = results[0][1]["rows_per_second"]
        for label, summary, out in results:
            same = (
                "n/a (sampled)"
                if "server" in label
                else f"{sum(a == b for a, b in zip(verdicts(out), reference, strict=True))}/{len(reference)}"
            )
            print(
                f"| {label} | {summary['rows_per_second']:.2f} | {summary['rows_per_second'] / base:.2f}x "
                f"| {summary['wall']:.1f} | {summary['failed']} | {summary['tokens']['completion']} | {same} |"
            )


if __name__ == "__main__":
    main()
