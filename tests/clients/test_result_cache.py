"""The result cache: keys that change with what decides an answer, stored rows checked, two processes at once."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time

import pytest

from localjudge._clients.base import make_chat_completion
from localjudge._clients.cached import CachedClient
from localjudge._clients.result_cache import ResultCache, _digest, is_result_cache, request_key
from localjudge.errors import UsageError
from localjudge.testing import ScriptedClient

IDENTITY = {"engine": "test", "model": "abc"}
REQUEST = {"messages": [{"role": "user", "content": "2+2?"}], "response_format": {"type": "json_object"}}


def completion(text: str, finish_reason: str = "stop") -> dict:
    return dict(
        make_chat_completion(text, model="m", finish_reason=finish_reason, prompt_tokens=1, completion_tokens=1)
    )


def test_the_key_changes_with_what_decides_an_answer_only():
    key = request_key(IDENTITY, REQUEST)
    assert key == request_key(dict(IDENTITY), {**REQUEST})
    assert key == request_key(IDENTITY, {**REQUEST, "stream": False, "user": "someone"})
    for changed in (
        request_key({**IDENTITY, "model": "abd"}, REQUEST),
        request_key(IDENTITY, {**REQUEST, "temperature": 0.5}),
        request_key(IDENTITY, {**REQUEST, "messages": [{"role": "user", "content": "2+3?"}]}),
        request_key(IDENTITY, {**REQUEST, "response_format": {"type": "text"}}),
    ):
        assert changed != key


def test_stored_rows_are_checked_and_a_bad_one_is_a_miss(tmp_path):
    cache = ResultCache(tmp_path / "r.sqlite3")
    cache.put("good", completion('{"score": true}'))
    assert cache.get("good")["choices"][0]["message"]["content"] == '{"score": true}'
    with sqlite3.connect(tmp_path / "r.sqlite3") as db:
        for key, text in (("bad-json", "{not json"), ("not-a-completion", "[1]"), ("deep", "[" * 5000 + "]" * 5000)):
            db.execute("INSERT INTO answers VALUES (?, ?, ?, 0)", (key, text, _digest(key, text)))
    assert cache.get("bad-json") is None and cache.get("not-a-completion") is None and cache.get("absent") is None
    assert cache.get("deep") is None
    assert (cache.hits, cache.misses) == (1, 4)


def test_an_answer_changed_since_it_was_stored_is_a_miss_and_replaced(tmp_path):
    """A verdict flipped in the file (by hand, or by damage) is never returned as the judge's."""
    cache = ResultCache(tmp_path / "r.sqlite3")
    cache.put("k", completion('{"score": true}'))
    with sqlite3.connect(tmp_path / "r.sqlite3") as db:
        db.execute("UPDATE answers SET response = replace(response, 'true', 'false')")
    assert cache.get("k") is None
    cache.put("k", completion('{"score": true}'))
    assert cache.get("k")["choices"][0]["message"]["content"] == '{"score": true}'


def test_a_stored_answer_off_the_schema_asked_for_is_not_used(tmp_path):
    cache = ResultCache(tmp_path / "r.sqlite3")
    scripted = ScriptedClient(['{"score": true}'])
    scripted.cache_identity = lambda: IDENTITY
    client = CachedClient(scripted, cache)
    schema = {"type": "object", "properties": {"score": {"type": "boolean"}}, "required": ["score"]}
    request = {**REQUEST, "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": schema}}}
    cache.put(request_key(IDENTITY, request), completion('{"score": "yes"}'))  # intact, but not a boolean
    answer = client.chat.completions.create(**request)
    assert answer.choices[0].message.content == '{"score": true}' and len(scripted.requests) == 1


def test_a_named_file_that_is_not_a_database_is_left_as_it_is_and_nothing_is_kept(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"this is not a database" * 100)
    cache = ResultCache(path)
    with pytest.warns(UserWarning, match="is not a result cache; it is left as it is"):
        assert cache.get("k") is None
    cache.put("k", completion("x"))
    assert path.read_bytes() == b"this is not a database" * 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert not is_result_cache(path)


def test_only_a_cache_that_is_ours_is_told_ours(tmp_path):
    ours = ResultCache(tmp_path / "ours.sqlite3")
    ours.put("k", completion("x"))
    assert is_result_cache(ours.path)
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE answers (question TEXT)")
    assert not is_result_cache(other)


