"""The pytest plugin in real pytest sessions (pytester): the fixture, judged assertions and their summary."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def _quiet_inner_sessions(pytester: pytest.Pytester) -> None:
    """The inner sessions load pytest-asyncio too: give it the loop scope the project's own settings give."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")


SUITE = """
from localjudge.testing import ScriptedClient
from localjudge.testing import assert_judged


def scripted(answer):
    return ScriptedClient([answer])


def test_a_right_answer(local_judge):
    evaluator = local_judge("Is {outputs} the answer to {inputs}?", judge=scripted('{"reasoning": "Four.", "score": true}'))
    assert_judged(evaluator(inputs="What is 2+2?", outputs="4"))


def test_a_wrong_answer(local_judge):
    evaluator = local_judge(judge=scripted('{"reasoning": "Five is not four.", "score": false}'))
    assert_judged(evaluator(inputs="What is 2+2?", outputs="5"))


def test_a_score_below_the_bar(local_judge):
    evaluator = local_judge("{outputs}", judge=scripted('{"reasoning": "Half there.", "score": 0.4}'), continuous=True)
    assert_judged(evaluator(outputs="draft"), at_least=0.5)


def test_a_ready_made_evaluator(local_judge):
    evaluator = local_judge(evaluator="conciseness", judge=scripted('{"score": true}'))  # verdict only, as measured
    assert_judged(evaluator(inputs="2+2?", outputs="4"), equals=True)
"""


def test_judged_assertions_fail_with_the_score_the_reasoning_and_the_inputs(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: the judge scored 'score' False, which is not == True",
            "*its reasoning: Five is not four.",
            "*inputs: What is 2+2?",
            "*outputs: 5",
        ]
    )
    result.stdout.fnmatch_lines(["*the judge scored 'score' 0.4, which is not >= 0.5", "*outputs: draft"])
    result.stdout.fnmatch_lines(
        [
            "*= localjudge =*",
            "4 judged assertions: 2 held, 2 failed",
            "  test_suite.py::test_a_wrong_answer: score was False, not == True",
            "  test_suite.py::test_a_score_below_the_bar: score was 0.4, not >= 0.5",
        ]
    )


def test_the_options_are_registered_and_a_session_without_judgements_prints_no_summary(pytester: pytest.Pytester):
    pytester.makepyfile(test_plain="def test_nothing_judged():\n    assert True\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--judge-model", "no-such-model")
    result.assert_outcomes(passed=1)  # the model is resolved only when a test asks for a judge
    import localjudge

    assert f"localjudge-{localjudge.__version__}" in result.stdout.str()  # loaded by its entry point
    assert "= localjudge =" not in result.stdout.str()
    assert "--judge-model=SPEC" in pytester.runpytest("--help").stdout.str()


def test_naming_the_plugin_with_p_as_well_as_installing_it_is_fine(pytester: pytest.Pytester):
    """Once an error: the entry point registered it under another name, and `-p` tried to register it again."""
    pytester.makepyfile(test_plain="def test_nothing_judged():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "localjudge.pytest_plugin", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert (
        "--judge-model=SPEC" in pytester.runpytest_subprocess("-p", "localjudge.pytest_plugin", "--help").stdout.str()
    )


def test_a_bad_judge_model_fails_the_tests_that_use_it_with_the_reason(pytester: pytest.Pytester):
    pytester.makepyfile(test_bad="def test_judged(local_judge):\n    local_judge()(outputs='x')\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--judge-model", "no-such-model")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Unknown model spec 'no-such-model'*"])


@pytest.mark.model
def test_the_real_default_model_judges_in_a_test_session(pytester: pytest.Pytester, tiny_gguf):
    pytester.makepyfile(
        test_real="""
def test_judged_by_the_model(local_judge, local_judge_client):
    result = local_judge(use_reasoning=False)(inputs="What is 2+2?", outputs="4")
    assert isinstance(result["score"], bool)
    assert abs(sum(result["metadata"]["probabilities"].values()) - 1) < 1e-6
    assert result.judged == {"inputs": "What is 2+2?", "outputs": "4"}
    assert type(local_judge_client).__name__ == "LlamaCppClient"
"""
    )
    # one argument: a path standing alone on the command line would move the inner session's rootdir
    result = pytester.runpytest("-p", "no:cacheprovider", f"--judge-model={tiny_gguf}")
    result.assert_outcomes(passed=1)
