"""Headless Chromium for the page's tests: Debian's own build, driven by Playwright (which downloads nothing).

CI installs the ``chromium`` package (``.ci/run``) and sets
``LOCALJUDGE_REQUIRE_BROWSER=1``, so there a missing browser fails the run;
elsewhere the browser tests are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_path() -> str:
    """The Chromium to drive ($LOCALJUDGE_CHROMIUM, else the first on PATH), or a skip that says what to install."""
    found = os.environ.get("LOCALJUDGE_CHROMIUM") or next(filter(None, map(shutil.which, CANDIDATES)), None)
    missing = []
    if not found:
        missing.append("Chromium (apt-get install -y chromium, or set $LOCALJUDGE_CHROMIUM)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing.append("playwright (pip install -e '.[dev]')")
    if missing:
        why = "the browser tests need " + " and ".join(missing)
        if os.environ.get("LOCALJUDGE_REQUIRE_BROWSER"):
            pytest.fail(why)
        pytest.skip(why)
    assert found is not None
    return found
