"""The runtime contract, checked on every runtime: the toy double, llama.cpp and transformers.

What every runtime owes the decode loop and the batcher:

- steps evaluated together give each sequence, bit for bit, the logits it
  gets alone;
- evaluating the same tokens again (``start`` then ``extend``, on another
  sequence or after other work) gives the same logits, bit for bit;
- a branch gives what extending by its path gives, and leaves the sequence as
  it was;
- a closed runtime refuses work; sequences out of range and prompts past the
  context are refused with the documented errors.

One thing differs by engine: whether ``start(prompt + tokens)`` equals
``start(prompt)`` then ``extend(tokens)``, where the same tokens are cut
into batches differently. The toy double gives the same logits whatever
the cuts. transformers (float32 on CPU) differs in the last bits, because
a cached step multiplies a 1-row matrix where a recompute multiplies an
n-row one, and the sums come out in another order. llama.cpp
promises nothing across cuts: its kernels depend on the batch size, and
on the tiny model logits move by more than 1.0. That is why it
evaluates prompts in canonical chunks (:mod:`localjudge._runtimes.prefix_cache`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from support.toy_runtime import ToyRuntime

from localjudge._runtimes.base import Group, Runtime, log_softmax_at
from localjudge.errors import ContextOverflowError, ModelError

#: transformers' cached step against a recompute, float32 on CPU: measured up to 5e-8 on logits of about 0.4
TRANSFORMERS_TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


@dataclass
class Subject:
    """A runtime under the contract, and what it promises beyond it."""

    name: str
    load: Callable[..., Runtime]  # load(slots=, n_ctx=) -> a fresh runtime
    across_cuts: dict[str, float] | None  # {}: bit for bit; tolerances: near; None: no promise
    shared_steps: int  # one-token steps of different sequences it runs in one batch (1: none shared)
    lengths: tuple[int, ...]  # prompt lengths for the batched-step case, one sequence each


def _toy(slots: int = 1, n_ctx: int = 10_000) -> Runtime:
    return ToyRuntime(slots=slots, n_ctx=n_ctx)


@pytest.fixture(
    params=[
        "toy",
        pytest.param("llama.cpp", marks=pytest.mark.model),
        pytest.param("transformers", marks=pytest.mark.torch),
    ]
)
def subject(request) -> Subject:
    if request.param == "toy":
        return Subject("toy", _toy, {}, 1, (5, 40, 130, 1))
    if request.param == "llama.cpp":
        from localjudge._runtimes.llamacpp import SHARED_STEP_LIMIT, LlamaCppRuntime

        path = request.getfixturevalue("tiny_gguf")

        def llama(slots: int = 1, n_ctx: int = 512) -> Runtime:
            return LlamaCppRuntime(path, n_ctx=n_ctx, parallel=slots, prefix_cache_bytes=0)

        # more sequences than one batch shares, with caches on both sides of llama.cpp's 256-cell padding
        lengths = (30, 260, 3, 40, 9, 250, 12, 1)
        assert len(lengths) > SHARED_STEP_LIMIT
        return Subject("llama.cpp", llama, None, SHARED_STEP_LIMIT, lengths)
    pytest.importorskip("transformers")
    from localjudge._runtimes.transformers import TransformersRuntime

    directory = request.getfixturevalue("tiny_model_dir")

    def transformers(slots: int = 1, n_ctx: int | None = None) -> Runtime:
        return TransformersRuntime(directory, parallel=slots, n_ctx=n_ctx)

    return Subject("transformers", transformers, TRANSFORMERS_TOLERANCE, 1, (5, 40, 130, 1))


@pytest.fixture
def load(subject) -> Iterator[Callable[..., Runtime]]:
    """``load(slots=, n_ctx=)``: a fresh runtime of the subject's engine, closed after the test."""
    loaded: list[Runtime] = []

    def fresh(**options) -> Runtime:
        loaded.append(subject.load(**options))
        return loaded[-1]

    yield fresh
    for runtime in loaded:
        runtime.close()


