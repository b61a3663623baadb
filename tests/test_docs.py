"""Every code block of README.md and docs/*.md runs here, on the tiny model (what it prints does not matter).

Python blocks are found by pytest-examples, and run here by exec. It finds only Python, so the other blocks are found
by a small collector of our own (``_blocks``), which also reads the comment before each block:

- ``bash`` blocks run as they are, in a workspace holding the files they name (``judge.gguf`` is the tiny
  model); ``console`` blocks run each ``$ `` line and check the output loosely: the exit status, and the
  keys of a JSON result or most of the words, not the figures;
- ``<!-- not run (KIND): WHY -->`` before a block says why it cannot run here, KIND one of ``NOT_RUN_KINDS``
  (an install, the suite itself, another tool, a remote service, a GPU, hours of judging); the share of blocks
  that run is checked at the end, and the blocks not run are counted by kind;
- ``<!-- exit N: WHY -->``: the command's expected exit status, where it is not 0;
- ``<!-- judge default: WHY -->``: the block runs on the default judge, where the tiny model cannot do what it
  shows (it writes no usable answer or checks of its own); those blocks need the default model;
- ``<!-- serves: ... -->`` before a ``bash`` block of commands that serve until stopped: each is started on a
  free port (``--port 0``), asked for a page, and stopped;
- ``<!-- synopsis: ... -->`` before a ``text`` block: every flag in it is in its command's ``--help``;
- ``<!-- layout: ... -->`` before a ``text`` block: every folder named in it is one of the package's;
- ``<!-- scripted server: ANSWER -->`` before a block that talks to an OpenAI-compatible server at
  ``http://127.0.0.1:8000/v1``: the block runs against a scripted server on a free port that answers ANSWER;
- ``<!-- scripted servers: ANSWER -->`` before a shell block naming several servers at ``http://HOST:8000/v1``:
  each address becomes a scripted server of its own answering ANSWER, and each must be asked;
- ``<!-- the file PATH: ... -->`` before a block that shows a file of the project (a config a test runs): the
  block is that file, byte for byte.

The page "How the defaults were chosen" is checked against what its generator writes from the records.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from pytest_examples import CodeExample, find_examples

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: the share of code blocks that must run; the rest say why not
RUN_SHARE_FLOOR = 0.84
#: the reasons a block may not run here, each named in its mark: ``<!-- not run (KIND): WHY -->``
NOT_RUN_KINDS = {
    "install": "installs or rebuilds the project, which the tests run inside",
    "suite": "runs the test suite, which runs this block",
    "other tool": "needs a tool from another ecosystem (npm, another venv), tested in tests/peers",
    "remote": "needs servers or a cluster at addresses of the reader's",
    "gpu": "needs a GPU",
    "hours": "judges every row with the default judge: hours on two cores",
}
NOT_RUN = re.compile(r"\((?P<kind>[\w ]+)\):\s*(?P<why>\S.*)", re.S)

pytestmark = pytest.mark.docs

FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
MARK = re.compile(
    r"<!--\s*(not run|exit \d+|judge \w+|serves|synopsis|layout|scripted servers|scripted server|the file \S+)\b:?\s*([^>]*?)-->\s*\Z",
    re.S,
)


@dataclass
class Block:
    path: Path
    line: int
    language: str
    source: str
    marks: dict[str, str]  # "not run", "exit N", "judge NAME", "synopsis", "layout": each with its why

    def marked(self, kind: str) -> str | None:
        """The mark that starts with ``kind`` (``"exit"`` finds ``"exit 1"``), or None."""
        return next((mark for mark in self.marks if mark.split()[0] == kind.split()[0]), None)

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        before, marks = text[: match.start()], {}
        while found := MARK.search(before):  # the comments right before the block, last first
            marks[found.group(1)] = found.group(2).strip()
            before = before[: found.start()]
        line = text[: match.start()].count("\n") + 1
        blocks.append(Block(path, line, match.group(1), match.group(2), marks))
    return blocks


BLOCKS = [block for page in PAGES for block in _blocks(page)]
RUN = [block for block in BLOCKS if "not run" not in block.marks]
PYTHON = {(example.path, example.start_line): example for example in find_examples(*PAGES)}


# --- the workspace the blocks run in ------------------------------------------------------------------------


def _rows() -> list[dict]:
    rows = []
    for i in range(12):
        a, b = 3 + i, 4 + 2 * i
        right = i % 3 != 2
        answer = str(a + b if right else a + b + 1)
        row = {"id": f"q{i}", "inputs": f"What is {a}+{b}?", "outputs": answer, "reference_outputs": str(a + b)}
        rows.append({**row, "label": right, "human": right})
    return rows


def _call(name: str, arguments: str) -> dict:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


def _write_jsonl(path: Path, rows: list) -> None:
    path.write_text("".join(row if isinstance(row, str) else json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture(scope="session")
def home(tmp_path_factory) -> Path:
    """A cache directory of the tests' own (calibrations, results), sharing the models and token indexes."""
    from localjudge._clients.resolve import ensure_tiny_model
    from localjudge._paths import cache_dir

    ensure_tiny_model()
    real, home = cache_dir(), tmp_path_factory.mktemp("home")
    for shared in ("models", "decoding"):
        (real / shared).mkdir(parents=True, exist_ok=True)
        (home / shared).symlink_to(real / shared)
    return home


