"""How far to trust a judge: its verdicts against human labels.

Pure functions over plain values: accuracy and Cohen's kappa with their 95%
intervals, the confusion matrix, expected calibration error with its
reliability table (where the judge gave probabilities), and, for pairwise
runs, how often a verdict held when the two answers swapped places.
:func:`agreement` reads results records (``{"id", "result"}`` lines) and a
mapping of id to label.

An accuracy on 50 labelled rows is known to about plus or minus 0.13, so a
figure comes with its interval: two judges, or two ways of judging, whose
intervals overlap widely have not been told apart by the set.
"""

from __future__ import annotations

import json
import math
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from statistics import NormalDist
from typing import Any, NamedTuple

from .._datasets.results_file import latest_records
from ..errors import OptionError, UsageError

__all__ = [
    "PAIR_VERDICTS",
    "AgreementReport",
    "Judged",
    "PairedComparison",
    "ReliabilityBin",
    "accuracy_interval",
    "agreement",
    "agreement_of",
    "cohen_kappa",
    "compare_paired",
    "compare_runs",
    "confusion_matrix",
    "expected_calibration_error",
    "judged",
    "kappa_interval",
    "label_text",
    "read_labels",
    "reliability_table",
]


#: a pairwise run's verdicts (metadata.winner); labels a, b and tie are read as these
PAIR_VERDICTS = frozenset({"A", "B", "tie"})
#: a 95% interval (low, high)
Interval = tuple[float, float]
#: verdicts label_text gives back as they are
_AS_WRITTEN = frozenset({"true", "false", "A", "B", "tie"})
#: the normal quantile of a two-sided 95% interval
_Z95 = NormalDist().inv_cdf(0.975)
#: resamples for the kappa interval; fixed, with a fixed seed, so one run's records always give one interval
KAPPA_RESAMPLES = 2000


@dataclass(frozen=True)
class ReliabilityBin:
    """Verdicts whose confidence fell in ``[low, high)`` (the last bin includes 1.0)."""

    low: float
    high: float
    count: int
    mean_confidence: float | None
    accuracy: float | None


@dataclass
class AgreementReport:
    """The judge against the labels, on the rows that have both a verdict and a label."""

    compared: int
    accuracy: float | None
    kappa: float | None
    classes: list[str]
    confusion: list[list[int]]  # confusion[i][j]: rows labelled classes[i] the judge called classes[j]
    label_classes: list[str] = field(default_factory=list)
    verdict_classes: list[str] = field(default_factory=list)
    without_label: int = 0  # verdicts with no label
    without_verdict: int = 0  # labelled rows the judge failed on or never scored
    ece: float | None = None  # over the compared rows that carry probabilities
    with_probabilities: int = 0
    reliability: list[ReliabilityBin] = field(default_factory=list)
    position_consistency: float | None = None  # pairwise runs: share of pairs whose two orders agreed
    flip_rate: float | None = None  # pairwise runs: share of pairs whose winner changed with the order
    accuracy_interval: Interval | None = None  # 95%, Wilson's score interval
    kappa_interval: Interval | None = None  # 95%, bootstrapped over the compared rows
    right: dict[str, bool] = field(default_factory=dict, repr=False)  # each compared row's id: was its verdict right

    def as_dict(self) -> dict[str, Any]:
        return {
            "compared": self.compared,
            "accuracy": self.accuracy,
            "accuracy_interval": self.accuracy_interval,
            "kappa": self.kappa,
            "kappa_interval": self.kappa_interval,
            "classes": self.classes,
            "confusion": self.confusion,
            "without_label": self.without_label,
            "without_verdict": self.without_verdict,
            "ece": self.ece,
            "with_probabilities": self.with_probabilities,
            "reliability": [vars(b) for b in self.reliability],
            "position_consistency": self.position_consistency,
            "flip_rate": self.flip_rate,
        }


def label_text(value: Any) -> str:
    """A verdict or a label as comparable text: ``True`` and ``"true"`` agree, ``1`` and ``1.0`` agree."""
    if value.__class__ is str and value in _AS_WRITTEN:  # the common verdicts, read 100,000 times in a big run
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "false"):
            return lowered
        try:
            return label_text(float(lowered))
        except ValueError:
            return value.strip()
    if isinstance(value, bool):
        return "true" if value else "false"  # as JSON writes them
    if isinstance(value, float) and value.is_integer():
        return json.dumps(int(value))
    return json.dumps(value)