def test_a_file_that_is_not_a_database_in_the_cache_directory_is_set_aside_not_read(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALJUDGE_HOME", str(tmp_path))
    path = tmp_path / "results.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    cache = ResultCache()
    with pytest.warns(UserWarning, match="could not be read"):
        assert cache.get("k") is None
    cache.put("k", completion("x"))
    assert cache.get("k") is not None
    (aside,) = tmp_path.glob("results.sqlite3.unreadable-*")
    assert aside.read_bytes().startswith(b"this is not a database")


def test_two_processes_write_at_once(tmp_path):
    path = tmp_path / "r.sqlite3"
    writer = (
        "import sys; from localjudge._clients.result_cache import ResultCache; "
        "from localjudge._clients.base import make_chat_completion as m; c = ResultCache(sys.argv[1]); "
        "[c.put(f'{sys.argv[2]}-{i}', dict(m(str(i), model='m', finish_reason='stop', prompt_tokens=1, "
        "completion_tokens=1))) for i in range(300)]"
    )
    processes = [subprocess.Popen([sys.executable, "-c", writer, str(path), name]) for name in ("a", "b")]
    assert [p.wait(timeout=120) for p in processes] == [0, 0]
    assert len(ResultCache(path)) == 600


class Identified(ScriptedClient):
    def cache_identity(self) -> dict:
        return IDENTITY


def test_a_cached_client_asks_once_and_keeps_only_complete_answers(tmp_path):
    inner = Identified(['{"score": true}', '{"score": false}', '{"score": true}'])
    client = CachedClient(inner, ResultCache(tmp_path / "r.sqlite3"))
    first = client.chat.completions.create(**REQUEST)
    again = client.chat.completions.create(**REQUEST)
    assert again.choices[0].message.content == first.choices[0].message.content == '{"score": true}'
    assert len(inner.requests) == 1
    other = {**REQUEST, "temperature": 1.0}
    assert client.chat.completions.create(**other).choices[0].message.content == '{"score": false}'
    assert len(inner.requests) == 2

    cut = CachedClient(Identified(['{"sco'] * 2, finish_reason="length"), ResultCache(tmp_path / "cut.sqlite3"))
    cut.chat.completions.create(**REQUEST)
    cut.chat.completions.create(**REQUEST)
    assert len(cut.client.requests) == 2  # an answer cut at max_tokens is never kept


def test_a_client_that_cannot_say_who_answers_cannot_be_cached(tmp_path):
    with pytest.raises(UsageError, match="cannot be cached"):
        CachedClient(ScriptedClient(["x"]), ResultCache(tmp_path / "r.sqlite3"))


def test_an_evaluator_asked_to_cache_answers_a_repeated_request_from_the_cache(tmp_path):
    from localjudge import create_llm_as_judge

    inner = Identified(['{"reasoning": "fine", "score": true}'])
    cache = ResultCache(tmp_path / "r.sqlite3")  # empty, so falsy: still a cache
    evaluator = create_llm_as_judge(prompt="Is {outputs} right?", judge=inner, cache=cache)
    assert evaluator(outputs="4") == evaluator(outputs="4")
    assert len(inner.requests) == 1 and cache.hits == 1


def test_threads_share_a_fresh_cache_file(tmp_path):
    """Rows in flight open their connections at once on a new file (which is switched to WAL)."""
    import threading
    import warnings

    for trial in range(5):
        cache = ResultCache(tmp_path / f"fresh-{trial}.sqlite3")
        gate = threading.Barrier(12)
        failures = []

        def work(n: int, cache=cache, gate=gate, failures=failures) -> None:
            gate.wait()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    for i in range(10):
                        cache.get(f"k{n}-{i}")
                        cache.put(f"k{n}-{i}", completion(str(n)))
            except Exception as exc:
                failures.append(exc)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(12)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == [] and len(cache) == 120


def test_the_same_request_asked_at_once_is_asked_of_the_model_once(tmp_path):
    """Rows sharing a question ask for the judge's own answer together: one asks, the others wait for its answer."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    started, release = threading.Event(), threading.Event()

    def slow(request):
        started.set()
        release.wait(5)
        return "4"

    inner = Identified([slow], repeat=True)
    client = CachedClient(inner, ResultCache(tmp_path / "r.sqlite3"))
    own = {"messages": [{"role": "user", "content": "2+2?"}], "temperature": 0}
    with ThreadPoolExecutor(4) as pool:
        answers = [pool.submit(client.chat.completions.create, **own) for _ in range(4)]
        assert started.wait(5)
        release.set()
        texts = {future.result().choices[0].message.content for future in answers}
    assert texts == {"4"} and len(inner.requests) == 1


def test_a_request_in_flight_that_fails_is_asked_again_by_the_next_caller(tmp_path):
    inner = Identified([RuntimeError("the model fell over"), "4"])
    client = CachedClient(inner, ResultCache(tmp_path / "r.sqlite3"))
    own = {"messages": [{"role": "user", "content": "2+2?"}], "temperature": 0}
    with pytest.raises(RuntimeError):
        client.chat.completions.create(**own)
    assert client.chat.completions.create(**own).choices[0].message.content == "4"
    assert not client._flights  # nothing left waiting


@pytest.mark.parametrize("outcome", ["error", "cut"])
def test_callers_waiting_on_a_request_get_what_it_got_without_asking_again(tmp_path, outcome):
    """A failure or an answer cut short is not stored, yet the callers that waited for it are not each asked anew."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    started, release = threading.Event(), threading.Event()

    def slow(request):
        started.set()
        release.wait(5)
        if outcome == "error":
            raise RuntimeError("the model fell over")
        return make_chat_completion("4", model="m", finish_reason="length")

    inner = Identified([slow], repeat=True)
    client = CachedClient(inner, ResultCache(tmp_path / "r.sqlite3"))
    own = {"messages": [{"role": "user", "content": "2+2?"}], "temperature": 0}
    with ThreadPoolExecutor(4) as pool:
        calls = [pool.submit(client.chat.completions.create, **own)]
        assert started.wait(5)
        calls += [pool.submit(client.chat.completions.create, **own) for _ in range(3)]
        (flight,) = client._flights.values()
        deadline = time.monotonic() + 5
        while len(flight._condition._waiters) < 3 and time.monotonic() < deadline:  # the three wait on the first
            time.sleep(0.01)
        release.set()
        if outcome == "error":
            errors = {str(call.exception(5)) for call in calls}
            assert errors == {"the model fell over"}
        else:
            reasons = {call.result(5).choices[0].finish_reason for call in calls}
            assert reasons == {"length"}
    assert len(inner.requests) == 1 and len(client.cache) == 0 and not client._flights
