"""MeteredClient: the tokens a run's answers took, as each response reports them."""

from __future__ import annotations

import threading

import pytest
from support.remote_helpers import REQUEST

from localjudge._clients.base import ChatClient, make_chat_completion
from localjudge._clients.metered import MeteredClient
from localjudge.testing import ScriptedClient


class Reporting(ChatClient):
    def __init__(self, usage):
        super().__init__()
        self.usage = usage

    def _complete(self, request):
        response = make_chat_completion('{"score": true}', model="m")
        response["usage"] = self.usage
        return response

    def cache_identity(self):
        return {"model": "m"}


def test_calls_and_tokens_are_summed_across_threads():
    meter = MeteredClient(Reporting({"prompt_tokens": 7, "completion_tokens": 3}))
    threads = [threading.Thread(target=lambda: meter.chat.completions.create(**REQUEST)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (meter.calls, meter.prompt_tokens, meter.completion_tokens) == (8, 56, 24)


@pytest.mark.parametrize("usage", [None, {}, {"prompt_tokens": "7", "completion_tokens": -1}, {"prompt_tokens": True}])
def test_a_server_that_reports_no_usage_counts_a_call_and_no_tokens(usage):
    meter = MeteredClient(Reporting(usage))
    meter.chat.completions.create(**REQUEST)
    assert (meter.calls, meter.prompt_tokens, meter.completion_tokens) == (1, 0, 0)


def test_the_client_speaks_for_itself_but_cannot_be_gone_round():
    meter = MeteredClient(Reporting({}))
    assert meter.cache_identity() == {"model": "m"}
    assert not hasattr(meter, "create_many")  # it would answer without being counted
    assert not hasattr(MeteredClient(ScriptedClient([])), "cache_identity")