def confusion_matrix(truth: Sequence[str], predicted: Sequence[str], classes: Sequence[str]) -> list[list[int]]:
    index = {name: i for i, name in enumerate(classes)}
    matrix = [[0] * len(classes) for _ in classes]
    for label, verdict in zip(truth, predicted, strict=True):
        matrix[index[label]][index[verdict]] += 1
    return matrix


def cohen_kappa(truth: Sequence[str], predicted: Sequence[str]) -> float | None:
    """Agreement beyond chance; None when chance agreement is total (one class on both sides), where it is undefined."""
    count = len(truth)
    if count == 0:
        return None
    observed = sum(a == b for a, b in zip(truth, predicted, strict=True)) / count
    truth_counts, predicted_counts = Counter(truth), Counter(predicted)
    chance = sum(truth_counts[c] * predicted_counts[c] for c in truth_counts) / (count * count)
    return None if chance == 1 else (observed - chance) / (1 - chance)


def accuracy_interval(right: int, compared: int) -> Interval | None:
    """The 95% interval of an accuracy of ``right`` out of ``compared`` (Wilson's: sound near 0 and 1 and on few rows).

    Wilson's score interval in its closed form (as scipy's ``binomtest(...).proportion_ci(method="wilson")``
    gives it), so a figure over 100,000 rows does not wait for scipy to load.
    """
    if compared == 0:
        return None
    z = _Z95
    share = right / compared
    denominator = 2 * (compared + z * z)
    center = (2 * compared * share + z * z) / denominator
    half = z / denominator * math.sqrt(4 * compared * share * (1 - share) + z * z)
    return (0.0 if right == 0 else center - half), (1.0 if right == compared else center + half)


def kappa_interval(truth: Sequence[str], predicted: Sequence[str]) -> Interval | None:
    """The 95% percentile-bootstrap interval of Cohen's kappa; None where kappa or some resample is undefined."""
    if cohen_kappa(truth, predicted) is None or len(truth) < 2:
        return None
    import numpy as np
    from scipy.stats import bootstrap

    names = {name: number for number, name in enumerate(sorted(set(truth) | set(predicted)))}
    coded = [np.array([names[value] for value in side]) for side in (truth, predicted)]

    def kappa(labels: Any, verdicts: Any, axis: int = -1) -> Any:
        """Cohen's kappa of each resample at once (NaN where it is undefined): cohen_kappa, on arrays."""
        observed = (labels == verdicts).mean(axis=axis)
        chance = sum((labels == c).mean(axis=axis) * (verdicts == c).mean(axis=axis) for c in names.values())
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(chance == 1, np.nan, (observed - chance) / (1 - chance))

    with warnings.catch_warnings():  # a resample of one class leaves kappa undefined: the NaN below says so
        warnings.simplefilter("ignore")
        result = bootstrap(
            coded,
            kappa,
            paired=True,
            n_resamples=KAPPA_RESAMPLES,
            method="percentile",
            rng=np.random.default_rng(0),
        )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return None if np.isnan(low) or np.isnan(high) else (low, high)


@dataclass(frozen=True)
class PairedComparison:
    """Two ways of judging on the same rows: the rows only one got right, and how likely so lopsided a split is by chance."""

    rows: int  # the rows both ways were measured on
    first_right: int
    second_right: int
    first_only: int
    second_only: int
    p_value: float | None  # two-sided, exact (McNemar's test): 1.0 when they got the same rows right; None: no rows
    first_unmatched: int = 0  # rows only the first way has a verdict for (compare_runs), left out
    second_unmatched: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare_paired(first: Sequence[bool], second: Sequence[bool]) -> PairedComparison:
    """Whether two ways' rights and wrongs on the same rows (in the same order) differ beyond chance.

    Only the rows one way got right and the other wrong tell them apart; the
    rows both got right or both wrong say nothing of which is better.
    """
    if len(first) != len(second):
        raise UsageError(f"the two ways must be measured on the same rows, got {len(first)} and {len(second)}")
    first_only = sum(a and not b for a, b in zip(first, second, strict=True))
    second_only = sum(b and not a for a, b in zip(first, second, strict=True))
    p_value = 1.0 if first else None
    if first_only + second_only:
        from scipy.stats import binomtest

        p_value = float(binomtest(first_only, first_only + second_only).pvalue)
    return PairedComparison(len(first), sum(first), sum(second), first_only, second_only, p_value)


