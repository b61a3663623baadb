"""What a verdict costs on the default model: the readout, the no-reasoning verdict against prefill, memory, start-up.

Run: ``python benchmarks/bench_verdicts.py [--repeats N] [--only PART ...]`` (part of ``make bench``)

Side by side in one process, on the same judge prompts, medians over repeats:

- readout: the share of a verdict's time spent in the readout (boolean with
  and without reasoning, continuous), and the wall time with it on and off;
- no-reasoning verdict: the whole call (prefill of prompt and forced
  ``{"score":`` in one batch, the verdict token, the readout) against the
  prefill of the same prompt alone, both on the batcher's thread (a prefill
  run from another thread competes with the idle, spinning OpenMP team of
  the batcher's and measures that fight, not the prefill);
- a shared prefix: prompts that share ~1,000 tokens of instructions, the
  prefill of a warm call (the kept prefix resumed) against the first, cold one;
  and the canonical cuts' price and gain: a cold prompt read in the fine cuts
  below 128 tokens against 128-token cuts only, and the default way's
  comparison prompt warm (resumed inside its fixed instructions) against cold;
- requests in flight: the same requests from 1, 2, 4 and 8 threads on a
  client with 8 slots, requests/s against one at a time, and whether every
  answer matched the one-at-a-time answer; and the limits, on
  the same runtime: for free-text answers, raw ``llama_decode`` doing the
  same work (the same prompts read one by one, then one-token steps of 8
  sequences per round, in runs of at most ``SHARED_STEP_LIMIT`` as ours
  must, or of one sequence), and for judge calls the prefill of their
  prompts alone, which no batching shortens on a CPU (they reason first, so
  the rest of their time is decoding);
- 8 judge calls through ``create_async_llm_as_judge(model=...)``, resolved as a
  library user's are, gathered against one by one, and against raw
  ``llama_decode`` doing the same work;
- the default way of judging an answer (the judge's own answer first), model
  loaded: one answer's time, and a run of three answers to each question
  against the same run judged verdict only;
- a pairwise judgement: its two orders sent side by side, as the pairwise
  judge sends them, the second's prefill against the first's (they share
  the prompt up to the first answer);
- peak RSS of this process, and the time a fresh ``localjudge score`` takes
  to print its first verdict (a new process, caches warm).
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import functools
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from localjudge import create_async_llm_as_judge, create_llm_as_judge
from localjudge._cli.commands.check import find_set, load_set
from localjudge._decoding.steps import Start
from localjudge._judges.evaluators import default_prompt
from localjudge._judges.pairwise import create_pairwise_judge

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


def prefill_on_batcher(client, tokens) -> float:
    """Seconds to read ``tokens`` as a fresh prompt, run as the client's own calls run: on its batcher's thread."""

    def prefill_only():
        yield Start(tokens)

    started = time.perf_counter()
    client.batcher.run(prefill_only())
    return time.perf_counter() - started


def raw_decode_seconds(runtime, prompts: list[list[int]], lengths: list[int], together: bool) -> float:
    """Raw ``llama_decode`` doing a run's work: each prompt read, then ``length - 1`` greedy one-token steps.

    ``together``: the prompts are read one by one into sequences 0..n-1, then
    every unfinished sequence takes its step in each round, in runs of at
    most ``SHARED_STEP_LIMIT`` (the most that keep each sequence's logits
    its own); otherwise each prompt runs alone on sequence 0. No grammar, no
    sampler, no batcher: the logits of each step are copied out and argmax
    picks the next token.
    """
    from localjudge._runtimes.llamacpp import SHARED_STEP_LIMIT, _even_runs

    with runtime.lock:
        started = time.perf_counter()
        groups = [list(range(len(prompts)))] if together else [[i] for i in range(len(prompts))]
        for group in groups:
            seqs = {index: (0 if not together else index) for index in group}
            tokens, positions, left = {}, {}, {}
            for index in group:
                runtime._reset(seqs[index])
                logits = runtime._evaluate(prompts[index], 0, seqs[index])
                tokens[index], positions[index], left[index] = int(logits.argmax()), len(prompts[index]), lengths[index]
            while True:
                stepping = [index for index in group if left[index] > 1]
                if not stepping:
                    break
                for run in _even_runs(stepping, SHARED_STEP_LIMIT):
                    runtime._decode([(seqs[i], tokens[i], positions[i], True) for i in run])
                    for row, index in enumerate(run):
                        tokens[index] = int(runtime._logits(row).argmax())
                        positions[index] += 1
                        left[index] -= 1
        return time.perf_counter() - started


def in_flight_rows(prompt: str, model_path: Path) -> list[tuple[str, float, str, str]]:
    """Requests/s with 1, 2, 4 and 8 in flight on one 8-slot client, against 1 (best of 2 runs each).

    Two loads: judge calls (mostly the reading of their prompts, which
    batching cannot speed up) and free-text answers of 64 tokens (mostly
    decoding, which it can). Every answer is checked against the answer
    the same request got with one in flight.
    """
    from localjudge._clients.llamacpp import LlamaCppClient

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

    rows, walls, counts = [], {}, {}
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
            walls[load, in_flight] = best
            counts[load] = [n for _, n in found]
            base = base or rate
            answers = answers or [text for text, _ in found]
            same = sum(text == first for (text, _), first in zip(found, answers, strict=True))
            tokens = sum(n for _, n in found)
            note = f"{rate:.2f}/s, {tokens / best:.0f} output tok/s; {same}/{len(requests)} answers as with 1"
            goal = ">= 3" if in_flight == 8 else "-"
            rows.append((f"{load}, {in_flight} in flight: requests/s vs 1", rate / base, goal, note))

    runtime = client.runtime
    answers_load = loads["64-token answers"]
    prompts = [runtime.prompt_tokens(client.template.render_parts(r["messages"])) for r in answers_load]
    lengths = counts["64-token answers"]
    alone = raw_decode_seconds(runtime, prompts, lengths, together=False)
    together = raw_decode_seconds(runtime, prompts, lengths, together=True)
    raw_ratio = alone / together
    ours_ratio = walls["64-token answers", 1] / walls["64-token answers", 8]
    note = f"{sum(lengths) / together:.1f} vs {sum(lengths) / alone:.1f} tok/s, the same prompts and lengths"
    rows.append(("raw llama_decode, same work: 8 vs 1 at a time", raw_ratio, "-", note))
    note = f"ours {ours_ratio:.2f}x against raw {raw_ratio:.2f}x"
    rows.append(("64-token answers, 8 in flight: ours / raw", ours_ratio / raw_ratio, ">= 0.85", note))

    judge_load = loads["judge calls"]
    prefill = sum(
        prefill_on_batcher(client, runtime.prompt_tokens(client.template.render_parts(r["messages"])))
        for r in judge_load
    )
    note = f"{walls['judge calls', 8]:.2f} s for {len(judge_load)} calls; their prompts alone {prefill:.2f} s"
    # these calls reason first (up to 48 tokens): the figure says how much of their time is decoding, not a limit
    rows.append(("judge calls, 8 in flight / their prefill", walls["judge calls", 8] / prefill, "-", note))

    client.close()
    return rows


def gathered_rows(prompt: str, spec: str) -> list[tuple[str, float, str, str]]:
    """8 judge calls through ``create_async_llm_as_judge(model=spec)`` gathered, against one by one, and raw decode.

    The evaluator resolves its model as a library user's does (no client
    given: :data:`~localjudge._specs.options.LIBRARY_PARALLEL` slots), asks
    OpenEvals' way (reasoning, which a local judge decodes after the
    verdict), and is set against raw ``llama_decode`` doing the same work:
    the same prompts and answer lengths, 8 sequences a round against one at
    a time.
    """
    evaluator = create_async_llm_as_judge(prompt=prompt, model=spec)
    client = evaluator.core.client
    cases = CASES + CASES[:2]

    async def one_at_a_time():
        return [await evaluator(inputs=q, outputs=a) for q, a in cases]

    async def gathered():
        return await asyncio.gather(*(evaluator(inputs=q, outputs=a) for q, a in cases))

    alone_results = asyncio.run(one_at_a_time())  # the shared prompt starts are kept, as in any run
    sequential, _ = timed(lambda: asyncio.run(one_at_a_time()), 1)
    concurrent_wall, gathered_results = timed(lambda: asyncio.run(gathered()), 1)
    same = sum(a == b for a, b in zip(alone_results, gathered_results, strict=True))
    ours = sequential / concurrent_wall

    requests = [evaluator.core.build_request(q, a, None, {}) for q, a in cases]
    lengths = [client.chat.completions.create(**r).usage.completion_tokens for r in requests]
    prompts = [client.runtime.prompt_tokens(client.template.render_parts(r["messages"])) for r in requests]
    raw = raw_decode_seconds(client.runtime, prompts, lengths, together=False) / raw_decode_seconds(
        client.runtime, prompts, lengths, together=True
    )
    slots = client.runtime.slots
    note = (
        f"{sequential:.2f} s one by one, {concurrent_wall:.2f} s gathered on {slots} slots; {same}/8 results as alone"
    )
    return [
        ("async judge, asyncio.gather vs one by one", ours, "-", note),
        ("  the same work in raw llama_decode, 8 vs 1", raw, "-", f"{sum(lengths)} tokens decoded"),
        ("async judge gathered: ours / raw", ours / raw, ">= 0.85", f"ours {ours:.2f}x against raw {raw:.2f}x"),
    ]


def default_way_rows(spec: str) -> list[tuple[str, float, str, str]]:
    """What a short answer judged the default way costs, model loaded: one at a time, and in a run that shares questions.

    The default for an answer without a reference writes the judge's own
    answer first. Rows that share a question share it (the result cache
    answers the same request once), so a run of several answers to each
    question is set against the same run judged verdict only (``--way plain``).
    """
    import tempfile

    from localjudge._cli.commands.judging import evaluator_from_settings
    from localjudge._cli.commands.settings import JudgeSettings
    from localjudge._clients.result_cache import ResultCache
    from localjudge._judges.ways import WAYS

    answers = ["4", "Paris", "Jupiter", "366", "Leonardo da Vinci", "100 degrees"]
    rows = [(q, a) for (q, given), right in zip(CASES, answers, strict=True) for a in (given, right, "I do not know.")]
    with tempfile.TemporaryDirectory() as folder:
        walls = {}
        for name, way in (("default", None), ("plain", WAYS["plain"])):
            cache = ResultCache(Path(folder) / f"{name}.sqlite3")
            settings = JudgeSettings(model_spec=spec, way=way)
            evaluator = evaluator_from_settings(settings, has_inputs=True, has_reference=False, cache=cache)
            for warm_up in ("What is 3+3?", "What is 5+5?"):  # loaded; two prompts that share a start keep it
                evaluator(inputs=warm_up, outputs="6")
            firsts = []
            started = time.perf_counter()
            for index, (question, answer) in enumerate(rows):
                call = time.perf_counter()
                evaluator(inputs=question, outputs=answer)
                if index % 3 == 0:
                    firsts.append(time.perf_counter() - call)
            walls[name] = time.perf_counter() - started, firsts
    default_wall, firsts = walls["default"]
    return [
        (
            "default way, one answer (own answer + verdict)",
            max(firsts),
            "<= 4",
            f"seconds, the slowest of {len(firsts)}, after two rows (as a run past its first two)",
        ),
        (
            "default way, 3 answers per question / plain",
            default_wall / walls["plain"][0],
            "<= 1.3",
            f"{len(rows)} rows: {default_wall:.1f} s against {walls['plain'][0]:.1f} s verdict only",
        ),
    ]


def fine_cut_rows(client) -> list[tuple[str, float, str, str]]:
    """What the prefix cache's fine cuts below 128 tokens cost a cold prompt, and what they save a warm one.

    The default way's comparison prompt read cold in the canonical chunks
    (every 32 tokens below 128) against the same prompt in 128-token chunks
    only, raw ``llama_decode`` on one sequence; and the same prompt warm, as
    a run's third row reads it (resumed from the cut inside its ~120 tokens
    of fixed instructions), against the cold read.
    """
    from localjudge._judges.evaluators import SAME_ANSWER_PROMPT
    from localjudge._runtimes.prefix_cache import CHUNK, chunks

    runtime = client.runtime
    judge = create_llm_as_judge(prompt=SAME_ANSWER_PROMPT, judge=client, use_reasoning=False)
    tokens = [
        client.runtime.prompt_tokens(
            client.template.render_parts(judge.core.build_request(q, a, None, {"reference_outputs": a})["messages"])
        )
        for q, a in CASES
    ]

    def cold(fine: int) -> float:
        with runtime.lock:
            started = time.perf_counter()
            for prompt in tokens:
                runtime._reset(0)
                for begin, end in chunks(0, len(prompt), fine=fine):
                    runtime._evaluate(prompt[begin:end], begin, 0)
            return time.perf_counter() - started

    fine, whole = cold(32), cold(CHUNK)
    prefills = []
    for question, answer in CASES:
        response = client.chat.completions.create(
            **judge.core.build_request(question, answer, None, {"reference_outputs": answer})
        )
        prefills.append(response.decode_stats["prefill_seconds"])
    warm, first = statistics.median(prefills[2:]), prefills[0]
    size = round(statistics.mean(map(len, tokens)))
    return [
        (
            "cold prompt, cut every 32 below 128 / every 128",
            fine / whole,
            "-",
            f"{len(tokens)} prompts of ~{size} tokens, raw llama_decode: {fine:.2f} s vs {whole:.2f} s",
        ),
        (
            "default comparison prompt: warm / cold prefill",
            warm / first,
            "-",
            f"{warm:.3f} s warm (3rd row on), {first:.3f} s cold",
        ),
    ]


def pairwise_rows(client) -> list[tuple[str, float, str, str]]:
    """A pair's two orders sent side by side, as the pairwise judge sends them: the second's prefill against the first's.

    The orders share their prompt up to the first answer; announced together,
    the first keeps that start and the second resumes from it (in whole
    chunks of the prefix cache, so a start shorter than one chunk saves nothing).
    """
    judge = create_pairwise_judge(judge=client, use_reasoning=False)
    pairs = load_set(find_set("llmbar-natural"), "dev", limit=4)
    firsts, seconds, shared = [], [], []
    hits_before = client.runtime.prefixes.hits
    for pair in pairs:
        requests = [  # the two orders' requests, as the evaluator builds them
            judge.core.build_request(pair["inputs"], None, None, {"outputs_a": a, "outputs_b": b})
            for a, b in ((pair["outputs_a"], pair["outputs_b"]), (pair["outputs_b"], pair["outputs_a"]))
        ]
        with concurrent.futures.ThreadPoolExecutor(2) as both:
            responses = list(both.map(lambda request: client.chat.completions.create(**request), requests))
        firsts.append(responses[0].decode_stats["prefill_seconds"])
        seconds.append(responses[1].decode_stats["prefill_seconds"])
        first, second = (client.runtime.prompt_tokens(client.template.render_parts(r["messages"])) for r in requests)
        shared.append(next((i for i, (x, y) in enumerate(zip(first, second, strict=False)) if x != y), len(first)))
    ratio = sum(seconds) / sum(firsts)
    note = f"prefill {sum(seconds):.2f} s vs {sum(firsts):.2f} s over {len(pairs)} pairs sharing"
    note += f" {', '.join(map(str, shared))} tokens; {client.runtime.prefixes.hits - hits_before} resumed"
    return [("pairwise, both orders at once: 2nd / 1st prefill", ratio, "-", note)]


def readout_rows(client, prompt: str, repeats: int) -> list[tuple[str, float, str, str]]:
    """The readout's share of a verdict, and a verdict without reasoning against its prompt's prefill."""
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
                wall, response = timed(functools.partial(client.chat.completions.create, **request), repeats)
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
        whole, _ = timed(functools.partial(verdict, inputs=question, outputs=answer), repeats)
        prefill, _ = timed(functools.partial(prefill_on_batcher, client, tokens), repeats)
        ratios.append(whole / prefill)
    rows.append(
        ("no-reasoning verdict / prefill", statistics.median(ratios), "<= 1.15", f"{len(tokens)}-token prompts, median")
    )

    return rows


def prefix_rows(client) -> list[tuple[str, float, str, str]]:
    """Prompts that share ~1,000 tokens of instructions: a warm call's prefill against the first, cold one."""
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
    return [("shared ~1,000-token prefix: warm / cold prefill", warm / cold, "<= 0.2", note)]


