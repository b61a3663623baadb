"""Decode speed of the constrained judge against llama.cpp's grammar path, outlines, and free decoding.

Run: ``python benchmarks/bench_decoding.py [--model PATH] [--prompts N] [--max-tokens N]``

Three paths over the same judge prompts (same rendered Gemma prompt, same
prompt tokens, greedy, one process, one path at a time):

(a) ours: ``LlamaCppClient`` with the default boolean score schema;
(b) llama.cpp grammar: ``Llama.create_completion(grammar=LlamaGrammar.from_json_schema(schema))``,
    which is what ``create_chat_completion(response_format={"type": "json_object",
    "schema": ...})`` runs, but fed our prompt tokens so both see the same prompt;
(c) stock outlines: ``outlines.from_llamacpp(Llama)`` generating with
    outlines' own ``JsonSchema`` output type (default whitespace), on the same
    prompt text;
(d) ``OutlinesClient``: the same outlines model and processor, but with the
    grammar from our schema compiler (what ``OutlinesClient`` does by default);
(e) unconstrained, twice: the same ``Llama`` call without a grammar, and our
    own loop without a grammar (raw ``llama_decode`` + argmax, no sampler chain):
    the physical limit for any constrained decoder on this runtime.

Counting: "decode tok/s" is completion tokens / (wall time - prompt prefill).
Our completion tokens include the forced ones (``{"reasoning":"``, ``","score":``
...), which are evaluated in batches rather than sampled; the "sampled tok/s"
column counts only tokens that were sampled. Wall time per evaluation is what
a user waits for (prefill + decode). outlines reports no timings, so its
prefill is taken as our measured prefill of the same prompt. The KV cache is reset before every call
so no path reuses another's prompt.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from localjudge._prompts.schema import default_output_schema
from localjudge._runtimes.llamacpp import without_extra_bufts

CASES = [
    ("What is 2+2?", "4"),
    ("What is the capital of France?", "Paris is the capital of France."),
    ("Name the largest planet in the solar system.", "Saturn"),
    ("Translate 'thank you' into German.", "Danke schön"),
    ("How many days are in a leap year?", "365"),
    ("Who painted the Mona Lisa?", "Leonardo da Vinci painted it in the early 1500s."),
    ("Is water made of hydrogen and oxygen?", "Yes: two hydrogen atoms and one oxygen atom."),
    ("Give the boiling point of water at sea level in Celsius.", "It boils at 50 degrees."),
]
SYSTEM = (
    "You are an expert data labeler evaluating model outputs for correctness. "
    "Reason briefly, then give a score: true if the answer is correct, false otherwise."
)


@dataclass
class PathStats:
    name: str
    walls: list[float] = field(default_factory=list)
    decode_s: float = 0.0
    tokens: int = 0
    sampled: int = 0
    invalid: int = 0
    length_stops: int = 0

    def add(self, wall: float, prefill: float, tokens: int, sampled: int, valid: bool | None, finish: str) -> None:
        self.walls.append(wall)
        self.decode_s += max(wall - prefill, 1e-9)
        self.tokens += tokens
        self.sampled += sampled
        self.invalid += valid is False
        self.length_stops += finish == "length"

    @property
    def rate(self) -> float:
        return self.tokens / self.decode_s

    @property
    def sampled_rate(self) -> float:
        return self.sampled / self.decode_s


def is_valid(text: str, schema: dict) -> bool:
    import jsonschema

    try:
        jsonschema.validate(json.loads(text), schema)
    except (ValueError, jsonschema.ValidationError):
        return False
    return True


def run_llama(llm, tokens: list[int], max_tokens: int, grammar) -> tuple[float, float, str, int, str]:
    """(wall, prefill, text, completion tokens, finish_reason) for one streamed call."""
    llm.reset()
    started = time.perf_counter()
    first = None
    pieces, finish, count = [], "length", 0
    for chunk in llm.create_completion(tokens, max_tokens=max_tokens, temperature=0.0, grammar=grammar, stream=True):
        if first is None:
            first = time.perf_counter()
        choice = chunk["choices"][0]
        pieces.append(choice["text"])
        count += 1 if choice["text"] or choice["finish_reason"] is None else 0
        finish = choice["finish_reason"] or finish
    wall = time.perf_counter() - started
    # time to first chunk covers prefill and one sampled token; count that token as prefill
    prefill = (first or time.perf_counter()) - started
    return wall, prefill, "".join(pieces), max(count - 1, 0), finish


def run_outlines(llm, schema: dict, conversations, prompts: list[str], prefills: list[float], max_tokens: int, stats):
    """Stock outlines (its JsonSchema, default whitespace) and our OutlinesClient, on one Llama."""
    import outlines
    from outlines.types import JsonSchema

    from localjudge import OutlinesClient

    model = outlines.from_llamacpp(llm, chat_mode=False)
    stock = outlines.Generator(model, JsonSchema(schema))
    client = OutlinesClient(model, max_tokens=max_tokens)
    response_format = {"type": "json_schema", "json_schema": {"name": "score", "schema": schema}}
    for name in ("stock outlines", "OutlinesClient"):
        for i, (messages, prompt, prefill) in enumerate(zip(conversations, prompts, prefills, strict=True), 1):
            started = time.perf_counter()
            if name == "stock outlines":
                text = stock(prompt, max_tokens=max_tokens, temperature=0.0)
                count = len(llm.tokenize(text.encode(), add_bos=False, special=False))
                finish = "length" if count >= max_tokens else "stop"
            else:
                resp = client.chat.completions.create(messages=messages, response_format=response_format)
                text, finish = resp.choices[0].message.content, resp.choices[0].finish_reason
                count = resp.usage.completion_tokens
            wall = time.perf_counter() - started
            ok = is_valid(text, schema) and finish == "stop"
            stats[name].add(wall, prefill, count, count, ok, finish)
            print(f"  {name[:7]} [{i}] {count:>3} tok {wall:5.1f}s {'valid' if ok else 'INVALID'} {text[:70]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", help="GGUF path (default: the default judge; a card name works too)")
    parser.add_argument("--prompts", type=int, default=len(CASES))
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    from llama_cpp import Llama, LlamaGrammar

    from localjudge._clients.llamacpp import LlamaCppClient
    from localjudge._clients.resolve import ensure_card_model, find_card

    card = find_card(args.model or "default")
    model_path = ensure_card_model(card) if card is not None else Path(args.model)
    schema, _ = default_output_schema()
    response_format = {"type": "json_schema", "json_schema": {"name": "score", "schema": schema}}
    budget = args.max_tokens - 32  # leave room for the JSON around the reasoning
    cases = (CASES * (args.prompts // len(CASES) + 1))[: args.prompts]
    conversations = [
        [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"<question>\n{question}\n</question>\n<output>\n{answer}\n</output>"},
        ]
        for question, answer in cases
    ]
    paths = ("ours", "OutlinesClient", "stock outlines", "llama.cpp grammar", "unconstrained (Llama)")
    stats = {k: PathStats(k) for k in (*paths, "unconstrained (raw)")}

    # Phase by phase, one llama.cpp context alive at a time: an idle context's
    # worker threads still poll for a while and would slow the other on 2 cores.
    ours = LlamaCppClient(model_path, n_ctx=2048, n_threads=args.threads, reasoning_budget=budget)
    ours.chat.completions.create(
        messages=[{"role": "user", "content": "warm up"}], response_format=response_format, max_tokens=4
    )
    print(
        f"model: {model_path.name}; {len(cases)} prompts; max_tokens={args.max_tokens}; "
        f"our reasoning budget={budget}; threads={ours.runtime.n_threads}",
        flush=True,
    )
    prompts = [ours.runtime.prompt_tokens(ours.template.render_parts(m)) for m in conversations]
    prompt_texts = [ours.template.render(m).removeprefix(ours.template.bos_token) for m in conversations]
    prefills = []
    for i, messages in enumerate(conversations, 1):
        started = time.perf_counter()
        resp = ours.chat.completions.create(
            messages=messages, response_format=response_format, max_tokens=args.max_tokens
        )
        wall = time.perf_counter() - started
        decoded, finish = resp.decode_stats, resp.choices[0].finish_reason
        text, tokens = resp.choices[0].message.content, resp.usage.completion_tokens
        ok = is_valid(text, schema) and finish == "stop"
        prefills.append(decoded["prefill_seconds"])
        stats["ours"].add(wall, decoded["prefill_seconds"], tokens, decoded["sampled_tokens"], ok, finish)
        print(
            f"  ours    [{i}] {tokens:>3} tok ({decoded['forced_tokens']} forced) {wall:5.1f}s "
            f"{'valid' if ok else 'INVALID'} {text[:70]!r}",
            flush=True,
        )
    for messages in conversations:
        started = time.perf_counter()
        resp = ours.chat.completions.create(messages=messages, max_tokens=args.max_tokens)
        wall = time.perf_counter() - started
        tokens = resp.usage.completion_tokens
        stats["unconstrained (raw)"].add(
            wall, resp.decode_stats["prefill_seconds"], tokens, tokens, None, resp.choices[0].finish_reason
        )
    ours.close()
    del ours

    with without_extra_bufts():
        llm = Llama(str(model_path), n_ctx=2048, n_threads=args.threads, n_threads_batch=args.threads, verbose=False)
    run_outlines(llm, schema, conversations, prompt_texts, prefills, args.max_tokens, stats)
    grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
    invalid_texts: list[str] = []
    for i, tokens in enumerate(prompts, 1):
        wall, prefill, text, count, finish = run_llama(llm, tokens, args.max_tokens, grammar)
        ok = is_valid(text, schema) and finish == "stop"
        stats["llama.cpp grammar"].add(wall, prefill, count, count, ok, finish)
        if not ok:
            invalid_texts.append(text)
        print(
            f"  grammar [{i}] {count:>3} tok {wall:5.1f}s {finish} {'valid' if ok else 'INVALID'} {text[:70]!r}",
            flush=True,
        )
    for tokens in prompts:
        wall, prefill, _, count, finish = run_llama(llm, tokens, args.max_tokens, None)
        stats["unconstrained (Llama)"].add(wall, prefill, count, count, None, finish)

    print()
    header = f"{'path':<22} {'decode tok/s':>12} {'sampled tok/s':>13} {'tokens':>7} {'wall/eval s':>11} {'invalid':>8} {'hit max':>8}"
    print(header)
    print("-" * len(header))
    for s in stats.values():
        invalid = "-" if s.name.startswith("unconstrained") else str(s.invalid)
        print(
            f"{s.name:<22} {s.rate:>12.1f} {s.sampled_rate:>13.1f} {s.tokens:>7} "
            f"{statistics.mean(s.walls):>11.2f} {invalid:>8} {s.length_stops:>8}"
        )
    a, b = stats["ours"], stats["llama.cpp grammar"]
    c, raw = stats["unconstrained (Llama)"], stats["unconstrained (raw)"]
    print()
    for other in ("llama.cpp grammar", "stock outlines", "OutlinesClient"):
        o = stats[other]
        print(
            f"ours / {other}: decode {a.rate / o.rate:.2f}x; wall per evaluation "
            f"{statistics.mean(a.walls):.2f}s vs {statistics.mean(o.walls):.2f}s "
            f"({len(a.walls) / sum(a.walls) / (len(o.walls) / sum(o.walls)):.2f}x evaluations/s)"
        )
    print(f"ours / unconstrained (Llama): decode {a.rate / c.rate:.2f}x (sampled only {a.sampled_rate / c.rate:.2f}x)")
    print(
        f"ours / unconstrained (raw llama_decode + argmax): decode {a.rate / raw.rate:.2f}x "
        f"(sampled only {a.sampled_rate / raw.rate:.2f}x)"
    )
    print(
        "invalid outputs: "
        + ", ".join(f"{name} {stats[name].invalid}/{len(cases)}" for name in paths if not name.startswith("unc"))
        + f"; stopped at max_tokens: llama.cpp grammar {b.length_stops}, stock outlines "
        f"{stats['stock outlines'].length_stops}, OutlinesClient {stats['OutlinesClient'].length_stops}"
    )
    for text in invalid_texts:
        print(f"  llama.cpp grammar output that failed: {text!r}")
    return 0 if a.rate >= b.rate and a.invalid == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
