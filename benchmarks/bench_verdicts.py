"""What a verdict costs on the default model: the readout, the no-reasoning verdict against prefill, memory, start-up.

Run: ``python benchmarks/bench_verdicts.py [--repeats N]`` (part of ``make bench``)

Side by side in one process, on the same judge prompts, medians over repeats:

- readout: the share of a verdict's time spent in the readout (boolean with
  and without reasoning, continuous), and the wall time with it on and off;
- no-reasoning verdict: the whole call (prefill of prompt and forced
  ``{"score":`` in one batch, the verdict token, the readout) against the
  prefill of the same prompt alone;
- a shared prefix: prompts that share ~1,000 tokens of instructions, the
  prefill of a warm call (the kept prefix resumed) against the first, cold one;
- requests in flight: the same requests from 1, 2, 4 and 8 threads on a
  client with 8 slots, requests/s against one at a time, and whether every
  answer matched the one-at-a-time answer;
- peak RSS of this process, and the time a fresh ``localjudge score`` takes
  to print its first verdict (a new process, caches warm).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from localjudge import create_llm_as_judge
from localjudge.evaluators import default_prompt

CASES = [
    ("What is 2+2?", "4"),
    ("What is the capital of France?", "Paris is the capital of France."),
    ("Name the largest planet in the solar system.", "Saturn"),
    ("How many days are in a leap year?", "365"),
    ("Who painted the Mona Lisa?", "Leonardo da Vinci painted it in the early 1500s."),
    ("Give the boiling point of water at sea level in Celsius.", "It boils at 50 degrees."),
]


def timed(call, repeats: int) -> tuple[float, object]:
    """The median wall time of ``call()`` over ``repeats`` runs, and what its last run returned."""
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def in_flight_rows(prompt: str, model_path: Path) -> list[tuple[str, float, str, str]]:
    """Requests/s with 1, 2, 4 and 8 in flight on one 8-slot client, against 1 (best of 2 runs each).

    Two loads: judge calls (mostly the reading of their prompts, which
    batching cannot speed up) and free-text answers of 64 tokens (mostly
    decoding, which it can). Every answer is checked against the answer
    the same request got with one in flight.
    """
    from localjudge.clients.llamacpp import LlamaCppClient

    client = LlamaCppClient(model_path, n_ctx=1024, reasoning_budget=48, parallel=8)
    evaluator = create_llm_as_judge(prompt=prompt, judge=client)
    loads = {
        "judge calls": [evaluator.core.build_request(q, a, None, {}) for q, a in CASES + CASES[:2]] * 2,
        "64-token answers": [
            {"messages": [{"role": "user", "content": f"Tell a story about {q}"}], "max_tokens": 64, "stop": []}
            for q, _ in CASES + CASES[:2]
        ],
    }

    def call(request: dict) -> tuple[str, int]:
        response = client.chat.completions.create(**request)
        return response.choices[0].message.content, response.usage.completion_tokens

    rows = []
    for load, requests in loads.items():
        for request in requests:  # the shared prompt starts are kept, as in any run
            call(request)
        answers, base = None, 0.0
        for in_flight in (1, 2, 4, 8) if load == "judge calls" else (1, 8):
            best, found = float("inf"), []
            for _ in range(2):
                started = time.perf_counter()
                with concurrent.futures.ThreadPoolExecutor(in_flight) as pool:
                    found = list(pool.map(call, requests))
                best = min(best, time.perf_counter() - started)
            rate = len(requests) / best
            base = base or rate
            answers = answers or [text for text, _ in found]
            same = sum(text == first for (text, _), first in zip(found, answers, strict=True))
            tokens = sum(n for _, n in found)
            note = f"{rate:.2f}/s, {tokens / best:.0f} output tok/s; {same}/{len(requests)} answers as with 1"
            goal = ">= 3" if in_flight == 8 else "-"
            rows.append((f"{load}, {in_flight} in flight: requests/s vs 1", rate / base, goal, note))
    client.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="default", help="a card name (default, tiny, ...) or a GGUF path")
    args = parser.parse_args()

    from localjudge.clients.llamacpp import LlamaCppClient
    from localjudge.models import ensure_card_model, find_card

    card = find_card(args.model)
    model_path = ensure_card_model(card) if card is not None else Path(args.model)
    client = LlamaCppClient(model_path, n_ctx=2048, reasoning_budget=48)
    prompt = default_prompt(has_inputs=True, has_reference=False)
    print(f"model {args.model}; {len(CASES)} prompts; median of {args.repeats}; threads={client.runtime.n_threads}")

    rows = []
    for label, options in (
        ("boolean, reasoning", {}),
        ("boolean, no reasoning", {"use_reasoning": False}),
        ("continuous, reasoning", {"continuous": True}),
    ):
        evaluator = create_llm_as_judge(prompt=prompt, judge=client, **options)
        requests = [evaluator.core.build_request(q, a, None, {}) for q, a in CASES]
        walls = {True: [], False: []}
        readout_seconds = 0.0
        for request in requests:
            for flag in (True, False):
                client.readout = flag
                wall, response = timed(functools.partial(client.chat.completions.create, **request), args.repeats)
                walls[flag].append(wall)
                readout_seconds += response.decode_stats["readout_seconds"] if flag else 0.0
        client.readout = True
        share = readout_seconds / sum(walls[True])
        note = (
            f"wall with/without: {sum(walls[True]) / sum(walls[False]):.2f}x ({sum(walls[True]) / len(requests):.3f} s)"
        )
        rows.append((f"readout share of a verdict, {label}", share, "<= 0.05", note))

    verdict = create_llm_as_judge(prompt=prompt, judge=client, use_reasoning=False)
    ratios = []
    for question, answer in CASES:
        messages = verdict.core.build_request(question, answer, None, {})["messages"]
        tokens = client.runtime.prompt_tokens(client.template.render_parts(messages))
        whole, _ = timed(functools.partial(verdict, inputs=question, outputs=answer), args.repeats)
        prefill, _ = timed(functools.partial(client.runtime.start, tokens), args.repeats)
        ratios.append(whole / prefill)
    rows.append(
        ("no-reasoning verdict / prefill", statistics.median(ratios), "<= 1.15", f"{len(tokens)}-token prompts, median")
    )

    rubric = " ".join(
        f"Rule {i}: a correct answer states the fact plainly and stays on the question." for i in range(70)
    )
    shared = create_llm_as_judge(
        prompt=rubric + "\n<question>{inputs}</question>\n<answer>{outputs}</answer>", judge=client
    )
    prefills, prompt_tokens = [], 0
    for question, answer in CASES:
        response = client.chat.completions.create(**shared.core.build_request(question, answer, None, {}))
        prefills.append(response.decode_stats["prefill_seconds"])
        prompt_tokens = response.usage.prompt_tokens
    cold, warm = prefills[0], statistics.median(prefills[2:])  # the second call keeps the shared start
    note = f"{prompt_tokens}-token prompts; prefill {warm:.3f} s warm, {cold:.3f} s cold"
    rows.append(("shared ~1,000-token prefix: warm / cold prefill", warm / cold, "<= 0.2", note))

    client.close()
    rows += in_flight_rows(prompt, model_path)

    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows.append(("peak RSS of this run", peak_mb, "<= 700", "MB, with the 8-slot client"))

    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "localjudge.cli", "score", "--inputs", "What is 2+2?", "--outputs", "4"],
        check=True,
        capture_output=True,
    )
    rows.append(
        ("first verdict, a fresh `localjudge score`", time.perf_counter() - started, "-", "seconds, caches warm")
    )

    print(f"\n{'row':<44} {'figure':>8}  {'goal':<8} note")
    for name, figure, goal, note in rows:
        print(f"{name:<44} {figure:>8.2f}  {goal:<8} {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
