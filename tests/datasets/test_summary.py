"""The running summary: counts from records, the same whether a verdict was judged now or kept."""

from __future__ import annotations

from localjudge._datasets.summary import BatchSummary


def test_counts_verdicts_errors_and_winners_without_keeping_records() -> None:
    summary = BatchSummary(total=4)
    summary.count({"id": "a", "result": {"score": True, "metadata": {"winner": "A"}}})
    summary.count({"id": "b", "result": {"score": False, "metadata": {"addresses_judge": True}}})
    summary.count({"id": "c", "error": {"type": "ParseError"}})
    summary.count_verdict({"score": True})  # one kept from an earlier run
    assert (summary.scored, summary.failed, summary.addressing) == (2, 1, 1)
    assert summary.as_dict()["scores"] == {"true": 2, "false": 1}
    assert summary.as_dict()["winners"] == {"A": 1}
    assert summary.as_dict()["errors"] == {"ParseError": 1}
    assert summary.mean_score == 2 / 3
    assert not any(isinstance(value, list) for value in vars(summary).values())
