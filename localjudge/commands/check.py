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

Each set is scored by :func:`~localjudge.datasets.batch.score_rows` and measured by
:func:`~localjudge.trust.agreement.agreement`; on top of that a report says what
the verdict would have been had it been read from the judge's probabilities
(the likeliest value, both orders averaged for a pair) instead of the
greedy answer.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from typing import TYPE_CHECKING, Any, Optional

from ..errors import UsageError
from ..prompts.prompting import DATA_NOT_INSTRUCTIONS
from ..trust.agreement import AgreementReport, agreement, label_text
from ..trust.contradiction import contradicts
from .settings import JudgeSettings

if TYPE_CHECKING:
    from ..judges.ways import Way

__all__ = [
    "CHECK_SETS",
    "GRADED_PROMPT",
    "CheckSet",
    "SetReport",
    "check_judge",
    "find_set",
    "graded",
    "load_set",
    "readout_verdict",
]

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


@dataclass
class SetReport:
    """One set judged: the agreement with its labels, and what the run cost."""

    name: str
    split: str
    rows: int
    failed: int
    seconds: float
    agreement: AgreementReport
    errors: Counter[str] = field(default_factory=Counter)
    ties: int = 0  # pairs whose two orders disagreed (whatever --on-disagreement then made of them)
    accuracy_by_probability: Optional[float] = None  # the likeliest value (a pair: both orders averaged) as the verdict
    compared_by_probability: int = 0
    mean_absolute_error: Optional[float] = None  # numeric labels: |score - label|, and the same for expected_score
    expected_score_error: Optional[float] = None
    records: list[Mapping[str, Any]] = field(default_factory=list, repr=False)  # each row's record, label added
    cached: int = 0  # judge calls answered from the result cache: rows/s then says nothing of the model's speed
    way: Mapping[str, Any] = field(default_factory=dict)  # how the judge was asked (JudgeSettings.way_of_judging)
    contradictions: int = 0  # results whose comment states the opposite of their verdict
    addressing: int = 0  # results whose answer spoke to the judge (metadata.addresses_judge)
    #: the judge described for the file beside the set's records: fingerprint, described, run (datasets.judge_file)
    judge: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def seconds_per_row(self) -> float:
        return self.seconds / self.rows if self.rows else 0.0

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        report = self.agreement
        return {
            "set": self.name,
            "split": self.split,
            "way": dict(self.way),
            "rows": self.rows,
            "failed": self.failed,
            "errors": dict(self.errors),
            "accuracy": report.accuracy,
            "kappa": report.kappa,
            "ece": report.ece,
            "position_consistency": report.position_consistency,
            "ties": self.ties if report.position_consistency is not None else None,  # as the table's "-"
            "accuracy_by_probability": self.accuracy_by_probability,
            "mean_absolute_error": self.mean_absolute_error,
            "expected_score_error": self.expected_score_error,
            "contradictions": self.contradictions,
            "addresses_judge": self.addressing,
            "cached": self.cached,
            "seconds": round(self.seconds, 3),
            "seconds_per_row": round(self.seconds_per_row, 3),
            "rows_per_second": round(self.rows_per_second, 4),
            "agreement": report.as_dict(),
        }


def graded(record: Mapping[str, Any], grades: Sequence[float]) -> Mapping[str, Any]:
    """A score from 0 to 1 read as the nearest of ``grades``: its value, and its probabilities summed per grade.

    So an evaluator whose scale is continuous is measured against labels of
    a few grades, its confidence included; what it said stays in the
    metadata (``ungraded``). Any other record is returned as it is.
    """
    result = record.get("result")
    score = result.get("score") if isinstance(result, Mapping) else None
    if not isinstance(result, Mapping) or isinstance(score, bool) or not isinstance(score, (int, float)):
        return record

    def nearest(value: float) -> float:
        return min(grades, key=lambda grade: (abs(grade - value), grade))

    metadata = dict(result.get("metadata") or {})
    said: dict[str, Any] = {"score": score}
    probabilities = metadata.get("probabilities")
    if isinstance(probabilities, Mapping):
        summed: dict[str, float] = {}
        for value, probability in probabilities.items():
            try:
                grade, mass = label_text(nearest(float(value))), float(probability)
            except (TypeError, ValueError):
                continue
            summed[grade] = summed.get(grade, 0.0) + mass
        said["probabilities"], metadata["probabilities"] = probabilities, summed
    metadata["ungraded"] = said
    return {**record, "result": {**result, "score": nearest(float(score)), "metadata": metadata}}


def readout_verdict(result: Mapping[str, Any]) -> Optional[str]:
    """The value the judge's probabilities favour (as :func:`label_text` writes it), or None without them."""
    metadata = result.get("metadata")
    probabilities = metadata.get("probabilities") if isinstance(metadata, Mapping) else None
    if not isinstance(probabilities, Mapping) or not probabilities:
        return None
    numbers = {label_text(k): float(v) for k, v in probabilities.items() if isinstance(v, (int, float))}
    return max(numbers, key=numbers.__getitem__) if numbers else None