def _env(home: Path, judge: str = "tiny") -> dict[str, str]:
    return {
        **os.environ,
        "LOCALJUDGE_HOME": str(home),
        "LOCALJUDGE_MODEL": judge,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "PYTHONIOENCODING": "utf-8",
        "NO_COLOR": "1",
    }


def _shell(command: str, cwd: Path, home: Path, judge: str = "tiny", timeout: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", command],
        cwd=cwd,
        env=_env(home, judge),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def template(home, tmp_path_factory) -> Path:
    """The files the blocks name: rows, labels, pairs, an agent's runs, a judged run, the tiny model as judge.gguf."""
    from localjudge._clients.resolve import ensure_tiny_model

    work = tmp_path_factory.mktemp("workspace")
    (work / "judge.gguf").symlink_to(ensure_tiny_model())
    rows = _rows()
    lines: list = [json.dumps(row) + "\n" for row in rows]
    lines.insert(6, '{"id": "q-bad", "inputs": "What\x01 is it?", "outputs": }\n')  # line 7: not JSON
    _write_jsonl(work / "messy.jsonl", lines)
    _write_jsonl(work / "data.jsonl", rows)
    _write_jsonl(work / "labelled.jsonl", rows)
    _write_jsonl(work / "rows.jsonl", rows[:3])
    with (work / "answers.csv").open("w", encoding="utf-8") as csv:
        csv.write("qid,question,answer,expected\n")
        csv.writelines(f"{row['id']},{row['inputs']},{row['outputs']},{row['outputs']}\n" for row in rows[:3])
    pairs = [
        {"id": f"p{i}", "inputs": row["inputs"], "outputs_a": row["outputs"], "outputs_b": str(int(row["outputs"]) + 2)}
        for i, row in enumerate(rows)
    ]
    checks = ["Does the response give the result the question asks for?", "Is the response only a number?"]
    _write_jsonl(work / "pairs.jsonl", [{**pair, "checks": checks} for pair in pairs[:2]])
    labelled = [{**pair, "label": "A"} for pair in pairs[:6]]
    labelled += [
        {**pair, "outputs_a": pair["outputs_b"], "outputs_b": pair["outputs_a"], "label": "B"} for pair in pairs[6:]
    ]
    _write_jsonl(work / "labelled_pairs.jsonl", labelled)
    run = [
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "content": "", "tool_calls": [_call("add", '{"a": 2, "b": 2}')]},
        {"role": "tool", "content": "4", "tool_call_id": "call_1"},
        {"role": "assistant", "content": "2+2 is 4."},
    ]
    _write_jsonl(work / "agent_runs.jsonl", [{"id": "run-1", "outputs": run, "reference_outputs": run}])
    judged = _shell("localjudge batch data.jsonl -j 2", work, home)
    assert judged.returncode == 0, judged.stderr
    for name in ("old", "new", "plain", "strict", "fewshot"):
        shutil.copy(work / "data.results.jsonl", work / f"{name}.results.jsonl")
    return work


