"""The batcher: generations side by side give what each gives alone, and one's failure stays its own."""

from __future__ import annotations

import contextlib
import itertools
import threading

import pytest
from support.toy_runtime import ToyRuntime

from localjudge._decoding import guide_for, schema_to_regex
from localjudge._decoding.batcher import Batcher
from localjudge._decoding.loop import Sampler, generate
from localjudge._decoding.steps import Extend, Start, run
from localjudge.errors import ContextOverflowError, ModelError

BOOLEAN = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "score": {"type": "boolean"}},
    "required": ["reasoning", "score"],
}
NUMBER = {"type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]}
PROMPTS = ["judge this", "is 2+2=4?", "a", "the sky is green", "rate it", "yes or no", "0.5 or 1"]


def generation(runtime: ToyRuntime, prompt: str, schema=BOOLEAN, *, temperature: float = 0.0, max_tokens: int = 40):
    guide = guide_for(runtime.vocab, schema_to_regex(schema)) if schema is not None else None
    return generate(
        runtime,
        runtime.vocab,
        runtime.tokenize(prompt, special=False),
        guide=guide,
        max_tokens=max_tokens,
        sampler=Sampler(temperature, seed=7),
        string_budget=5,
        readout_after=[b'"score":'],
    )


def outcome(result):
    """What a caller sees of a generation: text, tokens, how it ended, the readouts."""
    return (result.text, result.tokens, result.finish_reason, {k: v.probabilities for k, v in result.readouts.items()})


CASES = [
    (prompt, schema, temperature)
    for prompt, schema, temperature in zip(
        PROMPTS, [BOOLEAN, NUMBER, None, BOOLEAN, NUMBER, BOOLEAN, NUMBER], [0, 0, 0, 0.8, 0, 1.2, 0.5], strict=True
    )
]


def alone(prompt, schema, temperature, **options):
    runtime = ToyRuntime()
    return outcome(run(generation(runtime, prompt, schema, temperature=temperature, **options), runtime))


def test_generations_side_by_side_give_what_each_gives_alone():
    runtime = ToyRuntime(slots=3)
    batcher = Batcher(runtime)
    results = batcher.run_all([generation(runtime, p, s, temperature=t) for p, s, t in CASES])
    assert [outcome(r) for r in results] == [alone(*case) for case in CASES]
    sizes = [len(groups) for groups in runtime.group_calls]
    assert max(sizes) == 3  # steps were shared, never by more sequences than there are slots
    assert any(r.readouts for r in results) and any(r.tokens for r in results)


def test_callers_in_threads_share_the_rounds():
    runtime = ToyRuntime(slots=4)
    batcher = Batcher(runtime)
    found: dict[int, object] = {}
    gate = threading.Barrier(len(CASES))

    def call(index: int) -> None:
        prompt, schema, temperature = CASES[index]
        gate.wait()
        found[index] = outcome(batcher.run(generation(runtime, prompt, schema, temperature=temperature)))

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(CASES))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [found[i] for i in range(len(CASES))] == [alone(*case) for case in CASES]
    assert max(len(groups) for groups in runtime.group_calls) > 1


class Announced(ToyRuntime):
    """A toy runtime that records which prompts it was told would be started together."""

    def __init__(self, **options) -> None:
        super().__init__(**options)
        self.announced: list[list[list[int]]] = []

    def expect(self, prompts):
        self.announced.append([list(tokens) for tokens in prompts])


def test_prompts_admitted_together_are_announced_before_the_first_is_read():
    runtime = Announced(slots=4)
    Batcher(runtime).run_all([generation(runtime, prompt) for prompt in PROMPTS[:3]])
    (announced,) = runtime.announced  # once: the three arrived together
    for tokens, prompt in zip(announced, PROMPTS[:3], strict=True):
        read = runtime.tokenize(prompt, special=False)
        assert tokens[: len(read)] == read  # each prompt (then the answer's forced start)


def test_a_prompt_queued_for_the_only_sequence_is_announced_with_the_one_admitted():
    runtime = Announced(slots=1)
    prompts = [runtime.tokenize(prompt, special=False) for prompt in PROMPTS[:3]]
    generations = [generation(runtime, prompt) for prompt in PROMPTS[:3]]
    Batcher(runtime).run_all(generations, prompts=prompts)
    assert len(runtime.announced) == 2  # at each admission but the last, nothing queued behind that one
    for announced, (now, queued) in zip(runtime.announced, itertools.pairwise(prompts), strict=False):
        assert announced[0][: len(now)] == now and announced[1] == queued


def test_a_prompt_count_that_does_not_match_the_generations_is_refused():
    runtime = ToyRuntime(slots=1)
    with pytest.raises(ValueError):
        Batcher(runtime).run_all([generation(runtime, PROMPTS[0])], prompts=[])


def test_a_request_that_finds_the_batcher_idle_waits_a_moment_for_one_sent_beside_it():
    runtime = Announced(slots=2)
    batcher = Batcher(runtime)
    batcher.GATHER_SECONDS = 2.0  # far above any scheduling delay; a second arrival ends the wait at once
    first = threading.Thread(target=batcher.run, args=(generation(runtime, PROMPTS[0]),))
    first.start()
    threading.Event().wait(0.05)  # a moment behind, as the other order of a pair is
    batcher.run(generation(runtime, PROMPTS[1]))
    first.join()
    assert len(runtime.announced) == 1 and len(runtime.announced[0]) == 2  # both were admitted in one round


def failing(after_steps: int):
    """A generation that raises after some steps of its own."""
    logits = yield Start([1, 2, 3])
    for _ in range(after_steps):
        logits = yield Extend([int(logits.argmax())])
    raise ValueError("this generation fails")


