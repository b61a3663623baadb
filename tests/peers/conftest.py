"""The peers' tests: one `localjudge serve` of the default judge for them all, and a relay per test before it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.relay import Relay
from support.serve_process import start_serve


@pytest.fixture(scope="session")
def served_default(tmp_path_factory) -> Iterator[str]:
    """The base URL (no ``/v1``) of `localjudge serve --model default` on 127.0.0.1, stopped at the session's end."""
    process, base, _ = start_serve(tmp_path_factory.mktemp("serve-default"), "--model", "default")
    yield base
    if process.poll() is None:
        process.kill()
        process.wait(10)


@pytest.fixture
def relay(served_default: str) -> Iterator[Relay]:
    """A relay to the server that keeps this test's exchanges; point the peer at ``relay.base_url``."""
    relay = Relay(served_default)
    yield relay
    relay.close()