PARTS = ("readout", "prefix", "pairwise", "in-flight", "gathered", "default-way", "fresh")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--model", default="default", help="a card name (default, tiny, ...) or a GGUF path")
    parser.add_argument("--only", action="append", choices=PARTS, help="measure only these parts (repeatable)")
    args = parser.parse_args()
    parts = set(args.only or PARTS)

    from localjudge._clients.llamacpp import LlamaCppClient
    from localjudge._clients.resolve import ensure_card_model, find_card

    card = find_card(args.model)
    model_path = ensure_card_model(card) if card is not None else Path(args.model)
    client = LlamaCppClient(model_path, n_ctx=2048, reasoning_budget=48)
    prompt = default_prompt(has_inputs=True, has_reference=False)
    print(f"model {args.model}; {len(CASES)} prompts; median of {args.repeats}; threads={client.runtime.n_threads}")

    rows = []
    if "readout" in parts:
        rows += readout_rows(client, prompt, args.repeats)
    if "prefix" in parts:
        rows += prefix_rows(client) + fine_cut_rows(client)
    if "pairwise" in parts:
        rows += pairwise_rows(client)
    client.close()
    if "in-flight" in parts:
        rows += in_flight_rows(prompt, model_path)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rows.append(("peak RSS of this run", peak_mb, "<= 700", "MB, with the 8-slot client"))
    if "gathered" in parts:
        rows += gathered_rows(prompt, args.model)
    if "default-way" in parts:
        rows += default_way_rows(args.model)
    if "fresh" in parts:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "localjudge._cli", "score", "--inputs", "What is 2+2?", "--outputs", "4"],
            check=True,
            capture_output=True,
        )
        rows.append(
            ("first verdict, a fresh `localjudge score`", time.perf_counter() - started, "-", "seconds, caches warm")
        )

    print(f"\n{'row':<48} {'figure':>8}  {'goal':<8} note")
    for name, figure, goal, note in rows:
        print(f"{name:<48} {figure:>8.2f}  {goal:<8} {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
