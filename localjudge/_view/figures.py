"""A run's figures and two runs' differences, as plain JSON-ready values, from the trust layer's own functions.

Nothing statistical is computed here: accuracy, kappa, their intervals,
the confusion matrix, calibration and McNemar's test are
:mod:`localjudge._trust.agreement`'s, as ``agreement`` and ``agreement
--against`` print them. Kappa's interval is 2,000 resamples of every
compared row; past :data:`KAPPA_INTERVAL_ROWS` rows it is left out (at that
size it is narrower than its last printed digit anyway). The time per row is
the median of the records' own ``seconds``; the judge's model, checksum,
prompt and schema come from the file a run writes beside its results
(:mod:`localjudge._datasets.judge_file`), where there is one.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

from .._datasets.judge_file import judge_file_path, read_judge_file
from .._datasets.results_file import latest_records
from .._trust.agreement import AgreementReport, Judged, accuracy_interval, agreement_of, compare_runs
from .index import RunIndex
from .records import Tallies, summarize

__all__ = [
    "KAPPA_INTERVAL_ROWS",
    "comparison",
    "described_judges",
    "figures_of",
    "overview",
    "run_figures",
    "shared_rows",
]

KAPPA_INTERVAL_ROWS = 5000
#: changed rows listed by a comparison (all are counted)
CHANGED_SHOWN = 500


def run_figures(records: Iterable[Mapping[str, Any]], labels: Mapping[str, Any]) -> dict[str, Any]:
    """What a run's records say, with or without labels: counts, the judge, scores, pairs, agreement."""
    summaries = [summarize(record) for record in latest_records(records)]
    judged = [summary.judged for summary in summaries if summary.judged is not None]
    return figures_of(Tallies.of(summaries), judged, labels)


def figures_of(tallies: Tallies, judged: Sequence[Judged], labels: Mapping[str, Any]) -> dict[str, Any]:
    """The overview's figures from a run's tallies and its verdicts as the agreement reads them."""
    failed = sum(tallies.errors.values())
    timed = tallies.seconds
    figures: dict[str, Any] = {
        "rows": tallies.rows,
        "judged": tallies.rows - failed,
        "failed": failed,
        "cached": tallies.cached,  # None: the records do not say
        "errors": dict(tallies.errors.most_common()),
        "judge": {
            "fingerprints": dict(tallies.judges.most_common()),
            "ways": dict(tallies.ways.most_common()),
            "keys": dict(tallies.keys.most_common()),
            "calibrated": tallies.calibrated,
            "requests": tallies.requests,
        },
        "scores": dict(sorted(tallies.scores.items(), key=lambda item: item[0])),
        "contradicting": tallies.contradicting,
        "kind": tallies.kinds.most_common(1)[0][0] if tallies.kinds else "answer",
        "pairs": None,
        "agreement": None,
        # each row's wall-clock seconds as its record gives them (rows in flight together overlap); None: not recorded
        "seconds_per_row": statistics.median(timed) if timed else None,
        "seconds_total": _finite(sum(timed)) if timed else None,
        "timed_rows": len(timed),
    }
    winners = tallies.winners
    if tallies.pairs:
        figures["pairs"] = {
            "asked_both_orders": tallies.pairs,
            "position_consistency": tallies.consistent / tallies.pairs,
            "ties": winners.get("tie", 0),
            "orders_disagreed": tallies.pairs - tallies.consistent,
            "winners": dict(winners.most_common()),
        }
    elif winners:
        figures["pairs"] = {"winners": dict(winners.most_common()), "ties": winners.get("tie", 0)}
    if labels:
        report = measured(judged, labels)
        figures["agreement"] = report.as_dict() if report.compared else None
    return figures


def _finite(value: float) -> float | None:
    """``value``, or None where a hand-edited file's numbers add up past what JSON can hold."""
    return value if math.isfinite(value) else None


def measured(judged: Iterable[Judged], labels: Mapping[str, Any]) -> AgreementReport:
    """:func:`agreement_of`, with kappa's interval only where the rows are few enough to resample quickly."""
    judged = list(judged)
    report = agreement_of(judged, labels, intervals=False)
    if report.compared <= KAPPA_INTERVAL_ROWS:
        return agreement_of(judged, labels)
    right = sum(report.right.values())
    report.accuracy_interval = accuracy_interval(right, report.compared)
    return report