def tokens(runtime: Runtime, n: int, salt: int = 0) -> list[int]:
    """``n`` ordinary token ids, different for each salt: tokens to go after a prompt."""
    low = 1000 if runtime.n_vocab > 2000 else 5  # past the special tokens of both real models
    span = min(runtime.n_vocab - low, 4000)
    return [low + (salt * 131 + i * 7) % span for i in range(n)]


def prompt_of(runtime: Runtime, n: int, salt: int = 0) -> list[int]:
    """A prompt of ``n`` tokens, the first a BOS where the model wants one."""
    ids = tokens(runtime, n, salt)
    if runtime.add_bos and runtime.bos_id is not None:
        ids[0] = runtime.bos_id
    return ids


def assert_across_cuts(subject: Subject, cut: np.ndarray, recompute: Callable[[], np.ndarray]) -> None:
    """The same tokens cut into batches differently: equal as far as the engine promises (module docstring)."""
    if subject.across_cuts is None:
        return
    whole = recompute()
    if subject.across_cuts:
        np.testing.assert_allclose(cut, whole, **subject.across_cuts)
    else:
        assert np.array_equal(cut, whole)


# --- batched steps ----------------------------------------------------------------------------


def test_steps_evaluated_together_give_each_sequence_its_lone_logits(subject, load):
    """One-token steps of every sequence, then a longer group and probes among them, against one sequence alone.

    With more sequences than one batch shares, the rest go to another batch
    and still come out as alone.
    """
    together = load(slots=len(subject.lengths))
    alone = load()
    prompts = [prompt_of(alone, n, salt=seq) for seq, n in enumerate(subject.lengths)]
    seqs = range(len(prompts))
    rounds = [
        [Group(seq, [10 + seq]) for seq in seqs],
        [Group(seq, [8, 9, 10] if seq == 0 else [11], keep=seq != 2) for seq in seqs],  # a longer group, a probe
        [Group(seq, [13], keep=seq != 1) for seq in seqs],
    ]
    batches: list[int] = []
    if subject.shared_steps > 1:
        decode = together._decode  # type: ignore[attr-defined]

        def counted(entries):
            batches.append(len(entries))
            return decode(entries)

        together._decode = counted  # type: ignore[attr-defined]
    first = [together.start(prompt, seq) for seq, prompt in enumerate(prompts)]
    batches.clear()  # what the rounds decode, from here
    stepped = [together.evaluate_together(groups) for groups in rounds]
    for seq, prompt in enumerate(prompts):
        assert np.array_equal(first[seq], alone.start(prompt)), seq
        for groups, logits in zip(rounds, stepped, strict=True):
            group = groups[seq]
            expected = alone.extend(group.tokens) if group.keep else alone.branch([group.tokens])[0]
            assert np.array_equal(logits[seq], expected), (seq, group)
    if subject.shared_steps > 1:
        # the one-token steps did share batches, as few and as even as the limit allows; longer groups went alone
        expected = []
        for groups in rounds:
            steps = sum(len(group.tokens) == 1 for group in groups)
            expected += _even(steps, subject.shared_steps) + [len(g.tokens) for g in groups if len(g.tokens) > 1]
        assert batches == expected


