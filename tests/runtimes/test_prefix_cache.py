"""Which prefix states to keep and where to resume: the pure decisions of the prefix cache."""

from __future__ import annotations

import pytest

from localjudge._runtimes.prefix_cache import CHUNK, FINE, PrefixCache, boundaries, boundary_digests, chunks


def test_chunks_are_cut_at_the_same_positions_wherever_a_run_resumes():
    assert chunks(0, 300) == [(0, 32), (32, 64), (64, 96), (96, 128), (128, 256), (256, 300)]
    assert chunks(96, 300) == [(96, 128), (128, 256), (256, 300)]
    assert chunks(128, 300) == [(128, 256), (256, 300)]
    assert chunks(0, 20) == [(0, 20)]
    assert chunks(5, 6) == [(5, 6)]
    assert chunks(7, 7) == []
    cold = chunks(0, 1000)
    for start in (32, 64, 512):
        assert all(piece in cold for piece in chunks(start, 1000))  # a resumed run repeats the cold one's cuts


def test_cuts_are_fine_below_a_chunk_and_whole_chunks_after():
    assert boundaries(300) == [FINE, 2 * FINE, 3 * FINE, CHUNK, 2 * CHUNK]
    assert boundaries(300, size=128, fine=64) == [64, 128, 256]


def test_boundaries_leave_a_token_to_evaluate():
    assert [cut for cut, _ in boundary_digests(list(range(CHUNK)))] == [32, 64, 96]  # 128 would leave nothing to read
    assert [cut for cut, _ in boundary_digests(list(range(CHUNK + 1)))] == [32, 64, 96, 128]
    a, b = dict(boundary_digests(list(range(300)))), dict(boundary_digests([*range(128), *range(500, 700)]))
    assert a[128] == b[128] and a[256] != b[256]  # the same first 128 tokens, then different


def test_a_short_shared_start_is_resumed_at_its_last_fine_cut():
    cache = PrefixCache()
    cache.plan(prompt(119, 70, 1))
    second = cache.plan(prompt(119, 75, 2))
    assert second.keep_at == 96  # a judge's ~120 tokens of instructions: the last cut inside them
    cache.keep(second.keep_key, b"state after 96 tokens")
    assert cache.plan(prompt(119, 80, 3)).resume_at == 96


def prompt(shared: int, tail: int, tag: int) -> list[int]:
    return [*range(shared), *[10_000 + tag] * tail]


def test_a_prefix_is_kept_once_a_second_prompt_shares_it_and_used_from_the_third():
    cache = PrefixCache()
    first = cache.plan(prompt(700, 50, 1))
    assert (first.resume_at, first.keep_at) == (0, None)  # nothing seen before
    second = cache.plan(prompt(700, 60, 2))
    assert second.resume_at == 0 and second.keep_at == 640  # the last boundary both share
    cache.keep(second.keep_key, b"state after 640 tokens")
    third = cache.plan(prompt(700, 70, 3))
    assert third.resume_at == 640 and third.state == b"state after 640 tokens" and third.keep_at is None
    assert (cache.hits, cache.misses) == (1, 2)


def test_a_longer_shared_prefix_is_kept_beside_a_shorter_one():
    cache = PrefixCache()
    cache.plan(prompt(300, 10, 1))
    short = cache.plan(prompt(300, 10, 2))
    cache.keep(short.keep_key, b"256")
    cache.plan(prompt(900, 10, 3))
    longer = cache.plan(prompt(900, 10, 4))
    assert longer.resume_at == 256 and longer.keep_at == 896


def test_prompts_announced_together_keep_what_they_share_at_the_first_and_resume_from_it():
    cache = PrefixCache()
    prompts = [prompt(300, 200, 1), prompt(300, 200, 2), prompt(20, 400, 3)]
    cache.expect(prompts)
    first = cache.plan(prompts[0])
    assert (first.resume_at, first.keep_at) == (0, 256)  # the last boundary another announced prompt shares
    cache.keep(first.keep_key, b"state after 256 tokens")
    second = cache.plan(prompts[1])
    assert (second.resume_at, second.state) == (256, b"state after 256 tokens")
    third = cache.plan(prompts[2])  # shares nothing with the others: cold, and keeps nothing
    assert (third.resume_at, third.keep_at) == (0, None)


def test_a_prompt_announced_alone_is_not_kept_on_its_own_account():
    cache = PrefixCache()
    cache.expect([prompt(700, 50, 1)])
    assert cache.plan(prompt(700, 50, 1)).keep_at is None  # one prompt shares with nobody


def test_states_are_held_within_the_byte_budget_least_recent_first():
    cache = PrefixCache(budget_bytes=10)
    for tag in range(3):
        cache.keep(bytes([tag]), b"x" * 4)
    assert cache.bytes_held == 8
    cache.keep(b"big", b"x" * 11)  # larger than the whole budget: not kept
    assert cache.bytes_held == 8
    cache.clear()
    assert cache.bytes_held == 0


@pytest.mark.model
@pytest.mark.parametrize(
    ("shared_tokens", "resumed_at"),
    [(400, 384), (110, 96)],  # long instructions, resumed at a whole chunk; a judge's short ones, at a fine cut
)
def test_a_warm_verdict_is_the_cold_one_bit_for_bit(tiny_gguf, shared_tokens, resumed_at):
    """Prompts sharing a start: the third resumes from the kept prefix and matches a cache-less run exactly."""
    import numpy as np

    from localjudge._runtimes.llamacpp import LlamaCppRuntime

    warm = LlamaCppRuntime(tiny_gguf, n_ctx=2048)
    cold = LlamaCppRuntime(tiny_gguf, n_ctx=2048, prefix_cache_bytes=0)
    try:
        shared = warm.prompt_tokens("<bos>" + " ".join(f"rule{i}" for i in range(200)))[:shared_tokens]
        prompts = [shared + warm.tokenize(f" Answer {i}: {'yes ' * (40 + i)}", special=False) for i in range(3)]
        for tokens in prompts[:2]:
            warm.start(tokens)
        assert warm.prefixes.plan(prompts[2]).resume_at == resumed_at
        logits = warm.start(prompts[2])
        assert warm.prefixes.hits == 2 and warm.prefixes.bytes_held > 0  # the plan above, and the start
        assert np.array_equal(logits, cold.start(prompts[-1]))
        assert np.array_equal(warm.extend([5, 6]), cold.extend([5, 6]))  # and it goes on the same way
    finally:
        warm.close()
        cold.close()


@pytest.mark.model
@pytest.mark.parametrize("parallel", [1, 2])
def test_requests_sent_together_read_their_shared_start_once_and_answer_as_alone(tiny_gguf, parallel):
    """Two requests sharing a long start, side by side or queued for one sequence: the second resumes from the first's kept start."""
    from localjudge._clients.llamacpp import LlamaCppClient

    rubric = " ".join(f"Rule {i}: an answer states the fact plainly." for i in range(40))
    requests = [
        {"messages": [{"role": "user", "content": f"{rubric}\nQuestion {i}: what is {i} + {i}?"}], "max_tokens": 8}
        for i in (1, 2)
    ]
    together = LlamaCppClient(tiny_gguf, n_ctx=1024, parallel=parallel)
    alone = LlamaCppClient(tiny_gguf, n_ctx=1024, prefix_cache_bytes=0)
    try:
        answers = together.create_many(requests)
        assert together.runtime.prefixes.hits == 1  # the second of the pair started warm
        for answer, request in zip(answers, requests, strict=True):
            assert (
                answer.choices[0].message.content == alone.chat.completions.create(**request).choices[0].message.content
            )
    finally:
        together.close()
        alone.close()