def overview(index: RunIndex) -> dict[str, Any]:
    """A run's overview page: where it comes from, its figures, and its judge as the file beside it describes it.

    Counted by sqlite over the index's columns, and measured over the verdicts it holds: no record is read again.
    """
    figures = figures_of(index.tallies(), index.judged(), index.labels_in_use())
    return {
        "name": index.name,
        "path": str(index.path),
        "version": index.version,
        "invalid_lines": index.invalid_lines,
        "has_values": bool(index.values),
        **figures,
        **described_judges(index.path, figures["judge"]["fingerprints"]),
    }


def described_judges(results: Path, fingerprints: Mapping[str, int]) -> dict[str, Any]:
    """The judges the file beside ``results`` describes (:mod:`~localjudge._datasets.judge_file`), as the page shows them.

    Where the records name their judges (``judged``), only those that judged
    a row are shown, each with its rows; the others are counted
    (``judges_elsewhere``: a judge whose rows were all judged again). Where
    they do not (``check-judge`` writes no stamp), every judge described is
    shown. ``judges`` is None where nothing describes the judge.
    """
    path = judge_file_path(results)
    found: dict[str, Any] = {"judge_file": None, "judge_file_error": None, "judges": None, "judges_elsewhere": 0}
    try:
        judges = read_judge_file(path)
    except ValueError as exc:
        return {**found, "judge_file": str(path), "judge_file_error": str(exc)}
    if judges is None:
        return found
    shown = {fingerprint: entry for fingerprint, entry in judges.items() if fingerprint in fingerprints}
    if not fingerprints:
        shown = judges
    return {
        **found,
        "judge_file": str(path),
        "judges": [_judge(fingerprint, entry, fingerprints.get(fingerprint)) for fingerprint, entry in shown.items()],
        "judges_elsewhere": len(judges) - len(shown),
    }


def _judge(fingerprint: str, entry: Mapping[str, Any], rows: Optional[int]) -> dict[str, Any]:
    """One judge's description in the shape the page reads: every value text, a number or None, as recorded."""
    runs = [run for run in _list(entry.get("runs")) if isinstance(run, Mapping)]
    last = runs[-1] if runs else {}
    options = entry.get("options")
    return {
        "fingerprint": fingerprint,
        "rows": rows,
        "version": _text(entry.get("localjudge")),
        "models": [
            {name: _text(model.get(name)) for name in ("role", "spec", "kind", "card", "file", "sha256", "sha256_from")}
            | {"servers": [text for text in map(_text, _list(model.get("servers"))) if text]}
            for model in _list(entry.get("models"))
            if isinstance(model, Mapping)
        ],
        "asked": [
            {
                "rows": _text(asked.get("rows")),
                "way": _text(_mapping(asked.get("way")).get("label")),
                "way_described": _text(_mapping(asked.get("way")).get("described")),
                "prompt": _text(asked.get("prompt")),
                "prompt_note": _text(asked.get("prompt_note")),
                "system": _text(asked.get("system")),
                "schema": asked.get("schema") if isinstance(asked.get("schema"), Mapping) else None,
            }
            for asked in _list(entry.get("asked"))
            if isinstance(asked, Mapping)
        ],
        "reasoning": options.get("reasoning") if isinstance(options, Mapping) else None,
        "runs": len(runs),
        "last_run": {
            "started": _text(last.get("started")),
            "finished": _text(last.get("finished")),
            "rows": _number(last.get("rows")),
            "seconds": _number(last.get("seconds")),
            "rows_per_second": _number(last.get("rows_per_second")),
        }
        if runs
        else None,
    }


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any) -> Optional[str]:
    return None if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _number(value: Any) -> Optional[float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return value
    return None


def shared_rows(runs: Sequence[RunIndex]) -> list[dict[str, int]]:
    """Each two runs and how many row ids they share: the page offers to compare only those that share some."""
    ids = [index.ids() for index in runs]
    return [
        {"first": a, "second": b, "shared": len(ids[a] & ids[b])}
        for a in range(len(runs))
        for b in range(a + 1, len(runs))
    ]


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
    if labels and shared:  # runs that share no row (of different sets) have nothing to measure side by side
        reports = [measured(index.judged(), labels) for index in (first, second)]
        found["first"]["agreement"] = reports[0].as_dict() if reports[0].compared else None
        found["second"]["agreement"] = reports[1].as_dict() if reports[1].compared else None
        paired = compare_runs(*reports)
        found["mcnemar"] = paired.as_dict() if paired.p_value is not None else None
    return found
