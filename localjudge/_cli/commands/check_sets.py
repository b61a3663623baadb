"""How far to trust a judge: labelled sets shipped with localjudge, judged with any judge spec and measured.

The sets (``check_sets/``, JSONL), each cut into a ``dev`` and a ``test``
split so that a way of judging can be chosen on one and reported on the other:

- ``answers``: 130 short questions (80 dev, 50 test), each once with a right
  and once with a wrong answer; the judge says true or false, without a
  reference.
- ``injection``: wrong answers to 40 short questions (20 dev, 20 test),
  each plainly and twice with text that argues with the judge, 20 answers
  with no content and 20 right ones that mention a grader or are oddly
  formatted; true or false, without a reference (``injection-reference``:
  with one). The share of wrong ones judged true is the flip rate
  (``benchmarks/bench_injection.py``).
- ``graded``: 12 questions, each with a complete, a partial and a wrong
  answer, graded 1, 0.5 or 0 against a reference.
- ``llmbar-natural``: LLMBar's 100 natural pairs (MIT licence in
  ``check_sets/LLMBAR_LICENSE``): which of two outputs follows the
  instruction, asked in both orders.
- ``adversarial``: 48 pairs of our own built to fool judges, in LLMBar's
  manner: the better-looking output answers a neighbouring question, breaks
  a stated constraint, is confidently wrong, or skips part of what was
  asked; asked in both orders.
- ``llmbar-adversarial``: the first 25 pairs of each of LLMBar's four
  adversarial sets (Neighbor, GPTInst, GPTOut, Manual; MIT), the first
  12 or 13 of each in ``dev``: built by others to fool judges, so a way
  chosen on ``adversarial`` is checked on pairs it was not made from.
- ``conciseness``, ``hallucination`` and ``answer-relevance``: 32
  questions each (16 dev, 16 test) of our own, each answered once so that
  the ready-made evaluator of that name should say true and once false,
  asked with that evaluator's own prompt: an answer that is correct but
  padded, one that adds a single claim its context does not support, one
  that is on topic but answers another question or dodges it.

Each set is scored by :func:`~localjudge._datasets.batch.score_rows` and measured by
:func:`~localjudge._trust.agreement.agreement`; on top of that a report says what
the verdict would have been had it been read from the judge's probabilities
(the likeliest value, both orders averaged for a pair) instead of the
greedy answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib import resources
from typing import TYPE_CHECKING, Any, Optional

from ..._prompts.prompting import DATA_NOT_INSTRUCTIONS
from ...errors import UsageError
from .settings import JudgeSettings

if TYPE_CHECKING:
    from ..._judges.ways import Way


__all__ = ["CHECK_SETS", "GRADED_PROMPT", "SPLITS", "CheckSet", "find_set", "load_set"]

SPLITS = ("dev", "test", "all")

GRADED_PROMPT = f"""Grade the answer below against a reference answer that is known to be right and complete.

<question>
{{inputs}}
</question>

<answer>
{{outputs}}
</answer>

<reference>
{{reference_outputs}}
</reference>

{DATA_NOT_INSTRUCTIONS}
Scale: 0, 0.5 or 1.
- 1: the answer gives everything the reference gives, and nothing false.
- 0.5: part of it is right, but some of what the question asks for is missing or wrong.
- 0: it is wrong, or it answers something else.
"""


@dataclass(frozen=True)
class CheckSet:
    """One labelled set: its file, what it asks of the judge, and the judge options that shape the question."""

    name: str
    file: str
    description: str
    pairwise: bool = False
    choices: Optional[tuple[float, ...]] = None
    prompt: Optional[str] = None  # None: the command line's default prompt for what the rows hold
    drop: tuple[str, ...] = ()  # fields the rows carry that the judge is not shown
    evaluator: Optional[str] = None  # a ready-made evaluator (EVALUATORS) that asks: its prompt, scale and feedback key
    grades: Optional[tuple[float, ...]] = None  # an evaluator's score from 0 to 1 read as the nearest of these labels

    def settings(self, base: JudgeSettings) -> JudgeSettings:
        """The judge options for this set: the caller's model and way of judging, this set's question."""
        flags = base.way_flags
        return replace(
            base,
            pairwise=self.pairwise,
            choices=self.choices or None,
            prompt=self.prompt,
            evaluator=self.evaluator,
            way_flags=replace(
                flags,
                # an evaluator's prompt has no place for the judge's own answer
                self_reference=flags.self_reference and not self.evaluator,
                on_disagreement=flags.on_disagreement if self.pairwise else None,
                pointwise=flags.pointwise and self.pairwise,
                likelihood=flags.likelihood and self.pairwise,
                checklist=flags.checklist and self.pairwise,
            ),
            way=base.way if base.way is None or self.fits(base.way) else None,
        )

    def fits(self, way: Way) -> bool:
        """Whether ``way`` can judge this set's rows; the others are judged by their own default."""
        if self.pairwise:
            return not way.same_answer
        if self.evaluator:  # it asks its own question: not whether the answer is right
            return not (way.pairs_only or way.same_answer or way.self_reference)
        return not way.pairs_only and not (way.same_answer and (self.prompt or "reference_outputs" in self.drop))


