"""The trust commands' reports as text: agreement with labels, two runs compared, the check sets' table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from .._trust.agreement import AgreementReport, PairedComparison
    from .commands.check import SetReport

__all__ = ["describe_agreement", "describe_check", "describe_comparison", "describe_way", "format_interval"]


def format_interval(interval: Optional[tuple[float, float]]) -> str:
    """A 95% interval in a table's column: two places, or a dash where there is none."""
    return "-" if interval is None else f"{interval[0]:.2f}-{interval[1]:.2f}"


def describe_agreement(report: AgreementReport) -> str:
    """The report as a few aligned lines."""

    def number(value: Optional[float]) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    def within(interval: Optional[tuple[float, float]]) -> str:
        return "" if interval is None else f" (95% interval {interval[0]:.3f}-{interval[1]:.3f})"

    lines = [
        f"{report.compared} rows compared ({report.without_label} verdicts without a label, "
        f"{report.without_verdict} labelled rows without a verdict)",
        f"accuracy {number(report.accuracy)}{within(report.accuracy_interval)}   "
        f"Cohen's kappa {number(report.kappa)}{within(report.kappa_interval)}",
    ]
    if report.classes:
        width = max(7, *(len(c) + 2 for c in report.classes))
        lines.append("confusion (rows: label, columns: verdict)")
        lines.append(" " * width + "".join(c.rjust(width) for c in report.classes))
        for name, row in zip(report.classes, report.confusion, strict=True):
            lines.append(name.rjust(width) + "".join(str(n).rjust(width) for n in row))
    if report.with_probabilities:
        lines.append(
            f"calibration: ECE {number(report.ece)} over {report.with_probabilities} verdicts with probabilities"
        )
        lines.append("  confidence   verdicts   mean confidence   share right")
        for b in report.reliability:
            if b.count:
                lines.append(
                    f"  {b.low:.2f}-{b.high:.2f}  {b.count:9d}   {b.mean_confidence:15.3f}   {b.accuracy:11.3f}"
                )
    if report.position_consistency is not None:
        lines.append(
            f"pairwise: position consistency {number(report.position_consistency)}, "
            f"flip rate {number(report.flip_rate)}"
        )
    return "\n".join(lines)


def describe_comparison(comparison: PairedComparison, *, against: str) -> str:
    """This run against another on the same labelled rows: the rows that tell them apart, and whether beyond chance."""
    left_out = ""
    if comparison.first_unmatched or comparison.second_unmatched:
        left_out = (
            f" ({comparison.first_unmatched} rows with a verdict only in this run and "
            f"{comparison.second_unmatched} only in the other are left out)"
        )
    if comparison.p_value is None:
        return f"against {against}: no labelled row has a verdict in both runs, so they cannot be compared{left_out}"
    if comparison.p_value < 0.05:
        verdict = "a split this lopsided is unlikely to be chance"
    else:
        verdict = "the rows do not tell the two runs apart"
    return (
        f"against {against}, on the {comparison.rows} rows both runs judged{left_out}: "
        f"{comparison.first_right} right in this run, {comparison.second_right} in the other; "
        f"{comparison.first_only} right only in this run, {comparison.second_only} only in the other; "
        f"McNemar's exact p {comparison.p_value:.3f} ({verdict})"
    )


def describe_way(way: Mapping[str, Any]) -> str:
    """How a set was judged (:func:`~localjudge._cli.commands.check.way_record`) in a few words."""
    parts = []
    if way.get("name"):
        parts.append(f"{way['name']} ({'the default' if way.get('default') else 'as asked'})")
    if way.get("pairs") != "likelihood":
        parts.append("with reasoning" if way.get("reasoning") else "verdict only")
    if way.get("described"):
        parts.append(str(way["described"]))
    if way.get("few_shot"):
        placed = "before" if way.get("few_shot_first") else "after"
        parts.append(f"examples from {way['few_shot']}, {placed} the prompt")
    if way.get("system"):
        parts.append("a system message")
    return ", ".join(parts)


def describe_check(reports: list[SetReport], *, judge: str, split: str, limit: Optional[int] = None) -> str:
    """One aligned line per set."""

    def number(value: Optional[float]) -> str:
        return "-" if value is None else f"{value:.2f}"

    header = (
        "set",
        "rows",
        "failed",
        "accuracy",
        "95% interval",
        "kappa",
        "ECE",
        "by prob.",
        "consistent",
        "ties",
        "contradicting",
        "s/row",
        "cached",
    )
    table = [header]
    for r in reports:
        pairwise = r.agreement.position_consistency is not None
        table.append(
            (
                r.name,
                str(r.rows),
                str(r.failed),
                number(r.agreement.accuracy),
                format_interval(r.agreement.accuracy_interval),
                number(r.agreement.kappa),
                number(r.agreement.ece),
                number(r.accuracy_by_probability),
                number(r.agreement.position_consistency),
                str(r.ties) if pairwise else "-",
                str(r.contradictions),
                f"{r.seconds_per_row:.2f}",
                str(r.cached),
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [f"judge {judge}, {split} rows" + (f", the first {limit} of each set" if limit is not None else "")]
    ways: dict[str, list[str]] = {}
    for r in reports:
        ways.setdefault(describe_way(r.way), []).append(r.name)
    lines += [f"{', '.join(names)}: {way}" for way, names in ways.items()]
    for row in table:
        lines.append(
            "  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))])
        )
    legend = [
        "95% interval: where the accuracy on rows like these lies, given how few were judged (Wilson's)",
        "by prob.: accuracy of the value the judge's probabilities favour (a pair: both orders averaged)",
    ]
    if any(r.agreement.position_consistency is not None for r in reports):  # only pairs asked in both orders have these
        legend.append(
            "consistent: pairs whose two orders agreed; ties: pairs whose orders disagreed (a tie unless "
            "--on-disagreement probabilities decided them)"
        )
    legend.append("contradicting: comments that state the opposite of their verdict")
    legend.append(
        "s/row: seconds per row, rows in flight together; cached: judge calls answered from the result "
        "cache (--no-cache to time the model)"
    )
    lines.append("; ".join(legend))
    addressing = [f"{r.name} {r.addressing}" for r in reports if r.addressing]
    if addressing:
        lines.append("answers that addressed the judge (metadata.addresses_judge): " + ", ".join(addressing))
    return "\n".join(lines)
