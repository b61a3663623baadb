"""Hostile inputs and faults, probed as a careless or hostile user would: one table of probe, outcome and time.

Run: ``python benchmarks/stress_faults.py`` (``make stress-faults``; a few minutes, the tiny model).

- schemas with huge bounds, in this process and through ``localjudge serve``,
  and one whose automaton only a child build finds too large: each refused,
  with the time and the memory this process grew by;
- two ``batch`` runs on one results file, ten times: rows lost;
- every option that writes a file aimed at the data, the results or a
  symlink: refused, and no file of the folder touched;
- a row nested 990 levels deep, a byte order mark, a symlinked ``-o``, a
  flipped cache entry, a damaged calibration file, a key in a URL, the
  plugin named twice: what the user sees;
- a CSV with a quote left open, text that is not UTF-8 on the command line,
  a local judge used in a child made by fork;
- ``serve`` under bad values (content that is a number or half a surrogate
  pair, ``n: true``), a trailing slash with a forged Host, one request past
  the bound in flight (503 with Retry-After), 64 slow connections, a client
  that hangs up, and SIGTERM with 16 requests in flight.

Every probe states what it expects; the last column says whether it held.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ENV = {**os.environ, "LOCALJUDGE_MODEL": "tiny"}
KEY = "stress-key"
ROWS: list[tuple[str, str, float, bool]] = []  # probe, outcome, seconds, held


def probe(name: str) -> Callable[[Callable[[], tuple[str, bool]]], None]:
    """Run the decorated function now; it returns (outcome, held), and its row joins the table."""

    def run(body: Callable[[], tuple[str, bool]]) -> None:
        started = time.perf_counter()
        try:
            outcome, held = body()
        except Exception as exc:  # a probe that crashed is a finding, not the end of the run
            outcome, held = f"probe failed: {type(exc).__name__}: {exc}"[:120], False
        ROWS.append((name, outcome, time.perf_counter() - started, held))
        print(f"  {name}: {outcome}", file=sys.stderr, flush=True)

    return run


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def inside(schema: dict) -> dict:
    return {"type": "object", "properties": {"answer": schema}, "required": ["answer"]}


def nested(levels: int) -> dict:
    schema: dict = {"type": "boolean"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


HOSTILE_SCHEMAS = {
    "string minLength 1e7": inside({"type": "string", "minLength": 10**7}),
    "string maxLength 1e7": inside({"type": "string", "maxLength": 10**7}),
    "string maxLength 1e5": inside({"type": "string", "maxLength": 10**5}),
    "array maxItems 1e9": inside({"type": "array", "items": {"type": "boolean"}, "maxItems": 10**9}),
    "array minItems 1e6": inside({"type": "array", "items": {"type": "boolean"}, "minItems": 10**6}),
    "array maxItems 1e4": inside({"type": "array", "items": {"type": "string"}, "maxItems": 10**4}),
    "enum of 20,000 strings": inside({"enum": [f"value {i}" for i in range(20_000)]}),
    "5,000 properties": {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(5000)}},
    "nesting depth 200": nested(200),
}


def schema_probes() -> None:
    from localjudge._decoding import check_schema
    from localjudge.errors import SchemaTooLargeError

    for name, schema in HOSTILE_SCHEMAS.items():

        @probe(f"schema, in Python: {name}")
        def _(schema: dict = schema) -> tuple[str, bool]:
            before = rss_mb()
            started = time.perf_counter()
            try:
                check_schema(schema)
            except SchemaTooLargeError as exc:
                took, grew = time.perf_counter() - started, rss_mb() - before
                return f"refused ({exc.keyword} at {exc.path[:30]}), +{grew:.0f} MB", took < 1 and grew < 100
            return "accepted", False

    @probe("a regex past what counts foresee (a lone string of at most 32), built in a child")
    def _() -> tuple[str, bool]:
        from localjudge._clients.resolve import ensure_tiny_model
        from localjudge._decoding import schema_to_regex
        from localjudge._decoding.index_build import build_in_child
        from localjudge._decoding.schema_limits import SCHEMA_LIMITS
        from localjudge._runtimes.llamacpp import LlamaCppRuntime

        vocab = LlamaCppRuntime(ensure_tiny_model(), vocab_only=True).vocab
        regex = schema_to_regex({"type": "string", "maxLength": 16}).replace("{0,16}", "{0,32}")
        before = rss_mb()
        try:
            build_in_child(regex, vocab, SCHEMA_LIMITS)
        except SchemaTooLargeError as exc:
            grew = rss_mb() - before
            why = re.search(r"over [\d,]+ (s|MB)", str(exc))
            return f"refused by the child's limit ({why.group(0) if why else exc}), +{grew:.0f} MB here", grew < 100
        return "built", False


def two_writers() -> None:
    @probe("two batch runs on one -o, 10 trials of 12 rows each")
    def _() -> tuple[str, bool]:
        folder = Path(tempfile.mkdtemp())
        script = folder / "writer.py"
        script.write_text(
            "import sys, time\nfrom pathlib import Path\nfrom localjudge._datasets.batch import run_batch\n"
            "from localjudge._datasets.rows import Row\n"
            "def judge(**v):\n    time.sleep(0.01)\n    return {'score': True}\n"
            "run_batch([Row(f'{sys.argv[2]}{i}', {'outputs': 'x'}) for i in range(12)], judge, Path(sys.argv[1]))\n",
            encoding="utf-8",
        )
        lost = refused = 0
        for trial in range(10):
            results = folder / f"r{trial}.jsonl"
            runs = {
                prefix: subprocess.Popen(
                    [sys.executable, str(script), str(results), prefix], stderr=subprocess.PIPE, text=True
                )
                for prefix in "ab"
            }
            for prefix, process in runs.items():
                if process.wait(60) != 0:
                    refused += 1
                    assert "Another run" in process.stderr.read()
                    subprocess.run([sys.executable, str(script), str(results), prefix], check=True, timeout=60)
            ids = {json.loads(line)["id"] for line in results.read_text().splitlines()}
            lost += 24 - len(ids)
        return f"{lost} rows lost; {refused} second runs refused at once, then resumed", lost == 0


def cli(*args: str, folder: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "localjudge", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        input=stdin,
    )


def clean(done: subprocess.CompletedProcess) -> bool:
    return "Traceback" not in done.stderr


def row_probes() -> None:
    folder = Path(tempfile.mkdtemp())

    @probe("batch: a row nested 990 levels deep among two good ones")
    def _() -> tuple[str, bool]:
        rows = folder / "deep.jsonl"
        deep = "[" * 990 + "]" * 990
        rows.write_text(
            '{"id": "a", "outputs": "4"}\n{"id": "deep", "outputs": ' + deep + '}\n{"id": "b", "outputs": "5"}\n'
        )
        done = cli("batch", str(rows), "-o", "out.jsonl", "--max-tokens", "8", "--no-reasoning", folder=folder)
        records = [json.loads(line) for line in (folder / "out.jsonl").read_text().splitlines()]
        kinds = ["result" if "result" in r else r["error"]["type"] for r in records]
        held = done.returncode == 1 and kinds == ["result", "MalformedRowError", "result"] and clean(done)
        return f"exit {done.returncode} (a row failed), rows: {kinds}", held

    @probe("batch: a JSONL file that starts with a byte order mark")
    def _() -> tuple[str, bool]:
        rows = folder / "bom.jsonl"
        rows.write_bytes('\ufeff{"id": "first", "outputs": "4"}\n'.encode())
        done = cli("batch", str(rows), "-o", "bom-out.jsonl", "--max-tokens", "8", "--no-reasoning", folder=folder)
        record = json.loads((folder / "bom-out.jsonl").read_text().splitlines()[0])
        return f"exit {done.returncode}, row id {record['id']!r}", record["id"] == "first" and "result" in record

    @probe("batch: -o is a symlink to another file")
    def _() -> tuple[str, bool]:
        target, link = folder / "precious.txt", folder / "link.jsonl"
        target.write_text("keep\n")
        link.symlink_to(target)
        done = cli("batch", str(folder / "bom.jsonl"), "-o", str(link), folder=folder)
        kept = target.read_text() == "keep\n"
        first = done.stderr.strip().splitlines()[-1][:70]
        return f"exit {done.returncode}: {first}", done.returncode == 2 and kept and clean(done)

    @probe("batch: a CSV with an unbalanced quote on line 2 of 4")
    def _() -> tuple[str, bool]:
        (folder / "quote.csv").write_text('id,inputs,outputs\nc1,q,"4\nc2,q,5\nc3,q,6\n')
        done = cli("batch", "quote.csv", "-o", "quote-out.jsonl", folder=folder)
        said = done.stderr.strip()[:80]
        return f"exit {done.returncode}: {said}", done.returncode == 2 and "quote.csv:2:" in said and clean(done)

    @probe("score: --outputs bytes that are not UTF-8 (caf\\xe9)")
    def _() -> tuple[str, bool]:
        done = subprocess.run(
            [sys.executable.encode(), b"-m", b"localjudge", b"score", b"--inputs", b"q", b"--outputs", b"caf\xe9"],
            cwd=folder,
            capture_output=True,
            env=ENV,
            timeout=300,
        )
        said = done.stderr.decode("utf-8", "replace").strip()[:80]
        return (
            f"exit {done.returncode}: {said}",
            done.returncode == 2 and "--outputs" in said and "Traceback" not in said,
        )

    @probe('batch: ids true, 1 and "1" in one file')
    def _() -> tuple[str, bool]:
        rows = folder / "ids.jsonl"
        rows.write_text('{"id": true, "outputs": "4"}\n{"id": 1, "outputs": "4"}\n{"id": "1", "outputs": "5"}\n')
        done = cli("batch", str(rows), "-o", "ids-out.jsonl", "--max-tokens", "8", "--no-reasoning", folder=folder)
        records = [json.loads(line) for line in (folder / "ids-out.jsonl").read_text().splitlines()]
        kinds = ["result" if "result" in r else r["error"]["type"] for r in records]
        held = kinds.count("result") == 1 and "MalformedRowError" in kinds and "DuplicateIdError" in kinds
        return f"exit {done.returncode}, rows: {kinds}", held and "True" not in [r["id"] for r in records]

    @probe("batch: resumed over a results file edited by hand (score banana)")
    def _() -> tuple[str, bool]:
        rows = folder / "edited.jsonl"
        rows.write_text('{"id": "e1", "outputs": "4"}\n')
        options = ("-o", "edited-out.jsonl", "--max-tokens", "8", "--no-reasoning")
        cli("batch", str(rows), *options, folder=folder)
        out = folder / "edited-out.jsonl"
        record = json.loads(out.read_text())
        record["result"]["score"] = "banana"
        out.write_text(json.dumps(record) + "\n")
        done = cli("batch", str(rows), *options, folder=folder)
        score = json.loads(out.read_text())["result"]["score"]
        said = next((line for line in done.stderr.splitlines() if "again" in line or "set aside" in line), "")
        return f"judged again: score {score!r}; {said[:60]}", isinstance(score, bool) and clean(done)

    @probe("batch: -o inside a path that is a file")
    def _() -> tuple[str, bool]:
        done = cli("batch", str(folder / "bom.jsonl"), "-o", str(folder / "bom.jsonl" / "out.jsonl"), folder=folder)
        return f"exit {done.returncode}: {done.stderr.strip()[-70:]}", done.returncode == 2 and clean(done)


def untouched(folder: Path, run: Callable[[], subprocess.CompletedProcess]) -> tuple[subprocess.CompletedProcess, int]:
    """Run a command; how many files of ``folder`` it overwrote, moved or removed."""

    def seen() -> dict[str, tuple]:
        return {p.name: (p.lstat().st_ino, p.is_symlink() or p.read_bytes()) for p in folder.iterdir() if p.is_file()}

    before = seen()
    done = run()
    after = seen()
    return done, sum(1 for name, state in before.items() if after.get(name) != state)


def output_probes() -> None:
    """Every option that writes a file, aimed at what the user gave: refused (exit 2), no file touched."""
    folder = Path(tempfile.mkdtemp())
    (folder / "answers.csv").write_text("id,inputs,outputs\nc1,What is 2+2?,4\n")
    (folder / "rows.jsonl").write_text('{"id": "a", "outputs": "4"}\n')
    (folder / "precious.txt").write_text("keep\n")
    (folder / "link.json").symlink_to(folder / "precious.txt")
    cases = {
        "batch: --output-format csv whose CSV is the data file": (
            "answers.csv",
            "-o",
            "answers.jsonl",
            "--output-format",
            "csv",
        ),
        "batch: --summary is the data file": ("rows.jsonl", "-o", "r.jsonl", "--summary", "rows.jsonl"),
        "batch: --summary is the results file": ("rows.jsonl", "-o", "r.jsonl", "--summary", "r.jsonl"),
        "batch: --summary is a symlink to another file": ("rows.jsonl", "-o", "r.jsonl", "--summary", "link.json"),
        "batch: --cache-file is the data file": ("rows.jsonl", "-o", "r.jsonl", "--cache-file", "rows.jsonl"),
        "batch: --cache-file is the results file": ("rows.jsonl", "-o", "r.jsonl", "--cache-file", "r.jsonl"),
        "batch: -o is a file localjudge did not write": ("rows.jsonl", "-o", "precious.txt"),
    }
    for name, args in cases.items():

        @probe(name)
        def _(args: tuple[str, ...] = args) -> tuple[str, bool]:
            done, touched = untouched(folder, lambda: cli("batch", *args, "-m", "tiny", folder=folder))
            said = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
            held = done.returncode == 2 and touched == 0 and clean(done) and said.startswith("error:")
            return f"exit {done.returncode}, {touched} files touched: {said[7:67]}", held

    @probe("batch: -o out.csv with --output-format csv already given")
    def _() -> tuple[str, bool]:
        done = cli("batch", "rows.jsonl", "-o", "out.csv", "--output-format", "csv", "-m", "tiny", folder=folder)
        right = "already writes the CSV" in done.stderr and "add --output-format" not in done.stderr
        return f"exit {done.returncode}, the fix named: {right}", done.returncode == 2 and right and clean(done)

    @probe("batch: the output folder removed during the run")
    def _() -> tuple[str, bool]:
        out = folder / "gone"
        out.mkdir()
        rows = "".join(f'{{"id": "r{i}", "inputs": "2+2?", "outputs": "4"}}\n' for i in range(4))
        (folder / "some.jsonl").write_text(rows)
        command = [sys.executable, "-m", "localjudge", "batch", "some.jsonl", "-o", "gone/r.jsonl", "-m", "tiny"]
        process = subprocess.Popen(command, cwd=folder, env=ENV, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (out / "r.jsonl").exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        shutil.rmtree(out, ignore_errors=True)
        said = process.communicate(timeout=300)[1].strip().splitlines()
        last = said[-1] if said else ""
        held = process.returncode == 1 and "Cannot write" in last and "Traceback" not in "".join(said)
        return f"exit {process.returncode}: {last[7:87]}", held


def cache_and_files() -> None:
    @probe("result cache: an entry whose verdict was flipped by hand")
    def _() -> tuple[str, bool]:
        from localjudge._clients.result_cache import ResultCache

        path = Path(tempfile.mkdtemp()) / "r.sqlite3"
        cache = ResultCache(path)
        answer = {"choices": [{"message": {"content": '{"score": false}'}, "finish_reason": "stop"}]}
        cache.put("k", answer)
        with sqlite3.connect(path) as db:
            db.execute("UPDATE answers SET response = replace(response, 'false', 'true')")
        found = cache.get("k")
        return ("a miss: the digest no longer matches" if found is None else "returned"), found is None

    @probe("models: a .part left by a fetch killed with -9")
    def _() -> tuple[str, bool]:
        from localjudge._specs.model_files import sweep_stale_parts

        folder = Path(tempfile.mkdtemp())
        stale = folder / ".model.gguf.x1y2.part"
        stale.write_bytes(b"\0" * 4096)
        os.utime(stale, (1, 1))  # left long ago: a part made a moment ago is kept
        sweep_stale_parts(folder)
        return ("removed" if not stale.exists() else "left"), not stale.exists()

    @probe("calibration file: classes ['A', 'B']")
    def _() -> tuple[str, bool]:
        from localjudge._trust.calibration_file import read_calibration
        from localjudge.errors import UsageError

        path = Path(tempfile.mkdtemp()) / "c.json"
        document = {"format": 1, "classes": ["A", "B"], "chosen": None, "prior": None, "temperature": 1.0}
        path.write_text(json.dumps({**document, "rows": 5, "validations": {}}))
        try:
            read_calibration(path)
        except UsageError as exc:
            return f"refused: {str(exc).split('(')[1][:60]}", True
        return "read", False

    @probe("remote judge: the key in the URL's userinfo")
    def _() -> tuple[str, bool]:
        from localjudge._clients.remote import OpenAICompatibleClient
        from localjudge.errors import UsageError

        try:
            OpenAICompatibleClient("http://user:sk-secret-123@127.0.0.1:9/v1")
        except UsageError as exc:
            return "refused before connecting", "sk-secret-123" not in str(exc)
        return "accepted", False

    @probe("a local judge used in a child made by fork (60 s bound)")
    def _() -> tuple[str, bool]:
        script = (
            "import multiprocessing as mp\n"
            "from localjudge import create_llm_as_judge\n"
            "judge = create_llm_as_judge(prompt='Is {outputs} right?', model='tiny', use_reasoning=False)\n"
            "judge(outputs='4')\n"
            "def child(q):\n"
            "    try:\n"
            "        judge(outputs='4'); q.put('judged')\n"
            "    except Exception as exc:\n"
            "        q.put(f'{type(exc).__name__}: {exc}')\n"
            "ctx = mp.get_context('fork'); q = ctx.Queue(); p = ctx.Process(target=child, args=(q,)); p.start()\n"
            "p.join(60)\n"
            "print('hung' if p.is_alive() else q.get(timeout=5)); p.kill()\n"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ENV, timeout=300)
        said = done.stdout.strip()
        return (said[:90] or done.stderr.strip()[-90:]), said.startswith("UsageError") and "spawn" in said

    @probe("pytest -p localjudge.pytest_plugin (installed and named)")
    def _() -> tuple[str, bool]:
        folder = Path(tempfile.mkdtemp())
        (folder / "test_x.py").write_text("def test_x():\n    assert True\n")
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "localjudge.pytest_plugin", "-p", "no:cacheprovider"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return f"exit {done.returncode}", done.returncode == 0


def start_serve(*options: str) -> tuple[subprocess.Popen, str, Path]:
    log = Path(tempfile.mkdtemp()) / "serve.log"
    env = {**ENV, "LOCALJUDGE_SERVER_KEY": KEY}
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "localjudge", "serve", "--port", "0", *options],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        found = re.search(r"on (http://127\.0\.0\.1:\d+)/v1", log.read_text())
        if found:
            base = found.group(1)
            for _ in range(100):
                try:
                    if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                        return process, base, log
                except httpx.HTTPError:
                    time.sleep(0.2)
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"serve did not start: {log.read_text()[-500:]}")


def post(base: str, body: bytes | dict, timeout: float = 120) -> httpx.Response:
    headers = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(f"{base}/v1/chat/completions", content=content, headers=headers, timeout=timeout)


MESSAGES = [{"role": "user", "content": "Is 2+2=4 right? Answer in JSON."}]


def serve_probes() -> None:
    process, base, _ = start_serve("--parallel", "1", "--n-ctx", "1024", "--header-timeout", "3")
    try:
        bad = {
            "a 5000-digit integer": b'{"messages": [], "seed": ' + b"9" * 5000 + b"}",
            "seed -5": {"messages": MESSAGES, "seed": -5},
            "messages [1, 2]": {"messages": [1, 2]},
            "frequency_penalty NaN": b'{"messages": [{"role": "user", "content": "x"}], "frequency_penalty": NaN}',
            "message content 5": {"messages": [{"role": "user", "content": 5}]},
            "message content true": {"messages": [{"role": "user", "content": True}]},
            "message content with half a surrogate pair": b'{"messages": [{"role": "user", "content": "a\\ud800"}]}',
            "n true": {"messages": MESSAGES, "n": True},
            'logprobs "yes"': {"messages": MESSAGES, "logprobs": "yes"},
            "prompt + max_tokens over n_ctx": {
                "messages": [{"role": "user", "content": "word " * 1500}],
                "max_tokens": 512,
            },
        }
        for name, schema in HOSTILE_SCHEMAS.items():
            fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}
            bad[f"schema {name}"] = {"messages": MESSAGES, "response_format": fmt}
        for name, body in bad.items():

            @probe(f"serve: {name}")
            def _(body: bytes | dict = body) -> tuple[str, bool]:
                answer = post(base, body)
                error = answer.json().get("error", {})
                return f"{answer.status_code} {error.get('param') or ''} {error.get('message', '')[:50]}", (
                    answer.status_code == 400
                )

        @probe("serve: a trailing / with a forged Host header")
        def _() -> tuple[str, bool]:
            headers = {"Authorization": f"Bearer {KEY}", "Host": "evil.example"}
            answer = httpx.post(f"{base}/v1/chat/completions/", json={}, headers=headers, follow_redirects=False)
            location = answer.headers.get("location")
            return (
                f"{answer.status_code}, Location {location or 'none'}",
                location is None and answer.status_code == 404,
            )

        @probe("serve: 64 connections trickling headers; /health meanwhile")
        def _() -> tuple[str, bool]:
            host, port = base.removeprefix("http://").split(":")
            socks = [socket.create_connection((host, int(port))) for _ in range(64)]
            for sock in socks:
                sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
            statuses = []
            for _ in range(5):
                statuses.append(httpx.get(f"{base}/health", timeout=2).status_code)
                for sock in socks:
                    sock.sendall(b"X-Slow: 1\r\n")
                time.sleep(0.5)
            time.sleep(2)
            closed = 0
            for sock in socks:
                sock.settimeout(3)
                try:
                    closed += sock.recv(10) == b""
                except (TimeoutError, ConnectionError):
                    pass
                sock.close()
            return f"/health {sorted(set(statuses))}; {closed}/64 closed by the server", statuses == [200] * 5 and (
                closed == 64
            )

        @probe("serve: a client hangs up on a 2,000-token answer; the next request waits")
        def _() -> tuple[str, bool]:
            story = {"messages": [{"role": "user", "content": "Write a very long story."}], "max_tokens": 2000}
            try:
                post(base, story, timeout=1.5)
            except httpx.ReadTimeout:
                pass
            started = time.monotonic()
            status = post(base, {"messages": MESSAGES, "max_tokens": 4}).status_code
            waited = time.monotonic() - started
            return f"{status} after {waited:.2f} s (one sequence)", status == 200 and waited < 5
    finally:
        process.kill()
        process.wait(10)

    @probe("serve (in process): a request past the bound on requests in flight")
    def _() -> tuple[str, bool]:
        from starlette.testclient import TestClient

        from localjudge._serving import Limits, create_app
        from localjudge.testing import ScriptedClient

        app = TestClient(create_app(ScriptedClient(["{}"]), model_id="m", limits=Limits(max_in_flight=0)))
        busy = app.post("/v1/chat/completions", json={"messages": MESSAGES})
        retry = busy.headers.get("retry-after")
        return f"{busy.status_code}, Retry-After {retry or 'none'}", busy.status_code == 503 and retry is not None

    @probe("serve: SIGTERM with 16 requests in flight (2 sequences, 3 s grace)")
    def _() -> tuple[str, bool]:
        process, base, log = start_serve("--parallel", "2", "--graceful-timeout", "3")
        body = {"messages": MESSAGES, "max_tokens": 40}
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            answers = [pool.submit(post, base, body) for _ in range(16)]
            time.sleep(1.5)
            stopped = time.monotonic()
            process.send_signal(signal.SIGTERM)
            statuses = [answer.result().status_code for answer in answers]
        code = process.wait(60)
        took = time.monotonic() - stopped
        said = re.search(r"stopped serving .*", log.read_text())
        counts = {status: statuses.count(status) for status in sorted(set(statuses))}
        note = f"{counts}, exit {code} after {took:.1f} s; log: {said.group(0)[15:95] if said else '-'}"
        return note, set(statuses) <= {200, 503} and took < 15


def main() -> int:
    print("probing (the tiny model; a few minutes)...", file=sys.stderr)
    schema_probes()
    two_writers()
    row_probes()
    output_probes()
    cache_and_files()
    serve_probes()
    width = max(len(name) for name, *_ in ROWS)
    print(f"\n{'probe':<{width}}  {'seconds':>7}  held  outcome")
    for name, outcome, seconds, held in ROWS:
        print(f"{name:<{width}}  {seconds:>7.2f}  {'yes' if held else 'NO':<4}  {outcome}")
    failed = [name for name, _, _, held in ROWS if not held]
    print(f"\n{len(ROWS) - len(failed)}/{len(ROWS)} probes held" + (f"; not: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
