"""A pair and the log-probabilities a scripted client gives its replies: likelihood judged without a model."""

from __future__ import annotations

PAIR = {"inputs": "Name the capital of France.", "outputs_a": "Rome is lovely.", "outputs_b": "Paris."}
#: log-probabilities of each reply's tokens, after the instruction and after an empty request
FIGURES = {
    ("Name the capital of France.", "Rome is lovely."): [-2.0, -1.0, -3.0],
    ("", "Rome is lovely."): [-2.0, -1.5, -3.0],  # the instruction helps it a little: +0.5 over 3 tokens
    ("Name the capital of France.", "Paris."): [-0.5, -0.5],
    ("", "Paris."): [-4.0, -1.0],  # and this one a lot: +4.0 over 2 tokens
}


def scored(request):
    """A client that scores replies, by the table above."""
    assert request["score_reply"] is True
    user, reply = (m["content"] for m in request["messages"][-2:])
    tokens = [{"token": f"t{i}", "logprob": f, "top_logprobs": []} for i, f in enumerate(FIGURES[user, reply])]
    return {"choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop",
                         "logprobs": {"content": tokens}}]}  # fmt: skip