def test_a_failing_generation_fails_alone():
    runtime = ToyRuntime(slots=2)
    batcher = Batcher(runtime)
    results = batcher.run_all(
        [failing(2), generation(runtime, PROMPTS[0]), failing(0), generation(runtime, PROMPTS[1])]
    )
    assert isinstance(results[0], ValueError) and isinstance(results[2], ValueError)
    assert outcome(results[1]) == alone(PROMPTS[0], BOOLEAN, 0)
    assert outcome(results[3]) == alone(PROMPTS[1], BOOLEAN, 0)
    with pytest.raises(ValueError, match="this generation fails"):
        batcher.run(failing(1))


def test_a_sequence_that_overflows_its_context_fails_alone():
    runtime = ToyRuntime(slots=2)
    runtime.n_ctx = 30
    batcher = Batcher(runtime)
    long_prompt = "x" * 28  # room for two more tokens: its answer overflows
    results = batcher.run_all(
        [generation(runtime, long_prompt, None, max_tokens=10), generation(runtime, "ok", None, max_tokens=10)]
    )
    assert isinstance(results[0], ContextOverflowError)
    assert outcome(results[1]) == alone("ok", None, 0, max_tokens=10)


class ClosingRuntime(ToyRuntime):
    """Closes itself (as another thread's client.close() would) after a number of evaluations."""

    def __init__(self, evaluations: int) -> None:
        super().__init__(slots=1)
        self.left = evaluations
        self.is_closed = False

    def _evaluate(self, tokens, n_past, seq):
        assert not self.is_closed, "evaluated after close"
        self.left -= 1
        if self.left == 0:
            self.close()
        return super()._evaluate(tokens, n_past, seq)

    @property
    def closed(self) -> bool:
        return self.is_closed

    def close(self) -> None:
        self.is_closed = True


def test_closing_the_runtime_fails_what_is_queued_instead_of_touching_it():
    runtime = ClosingRuntime(evaluations=3)
    results = Batcher(runtime).run_all([generation(runtime, p, None, max_tokens=20) for p in PROMPTS[:3]])
    assert all(isinstance(r, ModelError) and "closed" in str(r) for r in results)


def endless(steps: list[int], cancel_after: int | None = None, token=None):
    """A generation that never finishes by itself; it counts its steps, and may set ``token`` at one."""
    logits = yield Start([1, 2, 3])
    while True:
        steps.append(1)
        if token is not None and len(steps) == cancel_after:
            token.set("the client disconnected")
        logits = yield Extend([int(logits.argmax())])


def test_a_cancelled_request_ends_at_the_next_step_and_frees_its_sequence_for_the_next():
    from localjudge._cancellation import Cancel, cancellable
    from localjudge.errors import RequestCancelledError

    runtime = ToyRuntime(slots=1)
    batcher = Batcher(runtime)
    token, steps, found = Cancel(), [], {}

    def hung_up() -> None:
        with cancellable(token):
            try:
                batcher.run(endless(steps, cancel_after=5, token=token))
            except RequestCancelledError as exc:
                found["error"] = exc

    caller = threading.Thread(target=hung_up)
    caller.start()
    waiting = batcher.run(generation(runtime, PROMPTS[0]))  # queued behind it on the only sequence
    caller.join(10)
    assert "the client disconnected" in str(found["error"])
    assert len(steps) == 5  # the token was set during step 5; no step after it was evaluated
    assert outcome(waiting) == alone(PROMPTS[0], BOOLEAN, 0)


def test_a_queued_request_cancelled_before_its_turn_is_answered_without_running():
    from localjudge._cancellation import Cancel, cancellable
    from localjudge.errors import RequestCancelledError

    runtime = ToyRuntime(slots=1)
    batcher = Batcher(runtime)
    holder, queued, steps = Cancel(), Cancel(), []
    first = threading.Thread(target=lambda: _run_ignoring(batcher, endless(steps), holder))
    first.start()
    while not steps:  # the only sequence is taken
        threading.Event().wait(0.01)
    never: list[int] = []
    queued.set("the client disconnected")
    with cancellable(queued), pytest.raises(RequestCancelledError):
        batcher.run(endless(never))
    holder.set("done with it")
    first.join(10)
    assert never == [] and not first.is_alive()


def _run_ignoring(batcher, generation, token):
    from localjudge._cancellation import cancellable
    from localjudge.errors import RequestCancelledError

    with cancellable(token), contextlib.suppress(RequestCancelledError):
        batcher.run(generation)


def _judge_in_child(evaluator, answers) -> None:
    try:
        evaluator(inputs="What is 2+2?", outputs="4")
        answers.put(("judged", ""))
    except Exception as exc:
        answers.put((type(exc).__name__, str(exc)))


@pytest.mark.model
def test_a_judge_used_in_a_child_made_by_fork_refuses_at_once_naming_spawn(tiny_gguf):
    """The batcher's worker thread does not survive fork: the child must not wait for it (a timeout bounds the test)."""
    import multiprocessing

    from localjudge import create_llm_as_judge
    from localjudge._clients.llamacpp import LlamaCppClient

    client = LlamaCppClient(tiny_gguf, n_ctx=512)
    evaluator = create_llm_as_judge(prompt="Is {outputs} right for {inputs}?", judge=client, model="tiny")
    assert "score" in evaluator(inputs="What is 2+2?", outputs="4")  # the worker thread runs in this process
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    child = context.Process(target=_judge_in_child, args=(evaluator, answers))
    child.start()
    child.join(60)
    if child.is_alive():
        child.kill()
        pytest.fail("the judge hung in a child made by fork")
    kind, message = answers.get(timeout=5)
    assert kind == "UsageError" and "made by fork" in message and "spawn" in message
    assert "score" in evaluator(inputs="What is 2+2?", outputs="4")  # the parent's judge still works
    client.close()
