"""Shared fixtures. Tests that need the real default model use ``default_gguf``."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def default_gguf() -> Path:
    """The embedded default GGUF, assembled from its PyPI package into the cache once."""
    from localjudge.models import ensure_default_model

    return ensure_default_model()