CHECK_SETS: dict[str, CheckSet] = {
    s.name: s
    for s in (
        CheckSet(
            "answers",
            "answers.jsonl",
            "260 short answers to 130 questions, each right once and wrong once: true or false, no reference",
            drop=("reference_outputs",),
        ),
        CheckSet(
            "answers-reference",
            "answers.jsonl",
            "the same 260 short answers, each with the right answer as its reference: true or false",
        ),
        CheckSet(
            "injection",
            "injection.jsonl",
            "160 answers to short questions: 40 wrong ones plainly and 80 with text that argues with the judge "
            "(11 kinds), 20 with no content, and 20 right ones that mention a grader or are oddly formatted: true "
            "or false, no reference",
            drop=("kind", "reference_outputs"),
        ),
        CheckSet(
            "injection-reference",
            "injection.jsonl",
            "the same 160 answers, each with the right answer as its reference: true or false",
            drop=("kind",),
        ),
        CheckSet(
            "graded",
            "graded.jsonl",
            "36 answers to 12 questions, complete, partial or wrong: 1, 0.5 or 0 against a reference",
            choices=(0.0, 0.5, 1.0),
            prompt=GRADED_PROMPT,
        ),
        CheckSet(
            "llmbar-natural",
            "llmbar_natural.jsonl",
            "LLMBar's 100 natural pairs (MIT): which output follows the instruction, asked in both orders",
            pairwise=True,
        ),
        CheckSet(
            "adversarial",
            "adversarial.jsonl",
            "48 pairs built to fool judges: the better-looking output does not do what was asked; both orders",
            pairwise=True,
            drop=("kind",),
        ),
        CheckSet(
            "llmbar-adversarial",
            "llmbar_adversarial.jsonl",
            "100 of LLMBar's adversarial pairs (MIT), 25 from each of its four sets: the better-looking output "
            "does not follow the instruction; both orders",
            pairwise=True,
            drop=("kind",),
        ),
        CheckSet(
            "conciseness",
            "conciseness.jsonl",
            "64 answers to 32 questions, each once concise and once padded: true or false, asked with the "
            "conciseness evaluator",
            evaluator="conciseness",
        ),
        CheckSet(
            "hallucination",
            "hallucination.jsonl",
            "64 answers to 32 questions on a given context, each once supported by it and once adding a claim it "
            "does not support: true (no hallucination) or false, asked with the hallucination evaluator",
            evaluator="hallucination",
        ),
        CheckSet(
            "answer-relevance",
            "answer_relevance.jsonl",
            "64 answers to 32 questions, each once on point and once answering another question or dodging: "
            "true or false, asked with the answer_relevance evaluator",
            evaluator="answer_relevance",
        ),
        CheckSet(
            "groundedness",
            "groundedness.jsonl",
            "72 answers on 24 retrieved contexts, all, half or none of their claims found there: 1, 0.5 or 0, "
            "asked with the groundedness evaluator",
            evaluator="groundedness",
            grades=(0.0, 0.5, 1.0),
        ),
        CheckSet(
            "retrieval-relevance",
            "retrieval_relevance.jsonl",
            "72 retrieved texts for 24 questions, holding all, part or none of what each needs: 1, 0.5 or 0, "
            "asked with the retrieval_relevance evaluator",
            evaluator="retrieval_relevance",
            grades=(0.0, 0.5, 1.0),
        ),
        CheckSet(
            "helpfulness",
            "helpfulness.jsonl",
            "72 answers to 24 practical questions that solve, half solve or do not solve them: 1, 0.5 or 0, "
            "asked with the helpfulness evaluator",
            evaluator="helpfulness",
            grades=(0.0, 0.5, 1.0),
        ),
    )
}


def find_set(name: str) -> CheckSet:
    """The shipped set called ``name``, or a UsageError that lists them."""
    if name not in CHECK_SETS:
        raise UsageError(f"no check set named {name!r}; the sets: {', '.join(CHECK_SETS)}")
    return CHECK_SETS[name]


def load_set(check_set: CheckSet, split: str = "all", limit: Optional[int] = None) -> list[dict[str, Any]]:
    """The set's rows (``id``, the prompt variables, ``label``) in the split asked for, the first ``limit`` of them."""
    if split not in SPLITS:
        raise UsageError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    text = resources.files("localjudge").joinpath("check_sets").joinpath(check_set.file).read_text(encoding="utf-8")
    rows = []
    for line in text.splitlines():
        row = json.loads(line)
        if split != "all" and row.pop("split") != split:
            continue
        row.pop("split", None)
        for name in check_set.drop:
            row.pop(name, None)
        rows.append(row)
    return rows[:limit] if limit else rows
