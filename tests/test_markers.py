"""The markers mean what they say: `make test-fast` runs with every model, torch and socket hidden.

tests/support/offline/sitecustomize.py hides them; these tests check that it does, in a process of its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OFFLINE = ROOT / "tests" / "support" / "offline"

PROBE = """
import importlib, json, socket
from localjudge._specs.cards import load_cards
from localjudge._specs.model_files import ensure_card_model

seen = {}
for module in ("torch", "transformers"):
    try:
        importlib.import_module(module)
        seen[module] = "imported"
    except ModuleNotFoundError as exc:
        seen[module] = str(exc)
for card in load_cards():
    try:
        seen[card.name] = f"found at {ensure_card_model(card)}"
    except Exception as exc:
        seen[card.name] = type(exc).__name__
with socket.socket() as sock:
    try:
        sock.bind(("127.0.0.1", 0))
        seen["bind"] = "bound"
    except OSError as exc:
        seen["bind"] = str(exc)
print(json.dumps(seen))
"""


def test_under_the_fast_selection_no_model_torch_or_socket_can_be_reached(tmp_path):
    env = {**os.environ, "LOCALJUDGE_HOME": str(tmp_path), "PYTHONPATH": os.pathsep.join([str(OFFLINE), str(ROOT)])}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert "mark the test torch" in seen.pop("torch") and "mark the test torch" in seen.pop("transformers")
    assert "mark the test server" in seen.pop("bind")
    assert len(seen) >= 2 and set(seen.values()) <= {"MissingDependencyError", "ModelLoadError"}, seen
    assert list(tmp_path.iterdir()) == []  # nothing assembled into the cache


def test_the_markers_are_registered_with_their_meanings(pytestconfig):
    lines = pytestconfig.getini("markers")
    ours = [line.partition(":")[0] for line in lines][:6]
    assert ours == ["model", "server", "torch", "slow", "docs", "browser"]
    assert "--strict-markers" in pytestconfig.getini("addopts")
    fast = next(line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("FAST :="))
    assert all(f"not {marker}" in fast for marker in ours), "make test-fast runs none of them"


def test_a_test_that_asks_for_a_model_or_a_server_through_a_fixture_is_marked_so():
    """tests/conftest.py's FIXTURE_MARKS: tiny_gguf is a model, fault_server a server, though neither test says so."""
    tests = ["tests/runtimes/test_llamacpp_runtime.py", "tests/clients/test_remote.py"]
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *tests]
    kept = subprocess.run([*command, "-m", "not model and not server"], capture_output=True, text=True, cwd=ROOT)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "test_llamacpp_runtime.py::test_bad_sizes_are_usage_errors" not in kept.stdout  # asks for tiny_gguf
    assert "test_remote.py::test_redirects_are_not_followed" not in kept.stdout  # asks for fault_server
    assert "test_remote.py::test_retry_after_forms" in kept.stdout  # asks for neither