@pytest.fixture(scope="session")
def workspaces(template, tmp_path_factory):
    """One copy of the workspace per page: a page's blocks run in order in one directory."""
    made: dict[Path, Path] = {}

    def get(page: Path) -> Path:
        if page not in made:
            made[page] = tmp_path_factory.mktemp(page.stem)
            shutil.copytree(template, made[page], symlinks=True, dirs_exist_ok=True)
        return made[page]

    return get


@pytest.fixture(scope="session")
def model_dir(template) -> Path:
    """A tiny transformers model directory (random weights), for the blocks that name ``model_dir``."""
    pytest.importorskip("transformers")
    from support.tiny_model import build_tiny_model  # type: ignore[import-not-found]

    return build_tiny_model(template / "model_dir")


# --- the checks ---------------------------------------------------------------------------------------------


def _loosely_like(expected: list[str], out: str, err: str) -> None:
    """The output has the sample's shape: a JSON result's keys, else most of its words."""
    if any(line.startswith("{") for line in expected):
        assert "{" in out, f"no JSON on stdout:\n{out}\n{err}"
        result, _ = json.JSONDecoder().raw_decode(out[out.index("{") :])
        assert {"key", "score", "comment", "metadata"} <= set(result), out
        return
    words = {word for line in expected for word in re.findall(r"[A-Za-z]{4,}", line)}
    found = {word for word in words if word in out + err}
    assert len(found) >= 0.6 * len(words), (sorted(words - found), out, err)


def _status(block: Block) -> int:
    mark = block.marked("exit")
    return int(mark.split()[1]) if mark else 0


def _judge(block: Block) -> str:
    mark = block.marked("judge")
    return mark.split()[1] if mark else "tiny"


#: console blocks already checked, by their text and judge: a sample shown on two pages runs once
CHECKED: set[tuple[str, str]] = set()


def _console(block: Block, cwd: Path, home: Path) -> None:
    if (block.source, _judge(block)) in CHECKED:
        return
    commands: list[tuple[str, list[str]]] = []
    for line in block.source.splitlines():
        if line.startswith("$ "):
            commands.append((line[2:], []))
        elif commands:
            commands[-1][1].append(line)
    assert commands, f"{block.id}: a console block without a $ line"
    for command, expected in commands:
        done = _shell(command, cwd, home, judge=_judge(block))
        assert done.returncode == _status(block), f"{block.id}: {command}\n{done.stdout}\n{done.stderr}"
        _loosely_like(expected, done.stdout, done.stderr)
    CHECKED.add((block.source, _judge(block)))


def _serve(block: Block, cwd: Path, home: Path) -> None:
    import httpx

    for line in block.source.splitlines():
        command = line.split("  #")[0].strip()
        if not command.startswith("localjudge "):
            continue
        command = re.sub(r"--port \d+", "", command) + " --port 0"
        server = subprocess.Popen(
            ["bash", "-c", f"exec {command}"],
            cwd=cwd,
            env=_env(home),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
        )
        try:
            seen = ""
            while not (address := re.search(r"http://127\.0\.0\.1:\d+", seen)):
                line_out = server.stdout.readline() if server.stdout else ""
                assert line_out, f"{block.id}: {command} stopped before serving:\n{seen}"
                seen += line_out
            path = "/health" if " serve " in f" {command} " else "/"
            answer = httpx.get(address.group(0) + path, timeout=30)
            assert answer.status_code == 200, (command, answer.status_code, answer.text[:300])
        finally:
            server.terminate()
            server.wait(timeout=30)


