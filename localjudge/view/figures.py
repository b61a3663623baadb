"""A run's figures and two runs' differences, as plain JSON-ready values, from the trust layer's own functions.

Nothing statistical is computed here: accuracy, kappa, their intervals,
the confusion matrix, calibration and McNemar's test are
:mod:`localjudge.trust.agreement`'s, as ``agreement`` and ``agreement
--against`` print them. Kappa's interval is 2,000 resamples of every
compared row; past :data:`KAPPA_INTERVAL_ROWS` rows it is left out (at that
size it is narrower than its last printed digit anyway).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ..trust.agreement import AgreementReport, accuracy_interval, agreement, compare_runs
from ..trust.contradiction import contradicts
from .index import RunIndex
from .records import kind_of

__all__ = ["KAPPA_INTERVAL_ROWS", "comparison", "overview", "run_figures"]

KAPPA_INTERVAL_ROWS = 5000
#: changed rows listed by a comparison (all are counted)
CHANGED_SHOWN = 500


def run_figures(records: Iterable[Mapping[str, Any]], labels: Mapping[str, Any]) -> dict[str, Any]:
    """What a run's records say, with or without labels: counts, the judge, scores, pairs, agreement."""
    records = list(records)
    errors: Counter[str] = Counter()
    scores: Counter[str] = Counter()
    winners: Counter[str] = Counter()
    judges: Counter[str] = Counter()
    ways: Counter[str] = Counter()
    keys: Counter[str] = Counter()
    calibrated = requests = contradicting = cached = 0
    cache_recorded = False
    pairs = consistent = 0
    kinds: Counter[str] = Counter()
    for record in records:
        judged = record.get("judged")
        if isinstance(judged, Mapping) and judged.get("judge"):
            judges[str(judged["judge"])] += 1
        result = record.get("result")
        if not isinstance(result, Mapping):
            error = record.get("error")
            errors[str(error.get("type", "error")) if isinstance(error, Mapping) else "error"] += 1
            continue
        kinds[kind_of(record)] += 1
        found = result.get("metadata")
        metadata: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        scores[json.dumps(result.get("score"), ensure_ascii=False)] += 1
        keys[str(result.get("key"))] += 1
        ways[str(metadata.get("way", "not recorded"))] += 1
        if isinstance(metadata.get("winner"), str):
            winners[metadata["winner"]] += 1
        if isinstance(metadata.get("consistent"), bool):
            pairs += 1
            consistent += metadata["consistent"]
        calibrated += metadata.get("calibrated") is True
        cached += metadata.get("cached") is True
        cache_recorded |= "cached" in metadata
        requests += int(metadata["requests"]) if isinstance(metadata.get("requests"), int) else 0
        contradicting += contradicts(result)
    judged = len(records) - sum(errors.values())
    figures: dict[str, Any] = {
        "rows": len(records),
        "judged": judged,
        "failed": sum(errors.values()),
        "cached": cached if cache_recorded else None,  # None: the records do not say
        "errors": dict(errors.most_common()),
        "judge": {
            "fingerprints": dict(judges.most_common()),
            "ways": dict(ways.most_common()),
            "keys": dict(keys.most_common()),
            "calibrated": calibrated,
            "requests": requests,
        },
        "scores": dict(sorted(scores.items(), key=lambda item: item[0])),
        "contradicting": contradicting,
        "kind": kinds.most_common(1)[0][0] if kinds else "answer",
        "pairs": None,
        "agreement": None,
        "seconds_per_row": None,  # a results file does not record how long a row took
    }
    if pairs:
        figures["pairs"] = {
            "asked_both_orders": pairs,
            "position_consistency": consistent / pairs,
            "ties": winners.get("tie", 0),
            "orders_disagreed": pairs - consistent,
            "winners": dict(winners.most_common()),
        }
    elif winners:
        figures["pairs"] = {"winners": dict(winners.most_common()), "ties": winners.get("tie", 0)}
    if labels:
        report = measured(records, labels)
        figures["agreement"] = report.as_dict() if report.compared else None
    return figures


def measured(records: Iterable[Mapping[str, Any]], labels: Mapping[str, Any]) -> AgreementReport:
    """:func:`agreement`, with kappa's interval only where the rows are few enough to resample quickly."""
    records = list(records)
    report = agreement(records, labels, intervals=False)
    if report.compared <= KAPPA_INTERVAL_ROWS:
        return agreement(records, labels)
    right = sum(report.right.values())
    report.accuracy_interval = accuracy_interval(right, report.compared)
    return report


def overview(index: RunIndex) -> dict[str, Any]:
    """A run's overview page: where it comes from, and its figures."""
    return {
        "name": index.name,
        "path": str(index.path),
        "version": index.version,
        "invalid_lines": index.invalid_lines,
        "has_values": bool(index.values),
        **run_figures(index.records(), index.labels_in_use()),
    }


def comparison(first: RunIndex, second: RunIndex) -> dict[str, Any]:
    """Two runs on the same rows: the rows whose verdict changed, each run's agreement, McNemar's p."""
    a, b = first.verdicts(), second.verdicts()
    shared = [row_id for row_id in a if row_id in b]
    changed = []
    for row_id in shared:
        (verdict_a, failed_a, label), (verdict_b, failed_b, label_b) = a[row_id], b[row_id]
        if verdict_a != verdict_b or failed_a != failed_b:
            changed.append({"id": row_id, "first": verdict_a, "second": verdict_b, "label": label or label_b})
    labels = {**second.labels_in_use(), **first.labels_in_use()}
    found: dict[str, Any] = {
        "first": {"name": first.name, "path": str(first.path), "rows": len(a)},
        "second": {"name": second.name, "path": str(second.path), "rows": len(b)},
        "shared": len(shared),
        "only_first": len(a) - len(shared),
        "only_second": len(b) - len(shared),
        "changed_count": len(changed),
        "changed": changed[:CHANGED_SHOWN],
        "mcnemar": None,
    }
    if labels:
        reports = [measured(index.records(), labels) for index in (first, second)]
        found["first"]["agreement"] = reports[0].as_dict() if reports[0].compared else None
        found["second"]["agreement"] = reports[1].as_dict() if reports[1].compared else None
        paired = compare_runs(*reports)
        found["mcnemar"] = paired.as_dict() if paired.p_value is not None else None
    return found