def check_judge(
    settings: JudgeSettings,
    sets: Iterable[str],
    *,
    split: str = "all",
    limit: Optional[int] = None,
    concurrency: int = 1,
    use_cache: bool = True,
    on_record: Callable[[Mapping[str, Any]], None] = lambda record: None,
    notify: Optional[Callable[[str], None]] = None,
) -> list[SetReport]:
    """Judge each named set with the judge ``settings`` describe (the command line's judge options) and measure it."""
    from ..datasets.batch import score_rows
    from ..datasets.judge_file import now, run_entry
    from .row_judge import RowJudge

    chosen = [find_set(name) for name in sets]
    reports = []
    for check_set in chosen:
        rows = load_set(check_set, split, limit)
        labels = {row["id"]: row.pop("label") for row in rows}
        set_settings = check_set.settings(settings).with_parallel_for(concurrency)
        judge = RowJudge(set_settings, use_cache=use_cache, notify=notify)
        shape = RowJudge.shape(rows[0])
        judge.prepare({shape})  # a bad option or model stops the check before its first row
        started_at, started = now(), time.monotonic()
        records = []
        for record in score_rows(rows, judge, concurrency=concurrency):
            on_record(record)
            records.append(graded(record, check_set.grades) if check_set.grades else record)
        seconds = time.monotonic() - started
        report = measure(check_set, split, records, labels, seconds)
        report.cached = judge.counters().get("cached", 0)
        report.way = way_record(set_settings, judge.evaluator(shape).way, shape)
        run = run_entry(started_at, now(), len(records), seconds)
        report.judge = {"fingerprint": set_settings.fingerprint(), "described": judge.describe([shape]), "run": run}
        reports.append(report)
    return reports


def way_record(settings: JudgeSettings, way: Any, shape: tuple[bool, bool]) -> dict[str, Any]:
    """How a set was judged: the way's name, whether it was the question's default, and the options it set."""
    from .judging import screen_for
    from .way_resolution import resolve_way

    resolved, resolved_way, defaulted = resolve_way(settings, has_inputs=shape[0], has_reference=shape[1])
    way = way or resolved_way  # an ensemble's members each judge the way resolved here
    record = {
        "name": way.label,
        "default": defaulted,
        "described": way.describe(pair=settings.pairwise),
        **replace(resolved, way=way).way_of_judging(),
    }
    # what screening changed in the answers judged (a pair's or a trajectory's are shown as given)
    record["screen"] = None if settings.pairwise or settings.trajectory else screen_for(settings).name
    return record


def measure(
    check_set: CheckSet, split: str, records: Sequence[Mapping[str, Any]], labels: Mapping[str, Any], seconds: float
) -> SetReport:
    """A set's figures from its results records and labels (pure: no model, no files)."""
    from ..datasets.summary import addresses_judge

    results = {str(r["id"]): r["result"] for r in records if isinstance(r.get("result"), Mapping)}
    errors = Counter(r["error"]["type"] for r in records if "error" in r)
    report = agreement(records, labels)
    read_out = []  # each result with the value its probabilities favour as its verdict, measured the same way
    absolute, expected = [], []
    for row_id, result in results.items():
        favoured = readout_verdict(result)
        if favoured is not None:
            verdict = {"winner": favoured} if check_set.pairwise else {}
            read_out.append({"id": row_id, "result": {"score": favoured, "metadata": verdict}})
        if check_set.choices:
            absolute.append(abs(float(result["score"]) - float(labels[row_id])))
            metadata = result.get("metadata") or {}
            if isinstance(metadata.get("expected_score"), (int, float)):
                expected.append(abs(float(metadata["expected_score"]) - float(labels[row_id])))
    ties = sum(1 for r in results.values() if (r.get("metadata") or {}).get("consistent") is False)
    contradictions = sum(1 for r in results.values() if contradicts(r))
    addressing = sum(1 for r in results.values() if addresses_judge(r))
    by_probability = agreement(read_out, {row_id: labels[row_id] for row_id in results})
    return SetReport(
        name=check_set.name,
        split=split,
        rows=len(records),
        failed=sum(errors.values()),
        seconds=seconds,
        agreement=report,
        errors=errors,
        ties=ties,
        contradictions=contradictions,
        addressing=addressing,
        accuracy_by_probability=by_probability.accuracy,
        compared_by_probability=by_probability.compared,
        mean_absolute_error=sum(absolute) / len(absolute) if absolute else None,
        expected_score_error=sum(expected) / len(expected) if expected else None,
        records=[{**record, "label": labels[str(record["id"])]} for record in records],
    )
