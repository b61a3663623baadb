"""Text a caller gave, as it goes into a message: clipped, and told apart from what is not UTF-8."""

from __future__ import annotations

from localjudge._text import lone_surrogate, surrogate_message


def test_a_lone_surrogate_is_found_where_it_is_nested_and_said_as_the_byte_it_stands_for():
    assert lone_surrogate("café", "outputs") is None and lone_surrogate(3, "outputs") is None
    found = lone_surrogate({"messages": [{"content": "ok"}, {"content": "caf\udce9"}]}, "outputs")
    assert found == ("outputs.messages[1].content", 3, "\udce9")
    assert surrogate_message(found).startswith(
        "outputs.messages[1].content is not UTF-8 text: character 4 is the byte 0xE9, which is not UTF-8"
    )
    assert "half a surrogate pair" in surrogate_message(lone_surrogate(("a", "\ud83d"), "inputs"))
