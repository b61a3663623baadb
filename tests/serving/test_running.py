"""``run``: the app under a real uvicorn, with the header deadline and a clean stop, a scripted judge behind it."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import textwrap
import time

import httpx
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

SCRIPT = textwrap.dedent(
    """
    import socket
    from localjudge._serving import Limits, create_app, run
    from localjudge.testing import ScriptedClient

    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(16)
    print(listening.getsockname()[1], flush=True)
    limits = Limits(header_seconds=0.5)
    app = create_app(ScriptedClient(['{"score": true}'] * 4), model_id="m", limits=limits)
    run(app, listening, limits=limits, graceful_timeout=5)
    """
)


@pytest.mark.server
def test_it_serves_closes_late_headers_and_stops_on_sigterm():
    process = subprocess.Popen(
        [sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        base = f"http://127.0.0.1:{int(process.stdout.readline())}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        request = {
            "messages": [{"role": "user", "content": "Is 2 + 2 = 4?"}],
            "response_format": {"type": "json_object"},
        }
        answer = httpx.post(f"{base}/v1/chat/completions", json=request, timeout=10).json()
        assert json.loads(answer["choices"][0]["message"]["content"]) == {"score": True}

        with socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1]))) as late:
            late.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: j")  # and no more
            late.settimeout(5)
            started = time.monotonic()
            assert late.recv(4096) == b""  # closed by the deadline
            assert time.monotonic() - started < 3

        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
        assert "stopping: 0 request(s) in flight" in stderr
        assert "stopped serving m" in stderr
    finally:
        process.kill()
        process.wait()
