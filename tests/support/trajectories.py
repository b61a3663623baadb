"""A small agent trajectory with a tool call, in OpenAI's message shape, for the trajectory judge's tests."""

from __future__ import annotations

#: asked to multiply, the agent calls a calculator and answers with its result
CALCULATOR = [
    {"role": "user", "content": "What is 17 * 23?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "calc", "arguments": '{"x": "17*23"}'}}],
    },
    {"role": "tool", "content": "391", "tool_call_id": "c"},
    {"role": "assistant", "content": "391"},
]
