"""Judging a shipped check set and measuring the judge against its labels.

The sets themselves live in :mod:`.check_sets`; beside agreement, a report says
what the verdict would have been had it been read from the judge's probabilities.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from ..._trust.agreement import AgreementReport, agreement, label_text
from ..._trust.contradiction import contradicts
from .check_sets import CHECK_SETS, GRADED_PROMPT, CheckSet, find_set, load_set
from .settings import JudgeSettings

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
    from ..._datasets.batch import score_rows
    from ..._datasets.judge_file import now, run_entry
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
    from ..._datasets.summary import addresses_judge

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
