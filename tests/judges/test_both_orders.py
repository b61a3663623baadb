"""Both orders combined: each order's answer turned back into the caller's A and B, then one verdict."""

from __future__ import annotations

import pytest

from localjudge._judges.both_orders import combine_orders, read_order


def test_combining_orders_by_hand():
    first = read_order({"winner": "B", "reasoning": "r1"}, {"probabilities": {'"A"': 0.4, '"B"': 0.6}}, swapped=False)
    second = read_order({"winner": "A", "reasoning": "r2"}, {"probabilities": {'"A"': 0.9, '"B"': 0.1}}, swapped=True)
    assert (first.winner, second.winner) == ("B", "B")
    assert second.probabilities == {"B": 0.9, "A": 0.1}
    result = combine_orders("preference", first, second)
    assert result["score"] == 0.0 and result["metadata"]["winner"] == "B"
    assert result["metadata"]["probabilities"] == pytest.approx({"A": 0.25, "B": 0.75})
    no_readout = combine_orders("k", read_order({"winner": "A"}, None, False), read_order({"winner": "B"}, None, True))
    assert no_readout["metadata"] == {"winner": "A", "consistent": True, "verdicts": ["A", "A"]}
    assert no_readout["comment"] is None


def test_a_disagreement_goes_to_the_likelier_side_over_both_orders_when_asked():
    def order(winner, probabilities, swapped):
        return read_order({"winner": winner}, {"probabilities": probabilities}, swapped)

    first = order("A", {'"A"': 0.55, '"B"': 0.45}, swapped=False)  # a weak A ...
    second = order("A", {'"A"': 0.9, '"B"': 0.1}, swapped=True)  # ... against a strong B, shown first
    assert combine_orders("k", first, second)["metadata"]["winner"] == "tie"
    decided = combine_orders("k", first, second, on_disagreement="probabilities")
    assert (decided["score"], decided["metadata"]["winner"]) == (0.0, "B")
    assert decided["metadata"]["consistent"] is False and decided["metadata"]["decided_by"] == "probabilities"
    even = combine_orders("k", order("A", {'"A"': 0.6, '"B"': 0.4}, False), order("A", {'"A"': 0.6, '"B"': 0.4}, True),
                          on_disagreement="probabilities")  # fmt: skip
    assert even["metadata"]["winner"] == "tie" and "decided_by" not in even["metadata"]
    blind = combine_orders("k", read_order({"winner": "A"}, None, False), read_order({"winner": "A"}, None, True),
                           on_disagreement="probabilities")  # fmt: skip
    assert blind["metadata"]["winner"] == "tie", "without probabilities there is nothing to decide by"
