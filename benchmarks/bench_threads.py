"""Decode threads against a machine's load: a verdict's time with 1 thread and with every CPU, idle and busy.

Run: ``python benchmarks/bench_threads.py [--model SPEC] [--repeats N]`` (``make bench-threads``)

llama.cpp's compute threads wait for each other at every step. On a machine
whose cores are taken by other work, a thread that is descheduled holds up
the rest, so more threads can be much slower than one. This bench measures
it side by side in one run: the same verdict-only evaluations, each judge
loaded with ``n_threads`` 1, every usable CPU, and unset (the default rule:
the CPUs other work leaves free, re-measured while decoding), first on an
idle machine, then busy: with one Python loop per CPU (work that never
waits), and with another llama.cpp process decoding on every CPU (work that
waits at barriers as ours does: another judge, a Ray actor, a local model
server). The figure is the median seconds per verdict, and the threads the
rule chose.
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from localjudge import create_llm_as_judge
from localjudge._cpu import usable_cpus
from localjudge._judges.evaluators import default_prompt

CASES = [
    ("What is 2+2?", "4"),
    ("Name the largest planet in the solar system.", "Saturn"),
    ("How many days are in a leap year?", "366"),
]


def spin(stop) -> None:
    while not stop.is_set():
        sum(range(10_000))


def decode_beside(stop, model_path: str, threads: int) -> None:
    """Another llama.cpp process: free text on the tiny model with ``threads`` threads, until told to stop."""
    from localjudge._clients.llamacpp import LlamaCppClient

    client = LlamaCppClient(model_path, n_ctx=512, n_threads=threads)
    request = {"messages": [{"role": "user", "content": "Tell a long story."}], "max_tokens": 64}
    while not stop.is_set():
        client.chat.completions.create(**request)


def seconds_per_verdict(model_path: Path, n_threads: int | None, repeats: int) -> tuple[float, int]:
    from localjudge._clients.llamacpp import LlamaCppClient

    client = LlamaCppClient(model_path, n_ctx=1024, n_threads=n_threads, prefix_cache_bytes=0)
    try:
        verdict = create_llm_as_judge(
            prompt=default_prompt(has_inputs=True, has_reference=False), judge=client, use_reasoning=False
        )
        verdict(inputs="warm up", outputs="warm up")
        times = []
        for _ in range(repeats):
            for question, answer in CASES:
                started = time.perf_counter()
                verdict(inputs=question, outputs=answer)
                times.append(time.perf_counter() - started)
        return statistics.median(times), client.runtime.n_threads
    finally:
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="default", help="a card name (default, tiny, ...) or a GGUF path")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    from localjudge._clients.resolve import ensure_card_model, find_card

    card = find_card(args.model)
    model_path = ensure_card_model(card) if card is not None else Path(args.model)
    cpus = usable_cpus()
    counts: list[int | None] = [*sorted({1, cpus}), None]
    print(f"model {args.model}; {cpus} usable CPUs")
    print(f"\n{'machine':<32} {'n_threads':>14} {'s/verdict':>10}")
    tiny = str(ensure_card_model(find_card("tiny")))
    conditions = {
        "idle": [],
        f"busy: {cpus} Python loops": [(spin, ())] * cpus,
        f"busy: llama.cpp, {cpus} threads": [(decode_beside, (tiny, cpus))],
    }
    for label, others in conditions.items():
        stop = multiprocessing.Event()
        workers = [multiprocessing.Process(target=f, args=(stop, *a), daemon=True) for f, a in others]
        for worker in workers:
            worker.start()
        time.sleep(3 if others else 0)  # the other work under way before we measure
        try:
            for n_threads in counts:
                figure, used = seconds_per_verdict(model_path, n_threads, args.repeats)
                shown = str(n_threads) if n_threads else f"unset (ran {used})"
                print(f"{label:<32} {shown:>14} {figure:>10.2f}", flush=True)
        finally:
            stop.set()
            for worker in workers:
                worker.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
