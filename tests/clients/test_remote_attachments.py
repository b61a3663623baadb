"""A remote judge that reads images or audio is sent OpenEvals' attachments as the content blocks built for them."""

from __future__ import annotations

import pytest
from support.fault_server import completion
from support.remote_helpers import FAST

from localjudge._clients.remote import OpenAICompatibleClient
from localjudge.llm import create_llm_as_judge
from localjudge.testing import ScriptedClient

prompts = pytest.importorskip("openevals.prompts")

ATTACHMENTS = [
    {"mime_type": "image/png", "data": "iVBORw0KGgo="},
    {"mime_type": "audio/wav", "data": "UklGRiQAAABXQVZF"},
]
VERDICT = '{"reasoning": "A plain test pattern.", "score": false}'


def test_a_servers_model_is_sent_the_attachments_as_built_and_its_verdict_read(fault_server):
    server = fault_server(completion(VERDICT))
    remote = OpenAICompatibleClient(server.base_url, model="vision-model", **FAST)
    result = create_llm_as_judge(prompt=prompts.EXPLICIT_CONTENT_PROMPT, judge=remote)(
        inputs="a photo", outputs="", attachments=ATTACHMENTS
    )
    assert result["score"] is False and result["comment"] == "A plain test pattern."

    scripted = ScriptedClient([VERDICT])  # what the judge builds, which the parity tests hold to OpenEvals'
    create_llm_as_judge(prompt=prompts.EXPLICIT_CONTENT_PROMPT, judge=scripted)(
        inputs="a photo", outputs="", attachments=ATTACHMENTS
    )
    (exchange,) = server.requests
    sent = exchange.json()["messages"]
    assert sent == scripted.requests[0]["messages"]  # over the wire, unchanged
    blocks = [block for message in sent if isinstance(message["content"], list) for block in message["content"]]
    assert {block["type"] for block in blocks} >= {"image_url", "input_audio"}
