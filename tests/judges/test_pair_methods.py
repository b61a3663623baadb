"""A way of asking a pair of one's own: one module and its registration, reached as the shipped ways are."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pytest

from localjudge import WAYS, Way, create_pairwise_judge
from localjudge._judges.core import JudgeCore
from localjudge._judges.pairwise import (
    PairOptions,
    pairwise_prompt,
    pairwise_schema,
    register_pair_method,
    unregister_pair_method,
)
from localjudge._judges.plan import Step
from localjudge._prompts.prompting import SCORES
from localjudge.errors import OptionError, UsageError
from localjudge.testing import ScriptedClient


@dataclass
class OneOrder:
    """Asks A then B once, and takes the answer as it comes: cheaper than both orders, and open to position bias."""

    core: JudgeCore

    def plan(
        self,
        inputs: object,
        outputs_a: object,
        outputs_b: object,
        reference_outputs: object,
        kwargs: Mapping[str, object],
    ) -> Step:
        values = {**kwargs, "outputs_a": outputs_a, "outputs_b": outputs_b}
        (response,) = yield [self.core.build_request(inputs, None, reference_outputs, values)]
        winner = self.core.read_parsed(response)["winner"]
        return {"key": self.core.feedback_key, "score": SCORES[winner], "comment": None, "metadata": {"winner": winner}}


def one_order(options: PairOptions, way: Way) -> OneOrder:
    options.refuse("one-order", "it asks one order and settles nothing", calibration=options.calibration is not None)
    prompt = options.prompt if options.prompt is not None else pairwise_prompt()
    return OneOrder(options.core(prompt=prompt, output_schema=pairwise_schema(use_reasoning=options.use_reasoning)))


@pytest.fixture
def registered():
    register_pair_method("one-order", one_order, "A then B, asked once")
    yield
    unregister_pair_method("one-order")


def test_a_registered_method_judges_by_name_and_by_way_and_says_so_in_its_results(registered):
    client = ScriptedClient(['{"winner": "B"}', '{"winner": "A"}'])
    by_name = create_pairwise_judge(judge=client, use_reasoning=False, way="one-order")
    by_way = create_pairwise_judge(judge=client, use_reasoning=False, way=Way(pairs="one-order"))
    first, second = (judge(inputs="2+2?", outputs_a="5", outputs_b="4") for judge in (by_name, by_way))
    assert (first["score"], second["score"]) == (0.0, 1.0) and len(client.requests) == 2  # one request a pair
    assert first["metadata"] == {"winner": "B", "way": "one-order", "requests": 1}
    assert WAYS["one-order"].describe(pair=True) == "A then B, asked once"


def test_a_registered_method_refuses_what_it_cannot_take_and_leaves_no_trace_when_unregistered(registered):
    with pytest.raises(OptionError, match=r"one-order.*does not go with calibration"):
        create_pairwise_judge(judge=ScriptedClient([]), way="one-order", calibration="stored")
    with pytest.raises(UsageError, match="exists already"):
        register_pair_method("likelihood", one_order, "taken")
    made_before = Way(pairs="one-order")
    unregister_pair_method("one-order")
    with pytest.raises(OptionError, match="a pair is asked one of these ways"):
        Way(pairs="one-order")
    with pytest.raises(OptionError, match="no pair method named 'one-order'"):
        create_pairwise_judge(judge=ScriptedClient([]), way=made_before)
    for shipped in ("both-orders", "checklist", "plain", "never-registered"):
        with pytest.raises(UsageError, match="was registered"):
            unregister_pair_method(shipped)
    assert {"checklist", "plain", "weighed"} <= set(WAYS)
    register_pair_method("one-order", one_order, "A then B, asked once")  # for the fixture's own undoing


def test_the_command_line_takes_a_method_registered_after_it_loaded(registered):
    from click.testing import CliRunner

    from localjudge import _cli as cli
    from localjudge._cli.options import WayName

    assert WayName().convert("one-order", None, None) == Way(pairs="one-order")
    assert "one-order" in CliRunner().invoke(cli.main, ["compare", "--help"]).output
    refused = CliRunner().invoke(cli.main, ["compare", "--way", "two-orders", "--inputs", "q"])
    assert refused.exit_code == 2 and "'two-orders' is not a way of judging" in refused.output


def test_a_process_that_did_not_register_the_method_says_it_must_register_it_too(registered):
    import pickle
    import subprocess
    import sys

    worker = (
        "import pickle, sys\n"
        "from localjudge._judges.pair_methods import pair_plan\n"
        "from localjudge._judges.ways import find_way\n"
        "way = pickle.loads(sys.stdin.buffer.read())\n"
        "for attempt in (lambda: find_way('one-order'), lambda: pair_plan(None, way)):\n"
        "    try:\n"
        "        attempt()\n"
        "    except Exception as exc:\n"
        "        print(exc)\n"
    )
    made_here = pickle.dumps(WAYS["one-order"])
    ran = subprocess.run([sys.executable, "-c", worker], input=made_here, capture_output=True, check=True)
    said = ran.stdout.decode().splitlines()
    assert len(said) == 2
    assert all("register_pair_method" in line and "must register it too" in line for line in said)
    assert "no pair method named 'one-order' in this process" in said[1]
