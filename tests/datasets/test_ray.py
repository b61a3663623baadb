"""Dataset runs on Ray: a real local cluster, an actor pool of judges, the same records as a local run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from localjudge._datasets.batch import run_batch, score_rows  # noqa: E402
from localjudge._datasets.ray import score_on_ray  # noqa: E402
from localjudge._datasets.rows import read_rows  # noqa: E402
from localjudge.errors import OutputParseError, UsageError  # noqa: E402


class CountingJudge:
    """A picklable evaluator that says which process scored a row and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *, outputs: str, **_: object) -> dict:
        self.calls += 1
        if outputs == "unparsable":
            raise OutputParseError("the model wrote no JSON", raw_output="well...")
        return {"key": "score", "score": outputs == "4", "comment": None, "metadata": {"pid": os.getpid()}}

    def counters(self) -> dict:
        return {"model_calls": self.calls, "prompt_tokens": 10 * self.calls}


@pytest.fixture(scope="module")
def local_cluster():
    """A real two-CPU Ray cluster on this machine, shared by the module's tests."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the actors cannot import this test module
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    from ray.data import DataContext

    context = DataContext.get_current()
    waited, context.wait_for_min_actors_s = context.wait_for_min_actors_s, 120
    yield  # with every actor up before the first batch is handed out, both actors get rows
    context.wait_for_min_actors_s = waited
    ray.shutdown()


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _verdict_only(record: dict) -> dict:
    """A record without what differs run to run: the time a row took and the judge's metadata."""
    kept = {key: value for key, value in record.items() if key != "seconds"}
    if "result" in kept:
        kept["result"] = {**kept["result"], "metadata": None}
    return kept


def test_actors_score_rows_as_a_local_run_does(local_cluster, tmp_path):
    data = _write(
        tmp_path / "rows.jsonl",
        [json.dumps({"id": f"r{i}", "inputs": "2+2?", "outputs": "4" if i % 2 else "5"}) for i in range(10)]
        + ['{"id": "torn", "outputs": ', json.dumps({"id": "bad-model", "outputs": "unparsable"})],
    )
    rows = list(read_rows(data))
    local = {r["id"]: r for r in score_rows(rows, CountingJudge())}
    scoring = score_on_ray(rows, CountingJudge(), actors=2, rows_per_batch=2)
    on_ray = {r["id"]: r for r in scoring}

    assert on_ray.keys() == local.keys() and len(on_ray) == 12
    assert {k: _verdict_only(v) for k, v in on_ray.items()} == {k: _verdict_only(v) for k, v in local.items()}
    assert on_ray["bad-model"]["error"] == {
        "type": "OutputParseError",
        "message": "the model wrote no JSON",
        "raw_output": "well...",
    }
    assert on_ray["11"]["error"]["type"] == "MalformedRowError"  # never sent to an actor
    pids = {r["result"]["metadata"]["pid"] for r in on_ray.values() if "result" in r}
    assert len(pids) == 2 and os.getpid() not in pids  # two actors, neither of them this process
    summary = scoring.summary
    assert (summary.scored, summary.failed, summary.model_calls, summary.prompt_tokens) == (10, 2, 11, 110)


def test_a_ray_run_resumes_from_its_results_file(local_cluster, tmp_path):
    import functools

    rows = [{"id": str(i), "outputs": "4"} for i in range(6)]
    results = tmp_path / "results.jsonl"
    scorer = functools.partial(score_on_ray, actors=2)
    first = run_batch(rows[:4], CountingJudge(), results, scorer=scorer)
    second = run_batch(rows, CountingJudge(), results, scorer=scorer)
    assert (first.scored, second.skipped, second.scored) == (4, 4, 2)
    assert [json.loads(line)["id"] for line in results.read_text().splitlines()] == [r["id"] for r in rows]


def test_an_evaluator_that_cannot_travel_is_refused_before_the_run():
    import threading

    lock = threading.Lock()
    with pytest.raises(UsageError, match="does not pickle"):
        score_on_ray([{"outputs": "4"}], lambda **_: lock)  # a lock cannot be pickled, even by value


@pytest.mark.model
def test_cli_ray_engine_gives_the_local_engine_results_and_shares_its_cache(tmp_path):
    """`batch --engine ray` (a local cluster of its own, 2 actors) against `batch`, both on the tiny model: machinery."""
    data = _write(
        tmp_path / "rows.jsonl",
        [json.dumps({"id": f"q{i}", "inputs": f"What is {i} + {i}?", "outputs": str(2 * i + i % 2)}) for i in range(6)],
    )
    env = {**os.environ, "RAY_ADDRESS": ""}
    common = [sys.executable, "-m", "localjudge", "batch", str(data), "--model", "tiny", "--max-tokens", "48"]
    common += ["--way", "plain"]  # the tiny base model writes no own answer short enough
    cache = ["--cache-file", str(tmp_path / "cache.sqlite3")]

    def run(*extra: str) -> dict:
        summary = tmp_path / "summary.json"
        done = subprocess.run([*common, *extra, "--summary", str(summary)], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(summary.read_text())

    local = run("-o", str(tmp_path / "local.jsonl"), "--no-cache")
    on_ray = run("-o", str(tmp_path / "ray.jsonl"), "--engine", "ray", "--actors", "2", *cache)
    again = run("-o", str(tmp_path / "again.jsonl"), "--engine", "ray", "--actors", "2", *cache)

    def records(name: str) -> list[dict]:
        """The records without the seconds each row took (every judged row has them), which differ run to run."""
        found = [json.loads(line) for line in (tmp_path / name).read_text().splitlines()]
        assert all(isinstance(record.pop("seconds"), float) for record in found)
        return found

    def judge(name: str) -> dict:
        """The judge the file beside the results describes, without its runs."""
        (described,) = json.loads((tmp_path / name).read_text())["judges"].values()
        return {key: value for key, value in described.items() if key != "runs"}

    assert records("ray.jsonl") == records("local.jsonl")  # greedy decoding: the same verdicts, the same order
    assert records("again.jsonl") == records("local.jsonl")
    assert judge("ray.judge.json") == judge("local.judge.json")  # described without loading a model here
    assert on_ray["scored"] == local["scored"] == 6 and on_ray["scores"] == local["scores"]
    assert on_ray["model_calls"] == 6 and on_ray["tokens"] == local["tokens"] and local["tokens"]["prompt"] > 0
    assert (again["cached"], again["model_calls"]) == (6, 0)  # the actors answered from the shared cache


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--engine", "ray", "--device", "cpu"], "--device does not apply"),
        pytest.param(  # the judge's model is resolved before the few-shot file is read
            ["--engine", "ray", "--few-shot", "FEW_SHOT", "--no-cache"], "few_shot_examples", marks=pytest.mark.model
        ),
        (["--actors", "3"], "--actors is for --engine ray"),
    ],
)
def test_bad_options_stop_a_ray_run_before_any_actor_starts(tmp_path, options, message):
    from click.testing import CliRunner

    from localjudge import _cli as cli

    data = _write(tmp_path / "rows.jsonl", [json.dumps({"outputs": "4"})])
    few_shot = _write(tmp_path / "few.jsonl", [json.dumps({"inputs": "2+2?"})])  # no outputs, no score
    options = [str(few_shot) if option == "FEW_SHOT" else option for option in options]
    result = CliRunner().invoke(cli.main, ["batch", str(data), *options])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert not (tmp_path / "rows.results.jsonl").exists()