def compare_runs(first: AgreementReport, second: AgreementReport) -> PairedComparison:
    """Two runs' agreement reports compared on the rows both have a verdict for (McNemar's test, as above).

    A row only one run has a verdict for (the other failed on it, or never
    judged it) is left out and counted, so a run that fails on the hard rows
    is not seen winning on the easy ones without a word.
    """
    rows = sorted(first.right.keys() & second.right.keys())
    found = compare_paired([first.right[row] for row in rows], [second.right[row] for row in rows])
    return replace(found, first_unmatched=len(first.right) - len(rows), second_unmatched=len(second.right) - len(rows))


def reliability_table(confidences: Sequence[float], correct: Sequence[bool], bins: int = 10) -> list[ReliabilityBin]:
    """Equal-width confidence bins with how often the verdicts in each were right."""
    if bins < 1:
        raise UsageError(f"bins must be at least 1, got {bins}")
    members: list[list[tuple[float, bool]]] = [[] for _ in range(bins)]
    for confidence, right in zip(confidences, correct, strict=True):
        if not 0.0 <= confidence <= 1.0:
            raise UsageError(f"a confidence must be between 0 and 1, got {confidence!r}")
        members[min(int(confidence * bins), bins - 1)].append((confidence, right))
    table = []
    for number, inside in enumerate(members):
        count = len(inside)
        table.append(
            ReliabilityBin(
                low=number / bins,
                high=(number + 1) / bins,
                count=count,
                mean_confidence=sum(c for c, _ in inside) / count if count else None,
                accuracy=sum(r for _, r in inside) / count if count else None,
            )
        )
    return table


def expected_calibration_error(table: Sequence[ReliabilityBin]) -> float | None:
    """The gap between confidence and accuracy, averaged over bins weighted by their verdicts."""
    total = sum(b.count for b in table)
    if total == 0:
        return None
    return sum(b.count * _gap(b) for b in table if b.count) / total


def _gap(b: ReliabilityBin) -> float:
    """How far a bin with verdicts is from calibrated; such a bin always has both figures."""
    if b.mean_confidence is None or b.accuracy is None:  # a hand-made bin: what None - float would raise
        raise TypeError(f"a bin of {b.count} verdicts needs its mean confidence and accuracy")
    return abs(b.mean_confidence - b.accuracy)


class Judged(NamedTuple):
    """What the agreement figures read of one result: its verdict as text, the probability standing for it, its orders.

    ``confidence``: the value whose probability stands for the verdict (the
    verdict itself where the judge gave it one, else the likeliest value) and
    that probability; None where the judge gave none. ``consistent`` and
    ``flipped``: a pair asked in both orders (None and False otherwise).
    """

    id: str
    verdict: str
    confidence: tuple[str, float] | None = None
    consistent: bool | None = None
    flipped: bool = False


def judged(record: Mapping[str, Any]) -> Judged | None:
    """One results record as :func:`agreement_of` reads it; None for an error record."""
    result = record.get("result")
    if not isinstance(result, Mapping):
        return None
    found = result.get("metadata")
    metadata: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    verdict = label_text(metadata["winner"] if "winner" in metadata else result.get("score"))
    consistent, flipped = None, False
    if isinstance(metadata.get("consistent"), bool):
        consistent = metadata["consistent"]
        verdicts = metadata.get("verdicts")
        flipped = isinstance(verdicts, Sequence) and len(verdicts) == 2 and set(verdicts) == {"A", "B"}
    confidence = None
    probabilities = metadata.get("probabilities")
    if isinstance(probabilities, Mapping):
        given = {label_text(k): float(v) for k, v in probabilities.items() if isinstance(v, (int, float))}
        if given:
            stands_for = verdict if verdict in given else max(given, key=lambda text: given[text])
            confidence = (stands_for, given[stands_for])
    return Judged(str(record.get("id")), verdict, confidence, consistent, flipped)