def _even(n: int, limit: int) -> list[int]:
    """The sizes of the fewest batches of at most ``limit`` that hold ``n``, as even as can be."""
    count = -(-n // limit)
    return [n * (k + 1) // count - n * k // count for k in range(count)]


# --- extend and branch against recomputing ----------------------------------------------------


def test_extend_equals_recomputing(subject, load):
    runtime = load(slots=2)
    prompt, more, last = prompt_of(runtime, 12), tokens(runtime, 4, salt=1), tokens(runtime, 1, salt=2)
    started = runtime.start(prompt)
    extended = runtime.extend(more)
    stepped = runtime.extend(last)
    # sequence 1 after other work, and sequence 0 started again: the same evaluations, the same logits
    runtime.start(prompt_of(runtime, 30, salt=3), 1)
    runtime.extend(tokens(runtime, 5, salt=4), 1)
    assert np.array_equal(runtime.start(prompt, 1), started)
    assert np.array_equal(runtime.extend(more, 1), extended)
    assert np.array_equal(runtime.extend(last, 1), stepped)
    assert np.array_equal(runtime.start(prompt), started)
    assert not np.array_equal(started, extended)  # the logits do depend on the tokens
    assert_across_cuts(subject, extended, lambda: runtime.start(prompt + more))
    assert_across_cuts(subject, stepped, lambda: runtime.start(prompt + more + last))


def test_a_branch_equals_recomputing_and_leaves_the_sequence_as_it_was(subject, load):
    runtime = load()
    prompt, after = prompt_of(runtime, 12), tokens(runtime, 3, salt=9)
    paths = [tokens(runtime, 1, salt=5), tokens(runtime, 3, salt=6), tokens(runtime, 2, salt=7)]
    runtime.start(prompt)
    unbranched = runtime.extend(after)
    runtime.start(prompt)
    branched = runtime.branch(paths)
    assert len(branched) == len(paths)
    assert np.array_equal(runtime.extend(after), unbranched)  # the branches left the state as it was
    for path, logits in zip(paths, branched, strict=True):
        runtime.start(prompt)
        assert np.array_equal(runtime.extend(path), logits), path
        assert_across_cuts(subject, logits, lambda path=path: runtime.start(prompt + path))
    assert runtime.branch([]) == []


# --- scoring a reply ----------------------------------------------------------------------------------


def test_a_scored_reply_gets_each_tokens_log_probability_after_what_came_before(subject, load):
    """The first figure comes from the prompt's own logits; the rest as far as the engine promises across cuts."""
    runtime = load(slots=2)
    prompt, reply = prompt_of(runtime, 12), tokens(runtime, 6, salt=5)
    figures = runtime.score(prompt, reply)
    assert len(figures) == len(reply) and all(f <= 0 for f in figures)
    assert figures[0] == log_softmax_at(runtime.start(prompt), reply[0])
    assert runtime.score(prompt, reply, 1) == figures  # on another sequence, after other work: the same
    assert runtime.score(prompt, tokens(runtime, 6, salt=6)) != figures
    if subject.across_cuts is not None:
        recomputed = [log_softmax_at(runtime.start(prompt + reply[:i]), reply[i]) for i in range(1, len(reply))]
        np.testing.assert_allclose(figures[1:], recomputed, rtol=1e-5, atol=1e-5)


def test_reading_every_row_at_once_gives_the_figures_of_reading_a_token_at_a_time(subject, load, monkeypatch):
    """An engine's own ``_read_logprobs`` (rows read in chunks, here of 4) against the base one's."""
    runtime = load()
    if subject.name == "llama.cpp":
        runtime.n_batch = 4  # type: ignore[attr-defined]  # chunks of 4, within the context's own batch
    if subject.name == "transformers":
        from localjudge._runtimes import transformers

        monkeypatch.setattr(transformers, "SCORE_CHUNK", 4)
    prompt, reply = prompt_of(runtime, 10), tokens(runtime, 11, salt=8)
    at_once = np.array(runtime.score(prompt, reply))
    runtime.start(prompt)
    one_by_one = np.array(Runtime._read_logprobs(runtime, reply, len(prompt), 0))
    gap = np.abs(at_once[1:] - one_by_one)
    if subject.name == "llama.cpp":  # kernels differ by batch size: close, where a token read at the wrong row is not
        assert gap.mean() < 0.1 and gap.max() < 0.75, gap
    else:
        np.testing.assert_allclose(at_once[1:], one_by_one, rtol=1e-4, atol=1e-4)


def test_a_scored_reply_stays_evaluated_but_its_last_token(subject, load):
    """What follows a scored reply is read as after the prompt and the reply less its last token."""
    runtime = load()
    prompt, reply = prompt_of(runtime, 8), tokens(runtime, 5, salt=7)
    runtime.score(prompt, reply)
    after_score = runtime.extend(reply[-1:])
    runtime.start(prompt)
    runtime.extend(reply[:-1])
    after_reading = runtime.extend(reply[-1:])
    if subject.name == "transformers":  # scored one token at a time, read as one group: the last bits differ
        np.testing.assert_allclose(after_score, after_reading, **TRANSFORMERS_TOLERANCE)
    else:
        assert np.array_equal(after_score, after_reading)


def test_a_reply_to_score_must_have_tokens_and_fit(load):
    runtime = load(n_ctx=64)
    with pytest.raises(ValueError, match="at least one token"):
        runtime.score(prompt_of(runtime, 4), [])
    with pytest.raises(ContextOverflowError):
        runtime.score(prompt_of(runtime, 40), tokens(runtime, 30))


# --- what is refused ------------------------------------------------------------------------------


def test_a_closed_runtime_refuses_work_and_closes_twice_harmlessly(load):
    runtime = load(slots=2)
    prompt = prompt_of(runtime, 4)
    runtime.start(prompt)
    assert not runtime.closed
    runtime.close()
    assert runtime.closed
    calls = {
        "start": lambda: runtime.start(prompt),
        "extend": lambda: runtime.extend(prompt[-1:]),
        "branch": lambda: runtime.branch([prompt[-1:]]),
        "evaluate_together": lambda: runtime.evaluate_together([Group(0, prompt[-1:]), Group(1, prompt[-1:])]),
    }
    for name, call in calls.items():
        with pytest.raises(ModelError, match="closed") as refused:
            call()
        assert type(refused.value) is ModelError and refused.value.retryable is False, name
    runtime.close()
    assert runtime.closed
    with pytest.raises(ModelError, match="closed"):
        runtime.start(prompt)


def test_a_sequence_out_of_range_is_refused(load):
    runtime = load(slots=2)
    prompt = prompt_of(runtime, 4)
    for seq in (-1, 2):
        with pytest.raises(ValueError, match="not one of this runtime's 2 slots"):
            runtime.start(prompt, seq)
        runtime.start(prompt)
        with pytest.raises(ValueError, match="not one of"):
            runtime.extend(prompt[-1:], seq)
        with pytest.raises(ValueError, match="not one of"):
            runtime.branch([prompt[-1:]], seq)
        with pytest.raises(ValueError, match="not one of"):
            runtime.evaluate_together([Group(0, prompt[-1:]), Group(seq, prompt[-1:])])
    with pytest.raises(ValueError, match="at most one group per sequence"):
        runtime.evaluate_together([Group(1, prompt[-1:]), Group(1, prompt[-1:])])
    with pytest.raises(ValueError, match="at least one token"):
        runtime.start([])
    with pytest.raises(ValueError, match="must not be empty"):
        runtime.branch([prompt[-1:], []])
    with pytest.raises(ValueError, match="must not be empty"):
        runtime.evaluate_together([Group(0, [])])


def test_work_past_the_context_is_refused_and_the_sequence_is_kept(load):
    runtime = load(n_ctx=32)
    assert runtime.n_ctx == 32
    with pytest.raises(ContextOverflowError, match="context of 32"):
        runtime.start(prompt_of(runtime, 33))
    full = runtime.start(prompt_of(runtime, 31))
    one = tokens(runtime, 1, salt=1)
    with pytest.raises(ContextOverflowError, match="context of 32"):
        runtime.extend(one + one)
    with pytest.raises(ContextOverflowError, match="context of 32"):
        runtime.branch([one, one + one])
    with pytest.raises(ContextOverflowError, match="context of 32"):
        runtime.evaluate_together([Group(0, one + one)])
    last = runtime.extend(one)  # the refusals left the 31 tokens in place: exactly one more fits
    with pytest.raises(ContextOverflowError, match="context of 32"):
        runtime.extend(one)
    runtime.start(prompt_of(runtime, 31))
    assert np.array_equal(runtime.extend(one), last)
    assert not np.array_equal(full, last)
