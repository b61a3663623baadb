"""Do the two local engines give the tiny model (Gemma 3 270M) the same greedy verdict?

Run: ``python benchmarks/engine_agreement.py`` (``make agreement``)

The default GGUF judged through llama.cpp (quantised Q4_K_M weights, its
own kernels) and through transformers (the same weights dequantised to
float32 once, torch kernels), with the same prompt, template, schema and
greedy decoding, on 20 question/answer pairs. Verdicts are compared with and
without reasoning; the numbers only say whether the engines agree, not
whether the 270M base model judges well (it does not).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CASES = [
    ("What is 2+2?", "4"),
    ("What is 2+2?", "5"),
    ("What is the capital of France?", "Paris"),
    ("What is the capital of France?", "Berlin"),
    ("How many legs does a spider have?", "Eight."),
    ("How many legs does a spider have?", "Six."),
    ("Who wrote Hamlet?", "William Shakespeare."),
    ("Who wrote Hamlet?", "Charles Dickens."),
    ("What is the boiling point of water at sea level in Celsius?", "100 degrees."),
    ("What is the boiling point of water at sea level in Celsius?", "50 degrees."),
    ("Translate 'gato' from Spanish.", "cat"),
    ("Translate 'gato' from Spanish.", "dog"),
    ("Is the earth flat?", "No, it is roughly a sphere."),
    ("Is the earth flat?", "Yes, obviously."),
    ("What is 12 * 12?", "144"),
    ("What is 12 * 12?", "124"),
    ("Name a primary colour.", "Blue"),
    ("Name a primary colour.", "banana"),
    ("What gas do plants take in for photosynthesis?", "Carbon dioxide."),
    ("What gas do plants take in for photosynthesis?", "Helium."),
]


def evaluator_for(client, *, use_reasoning: bool):
    from localjudge import create_llm_as_judge
    from localjudge._judges.evaluators import default_prompt

    prompt = default_prompt(has_inputs=True, has_reference=False)
    return create_llm_as_judge(prompt=prompt, judge=client, use_reasoning=use_reasoning)


def verdicts(client, *, use_reasoning: bool) -> tuple[list, float]:
    evaluator = evaluator_for(client, use_reasoning=use_reasoning)
    started = time.perf_counter()
    scores = []
    for question, answer in CASES:
        try:
            scores.append(evaluator(inputs=question, outputs=answer)["score"])
        except Exception as exc:  # a failure is a result here: it disagrees with any verdict
            scores.append(f"{type(exc).__name__}")
    return scores, time.perf_counter() - started


def margins(client) -> list[float]:
    """logit("true") - logit("false") where the no-reasoning verdict is read: how clear the model's preference is."""
    runtime, evaluator = client.runtime, evaluator_for(client, use_reasoning=False)
    true_id, false_id = (runtime.tokenize_fragment(word)[0] for word in (b"true", b"false"))
    found = []
    for question, answer in CASES:
        messages = evaluator.core.build_request(question, answer, None, {})["messages"]
        tokens = runtime.prompt_tokens(client.template.render_parts(messages))
        with runtime.lock:
            logits = runtime.start(tokens + runtime.tokenize_fragment(b'{"score":'))
            found.append(float(logits[true_id] - logits[false_id]))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reasoning-budget", type=int, default=64)
    args = parser.parse_args()

    from localjudge import LlamaCppClient, TransformersClient
    from localjudge._clients.resolve import ensure_tiny_model

    path = ensure_tiny_model()
    settings = {"n_ctx": 2048, "reasoning_budget": args.reasoning_budget}
    results = {}
    for name, build in (("llama.cpp", LlamaCppClient), ("transformers", TransformersClient)):
        client = build(path, **settings)
        for use_reasoning in (False, True):
            results[name, use_reasoning] = verdicts(client, use_reasoning=use_reasoning)
        results[name, "margins"] = margins(client)
        client.close()
    print(f"tiny model {path.name}; {len(CASES)} cases; greedy; reasoning budget {args.reasoning_budget}")
    for use_reasoning in (False, True):
        (a, ta), (b, tb) = results["llama.cpp", use_reasoning], results["transformers", use_reasoning]
        same = sum(x == y for x, y in zip(a, b, strict=True))
        label = "with reasoning" if use_reasoning else "no reasoning"
        print(f"\n{label}: {same}/{len(CASES)} verdicts agree (llama.cpp {ta:.1f} s, transformers {tb:.1f} s)")
        for i, ((question, answer), x, y) in enumerate(zip(CASES, a, b, strict=True)):
            mark = " " if x == y else "*"
            margin = ""
            if not use_reasoning:
                ma, mb = results["llama.cpp", "margins"][i], results["transformers", "margins"][i]
                margin = f"  true-false logit: {ma:+.2f} / {mb:+.2f}"
            print(f"  {mark} {question[:36]:<36} {answer[:16]:<16} llama.cpp={x!s:<6} transformers={y!s:<6}{margin}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