def agreement(
    records: Iterable[Mapping[str, Any]], labels: Mapping[Any, Any], *, bins: int = 10, intervals: bool = True
) -> AgreementReport:
    """The verdicts of results ``records`` against ``labels`` (id -> label).

    A verdict is a result's ``score`` (a pairwise result's ``metadata.winner``).
    Labels 0 and 1 against true/false verdicts read as false and true; A, B and
    tie are read in any case. The confidence is the probability the judge gave
    its verdict (``metadata.probabilities``); where the verdict has none (a pair
    whose two orders disagreed is a tie), the value the probabilities favour
    stands for it, so the least certain rows stay in the calibration. Position
    consistency and the flip rate count every pairwise result, labelled or not.
    Error records count as labelled rows without a verdict. Of several records
    for one id, the last counts, a result over an error (as :func:`read_results`
    reads a results file). ``intervals=False`` leaves both intervals out (None):
    kappa's is 2000 resamples, which a caller that only wants each row's
    rightness need not pay for.
    """
    rows = [found for found in map(judged, latest_records(records)) if found is not None]
    return agreement_of(rows, labels, bins=bins, intervals=intervals)


def agreement_of(
    rows: Iterable[Judged], labels: Mapping[Any, Any], *, bins: int = 10, intervals: bool = True
) -> AgreementReport:
    """:func:`agreement` over results already read (one :class:`Judged` per id): what an index of a run keeps."""
    labels = {str(k): v for k, v in labels.items()}
    pairs: list[tuple[str, str, Judged]] = []  # (label, verdict, row) of compared rows
    consistent: list[bool] = []
    flipped: list[bool] = []
    without_label = 0
    for row in rows:
        if row.consistent is not None:
            consistent.append(row.consistent)
            flipped.append(row.flipped)
        if row.id not in labels:
            without_label += 1
            continue
        pairs.append((label_text(labels[row.id]), row.verdict, row))
    pairs = _read_labels_as_verdicts(pairs)
    truth = [label for label, _, _ in pairs]
    predicted = [verdict for _, verdict, _ in pairs]
    confidences, correct = [], []
    for label, _, row in pairs:
        if row.confidence is not None:
            confidences.append(row.confidence[1])
            correct.append(label == row.confidence[0])
    classes = sorted(set(truth) | set(predicted))
    table = reliability_table(confidences, correct, bins) if confidences else []
    compared = len(pairs)
    right = sum(a == b for a, b in zip(truth, predicted, strict=True))
    return AgreementReport(
        compared=compared,
        accuracy=right / compared if compared else None,
        accuracy_interval=accuracy_interval(right, compared) if intervals else None,
        kappa=cohen_kappa(truth, predicted),
        kappa_interval=kappa_interval(truth, predicted) if intervals else None,
        classes=classes,
        confusion=confusion_matrix(truth, predicted, classes),
        label_classes=sorted(set(truth)),
        verdict_classes=sorted(set(predicted)),
        without_label=without_label,
        without_verdict=len(set(labels) - {row.id for _, _, row in pairs}),
        ece=expected_calibration_error(table) if table else None,
        with_probabilities=len(confidences),
        reliability=table,
        position_consistency=sum(consistent) / len(consistent) if consistent else None,
        flip_rate=sum(flipped) / len(flipped) if flipped else None,
        right={row.id: a == b for a, b, row in pairs},
    )


def _read_labels_as_verdicts(pairs: list[tuple[str, str, Any]]) -> list[tuple[str, str, Any]]:
    """Labels in the verdicts' terms: 0/1 for true/false verdicts, a/b/TIE for pairwise winners."""
    verdicts = {verdict for _, verdict, _ in pairs}
    if verdicts <= {"true", "false"} and {label for label, _, _ in pairs} <= {"0", "1"}:
        return [({"0": "false", "1": "true"}[label], verdict, m) for label, verdict, m in pairs]
    if verdicts <= PAIR_VERDICTS:
        names = {"a": "A", "b": "B", "tie": "tie"}
        return [(names.get(label.lower(), label), verdict, m) for label, verdict, m in pairs]
    return pairs


def read_labels(path: Any, *, label_field: str = "label", id_field: str = "id") -> tuple[dict[str, Any], list[Any]]:
    """Each row's label by id from a labels or data file, and the errors of the rows that could not be read."""
    from .._datasets.rows import read_rows

    labels: dict[str, Any] = {}
    unreadable = []
    for row in read_rows(Path(path), id_field=id_field):
        if row.error is not None:
            unreadable.append(row.error)
        elif row.values.get(label_field) not in (None, ""):
            labels[row.id] = row.values[label_field]
    if not labels:
        raise OptionError(
            "{path} has no rows with a {field} value; name the column with {label_field}",
            path=str(path),
            field=repr(label_field),
        )
    return labels, unreadable
