"""The optional capabilities (``Supports*`` protocols): every client that claims one has it, the others do not."""

from __future__ import annotations

import pytest
from support.toy_runtime import ToyRuntime

from localjudge._cli.commands.row_judge import RowJudge
from localjudge._cli.commands.settings import JudgeSettings
from localjudge._clients.cached import CachedClient
from localjudge._clients.deferred import DeferredClient
from localjudge._clients.fallback import AsyncFallbackClient, FallbackClient
from localjudge._clients.local import LocalClient
from localjudge._clients.metered import MeteredClient
from localjudge._clients.outlines import OutlinesClient
from localjudge._clients.remote import AsyncOpenAICompatibleClient, OpenAICompatibleClient
from localjudge._clients.result_cache import ResultCache
from localjudge._judges.single import create_llm_as_judge
from localjudge.testing import ScriptedClient
from localjudge.types import (
    SupportsCacheIdentity,
    SupportsCheckSchema,
    SupportsCounters,
    SupportsCreateMany,
    SupportsRuntimeInfo,
    SupportsSmokeDecode,
    offers,
)


def local():
    return LocalClient(ToyRuntime(), chat_template="chatml")


def remote():
    return OpenAICompatibleClient("http://127.0.0.1:9/v1", model="m")


def deferred():
    return DeferredClient("toy", local)


# Each builder gives a fresh object; OutlinesClient needs a model, so its class stands in (methods are the class's).
BUILDERS = {
    "local": lambda tmp: local(),
    "remote": lambda tmp: remote(),
    "async remote": lambda tmp: AsyncOpenAICompatibleClient("http://127.0.0.1:9/v1", model="m"),
    "scripted": lambda tmp: ScriptedClient([]),
    "outlines": lambda tmp: OutlinesClient,
    "deferred": lambda tmp: deferred(),
    "fallback": lambda tmp: FallbackClient(local(), remote()),
    "async fallback": lambda tmp: AsyncFallbackClient(local().aio, remote()),
    "cached local": lambda tmp: CachedClient(local(), ResultCache(tmp / "results.sqlite3")),
    "metered local": lambda tmp: MeteredClient(local()),
    "metered scripted": lambda tmp: MeteredClient(ScriptedClient([])),
}

CLAIMS = {
    SupportsCheckSchema: {
        "local",
        "outlines",
        "deferred",
        "fallback",
        "async fallback",
        "cached local",
        "metered local",
    },
    SupportsCacheIdentity: {"local", "remote", "async remote", "deferred", "fallback", "cached local", "metered local"},
    SupportsCreateMany: {"local"},  # a wrapper hides it: a batch would go round what the wrapper adds
    SupportsSmokeDecode: {"local", "metered local", "cached local"},
    SupportsRuntimeInfo: {"local", "metered local", "cached local"},
}


@pytest.mark.parametrize("capability", list(CLAIMS), ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", list(BUILDERS))
def test_a_client_offers_a_capability_exactly_when_it_claims_it(capability, name, tmp_path):
    client = BUILDERS[name](tmp_path)
    assert offers(client, capability) is (name in CLAIMS[capability])


@pytest.mark.parametrize("capability", list(CLAIMS), ids=lambda c: c.__name__)
def test_a_client_that_defines_the_methods_is_an_instance_of_the_protocol(capability):
    assert isinstance(local(), capability)
    assert not isinstance(ScriptedClient([]), capability)


def test_counters_are_the_batch_commands_evaluators_not_a_plain_ones():
    assert offers(RowJudge(JudgeSettings(), use_cache=False), SupportsCounters)
    assert isinstance(RowJudge(JudgeSettings(), use_cache=False), SupportsCounters)
    evaluator = create_llm_as_judge(prompt="{outputs}", judge=ScriptedClient([]), model="m")
    assert not offers(evaluator, SupportsCounters)
    assert not isinstance(evaluator, SupportsCounters)
