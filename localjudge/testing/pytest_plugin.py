"""The pytest plugin (entry point ``pytest11``): a judge for test suites.

``--judge-model SPEC`` and ``--judge-base-url URL`` choose the judge (the
embedded default model otherwise); the ``local_judge`` fixture makes
evaluators with it; :func:`localjudge.testing.assert_judged` checks their
verdicts; and the session ends with a summary of every judged assertion.
The model loads on the first test that asks for a judge, once per session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Optional

import pytest

from . import assertions as testing


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("localjudge", "judged assertions (localjudge)")
    group.addoption("--judge-model", metavar="SPEC", help="The judge for local_judge (default: the embedded model).")
    group.addoption("--judge-base-url", metavar="URL", help="The server for an openai:NAME --judge-model.")


def pytest_configure(config: pytest.Config) -> None:
    testing.start_recording()


def pytest_unconfigure(config: pytest.Config) -> None:
    testing.stop_recording()


@pytest.fixture(scope="session")
def local_judge_client(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The judge model of the session (``--judge-model``), loaded once."""
    from .._clients.resolve import default_model_spec, resolve_model

    spec = request.config.getoption("judge_model") or default_model_spec()
    client = resolve_model(spec, base_url=request.config.getoption("judge_base_url"))
    yield client
    from .._clients.remote import OpenAICompatibleClient

    if isinstance(client, OpenAICompatibleClient):  # its connections; a local model is the process's to share
        client.close()


@pytest.fixture
def local_judge(request: pytest.FixtureRequest) -> Callable[..., Callable[..., Any]]:
    """``local_judge(prompt=None, *, evaluator=None, judge=None, **options)``: an evaluator with the session's judge.

    ``evaluator`` names a ready-made one (``localjudge evaluators list``);
    without a prompt our default prompt is used. ``options`` are those of
    ``create_llm_as_judge``; ``judge`` replaces the session's model. The
    results remember what the judge was shown, for assert_judged's message.
    """

    def make(prompt: Any = None, *, evaluator: Optional[str] = None, judge: Any = None, **options: Any) -> Any:
        from .._judges.evaluators import EVALUATORS, default_prompt
        from .._judges.single import create_llm_as_judge

        client = judge if judge is not None else request.getfixturevalue("local_judge_client")
        if evaluator is not None and prompt is not None:
            raise pytest.UsageError(f"the {evaluator} evaluator brings its own prompt: give evaluator= or a prompt")
        if evaluator is not None:
            if evaluator not in EVALUATORS:
                raise pytest.UsageError(f"no evaluator named {evaluator!r}; see: localjudge evaluators list")
            built: Callable[..., Any] = EVALUATORS[evaluator].create(judge=client, **options)
        else:
            cache: dict[tuple[bool, bool], Any] = {}

            def built(**values: Any) -> Any:
                shape = (values.get("inputs") is not None, values.get("reference_outputs") is not None)
                if shape not in cache:
                    text = prompt if prompt is not None else default_prompt(has_inputs=shape[0], has_reference=shape[1])
                    cache[shape] = create_llm_as_judge(prompt=text, judge=client, **options)
                return cache[shape](**values)

        def judged(**values: Any) -> testing.JudgedResult:
            result = testing.JudgedResult(built(**values))
            result.judged = dict(values)
            return result

        return judged

    return make


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    found = testing.judgements()
    if not found:
        return
    failed = [j for j in found if not j.passed]
    terminalreporter.section("localjudge")
    terminalreporter.write_line(
        f"{len(found)} judged assertions: {len(found) - len(failed)} held, {len(failed)} failed"
    )
    for judgement in failed:
        terminalreporter.write_line(
            f"  {judgement.test}: {judgement.key} was {judgement.score!r}, not {judgement.expected}"
        )