def _synopsis(block: Block) -> None:
    from click.testing import CliRunner

    from localjudge import _cli as cli

    usage: dict[str, set[str]] = {}
    current = None
    for line in block.source.splitlines():
        words = line.split()
        if line.startswith("# model options"):
            current = "score"  # the model options below are score's (and the other judging commands')
        elif words[:1] == ["localjudge"] and len(words) > 1:
            current = " ".join(words[1:3]) if words[1] == "models" else words[1]
        code = line.split("  # ")[0] if not line.startswith("#") else line
        usage.setdefault(current or "", set()).update(re.findall(r"(?<![\w-])(--[a-z][\w-]*|-[jmo])\b", code))
    assert {"score", "batch", "compare", "check-judge", "serve"} <= set(usage), sorted(usage)
    for command, flags in usage.items():
        help_text = CliRunner().invoke(cli.main, [*command.split(), "--help"]).output
        missing = sorted(flag for flag in flags if flag not in help_text)
        assert not missing, f"{block.id}: localjudge {command} --help lacks {missing}"


def _layout(block: Block) -> None:
    folders = re.findall(r"^\s+(\w+)/", block.source, re.M)
    assert folders, block.id
    for folder in folders:
        assert (ROOT / "localjudge" / folder).is_dir(), f"{block.id}: no localjudge/{folder}/"


def _the_file(block: Block, path: str) -> None:
    assert block.source == (ROOT / path).read_text(encoding="utf-8"), f"{block.id} is not {path} as it is"


def _param(block: Block):
    default = _judge(block) == "default" or "--model default" in block.source
    marks = [pytest.mark.model] if default else []
    return pytest.param(block, id=block.id, marks=marks)


@pytest.mark.parametrize("block", [_param(block) for block in RUN])
def test_each_code_block_runs(block, workspaces, home, monkeypatch, request):
    cwd = workspaces(block.path)
    if "synopsis" in block.marks:
        _synopsis(block)
    elif "layout" in block.marks:
        _layout(block)
    elif (shown := block.marked("the")) is not None:
        _the_file(block, shown.split(maxsplit=2)[2])
    elif block.language == "python" and "def test_" in block.source:
        test_file = f"test_{block.path.stem}_{block.line}.py"
        (cwd / test_file).write_text(block.source, encoding="utf-8")
        done = _shell(f"python -m pytest -q -p no:cacheprovider {test_file}", cwd, home, judge=_judge(block))
        assert done.returncode == 0 and " passed" in done.stdout, done.stdout + done.stderr
    elif "scripted server" in block.marks:
        _against_scripted_server(block, cwd, home, monkeypatch, request)
    elif "scripted servers" in block.marks:
        _against_scripted_servers(block, cwd, home)
    elif block.language == "python":
        _python(block, cwd, home, monkeypatch, request)
    elif "serves" in block.marks:
        _serve(block, cwd, home)
    elif block.language == "console":
        _console(block, cwd, home)
    elif block.language == "bash":
        done = _shell(block.source, cwd, home, judge=_judge(block))
        assert done.returncode == _status(block), f"{block.id}\n{done.stdout}\n{done.stderr}"
    else:
        pytest.fail(
            f"{block.id}: a {block.language or 'plain'} block the tests cannot run; mark it <!-- not run: why -->"
        )


#: where the docs' blocks find an OpenAI-compatible server
DOCS_SERVER = "http://127.0.0.1:8000/v1"


