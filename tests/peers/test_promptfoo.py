"""promptfoo's llm-rubric, graded by an OpenAI provider pointed at `localjudge serve` on 127.0.0.1.

promptfoo (npm, pinned by ``tests/peers/promptfoo/package-lock.json``) is installed into that folder by
``make promptfoo``, which CI runs; the test drives its command line as a process, with every connection
that is not to loopback refused (``loopback_only.cjs``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support.serve_process import KEY

PROJECT = Path(__file__).resolve().parent / "promptfoo"
PROMPTFOO = PROJECT / "node_modules" / ".bin" / "promptfoo"


def promptfoo_env(base_url: str, home: Path, refused: Path) -> dict[str, str]:
    """promptfoo's environment: the server as its OpenAI, no real account, no telemetry, no update check."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "PROMPTFOO_"))}
    env.update(
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY=KEY,
        PROMPTFOO_CONFIG_DIR=str(home),
        PROMPTFOO_DISABLE_TELEMETRY="1",
        PROMPTFOO_DISABLE_UPDATE="1",
        PROMPTFOO_DISABLE_SHARING="1",
        PROMPTFOO_DISABLE_REMOTE_GENERATION="true",
        NODE_OPTIONS=f"--require {PROJECT / 'loopback_only.cjs'}",
        LOCALJUDGE_REFUSED=str(refused),
    )
    return env


@pytest.mark.server
@pytest.mark.model
def test_promptfoo_llm_rubric_is_graded_through_serve(relay, tmp_path):
    if not PROMPTFOO.exists():
        if os.environ.get("LOCALJUDGE_REQUIRE_PROMPTFOO"):
            pytest.fail("promptfoo is missing: `make promptfoo` installs it")
        pytest.skip("promptfoo is missing: `make promptfoo` installs it")
    results, refused = tmp_path / "results.json", tmp_path / "refused.txt"
    ran = subprocess.run(
        [str(PROMPTFOO), "eval", "-c", str(PROJECT / "promptfooconfig.yaml"), "-o", str(results), "--no-cache"],
        env=promptfoo_env(relay.base_url, tmp_path / "promptfoo-home", refused),
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert ran.returncode in (0, 100), ran.stdout[-3000:] + ran.stderr[-3000:]  # 100: an assertion failed
    # loopback only: what promptfoo tried beyond it was its own telemetry (it says once that it is disabled), refused
    attempted = refused.read_text().split() if refused.exists() else []
    assert all(host.endswith(".promptfoo.app:443") for host in attempted), attempted

    graded = {row["testCase"]["description"]: row for row in json.loads(results.read_text())["results"]["results"]}
    assert graded["right"]["success"] and not graded["wrong"]["success"], graded
    for row in graded.values():
        assert row["gradingResult"]["reason"]  # the grader's reason, as the server's answer gave it
    chats = [exchange for exchange in relay.exchanges if exchange.is_chat]
    assert len(chats) == 2 and all(exchange.status == 200 for exchange in chats)  # both graded by serve