def _against_scripted_server(block: Block, cwd: Path, home: Path, monkeypatch, request) -> None:
    """The block, its server a scripted one on a free port that answers what its mark says to every request."""
    from support.fault_server import FaultServer, completion

    assert DOCS_SERVER in block.source, f"{block.id} names no server at {DOCS_SERVER}"
    server = FaultServer([completion(block.marks["scripted server"])] * 8)
    try:
        if block.language == "python":
            _python(block, cwd, home, monkeypatch, request, server=server.base_url)
        else:
            done = _shell(block.source.replace(DOCS_SERVER, server.base_url), cwd, home, judge=_judge(block))
            assert done.returncode == _status(block), f"{block.id}\n{done.stdout}\n{done.stderr}"
    finally:
        server.close()
    assert server.requests, f"{block.id} asked the server nothing"


#: the servers a block names at addresses of the reader's (a pool of them)
READERS_SERVER = re.compile(r"http://[\w.]+:8000/v1")


def _against_scripted_servers(block: Block, cwd: Path, home: Path) -> None:
    """A shell block naming several servers: each address a scripted server of its own, and each is asked."""
    from support.fault_server import FaultServer, completion

    addresses = sorted(set(READERS_SERVER.findall(block.source)))
    assert len(addresses) > 1, f"{block.id} names fewer than two servers"
    servers = {address: FaultServer([completion(block.marks["scripted servers"])] * 64) for address in addresses}
    source = block.source
    for address, server in servers.items():
        source = source.replace(address, server.base_url)
    try:
        done = _shell(source, cwd, home, judge=_judge(block))
        assert done.returncode == _status(block), f"{block.id}\n{done.stdout}\n{done.stderr}"
    finally:
        for server in servers.values():
            server.close()
    assert all(server.requests for server in servers.values()), f"{block.id}: not every server was asked"


def _python(block: Block, cwd: Path, home: Path, monkeypatch, request, *, server: str = DOCS_SERVER) -> None:
    example: CodeExample = PYTHON[(block.path, block.line)]
    if "model_dir" in block.source:
        shutil.copytree(request.getfixturevalue("model_dir"), cwd / "model_dir", dirs_exist_ok=True)
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("LOCALJUDGE_HOME", str(home))
    monkeypatch.setenv("LOCALJUDGE_MODEL", _judge(block))
    # Run by exec, not pytest-examples' EvalExample.run: an example that raises under it ends the whole
    # session with an INTERNALERROR (pytest cannot map the rewritten module's frames back to the page).
    source = example.source.replace(DOCS_SERVER, server)
    code = compile("\n" * example.start_line + source, f"<{block.id}>", "exec")
    exec(code, {"__name__": f"docs_example_{block.path.stem}_{block.line}"})


def test_most_code_blocks_run_and_the_rest_say_why():
    not_run = [block for block in BLOCKS if "not run" in block.marks]
    reasons = {block.id: NOT_RUN.match(block.marks["not run"]) for block in not_run}
    unnamed = [name for name, found in reasons.items() if not found or found["kind"] not in NOT_RUN_KINDS]
    assert not unnamed, f"mark these <!-- not run (KIND): why -->, KIND one of {sorted(NOT_RUN_KINDS)}: {unnamed}"
    by_kind: dict[str, list[str]] = {}
    for name, found in reasons.items():
        by_kind.setdefault(found["kind"], []).append(name)  # type: ignore[index]
    share = len(RUN) / len(BLOCKS)
    print(f"{len(RUN)} of {len(BLOCKS)} code blocks run ({share:.0%}); not run, by reason: {by_kind}")
    assert share >= RUN_SHARE_FLOOR, share


def test_every_python_block_is_found_by_pytest_examples():
    python = {(block.path, block.line) for block in BLOCKS if block.language == "python"}
    assert python == set(PYTHON), python ^ set(PYTHON)


def test_the_defaults_page_is_what_the_records_give():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import defaults_page  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    written = defaults_page.render(defaults_page.load_records())
    assert (ROOT / "docs" / "defaults.md").read_text(encoding="utf-8") == written, (
        "docs/defaults.md is not current: run python benchmarks/defaults_page.py"
    )
